"""Timings of LocalLLM on this machine (benchmarks/README.md, "Local LLM (llama.cpp)").

``python -m benchmarks.local_llm_timings [--threads N] [--model PATH]`` loads the model (default:
the one ``make local-llm`` assembles), asks a short question (about ten tokens of answer) and
an extraction whose answer is about a hundred tokens of JSON under a schema, and prints for each
step its wall time, the prompt and generated tokens, and llama.cpp's tokens per second. The load
average is printed too: the figures are only as quiet as the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from benchmarks.local_llm_model import gguf_path
from shared_core.llms import LLMStats, LocalLLM

SHORT = "In one short sentence: what is the capital of France?"
EXTRACTION = (
    "List every fact in this text as JSON, one item per fact, with the date it became true.\n"
    "Text: In March 2019 Ana Silva joined Acme as a data engineer in Lisbon. In 2021 she "
    "moved to Porto and became team lead. Since January 2024 she has worked for Globex in "
    "Berlin as head of data."
)
FACTS_SCHEMA = {
    "type": "object",
    "properties": {
        "facts": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "subject": {"type": "string"},
                    "relation": {"type": "string"},
                    "value": {"type": "string"},
                    "since": {"type": "string"},
                },
                "required": ["subject", "relation", "value", "since"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["facts"],
    "additionalProperties": False,
}


def step(name: str, llm: LocalLLM, prompt: str) -> dict[str, object]:
    """One call's figures."""
    before = llm.stats
    answer = llm(prompt)
    call: LLMStats = llm.stats.since(before)
    return {
        "step": name,
        "seconds": round(call.seconds, 2),
        "prompt_tokens": call.prompt_tokens,
        "cached_prompt_tokens": call.cached_prompt_tokens,
        "generated_tokens": call.generated_tokens,
        "prompt_tokens_per_s": round(call.prompt_tokens_per_second, 1),
        "generated_tokens_per_s": round(call.generated_tokens_per_second, 1),
        "answer": answer,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="LocalLLM timings")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--model", type=Path, default=gguf_path())
    args = parser.parse_args(argv)
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    with LocalLLM(args.model, threads=args.threads, n_ctx=2048, max_tokens=16) as short:
        loaded = time.perf_counter() - started
        rows = [step("short answer", short, SHORT)]
    with LocalLLM(
        args.model, threads=args.threads, n_ctx=2048, max_tokens=256, json_schema=FACTS_SCHEMA
    ) as extractor:
        rows.append(step("JSON extraction", extractor, EXTRACTION))
        json.loads(str(rows[-1]["answer"]))  # the constraint held
    print(
        json.dumps(
            {
                "model": args.model.name,
                "threads": args.threads,
                "load_seconds": round(loaded, 2),
                "loadavg_before": load_before,
                "loadavg_after": os.getloadavg()[0],
                "steps": rows,
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
