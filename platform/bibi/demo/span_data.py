"""The data of the demo's QA-SRL span task: bounded slices of the shared wiki1 files.

The slices are whole sentence blocks of the ``.qa`` files (../shared/data/qasrl/PROVENANCE.md),
taken in file order until they hold enough questions, so the same files always give the same
slices: the first blocks of ``wiki1.train.qa`` for training, the first blocks of
``wiki1.dev.qa`` as the blind dev set and the blocks right after them as the starter set
(distinct sentences, so no starter item is scored as blind dev). The slices are built in
memory and imported as ``.qa`` files; nothing is copied into the project.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bibi.demo.data import slices_digest

TRAIN_FILE = "wiki1.train.qa"
DEV_FILE = "wiki1.dev.qa"
# At least this many questions in each slice (whole sentences: a slice ends on a block).
TRAIN_QUESTIONS = 2000
BLIND_DEV_QUESTIONS = 300
STARTER_QUESTIONS = 48
# A question line of a block has nine TAB-separated fields (seven slots, "?", the answers).
QUESTION_TABS = 8


@dataclass(frozen=True)
class SpanSlice:
    """Some whole blocks of a ``.qa`` file, as the bytes of a ``.qa`` file."""

    source: Path
    filename: str  # the name it is imported under, e.g. "wiki1.dev.blind_dev.qa"
    blocks: tuple[str, ...]

    @property
    def questions(self) -> int:
        return sum(_questions(block) for block in self.blocks)

    @property
    def sentences(self) -> int:
        return len(self.blocks)

    def text(self) -> str:
        return "\n\n".join(self.blocks) + "\n\n"

    def data(self) -> bytes:
        return self.text().encode()

    def lines(self) -> list[str]:
        return self.text().split("\n")


@dataclass(frozen=True)
class SpanDemoData:
    """The QA-SRL slices of the demo's span task, cut from ``directory``."""

    directory: Path
    slices: dict[str, SpanSlice]  # split → slice: train, blind_dev, starter

    @classmethod
    def find(cls, directory: str | Path) -> SpanDemoData | None:
        """The slices of the wiki1 files in ``directory``; None when either file is missing
        (the demo then builds its sentiment tasks only, and says so)."""
        root = Path(directory).expanduser().resolve()
        train, dev = root / TRAIN_FILE, root / DEV_FILE
        if not (train.is_file() and dev.is_file()):
            return None
        train_blocks = _blocks(train)
        dev_blocks = _blocks(dev)
        blind_dev = _leading(dev_blocks, BLIND_DEV_QUESTIONS)
        starter = _leading(dev_blocks[len(blind_dev) :], STARTER_QUESTIONS)
        return cls(
            root,
            {
                "train": SpanSlice(
                    train, "wiki1.train.slice.qa", _leading(train_blocks, TRAIN_QUESTIONS)
                ),
                "blind_dev": SpanSlice(dev, "wiki1.dev.blind_dev.qa", blind_dev),
                "starter": SpanSlice(dev, "wiki1.dev.starter.qa", starter),
            },
        )

    def digest(self, *splits: str) -> str:
        """SHA-256 over the slices of ``splits`` (default: all three)."""
        return slices_digest(self.slices, splits)

    def describe(self) -> str:
        return ", ".join(
            f"{split} {piece.questions} questions ({piece.sentences} sentences of "
            f"{piece.source.name})"
            for split, piece in self.slices.items()
        )


def _blocks(path: Path) -> list[str]:
    """The sentence blocks of a ``.qa`` file, in order (a blank line ends a block)."""
    text = path.read_text(encoding="utf-8").replace("\r\n", "\n")
    return [block.strip("\n") for block in text.split("\n\n") if block.strip()]


def _questions(block: str) -> int:
    return sum(1 for line in block.split("\n") if line.count("\t") == QUESTION_TABS)


def _leading(blocks: list[str], questions: int) -> tuple[str, ...]:
    """The first blocks holding at least ``questions`` questions (all of them if fewer)."""
    taken: list[str] = []
    count = 0
    for block in blocks:
        if count >= questions:
            break
        taken.append(block)
        count += _questions(block)
    return tuple(taken)
