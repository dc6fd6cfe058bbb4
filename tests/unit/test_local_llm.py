"""LocalLLM without a model: its options, the errors that name their fix, and what it sends to and
reads from llama.cpp, over a stand-in for xllamacpp (tests/integration/test_local_llm_model.py
runs the real model)."""

from __future__ import annotations

import asyncio
import pickle
import sys
import threading
import time
import types
from pathlib import Path
from typing import Any

import pytest

from shared_core.errors import (
    InvalidInputError,
    LLMError,
    MissingDependencyError,
    ModelNotFoundError,
    NotPicklableError,
)
from shared_core.llm_calls import AsyncTextLLM, is_native_async
from shared_core.llms import LLMStats, LocalLLM


class FakeServer:
    """xllamacpp.Server's chat-completion call: answers ``reply`` and records each request."""

    reply: Any = None
    fail_to_load = False

    def __init__(self, params: Any) -> None:
        if FakeServer.fail_to_load:
            raise RuntimeError("Failed to init server, please check the input params.")
        self.params = params
        self.requests: list[dict[str, Any]] = []
        self.running = 0
        self.overlapped = False

    def handle_chat_completions(self, request: dict[str, Any]) -> Any:
        self.running += 1
        self.overlapped |= self.running > 1
        time.sleep(0.01)
        self.requests.append(request)
        self.running -= 1
        if FakeServer.reply is not None:
            return FakeServer.reply
        prompt = request["messages"][-1]["content"]
        return {
            "choices": [{"message": {"role": "assistant", "content": prompt.upper()}}],
            "usage": {"prompt_tokens": len(prompt), "completion_tokens": 3},
            "timings": {"cache_n": 1, "prompt_ms": 10.0, "predicted_ms": 30.0},
        }


def fake_params() -> types.SimpleNamespace:
    def cpu() -> types.SimpleNamespace:
        return types.SimpleNamespace(n_threads=-1)

    return types.SimpleNamespace(
        model=types.SimpleNamespace(path=""),
        cpuparams=cpu(),
        cpuparams_batch=cpu(),
        chat_template="",
        n_ctx=0,
        n_parallel=-1,
        n_threads_http=-1,
        verbosity=3,
    )


@pytest.fixture
def gguf(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.gguf"
    path.write_bytes(b"GGUF" + bytes(28))
    return path


@pytest.fixture
def fake_xllamacpp(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    module = types.ModuleType("xllamacpp")
    module.CommonParams = fake_params  # type: ignore[attr-defined]
    module.Server = FakeServer  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "xllamacpp", module)
    monkeypatch.setattr(FakeServer, "reply", None)
    monkeypatch.setattr(FakeServer, "fail_to_load", False)
    return module


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"n_ctx": 0}, "n_ctx"),
        ({"n_ctx": True}, "n_ctx"),
        ({"threads": 0}, "threads"),
        ({"threads": 1.5}, "threads"),
        ({"max_tokens": -1}, "max_tokens"),
        ({"temperature": -0.1}, "temperature"),
        ({"temperature": float("nan")}, "temperature"),
        ({"temperature": "0"}, "temperature"),
        ({"system_prompt": " "}, "system_prompt"),
        ({"chat_template": 3}, "chat_template"),
        ({"grammar": ""}, "grammar"),
        ({"json_schema": {"type": "object"}, "grammar": 'root ::= "a"'}, "json_schema / grammar"),
        ({"json_schema": ["type", "object"]}, "json_schema"),
        ({"json_schema": {"default": object()}}, "json_schema"),
    ],
)
def test_bad_options_are_refused_before_anything_loads(
    gguf: Path, options: dict[str, Any], field: str
) -> None:
    with pytest.raises(InvalidInputError) as raised:
        LocalLLM(gguf, **options)
    assert raised.value.field == field


@pytest.mark.parametrize("path", ["", "  ", 3, None])
def test_the_model_path_must_be_a_path(path: object) -> None:
    with pytest.raises(InvalidInputError, match="model_path"):
        LocalLLM(path)  # type: ignore[arg-type]


def test_a_missing_model_names_make_local_llm(tmp_path: Path) -> None:
    with pytest.raises(ModelNotFoundError, match=r"does not exist.*make local-llm"):
        LocalLLM(tmp_path / "absent.gguf")
    with pytest.raises(ModelNotFoundError, match="is not a file"):
        LocalLLM(tmp_path)


def test_a_file_that_is_not_gguf_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "model.gguf"
    path.write_bytes(b"<html>not a model</html>")
    with pytest.raises(ModelNotFoundError, match="not a GGUF file"):
        LocalLLM(path)


def test_a_missing_xllamacpp_names_the_extra(gguf: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "xllamacpp", None)
    with pytest.raises(MissingDependencyError, match=r"temporal-rag\[local-llm\]"):
        LocalLLM(gguf)


def test_a_model_llama_cpp_cannot_load_is_an_llm_error(
    gguf: Path, fake_xllamacpp: types.ModuleType
) -> None:
    FakeServer.fail_to_load = True
    with pytest.raises(LLMError, match="could not load") as raised:
        LocalLLM(gguf)
    assert isinstance(raised.value.__cause__, RuntimeError)


