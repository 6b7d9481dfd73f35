"""Adding pairs to a submitted set (``pair_set_submit``'s ``append_to``): the set never
changes, so the pairs it holds and the pairs added make a new set; this module says which
set may be added to, what the new set copies, and what the answer says of it."""

from __future__ import annotations

from django.core.exceptions import ValidationError

from bibi.files import RowError
from bibi.pairs.models import Pair, PairSet
from bibi.sharedtasks.models import Team


def pairs_said(count: int) -> str:
    return f"{count} pair" if count == 1 else f"{count} pairs"


def append_base_require(*, team: Team, pair_set: PairSet) -> PairSet:
    """The set pairs are added to: a submitted set of ``team`` (else ``ValidationError``)."""
    if pair_set.team_id != team.id or pair_set.status != PairSet.Status.SUBMITTED:
        raise ValidationError(
            f"Pairs can be added only to a submitted set of your team; set {pair_set.id} is "
            f"{'a draft' if pair_set.team_id == team.id else 'not one of them'}."
        )
    return pair_set


def base_variants(pair_set: PairSet) -> dict[tuple[str, ...], int]:
    """The variant items of a set's pairs (``TaskType.pair_fields("variant")``), each with its
    row: the variants a pair added to the set may not repeat."""
    kind = pair_set.shared_task.kind
    return {
        tuple(row[:-1]): row[-1]
        for row in pair_set.pairs.values_list(*kind.pair_fields("variant"), "row")
    }


def pair_copy(pair: Pair, pair_set: PairSet) -> Pair:
    """``pair`` as a pair of ``pair_set``: every field the same, in a new row."""
    fields = {
        field.attname: getattr(pair, field.attname)
        for field in Pair._meta.concrete_fields
        if field.name not in ("id", "pair_set")
    }
    return Pair(pair_set=pair_set, **fields)


def added_to(
    base: PairSet, new_pairs: list[Pair], warnings: list[RowError]
) -> tuple[list[Pair], list[RowError]]:
    """The pairs of ``base`` a set adds ``new_pairs`` to, the new pairs' rows moved past the
    set's where they clash, and a warning saying what the new set holds."""
    base_pairs = list(base.pairs.order_by("row"))
    taken_rows = {pair.row for pair in base_pairs}
    if taken_rows.intersection(pair.row for pair in new_pairs):
        shift = max(taken_rows)
        for pair in new_pairs:
            pair.row += shift
    note = RowError(
        line=0,
        reason=f"This set holds the {pairs_said(len(base_pairs))} of set {base.id} and the "
        f"{pairs_said(len(new_pairs))} added to them: {pairs_said(len(base_pairs) + len(new_pairs))} "
        f"in all. Set {base.id} stays as it was, a version.",
    )
    return base_pairs, [*warnings, note]
