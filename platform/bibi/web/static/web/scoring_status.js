// While a scoring run is waiting for predictions or scoring, ask the API for it every few
// seconds and move its progress bar and status; once it is done or failed, reload the page,
// which then shows its snapshot with the publish button, or the reason it failed.
"use strict";

(function () {
  const PERIOD_MS = 2000;
  const PENDING = new Set(["waiting_for_cells", "scoring"]);
  const LABELS = {
    waiting_for_cells: "Waiting for prediction cells",
    scoring: "Scoring",
    done: "Done",
    failed: "Failed",
  };

  function update(row, run) {
    const badge = row.querySelector("[data-run-status]");
    badge.textContent = LABELS[run.status] || run.status;
    badge.className = "badge badge-" + run.status;
    const bar = row.querySelector("progress");
    const text = row.querySelector("[data-run-progress]");
    if (bar && run.cells_needed) {
      bar.max = run.cells_needed;
      bar.value = run.cells_done;
    }
    if (text && run.cells_needed) text.textContent = run.cells_done + " of " + run.cells_needed;
  }

  async function poll(row) {
    try {
      const response = await fetch(row.dataset.pollUrl, {
        headers: { Accept: "application/json" },
        credentials: "same-origin",
      });
      if (response.ok) {
        const run = await response.json();
        update(row, run);
        if (!PENDING.has(run.status)) {
          window.location.reload();
          return;
        }
      }
    } catch (error) {
      // A dropped connection is no reason to stop following: try again on the next tick.
    }
    window.setTimeout(function () { poll(row); }, PERIOD_MS);
  }

  document.addEventListener("DOMContentLoaded", function () {
    for (const row of document.querySelectorAll("tr[data-poll-url]")) {
      window.setTimeout(function () { poll(row); }, PERIOD_MS);
    }
  });
})();
