// While a version of this system is queued or running, ask the API for its status every
// few seconds and update the badges; once none is pending, reload the page, which then
// shows the dev accuracy or the failure and what to do about it.
"use strict";

(function () {
  const PERIOD_MS = 2000;
  const PENDING = new Set(["queued", "running"]);
  const LABELS = { queued: "Queued", running: "Running", ready: "Ready", failed: "Failed" };

  function update(versions) {
    for (const version of versions) {
      const badge = document.querySelector('[data-version-status="' + version.number + '"]');
      if (badge && badge.dataset.status !== version.status) {
        badge.dataset.status = version.status;
        badge.textContent = LABELS[version.status] || version.status;
        badge.className = "badge badge-" + version.status;
      }
    }
    return versions.some(function (version) { return PENDING.has(version.status); });
  }

  async function poll(url) {
    try {
      const response = await fetch(url, {
        headers: { Accept: "application/json" },
        credentials: "same-origin",
      });
      if (response.ok) {
        const system = await response.json();
        if (!update(system.versions)) {
          window.location.reload();
          return;
        }
      }
    } catch (error) {
      // A dropped connection is no reason to stop following: try again on the next tick.
    }
    window.setTimeout(function () { poll(url); }, PERIOD_MS);
  }

  document.addEventListener("DOMContentLoaded", function () {
    const section = document.querySelector("[data-poll-url]");
    if (section) window.setTimeout(function () { poll(section.dataset.pollUrl); }, PERIOD_MS);
  });
})();
