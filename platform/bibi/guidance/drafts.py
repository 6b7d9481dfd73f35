"""A breaker's draft variant as the systems will read it: one text per segment of the task's
item, each normalised as a pair's variant is stored (``bibi.texts.normalize_text``), and refused
before any model runs when it could never be a pair of the task.

The draft's texts come in the pair's own fields (``variant_text``, a sentence pair's
``variant_text_b``; ``SuggestRequest``). On an item of several texts a breaker may edit, a text
left out (or empty) is the original's, as in a pair; a segment no breaker edits (a span item's
question) is the original's always.

Refused, by field: an empty variant; the original unchanged (by the rule the pair checks
compare with); a text longer than the task allows; a text the task keeps fixed that differs
from the original's (the task setting ``editable_text``).
"""

from __future__ import annotations

from django.core.exceptions import ValidationError

from bibi.guidance.kinds import SuggestRequest
from bibi.sharedtasks.models import Example, SharedTask
from bibi.texts import normalize_text


def clean_variant(
    shared_task: SharedTask, example: Example, request: SuggestRequest
) -> tuple[str, ...] | None:
    """The draft item (one text per segment of the task's type, in order), or None when the
    request gives no draft (it asks for suggestions); ``ValidationError`` naming the field
    otherwise (module docstring)."""
    kind = shared_task.kind
    original = kind.item_fields(kind.item(example))
    given = {
        segment.field: getattr(request, f"variant_{segment.field}", None)
        for segment in kind.segments
        if segment.editable is not False
    }
    if all(text is None for text in given.values()):
        return None
    first = f"variant_{next(iter(given))}"
    texts = {field: normalize_text(text or "") for field, text in given.items()}
    if len(texts) > 1:
        texts = {field: text or original[field] for field, text in texts.items()}
    if not any(texts.values()):
        raise ValidationError({first: "The variant is empty."})
    changed = [field for field, text in texts.items() if text != normalize_text(original[field])]
    if not changed:
        raise ValidationError({first: "The variant is the original unchanged."})
    editable = kind.editable_fields(shared_task.editable_text)
    for field in changed:
        if field not in editable:
            titles = " and ".join(s.title.lower() for s in kind.segments if s.field in editable)
            title = next(s.title for s in kind.segments if s.field == field)
            raise ValidationError(
                {
                    f"variant_{field}": f"This task lets breakers edit only the {titles}: the "
                    f"{title.lower()} must stay the original's."
                }
            )
    for field, text in texts.items():
        if len(text) > shared_task.pair_max_text_chars:
            raise ValidationError(
                {
                    f"variant_{field}": f"The variant has {len(text)} characters; this task "
                    f"allows {shared_task.pair_max_text_chars}."
                }
            )
    return tuple(texts.get(field, original[field]) for field in kind.segment_fields)
