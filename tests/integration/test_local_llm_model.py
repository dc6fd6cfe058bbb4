"""The real local model (``make local-llm``): a short answer and a JSON answer under a schema.

Opt-in: ``pytest -m local_llm`` runs it when the GGUF file is there (``$TEMPORAL_RAG_LOCAL_LLM``,
else the default model under build/models/); every other run skips it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from benchmarks.local_llm_model import gguf_path
from shared_core.llms import LocalLLM

pytestmark = pytest.mark.local_llm
MODEL_ENV = "TEMPORAL_RAG_LOCAL_LLM"


@pytest.fixture(scope="module")
def model(request: pytest.FixtureRequest) -> Path:
    if "local_llm" not in (request.config.getoption("markexpr") or ""):
        pytest.skip("loads a real llama.cpp model: run it with -m local_llm")
    pytest.importorskip("xllamacpp", reason="install the local-llm extra (make local-llm)")
    path = Path(os.environ.get(MODEL_ENV) or gguf_path())
    if not path.is_file():
        pytest.skip(f"no GGUF model at {path}: run `make local-llm` or set ${MODEL_ENV}")
    return path


@pytest.fixture(scope="module")
def llm(model: Path) -> Iterator[LocalLLM]:
    # one thread: on a busy machine two are many times slower (benchmarks/README.md)
    with LocalLLM(model, n_ctx=1024, threads=1, max_tokens=16) as loaded:
        yield loaded


def test_it_answers_a_short_question(llm: LocalLLM) -> None:
    answer = llm("What is the capital of France? Answer with one word.")
    assert "paris" in answer.lower()
    assert llm.stats.calls == 1
    assert 0 < llm.stats.generated_tokens <= 16


def test_a_json_schema_constrains_the_answer(model: Path) -> None:
    schema = {
        "type": "object",
        "properties": {"person": {"type": "string"}, "city": {"type": "string"}},
        "required": ["person", "city"],
        "additionalProperties": False,
    }
    prompt = "Extract who moved and where to, as JSON: 'In 2024 Alice moved to Berlin.'"
    with LocalLLM(model, n_ctx=1024, threads=1, max_tokens=64, json_schema=schema) as llm:
        answer = json.loads(llm(prompt))
    assert set(answer) == {"person", "city"}
    assert answer["person"].lower() == "alice"
    assert answer["city"].lower() == "berlin"


def test_the_llm_judge_keys_a_batch_with_the_schema(model: Path) -> None:
    """The judge API on the real model: one call for a batch, the answer schema-constrained."""
    from shared_core.clock import ManualClock, to_instant
    from shared_core.embedders.base import HashingEmbedder
    from shared_core.facts import Fact
    from shared_core.index.numpy_index import NumpyIndex
    from shared_core.judging import LLMExtractor, WriteBatch
    from shared_core.judging.llm_format import ANSWER_SCHEMA
    from shared_core.ledger import InMemoryLedger

    texts = ["I live in Berlin.", "I'm allergic to peanuts.", "Nice weather today."]
    embedder, index = HashingEmbedder(64), NumpyIndex()
    index.bind(embedder=embedder.name, dimension=embedder.dimension)
    clock = ManualClock(datetime(2025, 1, 1, tzinfo=UTC))
    ledger = InMemoryLedger(clock=clock)
    batch = WriteBatch(
        statements=tuple(Fact(text=t) for t in texts),
        speakers=("ana",) * 3,
        vectors=dict(zip(texts, embedder.embed_documents(texts), strict=True)),
        ledger=ledger,
        index=index,
        now=to_instant(clock.now()),
        embed=embedder.embed_documents,
    )
    with LocalLLM(model, n_ctx=2048, threads=1, max_tokens=256, json_schema=ANSWER_SCHEMA) as llm:
        judge = LLMExtractor(llm, on_error="prose")
        judgement = judge.judge(batch)
    assert judge.stats.calls == 1
    assert judge.stats.generated_tokens
    keyed = {(f.subject, f.object) for group in judgement.statements for f in group if f.key}
    assert ("ana", "Berlin") in keyed
