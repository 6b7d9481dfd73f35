// A progress bar for forms marked data-upload-progress. The form still posts normally
// without JavaScript; with it, the file goes up by XMLHttpRequest (fetch reports no upload
// progress), the server answers JSON ({"location"} to go to, or {"errors"} to show), and
// a file over the size limit is refused before a byte is sent.
"use strict";

(function () {
  function formatBytes(bytes) {
    const units = ["bytes", "KB", "MB", "GB"];
    let unit = 0;
    while (bytes >= 1024 && unit < units.length - 1) {
      bytes /= 1024;
      unit += 1;
    }
    return (unit === 0 ? bytes : bytes.toFixed(1)) + " " + units[unit];
  }

  function showErrors(box, messages) {
    box.replaceChildren();
    const list = document.createElement("ul");
    for (const message of messages) {
      const item = document.createElement("li");
      item.textContent = message;
      list.appendChild(item);
    }
    box.appendChild(list);
    box.hidden = false;
  }

  function enhance(form) {
    const progressBox = form.querySelector(".upload-progress");
    const bar = progressBox.querySelector("progress");
    const text = progressBox.querySelector("[data-progress-text]");
    const errors = form.querySelector("[data-upload-errors]");
    const button = form.querySelector('button[type="submit"]');
    const maxBytes = Number(form.dataset.maxBytes || 0);

    form.addEventListener("submit", function (event) {
      event.preventDefault();
      errors.hidden = true;
      const file = form.querySelector('input[type="file"]').files[0];
      if (!file) {
        showErrors(errors, ["Choose a file to upload."]);
        return;
      }
      if (maxBytes && file.size > maxBytes) {
        showErrors(errors, [
          "The file is " + formatBytes(file.size) + ", larger than the limit of " +
            formatBytes(maxBytes) + ".",
        ]);
        return;
      }
      const request = new XMLHttpRequest();
      request.open("POST", form.action);
      request.setRequestHeader("Accept", "application/json");
      request.upload.addEventListener("progress", function (progress) {
        if (!progress.lengthComputable) return;
        const percent = Math.floor((100 * progress.loaded) / progress.total);
        bar.value = percent;
        text.textContent = percent + "% of " + formatBytes(progress.total) + " sent";
      });
      request.addEventListener("load", function () {
        let body = {};
        try {
          body = JSON.parse(request.responseText);
        } catch (error) {
          body = { errors: ["The server answered " + request.status + ": try again."] };
        }
        if (request.status < 400 && body.location) {
          text.textContent = "Uploaded. Opening the version…";
          window.location.assign(body.location);
          return;
        }
        button.disabled = false;
        progressBox.hidden = true;
        showErrors(errors, body.errors || ["The upload failed: try again."]);
      });
      request.addEventListener("error", function () {
        button.disabled = false;
        progressBox.hidden = true;
        showErrors(errors, ["The connection broke during the upload: try again."]);
      });
      button.disabled = true;
      bar.value = 0;
      text.textContent = "Starting…";
      progressBox.hidden = false;
      request.send(new FormData(form));
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("form[data-upload-progress]").forEach(enhance);
  });
})();
