// The pair editor's suggestion or draft check, while it waits for a model worker: the page
// answered 202 with the job's API address (data-job-url) and its own page for the job
// (data-result-url). Ask the API until the job is no longer waiting, then fetch that page and
// put its answer (or the reason it failed) in place of the waiting notice, leaving the form as
// the breaker left it. Without this script the notice's link shows the same page.
"use strict";

(function () {
  const FIRST_MS = 500;
  const LONGEST_MS = 5000;
  const REGIONS = ["suggestions-result", "check-result"];

  async function showAnswer(resultUrl) {
    const response = await fetch(resultUrl, { credentials: "same-origin" });
    const page = new DOMParser().parseFromString(await response.text(), "text/html");
    for (const id of REGIONS) {
      const fresh = page.getElementById(id);
      const current = document.getElementById(id);
      if (fresh && current) current.replaceWith(document.importNode(fresh, true));
    }
  }

  async function poll(notice, delay) {
    try {
      const response = await fetch(notice.dataset.jobUrl, {
        headers: { Accept: "application/json" },
        credentials: "same-origin",
      });
      if (response.status !== 202) {
        await showAnswer(notice.dataset.resultUrl);
        return;
      }
    } catch (error) {
      // A dropped connection is no reason to stop following: try again on the next tick.
    }
    const next = Math.min(delay * 1.5, LONGEST_MS);
    window.setTimeout(function () { poll(notice, next); }, delay);
  }

  document.addEventListener("DOMContentLoaded", function () {
    const notice = document.getElementById("job-waiting");
    if (notice) window.setTimeout(function () { poll(notice, FIRST_MS); }, FIRST_MS);
  });
})();
