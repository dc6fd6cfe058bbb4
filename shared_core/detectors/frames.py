"""The frame head: which single-valued attribute a prose statement states, if any.

A softmax classifier over a statement's all-MiniLM-L6-v2 sentence embedding (the vector the
index already holds, so it costs two small matrix products per batch) trained by ``make
train-frames`` on statements of the training families labelled with their attribute
(``home_city``, ``employer``, ...) or ``other`` (events, feelings, plans, one value of a
multi-valued attribute). It ships beside kappa in ``kappa_model/``: ``frames.npz`` and
``frames.json`` (labels, threshold, the embedder the weights belong to, training facts). The
weights are one ReLU hidden layer (``hidden_weights`` [hidden x dimension], ``hidden_bias``
[hidden]) under the softmax layer (``weights`` [labels x hidden], ``bias`` [labels]); a head
without the hidden layer is a softmax layer over the embedding (``weights`` [labels x
dimension]). numpy only; nothing is downloaded.

:meth:`FrameHead.profiles` reads three things per statement (:class:`FrameProfile`): how likely
it states the value of *some* single-valued attribute (1 - P(``other``)), its distribution over
the attributes the head knows (two statements of one attribute, even one the head never saw,
get similar distributions: :meth:`FrameProfile.agreement`), and the attribute itself when the
most probable label is one with at least the card's ``threshold``. The claim judge gates on the
first two, at the card's ``state_threshold`` and ``agreement_threshold``, and names a claim's
slot after the third (see :mod:`shared_core.judging.claims`). A profile also names the
attribute the statement most likely states, sure or not, and whether the card lists it among
the ``static_labels`` (attributes whose value never changes): the judge lets no such reading
end a claim, or be ended.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shared_core.detectors.kappa import KAPPA_FOLDER
from shared_core.errors import DetectorError, InvalidInputError, ModelNotFoundError
from shared_core.products import row_products

FRAMES_WEIGHTS = "frames.npz"
FRAMES_CARD = "frames.json"
OTHER = "other"


@dataclass(frozen=True, slots=True)
class Frame:
    """The attribute a statement states and the head's probability for it."""

    attribute: str
    probability: float


@dataclass(frozen=True, slots=True)
class FrameProfile:
    """What the head reads in one statement: ``state``, how likely it states the value of a
    single-valued attribute (1 - P(``other``)); ``frame``, the attribute when the head is sure;
    ``attributes``, its distribution over the attributes it knows, given that it states one;
    ``likeliest``, the most probable of them, sure or not (None when the head knows none);
    ``unchanging``, whether that one is an attribute whose value never changes (a birthplace:
    the card's ``static_labels``)."""

    state: float
    frame: Frame | None
    attributes: tuple[float, ...]
    likeliest: str | None = None
    unchanging: bool = False

    def agreement(self, other: FrameProfile) -> float:
        """How likely two statements state the same attribute, in [0, 1]: the Bhattacharyya
        coefficient of their attribute distributions. An attribute the head never saw still
        gives two statements of it similar distributions over the ones it knows."""
        if not self.attributes or not other.attributes:
            return 0.0
        if len(self.attributes) != len(other.attributes):
            raise InvalidInputError(
                "other", "comes from another frame head", "compare profiles of one head"
            )
        pairs = zip(self.attributes, other.attributes, strict=True)
        return min(1.0, sum(math.sqrt(a * b) for a, b in pairs))


