// The pair editor's word diff, live: as the variant is typed, the tokens removed from the
// original and the tokens added are shown under the field. The server draws the same diff
// (bibi.web.views.guidance.word_diff) after every button, so the page reads without this.
"use strict";

(function () {
  // The tokens of bibi.pairs.checks.tokenize: clitics, words, then any other visible character.
  const WORD = "[\\p{L}\\p{N}\\p{M}_]";
  const TOKEN = new RegExp(
    `${WORD}+(?=n['’]t(?!${WORD}))|n['’]t(?!${WORD})|['’](?:s|d|m|re|ve|ll)(?!${WORD})|${WORD}+|\\S`,
    "giu"
  );

  function tokenize(text) {
    return text.match(TOKEN) || [];
  }

  // Longest common subsequence of two token lists, as runs of same / del / ins.
  function diff(before, after) {
    const rows = before.length + 1;
    const cols = after.length + 1;
    const table = new Array(rows * cols).fill(0);
    for (let i = before.length - 1; i >= 0; i--) {
      for (let j = after.length - 1; j >= 0; j--) {
        table[i * cols + j] =
          before[i] === after[j]
            ? table[(i + 1) * cols + j + 1] + 1
            : Math.max(table[(i + 1) * cols + j], table[i * cols + j + 1]);
      }
    }
    const pieces = [];
    const push = (op, token) => {
      const last = pieces[pieces.length - 1];
      if (last && last.op === op) last.tokens.push(token);
      else pieces.push({ op: op, tokens: [token] });
    };
    let i = 0;
    let j = 0;
    while (i < before.length || j < after.length) {
      if (i < before.length && j < after.length && before[i] === after[j]) {
        push("same", before[i]);
        i++;
        j++;
      } else if (j < after.length && (i === before.length || table[i * cols + j + 1] >= table[(i + 1) * cols + j])) {
        push("ins", after[j]);
        j++;
      } else {
        push("del", before[i]);
        i++;
      }
    }
    return pieces;
  }

  function draw(target, original, variant) {
    const tags = { same: "span", del: "del", ins: "ins" };
    target.replaceChildren();
    diff(tokenize(original), tokenize(variant)).forEach((piece, index) => {
      if (index > 0) target.append(" ");
      const element = document.createElement(tags[piece.op]);
      element.textContent = piece.tokens.join(" ");
      target.append(element);
    });
  }

  document.addEventListener("DOMContentLoaded", () => {
    const original = document.getElementById("original-text");
    const field = document.querySelector("#pair-editor textarea[name=variant_text]");
    const target = document.getElementById("word-diff");
    if (!original || !field || !target) return;
    const text = original.dataset.text;
    let pending = 0;
    field.addEventListener("input", () => {
      // Once typing pauses, so that a screen reader announces the diff, not every keystroke.
      window.clearTimeout(pending);
      pending = window.setTimeout(() => draw(target, text, field.value), 250);
    });
  });
})();
