"""fim_engine: safe loading, batched inference, exact λmax and token hints for bibi systems.

A plain library (it never imports Django). The public API:

* :func:`check_model_dir` → :class:`ModelFormat`: static inspection of an upload.
* :func:`load_system` → :class:`System`: ``labels``, ``predict``, ``fisher``, ``attributions``.
* :func:`fisher_lambda_max`: the λmax / top-eigenvector algorithm on any differentiable model.
* :func:`integrated_gradients`: word attributions along the embedding path.
* :func:`dense_fisher`: Algorithm 1 of the FIM paper (dense G), the slow reference.
* :func:`train_system`: baseline builders (bow, cnn, bilstm, minilm).
* :func:`read_texts`, :func:`read_labelled`: the input formats of the CLI.
* exceptions from :mod:`fim_engine.errors`, all subclasses of :class:`ModelFormatError`.

Example:
    >>> from fim_engine import load_system
    >>> system = load_system("models/cnn/")
    >>> system.fisher(["a gorgeous, witty film"])[0].lambda_max
    0.0123
"""

from __future__ import annotations

from fim_engine.algorithm1 import DenseFisher, dense_fisher
from fim_engine.attributions import WordAttributions, integrated_gradients
from fim_engine.datasets import LabelledTexts, read_labelled, read_texts
from fim_engine.errors import (
    LabelCountError,
    MissingFileError,
    MissingTokenizerError,
    MissingWeightsError,
    ModelFormatError,
    PaddingSensitiveModelError,
    PickledWeightsError,
    RemoteCodeError,
    UnknownArchitectureError,
    WeightShapeError,
)
from fim_engine.fisher import FisherResult, fisher_lambda_max
from fim_engine.formats import ModelFormat, check_model_dir
from fim_engine.native import NativeConfig
from fim_engine.system import PredictionBatch, System, load_system
from fim_engine.training import TrainingReport, train_system

__all__ = [
    "DenseFisher",
    "FisherResult",
    "LabelCountError",
    "LabelledTexts",
    "MissingFileError",
    "MissingTokenizerError",
    "MissingWeightsError",
    "ModelFormat",
    "ModelFormatError",
    "NativeConfig",
    "PaddingSensitiveModelError",
    "PickledWeightsError",
    "PredictionBatch",
    "RemoteCodeError",
    "System",
    "TrainingReport",
    "UnknownArchitectureError",
    "WeightShapeError",
    "WordAttributions",
    "check_model_dir",
    "dense_fisher",
    "fisher_lambda_max",
    "integrated_gradients",
    "load_system",
    "read_labelled",
    "read_texts",
    "train_system",
]
