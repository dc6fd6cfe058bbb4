"""A local LLM on CPU: a GGUF model run by llama.cpp, through xllamacpp (the ``local-llm`` extra).

:class:`LocalLLM` is a :data:`~shared_core.llm_calls.TextLLM` with a native async form (an
:class:`~shared_core.llm_calls.AsyncTextLLM`), so it goes wherever the core takes an LLM: the LLM
judge, the LLM extractor, the query expander. Each prompt is sent as one user message to
llama.cpp's chat-completion API, which applies the model's own chat template (read from the GGUF
file; ChatML for Qwen). Decoding can be constrained to a JSON schema or a grammar.

Nothing is downloaded: the model is a file on disk (``make local-llm`` assembles one under
build/models/). xllamacpp is imported when the first LocalLLM is built, never at import time.
Its embedded llama.cpp server also listens on a random loopback port; nothing is sent to it.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import math
import operator
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from types import TracebackType
from typing import Any, NoReturn

from shared_core.errors import (
    InvalidInputError,
    LLMError,
    MissingDependencyError,
    ModelNotFoundError,
    NotPicklableError,
)

_INSTALL = 'pip install "temporal-rag[local-llm]"'
_MAKE = "run `make local-llm` in the repository (it assembles build/models/<name>.gguf)"
_GGUF_MAGIC = b"GGUF"


@dataclass(frozen=True, slots=True)
class LLMStats:
    """What a :class:`LocalLLM` has answered since it was built.

    ``calls``; ``prompt_tokens`` read (chat template included), of which
    ``cached_prompt_tokens`` came from llama.cpp's prompt cache; ``generated_tokens``;
    ``seconds`` of the calls; and, as llama.cpp times them, ``prompt_seconds`` reading the
    uncached prompt tokens and ``generation_seconds`` generating.
    """

    calls: int = 0
    prompt_tokens: int = 0
    cached_prompt_tokens: int = 0
    generated_tokens: int = 0
    seconds: float = 0.0
    prompt_seconds: float = 0.0
    generation_seconds: float = 0.0

    def since(self, earlier: LLMStats) -> LLMStats:
        """What was counted between the snapshot ``earlier`` and this one."""
        return _combined(self, earlier, operator.sub)

    @property
    def prompt_tokens_per_second(self) -> float:
        """Uncached prompt tokens read per second (0 before any call)."""
        read = self.prompt_tokens - self.cached_prompt_tokens
        return read / self.prompt_seconds if self.prompt_seconds > 0 else 0.0

    @property
    def generated_tokens_per_second(self) -> float:
        """Tokens generated per second (0 before any call)."""
        return self.generated_tokens / self.generation_seconds if self.generation_seconds else 0.0

    def _plus(self, other: LLMStats) -> LLMStats:
        return _combined(self, other, operator.add)


def _combined(left: LLMStats, right: LLMStats, op: Callable[[Any, Any], Any]) -> LLMStats:
    return LLMStats(*(op(getattr(left, f.name), getattr(right, f.name)) for f in fields(LLMStats)))


class LocalLLM:
    """A GGUF model that answers prompts on CPU: ``llm(prompt)`` or ``await llm.acall(prompt)``.

    Options (keyword only): ``n_ctx`` (context window, prompt and answer, in tokens), ``threads``
    (CPU threads; None lets llama.cpp choose), ``max_tokens`` (longest answer), ``temperature``
    (0, the default, always picks the likeliest token), ``system_prompt`` (sent before each
    prompt; None keeps the chat template's default), ``chat_template`` (a llama.cpp template
    name such as ``"chatml"`` or a Jinja template, instead of the model's own), and at most one
    constraint on every answer: ``json_schema`` (a JSON schema the answer follows) or
    ``grammar`` (a llama.cpp grammar).

    The model is loaded here. Calls are serialised by a lock, so one LocalLLM can be shared by
    threads and tasks; :attr:`stats` counts them. :meth:`close` (or leaving a ``with`` block)
    frees the model. A missing file raises :class:`~shared_core.errors.ModelNotFoundError`, a
    missing xllamacpp :class:`~shared_core.errors.MissingDependencyError`, a model llama.cpp
    cannot load or a refused call :class:`~shared_core.errors.LLMError`.
    """

    def __init__(
        self,
        model_path: str | Path,
        *,
        n_ctx: int = 4096,
        threads: int | None = None,
        max_tokens: int = 256,
        temperature: float = 0.0,
        system_prompt: str | None = None,
        chat_template: str | None = None,
        json_schema: Mapping[str, Any] | None = None,
        grammar: str | None = None,
    ) -> None:
        _positive("n_ctx", n_ctx)
        if threads is not None:
            _positive("threads", threads)
        _positive("max_tokens", max_tokens)
        if (
            isinstance(temperature, bool)
            or not isinstance(temperature, int | float)
            or not math.isfinite(temperature)
            or temperature < 0
        ):
            raise InvalidInputError("temperature", f"is {temperature!r}", "pass a number >= 0")
        _optional_text("system_prompt", system_prompt)
        _optional_text("chat_template", chat_template)
        _optional_text("grammar", grammar)
        if json_schema is not None and grammar is not None:
            raise InvalidInputError(
                "json_schema / grammar", "are both given", "constrain answers with one of them"
            )
        self.model_path = _checked_gguf(model_path)
        self.name = self.model_path.stem
        self.n_ctx = n_ctx
        self.threads = threads
        self.max_tokens = max_tokens
        self.temperature = float(temperature)
        self.system_prompt = system_prompt
        self._constraint = _constraint(json_schema, grammar)
        self._lock = threading.Lock()
        self._stats = LLMStats()
        self._server: Any = _load(self.model_path, n_ctx, threads, chat_template)

    @property
    def stats(self) -> LLMStats:
        """A snapshot of the calls answered so far."""
        return self._stats

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` freed the model."""
        return self._server is None

    def __call__(self, prompt: str, /) -> str:
        """The model's answer to ``prompt`` (blocks while another call runs)."""
        if not isinstance(prompt, str):
            raise InvalidInputError("prompt", f"is a {type(prompt).__name__}", "pass a str")
        request = self._request(prompt)
        with self._lock:
            if self._server is None:
                raise LLMError(f"{self!r} is closed; build a new LocalLLM to ask it again")
            started = time.perf_counter()
            result = self._server.handle_chat_completions(request)
            answer, call = _answer(result, time.perf_counter() - started)
            self._stats = self._stats._plus(call)
        return answer

    async def acall(self, prompt: str, /) -> str:
        """The model's answer to ``prompt``, computed in a worker thread (the loop stays free)."""
        return await asyncio.to_thread(self, prompt)

    def close(self) -> None:
        """Free the model (waits for a running call); later calls raise LLMError. Idempotent."""
        with self._lock:
            self._server = None

    def __enter__(self) -> LocalLLM:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def __reduce__(self) -> NoReturn:
        raise NotPicklableError(
            "LocalLLM",
            "it holds a model loaded into this process",
            "pass the GGUF path and build a LocalLLM in the other process",
        )

    def __repr__(self) -> str:
        return f"LocalLLM({self.name!r}, threads={self.threads}, n_ctx={self.n_ctx})"

    def _request(self, prompt: str) -> dict[str, Any]:
        messages = [{"role": "user", "content": prompt}]
        if self.system_prompt is not None:
            messages.insert(0, {"role": "system", "content": self.system_prompt})
        return {
            "messages": messages,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            **self._constraint,
        }


def _positive(field: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidInputError(field, f"is {value!r}", "pass a positive int")


def _optional_text(field: str, value: object) -> None:
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise InvalidInputError(field, f"is {value!r}", "pass a non-empty str, or None")


def _constraint(json_schema: Mapping[str, Any] | None, grammar: str | None) -> dict[str, Any]:
    if grammar is not None:
        return {"grammar": grammar}
    if json_schema is None:
        return {}
    if not isinstance(json_schema, Mapping):
        raise InvalidInputError(
            "json_schema", f"is a {type(json_schema).__name__}", "pass a JSON schema as a dict"
        )
    try:
        schema = json.loads(json.dumps(json_schema))
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(
            "json_schema",
            f"is not JSON ({exc})",
            "pass a JSON schema of dicts, lists, str, numbers",
        ) from exc
    return {"json_schema": schema}


def _checked_gguf(model_path: object) -> Path:
    if not isinstance(model_path, str | Path) or not str(model_path).strip():
        raise InvalidInputError("model_path", f"is {model_path!r}", "pass the path of a GGUF file")
    path = Path(model_path).expanduser()
    if not path.is_file():
        problem = "is not a file" if path.exists() else "does not exist"
        raise ModelNotFoundError(
            f"GGUF model {str(model_path)!r} {problem}; {_MAKE}, or pass the path of a GGUF "
            "file (nothing is downloaded at run time)"
        )
    with path.open("rb") as file:
        if file.read(len(_GGUF_MAGIC)) != _GGUF_MAGIC:
            raise ModelNotFoundError(
                f"{str(model_path)!r} is not a GGUF file (it does not start with 'GGUF'); {_MAKE}"
            )
    return path.resolve()


def _load(path: Path, n_ctx: int, threads: int | None, chat_template: str | None) -> Any:
    try:
        xllamacpp = importlib.import_module("xllamacpp")
    except ImportError as exc:
        raise MissingDependencyError(
            f"LocalLLM needs xllamacpp, llama.cpp's Python binding ({exc}); install the "
            f"`local-llm` extra: {_INSTALL} (or `make local-llm`)"
        ) from exc
    params = xllamacpp.CommonParams()
    params.model.path = str(path)
    params.n_ctx = n_ctx
    params.n_parallel = 1  # one slot: the lock lets one call in at a time anyway
    params.n_threads_http = 1  # the loopback listener the server always starts serves nobody
    params.verbosity = -1
    if threads is not None:
        params.cpuparams.n_threads = threads
        params.cpuparams_batch.n_threads = threads
    if chat_template is not None:
        params.chat_template = chat_template
    try:
        return xllamacpp.Server(params)
    except RuntimeError as exc:
        raise LLMError(f"llama.cpp could not load {str(path)!r}: {exc}") from exc


def _answer(result: object, seconds: float) -> tuple[str, LLMStats]:
    """The text of a chat-completion result and what the call counts for, or LLMError."""
    if isinstance(result, dict) and "choices" in result:
        try:
            content = result["choices"][0]["message"]["content"]
            usage = result["usage"]
            timings = result.get("timings", {})
            call = LLMStats(
                calls=1,
                prompt_tokens=int(usage["prompt_tokens"]),
                cached_prompt_tokens=int(timings.get("cache_n", 0)),
                generated_tokens=int(usage["completion_tokens"]),
                seconds=seconds,
                prompt_seconds=float(timings.get("prompt_ms", 0)) / 1000,
                generation_seconds=float(timings.get("predicted_ms", 0)) / 1000,
            )
        except (LookupError, TypeError, ValueError, AttributeError) as exc:
            raise LLMError(f"llama.cpp's answer has an unexpected shape: {exc!r}") from exc
        if isinstance(content, str):
            return content, call
    error = result.get("error", result) if isinstance(result, dict) else result
    message = error.get("message", error) if isinstance(error, dict) else error
    raise LLMError(f"llama.cpp did not answer: {message}")


__all__ = ["LLMStats", "LocalLLM"]
