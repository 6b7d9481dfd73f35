// The pair editor's word diff, live: as the variant is typed, the words the original loses and
// the words the variant gains are marked under the field. Words are runs of non-space
// characters, as in bibi/web/diff.py, which draws the same diff on the server after every
// button, so the page reads without this script.
"use strict";

(function () {
  // Longest common subsequence of two word lists: for each side, which words are changed.
  function changed(before, after) {
    const cols = after.length + 1;
    const table = new Array((before.length + 1) * cols).fill(0);
    for (let i = before.length - 1; i >= 0; i--) {
      for (let j = after.length - 1; j >= 0; j--) {
        table[i * cols + j] =
          before[i] === after[j]
            ? table[(i + 1) * cols + j + 1] + 1
            : Math.max(table[(i + 1) * cols + j], table[i * cols + j + 1]);
      }
    }
    const lost = before.map(() => true);
    const gained = after.map(() => true);
    let i = 0;
    let j = 0;
    while (i < before.length && j < after.length) {
      if (before[i] === after[j]) {
        lost[i++] = false;
        gained[j++] = false;
      } else if (table[(i + 1) * cols + j] >= table[i * cols + j + 1]) {
        i++;
      } else {
        j++;
      }
    }
    return [lost, gained];
  }

  // One side as text with its changed runs in <del> or <ins> (spaces kept as written; a space
  // between two changed words is inside their run), with the same hidden "[removed: ...]"
  // words for screen readers as the server's diff.
  function draw(target, text, marks, tag, said) {
    const tokens = text.match(/\S+|\s+/g) || [];
    const runs = [];
    let word = 0;
    for (const token of tokens) {
      const space = /^\s+$/.test(token);
      const mark = space ? word > 0 && marks[word - 1] && marks[word] === true : marks[word++];
      const last = runs[runs.length - 1];
      if (last && last.mark === mark) last.text += token;
      else runs.push({ text: token, mark: mark });
    }
    target.replaceChildren();
    for (const run of runs) {
      if (!run.mark) {
        target.append(run.text);
        continue;
      }
      const element = document.createElement(tag);
      const open = document.createElement("span");
      open.className = "visually-hidden";
      open.textContent = `[${said}: `;
      const close = document.createElement("span");
      close.className = "visually-hidden";
      close.textContent = "]";
      element.append(open, run.text, close);
      target.append(element);
    }
  }

  function update(original, variant, targets) {
    const words = (text) => text.match(/\S+/g) || [];
    const [lost, gained] = changed(words(original), words(variant));
    draw(targets.original, original, lost, "del", "removed");
    draw(targets.variant, variant, gained, "ins", "added");
  }

  // One diff per text the form edits (a sentence pair's premise and hypothesis each): the
  // block names its field and carries the original's text. A field left empty stands for the
  // original's text where the block says so (an item of several texts, as the server reads it).
  document.addEventListener("DOMContentLoaded", () => {
    const blocks = document.querySelectorAll("#word-diff-region [data-diff-field]");
    for (const block of blocks) {
      const name = block.dataset.diffField;
      const field = document.querySelector(`#pair-editor textarea[name="${name}"]`);
      const targets = {
        original: block.querySelector(".diff-original"),
        variant: block.querySelector(".diff-variant"),
      };
      if (!field || !targets.original || !targets.variant) continue;
      const text = block.dataset.text;
      const blank = "blankIsOriginal" in block.dataset;
      const value = () => (blank && field.value === "" ? text : field.value);
      // Whatever was typed before this script ran.
      if (value() !== text) update(text, value(), targets);
      let pending = 0;
      field.addEventListener("input", () => {
        // Once typing pauses, so that a screen reader announces the diff, not every keystroke.
        window.clearTimeout(pending);
        pending = window.setTimeout(() => update(text, value(), targets), 250);
      });
    }
  });
})();
