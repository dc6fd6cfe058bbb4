"""The bench's runner, scoring layout and report files, on a tiny synthetic run (hashing
embedder, in-process Chroma): report.md, results.json and the PNG plots land in tmp_path."""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from shared_core import HashingEmbedder
from temporal_rag_bench.bench import BenchUsageError, failures, load_judge, parse_list
from temporal_rag_bench.generator import generate
from temporal_rag_bench.model import Dataset, Track
from temporal_rag_bench.profiles import PROFILES, load_datasets
from temporal_rag_bench.registry import discover, narrow, select_methods
from temporal_rag_bench.report import markdown, print_summary, write_report
from temporal_rag_bench.results import environment, read_path_targets, scored, targets
from temporal_rag_bench.runner import BenchRun, RunOptions, judge_sample, run_bench

METHODS = ("plain", "newest-first", "phi-t", "supersession", "supersession+phi-t")


def tiny(track: Track) -> Dataset:
    return generate(track=track, seed=3, entities=3, ratios=(1, 3, 10), distractors=6)


def run(datasets: Sequence[Dataset], options: RunOptions | None = None) -> BenchRun:
    return run_bench(
        datasets,
        lambda _: select_methods(METHODS, frameworks=False, judge=None).methods,
        HashingEmbedder(128),
        options=options or RunOptions(k=3),
    )


@pytest.fixture(scope="module")
def results() -> dict[str, Any]:
    bench = run([tiny(Track.KEYED), tiny(Track.PROSE)])
    meta = {
        "command": "temporal-rag bench --profile tiny",
        "profile": "tiny",
        "seed": 3,
        "k": 3,
        "seconds": 42.0,
        "environment": environment(),
    }
    return scored(bench, meta=meta, seed=3)


def test_every_method_runs_or_says_why_not(results: dict[str, Any]) -> None:
    keyed, prose = results["datasets"]
    assert [m["status"] for m in keyed["methods"]] == ["ok"] * 10
    assert [m["status"] for m in prose["methods"]] == ["ok"] * 10  # kappa judges prose
    assert failures(results) == []


def test_scores_keep_what_each_method_retrieved(results: dict[str, Any]) -> None:
    keyed = results["datasets"][0]
    ours = next(m for m in keyed["methods"] if m["method"] == "supersession+phi-t")
    assert len(ours["questions"]) == keyed["questions"]
    assert all(q["seconds"] > 0 for q in ours["questions"])
    assert ours["latency_ratio"] is not None
    assert ours["retention"]["baseline"] == "plain"
    assert ours["summary"]["stale_leak"]["estimate"] == 0.0  # hits depend on the embedder
    assert ours["bag"]["summary"]["stale_leak"]["estimate"] == 0.0
    assert keyed["detector"]["bag_of_facts"]["recall"] == 1.0
    assert keyed["detector"]["bag_of_facts"]["precision"] == 1.0
    assert {t["target"] for t in results["targets"]} >= {"as-of accuracy", "clean@k at N=10"}


def test_the_report_folder_round_trips(results: dict[str, Any], tmp_path: Path) -> None:
    written = write_report(results, tmp_path / "report")
    names = {p.name for p in written}
    assert names == {
        "results.json",
        "report.md",
        "clean_vs_ratio.png",
        "latency.png",
        "static_retention.png",
    }
    for path in written:
        assert path.stat().st_size > 0
        if path.suffix == ".png":
            assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    loaded = json.loads((tmp_path / "report" / "results.json").read_text())
    assert loaded == json.loads(json.dumps(results, default=str))
    text = (tmp_path / "report" / "report.md").read_text()
    assert "`temporal-rag bench --profile tiny`" in text
    assert "## synthetic-keyed (keyed)" in text
    assert "![clean_vs_ratio.png](clean_vs_ratio.png)" in text
    assert "## synthetic-prose (prose)" in text
    assert "no prose detector available" not in text


def test_the_report_gives_the_whole_runs_wall_time(results: dict[str, Any]) -> None:
    # broke: the header showed the tracks' time only, 0 s for a run of the observations track
    assert "wall time 42 s" in markdown(results, [])


def test_the_terminal_summary_shows_every_method(results: dict[str, Any]) -> None:
    buffer = io.StringIO()
    print_summary(Console(file=buffer, width=140, color_system=None), results)
    shown = buffer.getvalue()
    for name in METHODS:
        assert name in shown
    assert "not run" not in shown  # every method ran, the prose ones with kappa
    assert "target as-of accuracy" in shown


def test_targets_say_met_or_not_from_the_figures(results: dict[str, Any]) -> None:
    keyed = json.loads(json.dumps(results["datasets"][0], default=str))
    ours = next(m for m in keyed["methods"] if m["method"] == "supersession+phi-t")
    ours["latency_ratio"] = 2.0
    ours["summary"]["as_of_accuracy"]["estimate"] = 0.5
    verdicts = {t["target"]: t["met"] for t in targets([keyed])}
    assert verdicts["p50 read latency / plain"] is False
    assert verdicts["as-of accuracy"] is False
    assert targets([]) == []


