"""Why a hosted version failed, in plain words, and what the team can do about it.

The worker records a reason code and a detail (``SystemVersion.failure_reason`` and
``failure_detail``); the system page shows the detail under these words.
"""

from __future__ import annotations

from dataclasses import dataclass

from bibi.systems.models import SystemVersion

Reason = SystemVersion.FailureReason


@dataclass(frozen=True)
class FailureHelp:
    what_happened: str
    what_to_do: str


FAILURE_HELP = {
    Reason.INVALID_ARCHIVE: FailureHelp(
        "The archive could not be unpacked safely.",
        "Make a .zip or .tar.gz of the model directory itself: no links, no absolute paths, "
        "no '..', within the size and file-count limits. Then upload it again.",
    ),
    Reason.INVALID_MODEL: FailureHelp(
        "The model directory was refused before anything was loaded.",
        "Save the model in safetensors format with its config.json and tokenizer (transformers), "
        "or config.json, model.safetensors and vocab.json (bibi-native). Pickled weights "
        "(.bin, .pt, .pkl) and custom code are never run.",
    ),
    Reason.LABEL_MISMATCH: FailureHelp(
        "The model's labels could not be matched with the task's.",
        "Name the labels in the model's config as the task does, or give a label mapping "
        "(e.g. LABEL_0=negative,LABEL_1=positive) with the upload.",
    ),
    Reason.MODEL_ERROR: FailureHelp(
        "The model loaded but failed while predicting.",
        "Check that it runs on plain text with its own tokenizer on your machine, then upload "
        "it again.",
    ),
    Reason.TIMEOUT: FailureHelp(
        "The model took longer than the time limit to predict the blind dev and starter sets.",
        "Upload a smaller or faster model, or ask the organizers about the limit.",
    ),
    Reason.OUT_OF_MEMORY: FailureHelp(
        "The model ran out of memory on the worker.",
        "Upload a smaller model (fewer parameters, or a shorter maximum length).",
    ),
    Reason.WORKER_CRASHED: FailureHelp(
        "The model was killed while it ran, every time it was tried: most likely it used more "
        "memory than a worker has.",
        "Upload a smaller model, or one that runs in less memory (a shorter maximum length, "
        "fewer parameters), then upload it again.",
    ),
    Reason.WORKER_LOST: FailureHelp(
        "The platform lost the worker that was checking this version. This was not your "
        "model's fault and does not count against your uploads.",
        "Upload the same archive again.",
    ),
}


def failure_help(reason: str) -> FailureHelp | None:
    return FAILURE_HELP.get(reason)  # type: ignore[call-overload]
