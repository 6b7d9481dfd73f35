"""The prediction matrix a task's pairs need: which cells exist, which failed, which are missing.

A cell is a ``bibi.systems.models.Prediction``: one system version on one text. Scoring
needs, for each scored version and each distinct text of the effective pairs (originals and
variants), one cell:

- a **hosted** version (the active version of a hosted system, ready) has a cell for a text
  when it has a prediction with λmax for that text from any source: a starter original
  computed at validation is found by its text digest and reused, never recomputed. A text
  its model failed on (``CellFailure``) is not missing either: the pairs holding it are left
  out for that version. Every other text is *missing* and goes to the ``gpu`` queue;
- a **self-reported** version brings its own cells: its uploaded pair predictions. Without
  a prediction for every pair text it is left out of the run, with the reason.

A system without a ready active version (its version still being validated, or failed, or
none uploaded) is not scored either, and is listed with the reason too
(``systems_left_out``): the leaderboard never drops a system silently.

Texts are those of the pairs scored (``bibi.pairs.validation.pairs_scored``: with validated
labels, and as if validation were off, for comparison), as stored on the pairs. The
database is the only record of what is missing, so any process can ask again at any time.

An item is what the task's type says (``TaskType.pair_items``): a text, a sentence and the
pair's question, a premise and a hypothesis. It is keyed by ``bibi.tasktypes.items.item_key``;
``PairMatrix.items`` holds each key's item, a missing item is its text, or the list of its
texts (so the worker knows what to ask), and a span task's cell carries the system's answer
span. Each pair dict gets its items' keys (``original_key``, ``variant_key``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Q, QuerySet

from bibi.evaluation.models import CellFailure
from bibi.pairs.validation import ScoredPairs, pairs_scored
from bibi.sharedtasks.models import Dataset, SharedTask
from bibi.systems.models import Prediction, System, SystemVersion
from bibi.tasktypes import TaskType
from bibi.tasktypes.items import Item, item_line

Source = Prediction.Source


@dataclass(frozen=True)
class ScoredVersion:
    """A system as one run scores it: its active version."""

    system_id: int
    system_name: str
    team_id: int
    kind: str
    version_id: int
    version_number: int
    dev_accuracy: float | None
    dev_count: int | None
    # Span tasks: the answer mode dev_accuracy was computed under ('' for labels).
    dev_answer_mode: str = ""

    @property
    def key(self) -> str:
        """How scoring names the system: its id, so names are chosen when shown."""
        return str(self.system_id)

    @property
    def hosted(self) -> bool:
        return self.kind == System.Kind.HOSTED


@dataclass(frozen=True)
class Cell:
    label: str
    lambda_max: float | None
    input_sha256: str
    truncated: bool
    probabilities: dict[str, float] | None
    # Span tasks: the system's answer (offsets into the sentence, end exclusive).
    answer_start: int | None = None
    answer_end: int | None = None
    answer_text: str = ""


@dataclass
class PairMatrix:
    """The cells a task's pairs need, for the versions scored now."""

    kind: TaskType
    pairs: list[dict[str, Any]]
    items: dict[str, Item]  # digest -> item
    versions: list[ScoredVersion]
    excluded: list[dict[str, Any]]
    # The pairs as if validation were off, and every entry pair's validation (None: not read).
    unvalidated: list[dict[str, Any]] = field(default_factory=list)
    validation: ScoredPairs | None = None
    cells: dict[int, dict[str, Cell]] = field(default_factory=dict)  # version id -> digest ->
    failures: dict[int, dict[str, str]] = field(default_factory=dict)  # version id -> digest ->
    missing: dict[int, list[Any]] = field(default_factory=dict)  # version id -> items

    def item(self, digest: str) -> Any:
        """What a worker is asked about one key: the text, or the list of the item's texts."""
        item = self.items[digest]
        return item[0] if len(item) == 1 else list(item)

    @property
    def texts(self) -> dict[str, str]:
        """digest -> the item as one line (its text, or its texts joined)."""
        return {digest: item_line(item) for digest, item in self.items.items()}

    @property
    def hosted(self) -> list[ScoredVersion]:
        return [version for version in self.versions if version.hosted]

    @property
    def cells_needed(self) -> int:
        return len(self.hosted) * len(self.texts)

    @property
    def cells_missing(self) -> int:
        return sum(len(texts) for texts in self.missing.values())


