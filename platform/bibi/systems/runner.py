"""Running a builder's model on a worker: loading it once, calling it, blaming the right party.

Worker-only (it imports ``fim_engine`` and so torch): imported by ``validation`` and by the
evaluation app's worker code, never by a module the web process loads.

- ``model_call`` runs anything that executes the builder's model and turns the model's own
  failures into a ``ValidationFailed`` with a reason the builder can act on.
- ``version_system`` loads a ready version's model from the model store, and keeps the
  ``SYSTEM_MODEL_CACHE_SIZE`` most recently used ones loaded in this worker process, so a
  worker running many chunks of one system loads it once.
"""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings

import fim_engine
from bibi.systems.models import SystemVersion
from bibi.systems.services import ValidationFailed

Reason = SystemVersion.FailureReason


def model_call(call: Any, *args: Any, **kwargs: Any) -> Any:
    """Run the builder's model; its own failures become reasons the builder can act on."""
    try:
        return call(*args, **kwargs)
    except (SoftTimeLimitExceeded, ValidationFailed, fim_engine.ModelFormatError):
        raise
    except MemoryError:
        raise ValidationFailed(
            Reason.OUT_OF_MEMORY, "The model ran out of memory on the worker."
        ) from None
    except Exception as exc:  # anything the model's own computation raises is the model's failure
        if "out of memory" in str(exc).lower():
            raise ValidationFailed(
                Reason.OUT_OF_MEMORY, f"The model ran out of memory: {exc}"
            ) from None
        raise ValidationFailed(
            Reason.MODEL_ERROR, f"The model raised {exc.__class__.__name__}: {exc}"
        ) from None


# version uuid -> loaded system, most recently used last.
_LOADED: OrderedDict[str, fim_engine.System] = OrderedDict()


def version_system(version: SystemVersion) -> fim_engine.System:
    """The loaded model of a ready hosted ``version``, from this process's cache if it is there.

    Raises ``ValidationFailed`` when the model cannot be loaded or run.
    """
    key = str(version.uuid)
    system = _LOADED.get(key)
    if system is not None:
        _LOADED.move_to_end(key)
        return system
    system = model_call(
        fim_engine.load_system,
        Path(settings.MODEL_STORE) / version.model_dir,
        batch_size=settings.SYSTEM_BATCH_SIZE,
        max_length=settings.SYSTEM_MAX_SEQUENCE_LENGTH,
    )
    _LOADED[key] = system
    while len(_LOADED) > max(settings.SYSTEM_MODEL_CACHE_SIZE, 1):
        _LOADED.popitem(last=False)
    return system


def loaded_versions() -> list[str]:
    """The uuids of the versions this process holds loaded, least recently used first."""
    return list(_LOADED)
