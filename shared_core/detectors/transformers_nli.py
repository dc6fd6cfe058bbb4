"""The transformers backend of the NLI detector: a local sequence-classification model.

The only module of the core that loads transformers, torch and huggingface_hub, and only on
first use, through :func:`importlib.import_module` (they are optional, from the ``nli`` extra).
Nothing is ever downloaded: a model that is not in a local folder or the local Hugging Face
cache raises :class:`~shared_core.errors.ModelNotFoundError` at once.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from shared_core.errors import (
    DetectorError,
    InvalidInputError,
    MissingDependencyError,
    ModelNotFoundError,
)
from shared_core.lazy import Lazy

_GET_MODEL = (
    "put the model's files on disk first (on a machine with network access: "
    "`hf download NAME --local-dir DIR`, or from_pretrained(NAME) then save_pretrained(DIR) for "
    "both the tokenizer and the model) and pass DIR; nothing is downloaded at run time"
)

T = TypeVar("T")


class TransformersNLIScorer:
    """A :class:`PairScorer` over a local sequence-classification NLI model (transformers).

    ``model`` is a folder holding the model's and tokenizer's files, or a hub name that is
    already in the local Hugging Face cache. No model is bundled with temporal-rag; any NLI
    model works whose ``config.id2label`` names a "contradiction" label (matched ignoring
    case; another name can be given as ``contradiction_label``). Loading happens on first use
    (or :meth:`load`), once, under a lock, with ``local_files_only=True``: a model that is not
    on disk raises :class:`ModelNotFoundError` at once instead of reaching the network.

    Pairs are scored in batches of ``batch_size`` (sorted by length to limit padding; the
    scores come back in input order), truncated to ``max_length`` tokens, under
    ``torch.inference_mode``; the score is the softmax probability of the contradiction label.
    """

    def __init__(
        self,
        model: str | Path,
        *,
        device: str = "cpu",
        batch_size: int = 16,
        max_length: int = 256,
        contradiction_label: str = "contradiction",
    ) -> None:
        if not isinstance(model, str | Path) or not str(model).strip():
            raise InvalidInputError(
                "model", f"is {model!r}", "pass a model folder or a cached model name"
            )
        _require_positive_int("batch_size", batch_size)
        _require_positive_int("max_length", max_length)
        if not isinstance(contradiction_label, str) or not contradiction_label.strip():
            raise InvalidInputError(
                "contradiction_label", f"is {contradiction_label!r}", "name the label, e.g. CONTRA"
            )
        self.model = model
        self.device = device
        self.batch_size = batch_size
        self.max_length = max_length
        self.contradiction_label = contradiction_label
        self._encode_lock = threading.Lock()  # fast tokenizers are not safe to share across threads
        self._lazy: Lazy[_Loaded] = Lazy(lambda: self._load_now())  # late-bound for tests

    def __repr__(self) -> str:
        return f"TransformersNLIScorer({str(self.model)!r}, device={self.device!r})"

    @property
    def labels(self) -> dict[int, str]:
        """The model's ``id2label`` (loads the model if needed)."""
        return dict(self._load().labels)

    @property
    def contradiction_index(self) -> int:
        """The logit index of the contradiction label (loads the model if needed)."""
        return self._load().index

    def load(self) -> None:
        """Load now rather than on the first call (e.g. to fail fast at start-up)."""
        self._load()

    def contradiction_scores(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        checked = check_pairs(pairs)
        if not checked:
            return []  # nothing to score: do not load a model for it
        loaded = self._load()
        return score_in_batches(
            checked, self.batch_size, lambda batch: self._score_batch(loaded, batch)
        )

    def _score_batch(self, loaded: _Loaded, pairs: list[tuple[str, str]]) -> list[float]:
        premises = [premise for premise, _ in pairs]
        hypotheses = [hypothesis for _, hypothesis in pairs]
        try:
            with self._encode_lock:
                encoded = loaded.tokenizer(
                    premises,
                    hypotheses,
                    padding=True,
                    truncation=True,
                    max_length=self.max_length,
                    return_tensors="pt",
                )
            encoded = {name: tensor.to(self.device) for name, tensor in encoded.items()}
            with loaded.torch.inference_mode():
                logits = loaded.model(**encoded).logits
                probabilities = loaded.torch.softmax(logits.float(), dim=-1)[:, loaded.index]
                values = probabilities.tolist()
        except Exception as error:
            message = f"NLI model {str(self.model)!r} failed on a batch: {error}"
            raise DetectorError(message) from error
        return [float(value) for value in values]

    def _load(self) -> _Loaded:
        return self._lazy.get()

    def _load_now(self) -> _Loaded:
        transformers, torch = _import_backend()
        source = _local_source(self.model)
        try:
            config = transformers.AutoConfig.from_pretrained(source, local_files_only=True)
        except OSError as error:
            raise _not_found(self.model, error) from error
        except Exception as error:  # e.g. a config.json of an architecture unknown to transformers
            raise DetectorError(f"could not load NLI model {str(self.model)!r}: {error}") from error
        labels = {int(i): str(label) for i, label in dict(config.id2label or {}).items()}
        index = _find_label(labels, self.contradiction_label, self.model)
        try:
            tokenizer = transformers.AutoTokenizer.from_pretrained(source, local_files_only=True)
            model = transformers.AutoModelForSequenceClassification.from_pretrained(
                source, config=config, local_files_only=True
            )
            model.to(self.device)
            model.eval()
        except OSError as error:
            raise _not_found(self.model, error) from error
        except Exception as error:
            raise DetectorError(f"could not load NLI model {str(self.model)!r}: {error}") from error
        return _Loaded(tokenizer=tokenizer, model=model, torch=torch, labels=labels, index=index)


@dataclass(frozen=True, slots=True)
class _Loaded:
    tokenizer: Any
    model: Any
    torch: Any
    labels: dict[int, str]
    index: int


def _import_backend() -> tuple[Any, Any]:
    # importlib rather than an import statement: transformers and torch are optional and heavy,
    # and only this function of shared_core may bring them in (tests/unit/test_boundaries.py
    # checks that no module of the core names them in an import statement).
    try:
        torch = importlib.import_module("torch")
        transformers = importlib.import_module("transformers")
    except ImportError as error:
        raise MissingDependencyError(
            f"the NLI detector needs transformers and torch ({error}); install the `nli` extra: "
            "pip install 'temporal-rag[nli]'"
        ) from error
    return transformers, torch


def _local_source(model: str | Path) -> str:
    """The folder to load from: ``model`` itself, or the cached snapshot of a hub name.

    A hub name is resolved on the filesystem (``huggingface_hub.try_to_load_from_cache``), and
    transformers is then given the snapshot folder: asking transformers for a name, even with
    ``local_files_only=True``, goes through the hub client, which (huggingface_hub 2.x) may
    still open a connection for its own purposes before it looks at the cache.
    """
    text = str(model)
    path = Path(text).expanduser()
    if path.is_dir():
        return _model_folder(path, text)
    looks_like_path = (
        isinstance(model, Path)
        or path.exists()
        or text.startswith(("/", ".", "~"))
        or "\\" in text
        or text.count("/") > 1
    )
    if looks_like_path:
        problem = "is not a folder" if path.exists() else "does not exist"
        raise ModelNotFoundError(f"NLI model path {text!r} {problem}; {_GET_MODEL}")
    hub = importlib.import_module("huggingface_hub")  # a dependency of transformers
    try:
        cached = hub.try_to_load_from_cache(text, "config.json")
    except ValueError as error:  # not a valid repository id either
        raise ModelNotFoundError(
            f"NLI model {text!r} is neither a folder nor a model name ({error}); {_GET_MODEL}"
        ) from error
    if not isinstance(cached, str):
        raise ModelNotFoundError(
            f"NLI model {text!r} is not a folder and not in the local Hugging Face cache "
            f"({hub.constants.HF_HUB_CACHE}); {_GET_MODEL}"
        )
    return _model_folder(Path(cached).parent, text)


def _model_folder(path: Path, text: str) -> str:
    if not (path / "config.json").is_file():
        raise ModelNotFoundError(
            f"NLI model folder {text!r} has no config.json, so holds no model; {_GET_MODEL}"
        )
    return str(path)


def _not_found(model: str | Path, error: OSError) -> ModelNotFoundError:
    first_line = str(error).splitlines()[0] if str(error) else ""
    return ModelNotFoundError(
        f"NLI model {str(model)!r} could not be loaded from local files "
        f"({error.__class__.__name__}: {first_line}); {_GET_MODEL}"
    )


def _find_label(labels: dict[int, str], wanted: str, model: str | Path) -> int:
    matches = [i for i, label in labels.items() if label.strip().casefold() == wanted.casefold()]
    if len(matches) == 1:
        return matches[0]
    listed = ", ".join(f"{i}: {label!r}" for i, label in sorted(labels.items())) or "none"
    problem = "has several" if matches else "has no"
    raise InvalidInputError(
        "model",
        f"{str(model)!r}: config.id2label {problem} {wanted!r} label (labels: {listed})",
        "use an NLI sequence-classification model (entailment/neutral/contradiction), or name "
        "its contradiction label with contradiction_label=",
    )


def score_in_batches(
    pairs: list[tuple[str, str]],
    batch_size: int,
    score_batch: Callable[[list[tuple[str, str]]], list[T]],
) -> list[T]:
    """``score_batch`` over batches of ``batch_size`` pairs sorted by length (less padding),
    the scores put back in input order."""
    order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
    scores: list[T] = [None] * len(pairs)  # type: ignore[list-item]  # every slot is filled
    for start in range(0, len(order), batch_size):
        batch = order[start : start + batch_size]
        for index, value in zip(batch, score_batch([pairs[i] for i in batch]), strict=True):
            scores[index] = value
    return scores


def check_pairs(pairs: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """The pairs as a list, each checked to be a (premise, hypothesis) tuple of strings."""
    checked = []
    for index, pair in enumerate(pairs):
        if not (
            isinstance(pair, tuple) and len(pair) == 2 and all(isinstance(t, str) for t in pair)
        ):
            raise InvalidInputError(
                f"pairs[{index}]", f"is {pair!r}", "pass (premise, hypothesis) tuples of strings"
            )
        checked.append(pair)
    return checked


def _require_positive_int(field: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidInputError(field, f"is {value!r}", "pass a positive integer")