@dataclass(frozen=True, slots=True)
class FrameCard:
    """What ``frames.json`` says: the labels in weight order, the threshold, the embedder."""

    name: str
    labels: tuple[str, ...]
    threshold: float
    embedder: str  # the Embedder.name whose vectors the head reads
    dimension: int
    facts: Mapping[str, Any] = field(default_factory=dict)
    state_threshold: float | None = None  # P(not other) from which a statement is a claim
    agreement_threshold: float | None = None  # from which two statements share an attribute
    static_labels: tuple[str, ...] = ()  # attributes whose value never changes ("hometown")

    @classmethod
    def read(cls, folder: Path) -> FrameCard:
        path = folder / FRAMES_CARD
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            card = cls(
                name=str(raw["name"]),
                labels=tuple(str(label) for label in raw["labels"]),
                threshold=float(raw["threshold"]),
                embedder=str(raw["embedder"]),
                dimension=int(raw["dimension"]),
                facts=dict(raw.get("facts", {})),
                state_threshold=_optional(raw, "state_threshold"),
                agreement_threshold=_optional(raw, "agreement_threshold"),
                static_labels=tuple(str(label) for label in raw.get("static_labels", ())),
            )
        except FileNotFoundError as exc:
            raise ModelNotFoundError(
                f"no frame head in {str(folder)!r} (missing {FRAMES_CARD}); run `make "
                "train-frames` or reinstall temporal-rag"
            ) from exc
        except (ValueError, KeyError, TypeError) as exc:
            raise DetectorError(f"{str(path)!r} is not a valid frame card: {exc}") from exc
        if OTHER not in card.labels or len(set(card.labels)) != len(card.labels):
            raise DetectorError(f"{str(path)!r}: labels must be distinct and include {OTHER!r}")
        unknown = sorted(set(card.static_labels) - (set(card.labels) - {OTHER}))
        if unknown:
            raise DetectorError(f"{str(path)!r}: static_labels {unknown} are not attribute labels")
        return card

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "labels": list(self.labels),
            "threshold": self.threshold,
            "embedder": self.embedder,
            "dimension": self.dimension,
            "facts": dict(self.facts),
            **{
                name: value
                for name, value in (
                    ("state_threshold", self.state_threshold),
                    ("agreement_threshold", self.agreement_threshold),
                )
                if value is not None
            },
            **({"static_labels": list(self.static_labels)} if self.static_labels else {}),
        }


def _optional(raw: Mapping[str, Any], name: str) -> float | None:
    value = raw.get(name)
    return None if value is None else float(value)