def pair_item_keys(pair: dict[str, Any]) -> tuple[str, str]:
    """The cell keys of a pair's original and variant (``pair_items_by_digest`` set them)."""
    return pair["original_key"], pair["variant_key"]


def pair_items_by_digest(kind: TaskType, pairs: Iterable[dict[str, Any]]) -> dict[str, Item]:
    """Every distinct item of the pairs (originals and variants), by its key, sorted by item;
    each pair dict gets its items' keys (``original_key``, ``variant_key``)."""
    found: set[Item] = set()
    for pair in pairs:
        original, variant = kind.pair_items(pair)
        pair["original_key"], pair["variant_key"] = kind.item_key(original), kind.item_key(variant)
        found.update((original, variant))
    return {kind.item_key(item): item for item in sorted(found)}


def active_versions(*, shared_task: SharedTask) -> list[ScoredVersion]:
    """The ready active version of every system of the task, in system order."""
    rows = (
        System.objects.filter(
            shared_task=shared_task, active_version__status=SystemVersion.Status.READY
        )
        .order_by("id")
        .values_list(
            "id",
            "name",
            "team_id",
            "kind",
            "active_version_id",
            "active_version__number",
            "active_version__dev_accuracy",
            "active_version__dev_count",
            "active_version__dev_answer_mode",
        )
    )
    return [ScoredVersion(*row) for row in rows]


def pair_matrix(*, shared_task: SharedTask, with_cells: bool = True) -> PairMatrix:
    """The pairs, the versions to score, and every cell they need: present, failed, missing.

    A fixed number of queries whatever the size: the pairs and their validation, versions,
    then the cells and the failures of the scored versions. ``with_cells=False`` reads only which cells exist (enough to know
    what is missing), not what they say.
    """
    scored = pairs_scored(shared_task=shared_task)
    pairs = scored.validated
    # Labels are not in cells: both views need the items of either, and nothing more.
    items = pair_items_by_digest(shared_task.kind, [*pairs, *scored.unvalidated])
    candidates = active_versions(shared_task=shared_task)
    matrix = PairMatrix(
        kind=shared_task.kind,
        pairs=pairs,
        items=items,
        versions=[],
        excluded=[],
        unvalidated=scored.unvalidated,
        validation=scored,
    )
    matrix.excluded.extend(systems_left_out(shared_task=shared_task, scored=candidates))
    if not candidates:
        return matrix
    hosted = [version.version_id for version in candidates if version.hosted]
    reported = [version.version_id for version in candidates if not version.hosted]
    # A hosted version's cell has λmax (a blind-dev row is not one); a self-reported
    # version's cells are its pair predictions.
    rows = Prediction.objects.filter(
        Q(system_version_id__in=hosted, lambda_max__isnull=False)
        & Q(source__in=[Source.PAIRS, Source.STARTER])
        | Q(system_version_id__in=reported, source=Source.PAIRS)
    ).order_by("system_version_id", "source", "id")
    present, found = _cells_read(rows, items, [v.version_id for v in candidates], with_cells)
    failures = _failures_read(hosted, items)
    for version in candidates:
        have = present[version.version_id]
        if version.hosted:
            failed = failures[version.version_id]
            matrix.missing[version.version_id] = [
                matrix.item(digest)
                for digest in items
                if digest not in have and digest not in failed
            ]
            matrix.failures[version.version_id] = failed
        elif not have.issuperset(items):
            matrix.excluded.append(_excluded(version, len(have & items.keys()), len(items)))
            continue
        matrix.versions.append(version)
        matrix.cells[version.version_id] = found[version.version_id]
    return matrix


def _cells_read(
    rows: QuerySet[Prediction], texts: dict[str, Item], version_ids: list[int], with_cells: bool
) -> tuple[dict[int, set[str]], dict[int, dict[str, Cell]]]:
    """Per version: the digests of the pair texts it has a cell for, and (``with_cells``)
    the cells themselves, the first row of each text winning."""
    present: dict[int, set[str]] = {version_id: set() for version_id in version_ids}
    found: dict[int, dict[str, Cell]] = {version_id: {} for version_id in version_ids}
    if not with_cells:
        for version_id, digest in rows.values_list("system_version_id", "text_sha256"):
            present[version_id].add(digest)
        return present, found
    fields = ("system_version_id", "text_sha256", "label", "lambda_max", "input_sha256")
    for (
        version_id,
        digest,
        label,
        lambda_max,
        seen,
        truncated,
        probabilities,
        *answer,
    ) in rows.values_list(
        *fields, "truncated", "probabilities", "answer_start", "answer_end", "answer_text"
    ):
        if digest in texts:
            found[version_id].setdefault(
                digest, Cell(label, lambda_max, seen, truncated, probabilities, *answer)
            )
    for version_id, cells in found.items():
        present[version_id] = set(cells)
    return present, found


