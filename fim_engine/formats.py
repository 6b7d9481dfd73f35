"""Static inspection of an uploaded model directory, before anything is loaded or run.

:func:`check_model_dir` reads file names, JSON configs and safetensors headers only: it never
unpickles, never reads tensor data and never imports code from the directory. The upload
service calls it first; :func:`fim_engine.load_system` calls it again before loading.

Example:
    >>> fmt = check_model_dir("upload/", expected_num_labels=2)
    >>> fmt.kind, fmt.architecture, fmt.labels
    ('transformers', 'BertForSequenceClassification', ['negative', 'positive'])
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from fim_engine._pickles import looks_pickled
from fim_engine.errors import (
    ConfigValueError,
    InputKindError,
    LabelCountError,
    MissingFileError,
    MissingTokenizerError,
    MissingWeightsError,
    ModelFormatError,
    PickledWeightsError,
    RemoteCodeError,
    UnknownArchitectureError,
    WeightShapeError,
)
from fim_engine.native import (
    ARCHITECTURES,
    NATIVE_FORMAT,
    Vocabulary,
    expected_native_shapes,
    read_native_config,
)
from fim_engine.safetensors_headers import read_safetensors_header

PICKLE_SUFFIXES = {".bin", ".pt", ".pth", ".pkl", ".pickle", ".ckpt", ".joblib", ".dill"}
CODE_SUFFIXES = {".py", ".pyc", ".pyo", ".pyd", ".so", ".dll", ".dylib", ".ipynb"}
SENTENCEPIECE_FILES = ("spiece.model", "sentencepiece.bpe.model", "tokenizer.model", "source.spm")
# Model JSON nests a few levels (text_config → rope_scaling); deeper is an attack on the parsers.
MAX_JSON_DEPTH = 32
# Integer sizes of a config, each positive when present.
_SIZE_KEYS = (
    "num_labels",
    "vocab_size",
    "hidden_size",
    "num_hidden_layers",
    "num_attention_heads",
    "intermediate_size",
    "max_position_embeddings",
    "type_vocab_size",
)
# Keys under which configs name an activation function by its string name.
_ACTIVATION_KEY = re.compile(r"(^|_)(act|activation|activation_function)$")
_SAFE_SAVE_HINT = (
    "Save the weights with safetensors (model.save_pretrained(dir, safe_serialization=True)) "
    "and upload model.safetensors instead."
)


@dataclass(frozen=True)
class ModelFormat:
    """What :func:`check_model_dir` found: the format, architecture and labels of a directory.

    ``kind`` is ``"transformers"`` or ``"bibi-native"``; ``architecture`` is e.g.
    ``"BertForSequenceClassification"`` or ``"cnn"``; ``labels`` are in label-index order;
    ``inputs`` what the model reads: ``("text", "pair")`` for transformers (its tokenizer
    encodes sentence pairs), ``("text",)`` or ``("pair",)`` for a bibi-native architecture.
    """

    path: Path
    kind: str
    architecture: str
    labels: list[str]
    inputs: tuple[str, ...] = ("text", "pair")


def check_model_dir(
    path: str | Path, *, expected_num_labels: int | None = None, inputs: str | None = None
) -> ModelFormat:
    """Inspect a model directory without loading weights or running anything.

    Refuses: links, pickled files anywhere (by name or by content), Python files and
    ``auto_map`` (remote code), missing config, weights or tokenizer, architectures bibi cannot
    build, tensors whose shapes disagree with the config, label lists that disagree with
    the classifier or with ``expected_num_labels``, and (``inputs="text"`` or ``"pair"``, the
    shared task's items) a model that cannot read them (:class:`InputKindError`).

    Raises:
        ModelFormatError: a subclass from :mod:`fim_engine.errors`, with a message for the builder.

    Example:
        >>> check_model_dir("models/cnn/").architecture
        'cnn'
    """
    if inputs not in (None, "text", "pair"):
        raise ValueError(f'inputs must be "text", "pair" or None, got {inputs!r}')
    root = Path(path)
    if not root.is_dir():
        raise MissingFileError(f"{root} is not a directory")
    files = list(walk(root))
    for file in files:
        refuse_unsafe_file(root, file)
    config = read_json(root / "config.json", required=True)
    for file in files:
        if file.suffix == ".json":
            data = config if file == root / "config.json" else read_json(file, required=False)
            if has_key(data, "auto_map"):
                raise RemoteCodeError(
                    f'{file.relative_to(root)} has an "auto_map" entry, which asks to run the model\'s own '
                    "Python code; bibi never runs uploaded code. Use an architecture that transformers ships "
                    "and remove auto_map."
                )
    if config.get("format") == NATIVE_FORMAT:
        model_format = _check_native(root)
    else:
        model_format = _check_transformers(root, config)
    labels = model_format.labels
    if len(set(labels)) != len(labels):
        raise LabelCountError(f"config.json: label names must be distinct, got {labels}")
    if expected_num_labels is not None and len(labels) != expected_num_labels:
        raise LabelCountError(
            f"config.json declares {len(labels)} labels ({', '.join(labels)}) but the shared task has "
            f"{expected_num_labels}"
        )
    if inputs is not None and inputs not in model_format.inputs:
        reads = "sentence pairs" if "pair" in model_format.inputs else "single texts"
        wanted = "sentence pairs (premise, hypothesis)" if inputs == "pair" else "single texts"
        raise InputKindError(
            f"config.json: the {model_format.architecture} architecture reads {reads}, but this "
            f"shared task gives {wanted}"
            + ("; train a bow-pair model for sentence pairs" if inputs == "pair" else "")
        )
    return model_format


def walk(root: Path) -> Iterator[Path]:
    for entry in sorted(root.rglob("*")):
        if entry.is_symlink():
            raise ModelFormatError(
                f"{entry.relative_to(root)} is a link; upload regular files only"
            )
        if entry.is_file():
            yield entry


def refuse_unsafe_file(root: Path, file: Path) -> None:
    name = file.relative_to(root)
    suffix = file.suffix.lower()
    # A safetensors file starts with its header length, which may look like a pickle opcode.
    if suffix in PICKLE_SUFFIXES or (not _is_safetensors(file) and looks_pickled(file)):
        # A stray checkpoint beside weights already saved safely only has to go.
        safe = sorted(path.name for path in root.glob("*.safetensors") if _is_safetensors(path))
        advice = (
            f"The weights are already in {safe[0]}: remove {name} from the upload."
            if safe
            else _SAFE_SAVE_HINT
        )
        raise PickledWeightsError(
            f"{name} is a pickled file; bibi never unpickles uploads. {advice}"
        )
    if suffix in CODE_SUFFIXES:
        raise RemoteCodeError(
            f"{name} is code; bibi never runs uploaded code. Remove it from the upload."
        )


def _is_safetensors(file: Path) -> bool:
    try:
        read_safetensors_header(file)
    except ModelFormatError:
        return False
    return True


def read_json(file: Path, *, required: bool) -> dict[str, Any]:
    if not file.is_file():
        if required:
            raise MissingFileError(f"{file.name} is missing: every model directory needs one")
        return {}
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except RecursionError:
        raise ConfigValueError(
            f"{file.name} is nested too deeply to read (at most {MAX_JSON_DEPTH} levels)"
        ) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        if required:
            raise ModelFormatError(f"{file.name} is not valid UTF-8 JSON: {error}") from error
        return {}
    _check_depth(file.name, data)
    if not isinstance(data, dict):
        if required:
            raise ModelFormatError(f"{file.name} must hold a JSON object")
        return {}
    return data


def _check_depth(name: str, data: Any) -> None:
    """Refuse JSON nested deeper than ``MAX_JSON_DEPTH``, naming the field where it happens.

    Iterative: the loaders that read these files later recurse, and must never meet such a file.
    """
    stack: list[tuple[Any, str, int]] = [(data, "", 0)]
    while stack:
        value, where, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            raise ConfigValueError(
                f"{name}: {where or 'the document'} is nested more than {MAX_JSON_DEPTH} levels deep"
            )
        if isinstance(value, dict):
            for key, item in value.items():
                stack.append((item, where or f'"{key}"', depth + 1))
        elif isinstance(value, list):
            stack.extend((item, where, depth + 1) for item in value)


def has_key(data: Any, key: str) -> bool:
    stack = [data]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            if key in value:
                return True
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return False


def _weights(root: Path) -> dict[str, tuple[int, ...]]:
    files = sorted(root.glob("*.safetensors"))
    if not files:
        raise MissingFileError(
            f"model.safetensors is missing: upload the weights in safetensors format. {_SAFE_SAVE_HINT}"
        )
    shapes: dict[str, tuple[int, ...]] = {}
    for file in files:
        shapes.update(read_safetensors_header(file))
    return shapes


def _check_native(root: Path) -> ModelFormat:
    config = read_native_config(root)
    vocab = Vocabulary.load(root / "vocab.json")
    found = _weights(root)
    expected = expected_native_shapes(config, len(vocab))
    output_rows = expected["output.weight"][0]
    found_output = found.get("output.weight")
    if found_output and len(found_output) == 2 and found_output[0] != output_rows:
        raise LabelCountError(
            f"config.json lists {len(config.labels)} labels but output.weight in model.safetensors has "
            f"{found_output[0]} rows (one per label)"
        )
    for name, shape in expected.items():
        if name not in found:
            raise MissingWeightsError(
                f"model.safetensors lacks tensor {name!r} of the {config.architecture} architecture"
            )
        if found[name] != shape:
            extra = (
                " (rows must match the size of vocab.json)" if name == "embedding.weight" else ""
            )
            raise WeightShapeError(
                f"model.safetensors: tensor {name!r} has shape {found[name]}, config.json implies {shape}{extra}"
            )
    unexpected = sorted(set(found) - set(expected))
    if unexpected:
        raise WeightShapeError(
            f"model.safetensors holds tensor {unexpected[0]!r}, which the {config.architecture} architecture "
            f"with this config.json does not have (architectures: {', '.join(ARCHITECTURES)})"
        )
    return ModelFormat(root, NATIVE_FORMAT, config.architecture, list(config.labels), config.inputs)


def has_tokenizer(root: Path) -> bool:
    names = {file.name for file in root.iterdir()}
    return (
        "tokenizer.json" in names
        or "vocab.txt" in names
        or {"vocab.json", "merges.txt"} <= names
        or any(name in names for name in SENTENCEPIECE_FILES)
    )


def _check_transformers(root: Path, raw: dict[str, Any]) -> ModelFormat:
    import transformers
    from transformers import AutoConfig
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_SEQUENCE_CLASSIFICATION_MAPPING_NAMES,
    )

    from fim_engine._transformers_backend import SAFE_LOADING, config_labels

    architectures = raw.get("architectures")
    if (
        not isinstance(architectures, list)
        or len(architectures) != 1
        or not isinstance(architectures[0], str)
    ):
        raise UnknownArchitectureError(
            'config.json must name exactly one architecture, e.g. "architectures": '
            '["BertForSequenceClassification"] (for a bibi-native model, set "format": "bibi-native")'
        )
    name = architectures[0]
    known = set(MODEL_FOR_SEQUENCE_CLASSIFICATION_MAPPING_NAMES.values())
    if name not in known or not hasattr(transformers, name):
        raise UnknownArchitectureError(
            f"config.json: architecture {name!r} is not a sequence classifier known to transformers "
            f"{transformers.__version__}; use a *ForSequenceClassification class such as BertForSequenceClassification"
        )
    if not has_tokenizer(root):
        raise MissingTokenizerError(
            "no tokenizer files: include tokenizer.json (tokenizer.save_pretrained(dir) writes it), "
            "or vocab.txt, or vocab.json with merges.txt, or a sentencepiece model"
        )
    check_transformers_fields(raw)
    try:
        config = AutoConfig.from_pretrained(root, **SAFE_LOADING)
    except MemoryError:
        raise
    except Exception as error:  # whatever transformers raises on a config, the config is at fault
        raise ConfigValueError(
            f"config.json could not be read by transformers: {_one_line(error)}"
        ) from error
    labels = config_labels(config)
    check_transformers_shapes(root, getattr(transformers, name), config, len(labels), raw)
    return ModelFormat(root, "transformers", name, labels)


def check_transformers_fields(raw: dict[str, Any]) -> None:
    """The fields transformers takes on trust and fails on with a bare Python error."""
    from transformers.activations import ACT2FN

    id2label = raw.get("id2label")
    if id2label is not None and not (
        isinstance(id2label, dict)
        and all(re.fullmatch(r"\d+", str(key)) for key in id2label)
        and all(isinstance(value, str) for value in id2label.values())
    ):
        raise ConfigValueError(
            'config.json: id2label must be an object of label ids to names, e.g. {"0": "negative", '
            f'"1": "positive"}}; got {_preview(id2label)}'
        )
    label2id = raw.get("label2id")
    if label2id is not None and not (
        isinstance(label2id, dict)
        and all(
            isinstance(value, int) and not isinstance(value, bool) for value in label2id.values()
        )
    ):
        raise ConfigValueError(
            'config.json: label2id must be an object of label names to ids, e.g. {"negative": 0, '
            f'"positive": 1}}; got {_preview(label2id)}'
        )
    # Sizes that some transformers releases take on trust and fail on deep inside torch.
    for key in _SIZE_KEYS:
        value = raw.get(key)
        if value is not None and (
            not isinstance(value, int) or isinstance(value, bool) or value < 1
        ):
            raise ConfigValueError(
                f"config.json: {key} must be a positive integer, got {_preview(value)}"
            )
    for key, value in raw.items():
        if _ACTIVATION_KEY.search(key) and isinstance(value, str) and value not in ACT2FN:
            raise ConfigValueError(
                f"config.json: {key} names the activation {_preview(value)}, which transformers "
                f"does not know; use one of {', '.join(sorted(ACT2FN)[:12])}, ..."
            )


def _preview(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _one_line(error: BaseException) -> str:
    return f"{error.__class__.__name__}: {' '.join(str(error).split())}"


def _suspect_fields(raw: dict[str, Any], error: BaseException) -> list[str]:
    """Top-level config fields whose value the error's message quotes: the likely culprits."""
    tokens = set(re.findall(r"-?\d+(?:\.\d+)?|[A-Za-z_][\w-]*", str(error)))
    return [
        key
        for key, value in raw.items()
        if isinstance(value, int | float | str)
        and not isinstance(value, bool)
        and str(value) in tokens
    ]


def check_transformers_shapes(
    root: Path, model_class: Any, config: Any, num_labels: int, raw: dict[str, Any]
) -> None:
    found = _weights(root)
    try:
        with torch.device("meta"):
            model = model_class(config)
    except MemoryError:
        raise
    except (
        Exception
    ) as error:  # building on the meta device allocates nothing: the config is at fault
        suspects = _suspect_fields(raw, error)
        hint = f" (check {', '.join(suspects)})" if suspects else ""
        raise ConfigValueError(
            f"config.json: {model_class.__name__} cannot be built from this config{hint}: "
            f"{_one_line(error)}"
        ) from error
    expected = {key: tuple(value.shape) for key, value in model.state_dict().items()}
    prefix = f"{model.base_model_prefix}." if model.base_model_prefix else ""

    def lookup(key: str) -> tuple[int, ...] | None:
        if key in found:
            return found[key]
        # Encoders saved without their wrapper name the base weights without the prefix.
        if prefix and key.startswith(prefix):
            return found.get(key[len(prefix) :])
        return None

    for key, shape in expected.items():
        actual = lookup(key)
        is_head = not (prefix and key.startswith(prefix))
        if actual is None:
            if is_head:
                raise MissingWeightsError(
                    f"model.safetensors has no {key!r}: upload the fine-tuned classifier, not a bare encoder, "
                    "so that no weights are initialised at random"
                )
            continue
        if actual == shape:
            continue
        if is_head and shape and shape[0] == num_labels and actual and actual[0] != num_labels:
            raise LabelCountError(
                f"config.json declares {num_labels} labels (id2label) but {key} in model.safetensors has "
                f"{actual[0]} rows (one per label)"
            )
        raise WeightShapeError(
            f"model.safetensors: tensor {key!r} has shape {actual}, config.json implies {shape}"
        )