def test_read_path_targets_compare_medians_of_the_questions_asked(
    results: dict[str, Any],
) -> None:
    keyed = json.loads(json.dumps(results["datasets"][0], default=str))
    keyed["name"] = "synthetic-keyed"
    situated = json.loads(json.dumps(keyed))
    situated["name"] = "situatedqa-keyed"
    for method in situated["methods"]:  # ours is 1.4x slower on as-of questions only
        slower = 1.4 if method["method"] == "supersession+phi-t" else 1.0
        for question in method.get("questions", []):
            question["seconds"] = 0.002 * (slower if question["kind"] == "as_of" else 9.0)
    for method in keyed["methods"]:  # and 1.25x slower on the keyed track
        slower = 1.25 if method["method"] == "supersession+phi-t" else 1.0
        for question in method.get("questions", []):
            question["seconds"] = 0.001 * slower
    checks = {t["target"]: t for t in read_path_targets([keyed, situated])}
    every = checks["read path: p50 / plain, synthetic-keyed, every question"]
    as_of = checks["read path: p50 / plain, situatedqa-keyed, as-of questions"]
    assert (round(every["value"], 3), every["met"]) == (1.25, False)
    assert (round(as_of["value"], 3), as_of["met"]) == (1.4, True)
    assert read_path_targets([]) == []


def test_a_judge_runs_the_prose_phi_t_methods_on_a_sample() -> None:
    calls: list[str] = []

    def judge(prompt: str) -> str:
        calls.append(prompt)
        return '{"conflicts": []}'

    options = RunOptions(k=3, judge=judge, judge_sample=4, judge_bags=2)
    bench = run_bench(
        [tiny(Track.PROSE)],
        lambda _: select_methods(["phi-t"], frameworks=False, judge=judge).methods,
        HashingEmbedder(128),
        options=options,
    )
    (dataset,) = bench.datasets
    assert all(m.status == "ok" and m.sampled and len(m.answers) == 4 for m in dataset.methods)
    assert dataset.detector["detector"] == "llm-judge"
    assert dataset.detector["bags"] == 2
    assert calls


def test_a_failing_method_is_recorded_not_hidden() -> None:
    class Broken:
        name = "broken"

        def ingest(self, dataset: Dataset, shared: object) -> None:
            raise RuntimeError("no luck")

        def retrieve(self, *args: object, **kwargs: object) -> object:
            raise AssertionError("never asked")

    bench = run_bench(
        [tiny(Track.KEYED)], lambda _: [Broken()], HashingEmbedder(64), options=RunOptions()
    )
    (method,) = bench.datasets[0].methods
    assert (method.status, method.note) == ("failed", "RuntimeError: no luck")
    meta = {"command": "x", "profile": "tiny", "seed": 0, "k": 5, "seconds": 1.0}
    meta["environment"] = environment()
    assert failures(scored(bench, meta=meta)) == ["synthetic-keyed/broken: RuntimeError: no luck"]
    assert "failed" in markdown(scored(bench, meta=meta), [])


def test_datasets_without_data_are_skipped_with_a_note(tmp_path: Path) -> None:
    found, notes = load_datasets(
        ["synthetic-keyed", "locomo"], profile=PROFILES["tiny"], seed=0, data_dir=None, limit=5
    )
    assert [d.name for d in found] == ["synthetic-keyed"]
    assert len(found[0].questions) == 5
    assert len({q.cell for q in found[0].questions}) > 1  # the limit spreads over the cells
    assert notes[0].startswith("locomo: skipped")
    _, notes = load_datasets(
        ["situatedqa"], profile=PROFILES["tiny"], seed=0, data_dir=tmp_path / "none"
    )
    assert "does not exist" in notes[0]
    with pytest.raises(ValueError, match="unknown dataset"):
        load_datasets(["nope"], profile=PROFILES["tiny"], seed=0, data_dir=None)


def test_method_selection_by_name_or_family() -> None:
    methods = select_methods(frameworks=False).methods
    assert [m.name for m in narrow(methods, ["phi-t"])] == ["phi-t", "phi-t+buffer"]
    assert [m.name for m in narrow(methods, ["plain+buffer"])] == ["plain+buffer"]
    with pytest.raises(ValueError, match="unknown method nope"):
        narrow(methods, ["nope"])
    frameworks = {m.name: m.real_class for m in discover().methods}
    assert frameworks["lc-time-weighted"].endswith("TimeWeightedVectorStoreRetriever")
    assert frameworks["li-fixed-recency"].endswith("FixedRecencyPostprocessor")


def test_entry_points_that_fail_to_import_become_notes() -> None:
    class Point:
        name = "missing"

        def load(self) -> object:
            raise ImportError("no framework here")

    found = discover([Point()])
    assert found.methods == []
    assert found.notes == ["missing: not run, its framework is not installed (no framework here)"]


def test_judge_specs_and_lists_are_checked() -> None:
    assert load_judge("json:dumps") is json.dumps
    for spec in ("json", "json:nope", "nope_module_xyz:f", "json:__doc__"):
        with pytest.raises(BenchUsageError):
            load_judge(spec)
    assert parse_list("a, b,,c") == ("a", "b", "c")
    with pytest.raises(BenchUsageError, match="unknown z"):
        parse_list("a,z", ["a"])


def test_the_judge_sample_is_seeded_and_keeps_dataset_order() -> None:
    questions = tiny(Track.PROSE).questions
    first = judge_sample(questions, 5, seed=1)
    assert first == judge_sample(questions, 5, seed=1)
    assert [questions.index(q) for q in first] == sorted(questions.index(q) for q in first)
    assert judge_sample(questions[:3], 5, seed=1) == list(questions[:3])