def _failures_read(hosted: list[int], texts: dict[str, Item]) -> dict[int, dict[str, str]]:
    """Per hosted version: digest → why its model failed on that pair text."""
    failures: dict[int, dict[str, str]] = {version_id: {} for version_id in hosted}
    for version_id, digest, reason in CellFailure.objects.filter(
        system_version_id__in=hosted
    ).values_list("system_version_id", "text_sha256", "reason"):
        if digest in texts:
            failures[version_id].setdefault(digest, reason)
    return failures


def systems_left_out(
    *, shared_task: SharedTask, scored: list[ScoredVersion]
) -> list[dict[str, Any]]:
    """The task's systems without a ready active version, each with why (its latest
    version still being validated, or failed; or no version at all): the leaderboard lists
    them as left out, never silently. Two queries."""
    systems = list(
        System.objects.filter(shared_task=shared_task)
        .exclude(id__in=[version.system_id for version in scored])
        .order_by("id")
        .values_list("id", "name", "team_id")
    )
    latest: dict[int, SystemVersion] = {}
    for version in SystemVersion.objects.filter(
        system_id__in=[system_id for system_id, _, _ in systems]
    ).order_by("system_id", "-number"):
        latest.setdefault(version.system_id, version)
    return [
        {
            "system_id": system_id,
            "name": name,
            "team_id": team_id,
            "reason": _left_out_reason(latest.get(system_id)),
        }
        for system_id, name, team_id in systems
    ]


def _left_out_reason(version: SystemVersion | None) -> str:
    if version is None:
        return "no version uploaded yet"
    if version.status in (SystemVersion.Status.QUEUED, SystemVersion.Status.RUNNING):
        return (
            f"version {version.number} is still being validated "
            f"({version.get_status_display().lower()}): it is scored once it is ready"
        )
    if version.status == SystemVersion.Status.FAILED:
        why = version.get_failure_reason_display() if version.failure_reason else "no reason"
        return f"version {version.number} failed validation ({why})"
    return f"version {version.number} is not the active version"


def _excluded(version: ScoredVersion, known: int, needed: int) -> dict[str, Any]:
    """Why a self-reported version is left out: it lacks predictions for some pair texts."""
    return {
        "system_id": version.system_id,
        "name": version.system_name,
        "team_id": version.team_id,
        "reason": "no predictions for the pair texts yet"
        if not known
        else f"predictions for {known} of the {needed} pair texts: upload them again",
    }


def dataset_missing(
    *, versions: Iterable[SystemVersion], dataset: Dataset, examples: list[tuple[int, str]]
) -> dict[int, list[int]]:
    """For new starter or blind-dev examples: the ids each hosted version needs a cell for.

    ``examples`` are (id, cell key) of ``dataset``: ``TaskType.item_key``. An example the version's model failed on is
    not missing. Two queries whatever the number of versions and examples.
    """
    ids = [version.id for version in versions]
    digests = dict(examples)
    have: dict[int, set[int]] = {version_id: set() for version_id in ids}
    for version_id, example_id in Prediction.objects.filter(
        system_version_id__in=ids, source=dataset.split, example__dataset=dataset
    ).values_list("system_version_id", "example_id"):
        have[version_id].add(example_id)
    failed: dict[int, set[str]] = {version_id: set() for version_id in ids}
    for version_id, digest in CellFailure.objects.filter(
        system_version_id__in=ids, source=dataset.split
    ).values_list("system_version_id", "text_sha256"):
        failed[version_id].add(digest)
    missing: dict[int, list[int]] = {}
    for version_id in ids:
        todo = [
            example_id
            for example_id, digest in digests.items()
            if example_id not in have[version_id] and digest not in failed[version_id]
        ]
        if todo:
            missing[version_id] = todo
    return missing