class FrameHead:
    """Reads statements' sentence embeddings and names the attribute each states (or None).

    The weights load on first use, once, under a lock; the card (``frames.json``) is read at
    once.

    Args:
        folder: a frame head folder (``frames.json`` and ``frames.npz``); default the head
            shipped in the package.

    Raises:
        InvalidInputError: ``folder`` is not a path.
        ModelNotFoundError: the folder holds no frame card.
        DetectorError: its card is malformed.
    """

    def __init__(self, *, folder: str | Path | None = None) -> None:
        if folder is not None and (not isinstance(folder, str | Path) or not str(folder).strip()):
            raise InvalidInputError("folder", f"is {folder!r}", "pass a frame head folder")
        self.folder = KAPPA_FOLDER if folder is None else Path(folder).expanduser()
        self.card = FrameCard.read(self.folder)
        self._lock = threading.Lock()
        self._weights: _Weights | None = None

    def __repr__(self) -> str:
        return f"FrameHead({self.card.name!r})"

    @property
    def embedder(self) -> str:
        """The name of the embedder whose vectors the head reads."""
        return self.card.embedder

    def frames(self, vectors: Sequence[Sequence[float]]) -> list[Frame | None]:
        """One :class:`Frame` or None per vector (vectors of the card's embedder)."""
        return [profile.frame for profile in self.profiles(vectors)]

    def profiles(self, vectors: Sequence[Sequence[float]]) -> list[FrameProfile]:
        """One :class:`FrameProfile` per vector (vectors of the card's embedder)."""
        if not vectors:
            return []
        other = self.card.labels.index(OTHER)
        names = [label for label in self.card.labels if label != OTHER]
        static = frozenset(self.card.static_labels)
        out: list[FrameProfile] = []
        for row in self._probabilities(vectors):
            best = int(row.argmax())
            label, probability = self.card.labels[best], float(row[best])
            sure = label != OTHER and probability >= self.card.threshold
            state = 1.0 - float(row[other])
            attributes = [float(p) for i, p in enumerate(row) if i != other]
            total = sum(attributes)
            likeliest = (
                names[max(range(len(attributes)), key=attributes.__getitem__)]
                if total > 0.0
                else None
            )
            out.append(
                FrameProfile(
                    state=state,
                    frame=Frame(label, probability) if sure else None,
                    attributes=tuple(p / total for p in attributes) if total > 0.0 else (),
                    likeliest=likeliest,
                    unchanging=likeliest in static,
                )
            )
        return out

    def _probabilities(self, vectors: Sequence[Sequence[float]]) -> Any:
        import numpy as np

        matrix = np.asarray(vectors, dtype=np.float64)
        if matrix.ndim != 2 or matrix.shape[1] != self.card.dimension:
            raise InvalidInputError(
                "vectors",
                f"have shape {matrix.shape}",
                f"pass {self.card.dimension}-dimensional vectors of {self.card.embedder}",
            )
        weights = self._loaded()
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        features = matrix / np.where(norms > 0.0, norms, 1.0)
        # numpy's own loops (row_products), not BLAS: chat writes took 1.7x as long on two
        # cores with the hidden layer in OpenBLAS's threads; a batch of 1,000 statements costs
        # ~35 ms this way, against seconds to embed it
        if weights.hidden is not None:
            hidden_weights, hidden_bias = weights.hidden
            features = np.maximum(row_products(features, hidden_weights) + hidden_bias, 0.0)
        logits = row_products(features, weights.weights) + weights.bias
        logits -= logits.max(axis=1, keepdims=True)
        probabilities = np.exp(logits)
        return probabilities / probabilities.sum(axis=1, keepdims=True)

    def _loaded(self) -> _Weights:
        with self._lock:
            if self._weights is None:
                self._weights = self._read_weights()
            return self._weights

    def _read_weights(self) -> _Weights:
        import numpy as np

        path = self.folder / FRAMES_WEIGHTS
        try:
            with np.load(path, allow_pickle=False) as stored:
                arrays = {name: np.asarray(stored[name], dtype=np.float64) for name in stored.files}
            weights = _Weights(
                weights=arrays["weights"],
                bias=arrays["bias"],
                hidden=(arrays["hidden_weights"], arrays["hidden_bias"])
                if "hidden_weights" in arrays
                else None,
            )
        except FileNotFoundError as exc:
            raise ModelNotFoundError(f"{self.card.name}: missing {path}") from exc
        except (OSError, KeyError, ValueError) as exc:
            raise DetectorError(f"could not load {self.card.name} from {path}: {exc}") from exc
        inputs = self.card.dimension
        if weights.hidden is not None:
            hidden_weights, hidden_bias = weights.hidden
            inputs = hidden_weights.shape[0] if hidden_weights.ndim == 2 else -1
            if hidden_weights.shape != (inputs, self.card.dimension) or hidden_bias.shape != (
                inputs,
            ):
                raise DetectorError(
                    f"{self.card.name}: hidden weights {hidden_weights.shape} / bias "
                    f"{hidden_bias.shape} do not match the card's dimension {self.card.dimension}"
                )
        expected = (len(self.card.labels), inputs)
        if weights.weights.shape != expected or weights.bias.shape != (expected[0],):
            raise DetectorError(
                f"{self.card.name}: weights {weights.weights.shape} / bias "
                f"{weights.bias.shape} do not match the card's {expected}"
            )
        return weights


@dataclass(frozen=True, slots=True)
class _Weights:
    """A head's arrays: the softmax layer and, when it has one, the hidden layer under it."""

    weights: Any  # [labels x hidden], or [labels x dimension] without a hidden layer
    bias: Any
    hidden: tuple[Any, Any] | None  # (weights [hidden x dimension], bias [hidden])