def test_the_options_reach_llama_cpp(gguf: Path, fake_xllamacpp: types.ModuleType) -> None:
    llm = LocalLLM(gguf, n_ctx=512, threads=2, chat_template="chatml")
    params = llm._server.params
    assert params.model.path == str(gguf.resolve())
    assert (params.n_ctx, params.n_parallel, params.chat_template) == (512, 1, "chatml")
    assert params.cpuparams.n_threads == params.cpuparams_batch.n_threads == 2
    assert LocalLLM(gguf)._server.params.cpuparams.n_threads == -1  # llama.cpp chooses


def test_a_prompt_is_one_user_message_with_the_call_options(
    gguf: Path, fake_xllamacpp: types.ModuleType
) -> None:
    llm = LocalLLM(gguf, max_tokens=32, temperature=0.5)
    assert llm("hello") == "HELLO"
    assert llm._server.requests == [
        {
            "messages": [{"role": "user", "content": "hello"}],
            "max_tokens": 32,
            "temperature": 0.5,
        }
    ]


def test_a_system_prompt_and_a_constraint_go_with_every_prompt(
    gguf: Path, fake_xllamacpp: types.ModuleType
) -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    llm = LocalLLM(gguf, system_prompt="Answer in JSON.", json_schema=schema)
    llm("a")
    llm("b")
    for request, prompt in zip(llm._server.requests, "ab", strict=True):
        assert request["messages"] == [
            {"role": "system", "content": "Answer in JSON."},
            {"role": "user", "content": prompt},
        ]
        assert request["json_schema"] == schema
        assert "grammar" not in request
    with_grammar = LocalLLM(gguf, grammar='root ::= "yes" | "no"')
    with_grammar("?")
    assert with_grammar._server.requests[0]["grammar"] == 'root ::= "yes" | "no"'


def test_calls_and_tokens_are_counted(gguf: Path, fake_xllamacpp: types.ModuleType) -> None:
    llm = LocalLLM(gguf)
    assert llm.stats == LLMStats()
    llm("abc")
    first = llm.stats
    llm("abcdef")
    assert (first.calls, first.prompt_tokens, first.generated_tokens) == (1, 3, 3)
    since = llm.stats.since(first)
    assert (since.calls, since.prompt_tokens, since.generated_tokens) == (1, 6, 3)
    assert since.cached_prompt_tokens == 1
    assert since.seconds > 0
    assert since.prompt_tokens_per_second == pytest.approx(500)  # 5 uncached tokens in 10 ms
    assert since.generated_tokens_per_second == pytest.approx(100)
    assert LLMStats().prompt_tokens_per_second == LLMStats().generated_tokens_per_second == 0
    with pytest.raises(AttributeError):
        first.calls = 5  # type: ignore[misc]


@pytest.mark.parametrize(
    "reply",
    [
        {"error": {"code": 400, "message": "failed to parse grammar"}},
        {"choices": [], "usage": {}},
        {
            "choices": [{"message": {"content": None}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 0},
        },
        "not json",
    ],
)
def test_a_refused_call_is_an_llm_error_and_counts_nothing(
    gguf: Path, fake_xllamacpp: types.ModuleType, reply: object
) -> None:
    FakeServer.reply = reply
    llm = LocalLLM(gguf)
    with pytest.raises(LLMError, match=r"llama\.cpp"):
        llm("x")
    assert llm.stats == LLMStats()


def test_a_prompt_must_be_text(gguf: Path, fake_xllamacpp: types.ModuleType) -> None:
    with pytest.raises(InvalidInputError, match="prompt"):
        LocalLLM(gguf)(b"bytes")  # type: ignore[arg-type]


def test_concurrent_calls_take_turns(gguf: Path, fake_xllamacpp: types.ModuleType) -> None:
    llm = LocalLLM(gguf)
    threads = [threading.Thread(target=llm, args=(f"p{n}",)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert llm.stats.calls == 6
    assert not llm._server.overlapped


def test_it_is_an_async_text_llm(gguf: Path, fake_xllamacpp: types.ModuleType) -> None:
    llm = LocalLLM(gguf)
    assert isinstance(llm, AsyncTextLLM)
    assert is_native_async(llm)

    async def both() -> list[str]:
        return list(await asyncio.gather(llm.acall("a"), llm.acall("b")))

    assert asyncio.run(both()) == ["A", "B"]
    assert llm.stats.calls == 2


def test_close_frees_the_model_and_later_calls_fail(
    gguf: Path, fake_xllamacpp: types.ModuleType
) -> None:
    with LocalLLM(gguf) as llm:
        assert not llm.closed
        llm("a")
    assert llm.closed
    llm.close()  # idempotent
    with pytest.raises(LLMError, match="closed"):
        llm("b")
    assert llm.stats.calls == 1


def test_it_cannot_be_pickled(gguf: Path, fake_xllamacpp: types.ModuleType) -> None:
    with pytest.raises(NotPicklableError, match="LocalLLM"):
        pickle.dumps(LocalLLM(gguf))
