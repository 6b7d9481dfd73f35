"""Presets: named sets of task settings an organizer applies in one step.

A preset is data: the ``SharedTask`` fields it sets and their values; every other setting
stays as it is. Applying one goes through ``shared_task_update`` (the API's path), so the
same refusals apply and the audit entry lists each field's old and new value, with
``via: "preset:<key>"``.

- ``2017-sentiment-replay``: the rules of the 2017 Build It Break It sentiment task as far
  as its overview (Ettinger et al. 2017, section 3.3) states them, and the scoring modes
  that reproduce its published tables (``scoring/README.md``, "What the published 2017
  tables used"). The overview asks for "targeted changes" to a sentence of the provided
  data, encourages but does not require a rationale, and sets no numeric limit on an edit;
  so the preset keeps only what it states (a real edit of a starter sentence that keeps
  some of its words) and lifts the edit-size limits as far as the fields allow: the
  default rules refuse real 2017 pairs (tokenised, lowercased variants count as many
  edits). Scoring: ``original_f1`` weights and ``sentences`` break rate, on the labels as
  submitted (label validation off: 2017 had none, and its tables scored submitted labels).
- ``2017-qasrl-replay``: a span task scored by the 2017 QA-SRL track's rule, an answer right
  when it "overlapped at least 75% in characters with the true answer" (overview, section
  5.3), in the reading over the longer span (``overlap_longer``), weighted by dev answer
  accuracy. Not the literal reading (``overlap_2017``, over the true answer's length): under
  it an answer holding the true one is right however long, so answering every question with
  the whole sentence scores 100% (wiki1.dev, ``scoring/README.md``), which no contest can use.
- ``strict-minimal-pairs``: small, explained edits: at most 2 token edits (or a fifth of
  the original's tokens on long sentences), at least 80% of the variant's tokens from the
  original, and a rationale with every pair. Scoring is left as it is.
- ``validated-labels``: every entry pair labelled again, blind, by three validators, a
  majority deciding (as Dynabench validates fooling examples; the 2017 overview's lesson
  that breakers' labels need an outside check). Scores use the validated labels.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError

from bibi.sharedtasks.models import SharedTask
from bibi.sharedtasks.services.tasks import shared_task_update


@dataclass(frozen=True)
class Preset:
    key: str
    name: str
    about: str
    values: dict[str, Any]


PRESETS: dict[str, Preset] = {
    preset.key: preset
    for preset in (
        Preset(
            key="2017-sentiment-replay",
            name="2017 sentiment replay",
            about=(
                "The 2017 overview's rules: a variant is a targeted change to a starter "
                "sentence, a rationale is encouraged but not required, and no edit size is "
                "imposed; scored per sentence with original-F1 weights, the modes that "
                "reproduce the 2017 tables."
            ),
            values={
                "pair_min_shared_token_ratio": 0.1,
                "pair_max_edit_distance": 1000,
                "pair_max_edit_ratio": 1.0,
                "pair_require_rationale": False,
                "weight_mode": SharedTask.WeightMode.ORIGINAL_F1,
                "break_rate_mode": SharedTask.BreakRateMode.SENTENCES,
                "validation_mode": SharedTask.ValidationMode.OFF,
            },
        ),
        Preset(
            key="2017-qasrl-replay",
            name="2017 QA-SRL replay",
            about=(
                "Span tasks: an answer is right when at least 75% of each of it and the true "
                "answer lies in the other (overlap_longer, the 2017 overview's 75% character "
                "rule over the longer span; read over the true answer alone, overlap_2017, "
                "the whole sentence would always be right); systems weighted by their dev "
                "answer accuracy under that rule."
            ),
            values={
                "answer_mode": SharedTask.AnswerMode.OVERLAP_LONGER,
                "weight_mode": SharedTask.WeightMode.DEV_ACCURACY,
            },
        ),
        Preset(
            key="strict-minimal-pairs",
            name="Strict minimal pairs",
            about=(
                "Small, explained edits: at most 2 token edits (a fifth of the original's "
                "tokens on long sentences), at least 80% of the variant's tokens taken from "
                "the original, and a rationale with every pair. Scoring is unchanged."
            ),
            values={
                "pair_min_shared_token_ratio": 0.8,
                "pair_max_edit_distance": 2,
                "pair_max_edit_ratio": 0.2,
                "pair_require_rationale": True,
            },
        ),
        Preset(
            key="validated-labels",
            name="Validated labels",
            about=(
                "Every entry pair is labelled again, blind, by three validators (members of "
                "other breaker teams, invited validators, organizers); a majority decides. "
                "Scores use the validated labels, leave out invalid and disputed pairs, and "
                "show the unvalidated score beside them."
            ),
            values={
                "validation_mode": SharedTask.ValidationMode.ALL,
                "validations_per_pair": 3,
                "validation_agreement": SharedTask.ValidationAgreement.MAJORITY,
            },
        ),
    )
}


def preset_get(key: str) -> Preset:
    """The preset named ``key``; ValidationError listing the presets if there is none."""
    preset = PRESETS.get(key)
    if preset is None:
        raise ValidationError(
            f"There is no preset '{key}': choose one of {', '.join(sorted(PRESETS))}."
        )
    return preset


def preset_changes(*, shared_task: SharedTask, preset: Preset) -> dict[str, dict[str, Any]]:
    """What applying ``preset`` would change: field → ``{"from": old, "to": new}``, only the
    fields whose value differs."""
    return {
        field: {"from": getattr(shared_task, field), "to": value}
        for field, value in preset.values.items()
        if getattr(shared_task, field) != value
    }


def shared_task_preset_apply(
    *, shared_task: SharedTask, actor: AbstractBaseUser, key: str
) -> SharedTask:
    """Set the fields of preset ``key`` on ``shared_task`` (through ``shared_task_update``)."""
    preset = preset_get(key)
    return shared_task_update(
        shared_task=shared_task, actor=actor, via=f"preset:{preset.key}", **preset.values
    )
