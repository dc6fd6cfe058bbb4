"""One small end-to-end `temporal-rag bench` run (tiny profile, the real offline MiniLM, the
real framework classes), and the command's usage errors."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from shared_core.cli import main
from shared_core.cli.options import EXIT_OK, EXIT_USAGE


def run(*argv: str) -> tuple[int, str]:
    buffer = io.StringIO()
    code = main(list(argv), console=Console(file=buffer, width=150, color_system=None))
    return code, buffer.getvalue()


@pytest.mark.slow
def test_a_tiny_bench_run_prints_the_table_and_writes_the_report(tmp_path: Path) -> None:
    """Three tracks: keyed, prose and chat (with the default write-time judge)."""
    out = tmp_path / "bench"
    code, shown = run(
        "bench",
        "--profile",
        "tiny",
        "--dataset",
        "synthetic-keyed,synthetic-prose,chat",
        "--out",
        str(out),
        "--limit",
        "24",
    )
    assert code == EXIT_OK, shown
    assert "synthetic-keyed (keyed)" in shown
    assert "supersession+phi-t" in shown
    assert "no prose detector available" not in shown
    assert {p.name for p in out.iterdir()} == {
        "report.md",
        "results.json",
        "clean_vs_ratio.png",
        "latency.png",
        "static_retention.png",
    }
    results = json.loads((out / "results.json").read_text())
    assert results["meta"]["command"].startswith("temporal-rag bench --profile tiny")
    assert results["meta"]["embedder"] == "sentence-transformers/all-MiniLM-L6-v2"
    keyed = results["datasets"][0]
    assert keyed["questions"] == 24
    real = {m["method"]: m for m in keyed["methods"] if m["real_class"]}
    assert set(real) == {"lc-time-weighted", "li-fixed-recency", "li-embedding-recency"}
    assert all(m["status"] == "ok" for m in keyed["methods"])
    ours = next(m for m in keyed["methods"] if m["method"] == "supersession+phi-t")
    assert ours["summary"]["stale_leak"]["estimate"] == 0.0
    prose = results["datasets"][1]
    assert prose["name"] == "synthetic-prose"
    assert all(m["status"] == "ok" for m in prose["methods"])
    chat = results["datasets"][2]
    assert chat["name"] == "chat"
    assert [m["method"] for m in chat["methods"]] == [
        "plain",
        "emb-recency",
        "kappa",
        "keyed-by-hand",
    ]
    assert all(m["status"] == "ok" for m in chat["methods"])
    checks = {t["target"]: t for t in results["targets"]}
    for row in ("supersessions across speakers", "multi-valued facts closed"):
        assert checks[f"chat: {row}, default judge"]["value"] == 0.0
    assert "chat: clean@k on changed attributes, default judge" in checks
    assert "prose: write-time judge, clean@k overall" in checks
    assert "prose: read-time Phi_T (kappa), p50 / plain" in checks
    assert "wall time: synthetic-keyed" in shown
    report = (out / "report.md").read_text()
    assert "Versions: python" in report
    assert "Prose detector: claims at write time (frames-minilm-v2: states at P >= 0.50" in report
    assert "; kappa-minilm-v3 in Phi_T." in report


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--dataset", "nope"], "unknown nope"),
        (["--methods", "nope"], "unknown method nope"),
        (["--judge", "json"], "expected MODULE:NAME"),
        (["--k", "0"], "below 1"),
    ],
)
def test_bench_usage_errors_exit_2(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _ = run("bench", "--out", str(tmp_path / "never"), *argv)
    assert code == EXIT_USAGE
    assert message in capsys.readouterr().err
    assert not (tmp_path / "never").exists()


def test_model_judged_reads_answer_the_profiles_sample_unless_asked_otherwise() -> None:
    from temporal_rag_bench.bench import BenchRequest, run_options
    from temporal_rag_bench.profiles import PROFILES

    quick = PROFILES["quick"]
    assert run_options(BenchRequest(command="x"), quick, None).judge_sample == quick.judge_sample
    asked = BenchRequest(command="x", judge_sample=7, k=3, seed=2)
    options = run_options(asked, quick, None)
    assert (options.judge_sample, options.k, options.seed) == (7, 3, 2)
