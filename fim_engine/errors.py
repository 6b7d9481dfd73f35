"""Why a model directory was refused.

Every refusal of a model directory is a :class:`ModelFormatError` (a ``ValueError``), so a
caller that only wants to show the builder a message catches the base class; the subclasses let
tests and the upload service tell the failures apart. Messages name the offending file or key
and say what to do. The errors of the language resources (WordNet, the opinion lexicon) live in
:mod:`edits.errors`. This module imports nothing heavy (no torch).

Example:
    >>> try:
    ...     check_model_dir("upload/")
    ... except ModelFormatError as error:
    ...     print(error)
    model.bin is a pickled weights file; bibi never unpickles uploads. Save the weights with
    safetensors (model.save_pretrained(..., safe_serialization=True)) and upload model.safetensors.
"""

from __future__ import annotations


class ModelFormatError(ValueError):
    """A model directory that bibi cannot (or will not) load."""


class MissingFileError(ModelFormatError):
    """A required file (config.json, model.safetensors, vocab.json) is absent or unreadable."""


class PickledWeightsError(ModelFormatError):
    """The directory holds a pickle (``*.bin``, ``*.pt``, ``*.pth``, ``*.pkl``, ...)."""


class RemoteCodeError(ModelFormatError):
    """The model asks for code of its own: ``auto_map`` in a config, or Python files."""


class MissingTokenizerError(ModelFormatError):
    """No tokenizer files (transformers format) or no ``vocab.json`` (bibi-native format)."""


class UnknownArchitectureError(ModelFormatError):
    """The architecture is not a sequence classifier that bibi knows how to build."""


class MissingWeightsError(ModelFormatError):
    """``model.safetensors`` lacks tensors the architecture needs (e.g. the classifier head)."""


class WeightShapeError(ModelFormatError):
    """A tensor in ``model.safetensors`` does not have the shape the config implies."""


class WeightValueError(ModelFormatError):
    """A tensor in ``model.safetensors`` cannot be used: an unknown dtype, a header whose byte
    ranges disagree with its shapes, or NaN / infinite values."""


class ConfigValueError(ModelFormatError):
    """A field of ``config.json`` (or another JSON file of the model) has a value the model
    cannot be built from: a wrong type, an impossible size, an unknown activation, nesting
    too deep to read. The message names the field."""


class LabelCountError(ModelFormatError):
    """The label list disagrees with the classifier's outputs or with the shared task."""


class InputKindError(ModelFormatError):
    """The model reads single texts where the shared task gives sentence pairs, or the reverse
    (a bibi-native ``bow-pair`` model for a single-text task)."""


class PaddingSensitiveModelError(ModelFormatError):
    """The model's predictions change when a text is padded inside a batch."""
