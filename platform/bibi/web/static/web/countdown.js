// Counts down to every <span data-countdown="ISO date"> on the page, once a second.
// Without JavaScript the server's wording ("in 3 days, 4 hours") and the date beside it stay.
"use strict";

(function () {
  const units = [
    ["day", 86400],
    ["hour", 3600],
    ["minute", 60],
    ["second", 1],
  ];

  function spell(seconds) {
    const parts = [];
    for (const [name, size] of units) {
      const count = Math.floor(seconds / size);
      if (count > 0 || (name === "second" && parts.length === 0)) {
        parts.push(count + " " + name + (count === 1 ? "" : "s"));
        seconds -= count * size;
      }
      if (parts.length === 2) break;
    }
    return parts.join(", ");
  }

  function tick(spans) {
    const now = Date.now();
    for (const span of spans) {
      const left = Math.round((Date.parse(span.dataset.countdown) - now) / 1000);
      span.textContent = left > 0 ? "in " + spell(left) : "now (reload the page)";
    }
  }

  document.addEventListener("DOMContentLoaded", function () {
    const spans = document.querySelectorAll("[data-countdown]");
    if (spans.length === 0) return;
    tick(spans);
    window.setInterval(function () { tick(spans); }, 1000);
  });
})();
