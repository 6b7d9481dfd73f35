// A span pair's answer, picked by selecting it in the variant: on a form marked
// data-span-answer, a selection in the variant field (mouse or Shift+arrows) fills the answer
// field with its text and the hidden answer_start / answer_end with its character offsets,
// which the server takes over the text (so a word that occurs twice is the one selected).
// Without this script the answer is typed, and the server finds it in the variant.
"use strict";

(function () {
  function bind(form) {
    const variant = form.querySelector("textarea[name=variant_text]");
    const answer = form.querySelector("input[name=variant_answer]");
    const start = form.querySelector("input[name=answer_start]");
    const end = form.querySelector("input[name=answer_end]");
    if (!variant || !answer || !start || !end) return;
    const said = document.createElement("p");
    said.className = "answer-picked help";
    said.id = "answer-picked";
    said.setAttribute("aria-live", "polite");
    answer.insertAdjacentElement("afterend", said);

    function forget(why) {
      if (start.value === "" && end.value === "") return;
      start.value = "";
      end.value = "";
      said.textContent = why;
    }

    function pick() {
      const from = variant.selectionStart;
      const to = variant.selectionEnd;
      if (from === to || variant.value.slice(from, to).trim() === "") return;
      start.value = String(from);
      end.value = String(to);
      answer.value = variant.value.slice(from, to).trim();
      said.textContent = `The answer is “${answer.value}”, selected at characters ${from} to ${to} of the variant.`;
    }

    variant.addEventListener("select", pick);
    variant.addEventListener("mouseup", pick);
    variant.addEventListener("keyup", pick);
    variant.addEventListener("input", () => {
      // An edit elsewhere keeps the selection only while the text there is still the answer.
      if (start.value === "") return;
      if (variant.value.slice(Number(start.value), Number(end.value)).trim() !== answer.value) {
        forget("The variant changed under the answer: select it again, or its text is looked for.");
      }
    });
    answer.addEventListener("input", () =>
      forget("The answer is typed: it must occur once in the variant."),
    );
    if (start.value !== "" && end.value !== "") {
      said.textContent = `The answer is “${answer.value}”, selected at characters ${start.value} to ${end.value} of the variant.`;
    }
  }

  document.addEventListener("DOMContentLoaded", () => {
    for (const form of document.querySelectorAll("form[data-span-answer]")) bind(form);
  });
})();
