"""``make bench-llm``'s harness with fakes only (no model): end to end on a tiny size with the
perfect fake and scripted bad fakes, and its figures on hand-built cases."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from shared_core.embedders.base import HashingEmbedder
from shared_core.facts import Cardinality, Decision
from shared_core.llms import LLMStats
from temporal_rag_bench.answers import (
    Answerer,
    Verdict,
    curve,
    prompt_for,
    stale_count,
    verdict,
    wilson,
)
from temporal_rag_bench.chat import ChatSize
from temporal_rag_bench.llm_bench import (
    EXTRACTION,
    GROUPS,
    KEYED,
    PERFECT,
    PERFECT_GROUPS,
    PLAIN,
    RECENCY,
    SIZES,
    BenchLLMSize,
    LocalModels,
    bench_llm,
    main,
)
from temporal_rag_bench.llm_methods import (
    MemoryMethod,
    PerfectExtractionLLM,
    WriteRecord,
    write_figures,
)
from temporal_rag_bench.llm_tracks import TrackSize, gold_key, load_tracks, situatedqa_prose
from temporal_rag_bench.model import Chunk, ChunkKind, Dataset, Question, QuestionKind, Track

STATEMENT = re.compile(r"^S(\d+): <source_text>(.*?)</source_text>$", re.MULTILINE)
TINY = BenchLLMSize(
    "tiny",
    TrackSize(
        situatedqa={1: 1, 3: 1},
        situatedqa_static=1,
        synthetic_ratios=(1, 3),
        synthetic_distractors=1,
        chat=ChatSize(speakers=2, changes=(1, 3), singles=1, multis=1, statics=1, distractors=1),
    ),
)
NO_KAPPA = (PLAIN, RECENCY, EXTRACTION, KEYED, PERFECT)


def _when(year: int) -> dict[str, int]:
    return {"year": year, "month": 1, "date": 1}


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """SituatedQA's dev file in its format: two changing questions and a static one."""
    records: list[dict[str, Any]] = [
        {
            "id": "1",
            "question": "who is the mayor of springfield",
            "timelines": [
                {
                    "prev_answers": ["Joe Quimby"],
                    "cur_answers": ["Lisa Simpson"],
                    "prev_start": _when(2001),
                    "cur_start": _when(2011),
                }
            ],
        },
        {
            "id": "2",
            "question": "how many moons does the planet zog have",
            "timelines": [
                {
                    "prev_answers": ["seven"],
                    "cur_answers": ["nine"],
                    "prev_start": _when(2003),
                    "cur_start": _when(2013),
                }
            ],
        },
        {"id": "3", "question": "what colour is the sky of zog", "cur_answers": ["green"]},
    ]
    folder = tmp_path / "data" / "situatedqa"
    folder.mkdir(parents=True)
    (folder / "raw.temp.dev.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in records), encoding="utf-8"
    )
    return tmp_path / "data"


class FirstLine:
    """Answers with the first remembered statement (the top-1), as a model that trusts rank."""

    def __call__(self, prompt: str) -> str:
        return prompt.split("Memory:\n", 1)[1].split("\n", 1)[0].removeprefix("- ")


class OneKeyForAll:
    """A scripted bad judge model: every statement is (I, states, <the statement>), single-valued,
    so each one closes the one before of its speaker, whatever it was about."""

    def __init__(self, valid_from: str | None = None) -> None:
        self.valid_from = valid_from
        self._stats = LLMStats()

    @property
    def stats(self) -> LLMStats:
        return self._stats

    def __call__(self, prompt: str, /) -> str:
        facts = []
        for match in STATEMENT.finditer(prompt):
            fact: dict[str, Any] = {
                "s": int(match.group(1)),
                "subject": "I",
                "relation": "states",
                "object": match.group(2),
                "card": "one",
            }
            if self.valid_from is not None:  # the old prompt's example date, copied
                fact["valid_from"] = self.valid_from
            facts.append(fact)
        self._stats = LLMStats(
            calls=self._stats.calls + 1,
            generated_tokens=self._stats.generated_tokens + 30 * len(facts),
        )
        return json.dumps({"facts": facts})


def _run(data_dir: Path, out: Path, llm: Any) -> dict[str, Any]:
    return bench_llm(
        TINY,
        data_dir=data_dir,
        out=out,
        embedder=HashingEmbedder(256),
        llm=None if llm is None else LocalModels(judge=llm, groups=llm),
        answer_llm=FirstLine(),
        model_name="fake",
        threads=None,
        methods=NO_KAPPA,
    )


def _methods(results: dict[str, Any], track: str) -> dict[str, Any]:
    found = next(t for t in results["tracks"] if t["name"] == track)
    methods: dict[str, Any] = found["methods"]
    return methods


def test_the_harness_runs_end_to_end_with_the_perfect_fake(data_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    results = _run(data_dir, out, llm=None)
    assert {t["name"] for t in results["tracks"]} == {"synthetic-prose", "situatedqa-prose", "chat"}
    assert json.loads((out / "results.json").read_text())["k"] == 5
    report = (out / "report.md").read_text()
    assert "### chat" in report
    assert "keyed-by-hand" in report
    assert "llm-extraction not run: no model" in results["notes"]
    for track in results["tracks"]:
        methods = track["methods"]
        assert EXTRACTION not in methods
        perfect, keyed = methods[PERFECT], methods[KEYED]
        assert perfect["status"] == keyed["status"] == "ok", track["name"]
        # the judge over a model that answers perfectly writes what writing the keys writes
        # (clean@k is not compared: the hashing embedder's tied scores make Chroma's top k
        # differ from one store to the next)
        for name in ("keyed", "closings", "corrections_instead_of_closings"):
            assert perfect["writes"][name] == keyed["writes"][name], (track["name"], name)
        writes = perfect["writes"]
        assert writes["statements"] == track["statements"]
        assert writes["llm_calls_per_statement"] <= 0.25  # batched: one call per 8 at most
        for name in (
            "cross_speaker_closings",
            "multi_valued_closed",
            "corrections_instead_of_closings",
            "dated_not_as_written",
        ):
            assert writes[name] == 0, (track["name"], name)
        assert writes["collateral_closings"] == 0
        assert perfect["static_retention"]["difference_points"] >= 0
    sqa = _methods(results, "situatedqa-prose")
    assert sqa[PERFECT]["summary"]["clean"]["estimate"] == 1.0
    assert sqa[PERFECT]["writes"]["keyed"] == 7  # 2 + 4 statements of change, 1 static
    assert sqa[PLAIN]["summary"]["stale_leak"]["estimate"] == 1.0
    # the top-1 answers: the memory's current statement; plain's top 1 may be stale
    assert sqa[PERFECT]["answers"]["all"]["correct"]["count"] == 2
    assert sqa[PERFECT]["static_answers_correct"] == [1, 1]


def test_a_model_keying_everything_alike_shows_in_every_write_figure(
    data_dir: Path, tmp_path: Path
) -> None:
    results = _run(data_dir, tmp_path / "out", llm=OneKeyForAll())
    chat = _methods(results, "chat")[EXTRACTION]
    assert chat["status"] == "ok", chat["note"]
    writes = chat["writes"]
    # every statement is keyed but those saying they add a value ("also", "too") to the one key
    # the model gives everything: the judge refuses to close a value with them
    assert writes["keyed"] + writes["extraction_problems"] == writes["statements"]
    assert 0 < writes["extraction_problems"] < writes["statements"] / 2
    # issue 31 defect 3: whatever the model answers, first person is its speaker's own subject
    assert writes["cross_speaker_closings"] == 0
    assert writes["multi_valued_closed"] >= 1
    assert writes["collateral_closings"] >= 1
    assert writes["generated_tokens_per_statement"] == 30
    # only the newest statement stays current: static facts are lost against plain
    assert chat["static_retention"]["difference_points"] < 0


def test_a_model_copying_the_prompts_date_closes_old_versions_instead_of_correcting_them(
    data_dir: Path, tmp_path: Path
) -> None:
    # issue 31 defect 1: the date is not in the statements, so the extractor refuses it and the
    # caller's valid_from dates every fact (before the fix: statements - 1 corrections, no closing)
    results = _run(data_dir, tmp_path / "out", llm=OneKeyForAll("2024-05-01T00:00:00Z"))
    writes = _methods(results, "situatedqa-prose")[EXTRACTION]["writes"]
    assert writes["corrections_instead_of_closings"] == 0
    assert writes["closings"] == writes["statements"] - 1
    assert writes["dated_from_the_prompt"] == writes["dated_not_as_written"] == 0


def test_the_smoke_size_is_one_small_situatedqa_track(data_dir: Path) -> None:
    tracks, notes = load_tracks(SIZES["smoke"].tracks, data_dir=data_dir)
    assert [(t.name, len(t.chunks)) for t in tracks] == [("situatedqa-prose", 5)]
    assert notes == []
    assert SIZES["full"].locomo_statements > 0 == SIZES["default"].locomo_statements


def test_situatedqa_as_prose_states_the_old_value_n_times_then_the_new_one(data_dir: Path) -> None:
    track = situatedqa_prose(data_dir, per_n={3: 1, 1: 1}, statics=1)
    mayor = [c for c in track.chunks if c.entity == "situatedqa:1"]
    moons = [c for c in track.chunks if c.entity == "situatedqa:2"]
    assert [c.value for c in mayor] == ["Joe Quimby", "Lisa Simpson"]
    assert [c.value for c in moons] == ["seven"] * 3 + ["nine"]
    assert len({c.text for c in moons}) == 4  # restated in different words
    assert [c.timestamp for c in track.chunks] == sorted(c.timestamp for c in track.chunks)
    assert [c.recorded_order for c in track.chunks] == list(range(len(track.chunks)))
    cells = {q.id: (q.cell, stale_count(q)) for q in track.questions}
    assert cells == {
        "sqa-1-current": ("current:N=1", 1),
        "sqa-2-current": ("current:N=3", 3),
        "sqa-3-static": ("static", None),
    }


def _chunk(
    ident: str, speaker: str | None, family: str | None, value: str | None, order: int
) -> Chunk:
    return Chunk(
        id=ident,
        text=f"{ident} text",
        timestamp=datetime(2024, 1, 1, tzinfo=UTC) + timedelta(days=order),
        kind=ChunkKind.STATE if value else ChunkKind.DISTRACTOR,
        entity=speaker,
        family=family,
        value=value,
        speaker=speaker,
        recorded_order=order,
    )


def test_write_figures_count_what_the_ledger_did_on_a_hand_built_log() -> None:
    chunks = (
        _chunk("a1", "ana", "city", "Berlin", 0),
        _chunk("b1", "bo", "city", "Paris", 1),
        _chunk("a2", "ana", "allergy", "peanuts", 2),
        _chunk("a3", "ana", "allergy", "shellfish", 3),
        _chunk("a4", "ana", "city", "Lisbon", 4),
        _chunk("n1", None, None, None, 5),
    )
    dataset = Dataset(
        name="hand",
        track=Track.PROSE,
        chunks=chunks,
        questions=(),
        now=datetime(2025, 1, 1, tzinfo=UTC),
        cardinalities={"city": Cardinality.ONE, "allergy": Cardinality.MANY},
    )
    method = MemoryMethod("m", "", lambda shared: None, embedder=HashingEmbedder(8))  # type: ignore[arg-type,return-value]
    ok = (Decision.NOVEL,)
    method.log.records += [
        WriteRecord("a1", True, None, ok, (), ()),
        WriteRecord("b1", True, None, (Decision.SUPERSEDED,), ("a1",), ()),  # across speakers
        WriteRecord("a2", False, "no JSON", ok, (), ()),
        WriteRecord("a3", True, None, (Decision.SUPERSEDED,), ("a2",), ()),  # a MANY fact
        WriteRecord("a4", True, None, (Decision.CORRECTED,), (), ("b1",), 1, 1),  # prompt's date
        WriteRecord("n1", True, None, (Decision.SUPERSEDED,), ("a4",), ()),  # by unrelated text
    ]
    method.log.seconds = 2.0
    method.log.llm = LLMStats(calls=3, generated_tokens=120)
    figures = write_figures(method, dataset)
    assert figures == {
        "statements": 6,
        "keyed": 5,
        "extraction_problems": 1,
        "closings": 3,
        "cross_speaker_closings": 1,
        "multi_valued_closed": 1,
        "collateral_closings": 2,  # b1 (another speaker) and n1 (unrelated text)
        "corrections_instead_of_closings": 1,
        "dated_not_as_written": 1,
        "dated_from_the_prompt": 1,
        "llm_calls": 3,
        "generated_tokens": 120,
        "llm_calls_per_statement": 0.5,
        "generated_tokens_per_statement": 20.0,
        "write_seconds": 2.0,
        "statements_per_second": 3.0,
    }


CURRENT = Question(
    id="q",
    text="Where does Ana live?",
    kind=QuestionKind.CURRENT,
    gold=("Lisbon",),
    stale=("Berlin", "New York"),
    cell="current:single:N=3",
)


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("Lisbon.", Verdict.CORRECT),
        ("She lives in the lisbon", Verdict.CORRECT),
        ("Berlin", Verdict.STALE),
        ("new york!", Verdict.STALE),
        ("Berlin, then Lisbon", Verdict.OTHER),
        ("I don't know", Verdict.OTHER),
        ("Lisbonne", Verdict.OTHER),  # whole words only
    ],
)
def test_an_answer_is_correct_stale_or_other(answer: str, expected: Verdict) -> None:
    assert verdict(CURRENT, answer) is expected


def test_wilson_intervals_match_known_values() -> None:
    half = wilson(5, 10)
    assert (round(half.low, 4), round(half.high, 4)) == (0.2366, 0.7634)
    none = wilson(0, 10)
    assert none.low == 0.0
    assert round(none.high, 4) == 0.2775
    assert wilson(12, 12).high == 1.0
    assert round(wilson(12, 12).low, 4) == 0.7575
    assert wilson(0, 0).n == 0
    assert str(wilson(0, 0)) == "-"


def test_the_curve_groups_answers_by_n_and_asks_each_prompt_once() -> None:
    calls: list[str] = []

    def llm(prompt: str) -> str:
        calls.append(prompt)
        return "Berlin" if "Berlin" in prompt.split("Memory:\n")[1].split("\n")[0] else "Lisbon"

    chunk = Chunk(
        id="c",
        text="I live in Berlin.",
        timestamp=datetime(2024, 1, 1, tzinfo=UTC),
        kind=ChunkKind.STATE,
        metadata={"speaker_name": "Ana"},
    )
    answerer = Answerer(llm)
    first = answerer.answer(CURRENT, [chunk])
    again = answerer.answer(CURRENT, [chunk])
    assert "- Ana: I live in Berlin." in prompt_for(CURRENT, [chunk])
    assert len(calls) == 1
    assert answerer.distinct_prompts == 1
    one = Question(
        id="q1",
        text="Where?",
        kind=QuestionKind.CURRENT,
        gold=("Lisbon",),
        stale=("Berlin",),
        ratio=(1, 1),
    )
    other = answerer.answer(one, [])
    static = answerer.answer(
        Question(id="s", text="Born?", kind=QuestionKind.STATIC, gold=("1990",)), []
    )
    table = curve([first, again, other, static])
    assert list(table) == ["N=1", "N=3", "all"]
    assert table["N=3"]["stale"].count == 2
    assert table["N=1"]["correct"].count == 1
    assert table["all"]["stale"].n == 3


def test_the_perfect_fake_answers_each_numbered_statement_with_its_gold_key() -> None:
    said = [
        Chunk(
            id=f"c{i}",
            text=text,
            timestamp=datetime(2024, 1, 1, tzinfo=UTC),
            kind=ChunkKind.STATE,
            entity=who,
            family=family,
            value=value,
            speaker=who,
            recorded_order=i,
        )
        for i, (who, text, family, value) in enumerate(
            (
                ("ana", "I live in Berlin.", "residence", "Berlin"),
                ("bo", "I live in Berlin.", "residence", "Berlin"),
                ("ana", "I'm allergic to peanuts.", "allergy", "peanuts"),
            )
        )
    ]
    fake = PerfectExtractionLLM(said, {"allergy": "many"})
    from shared_core.judging.llm_format import DEFAULT_TEMPLATE, render

    prompt = render(
        DEFAULT_TEMPLATE, ["Nice weather.", "I'm allergic to peanuts.", "I live in Berlin."], [], 20
    )
    assert json.loads(fake(prompt)) == {
        "facts": [
            {"s": 2, "subject": "I", "relation": "allergy", "object": "peanuts", "card": "many"},
            {"s": 3, "subject": "I", "relation": "residence", "object": "Berlin", "card": "one"},
        ]
    }
    assert fake.stats.calls == 1
    assert gold_key(said[0]) == ("ana", "residence", "Berlin")


def test_without_a_model_the_command_says_how_to_get_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TEMPORAL_RAG_LOCAL_LLM", raising=False)
    assert main(["--size", "smoke", "--out", str(tmp_path)]) == 2
    assert main(["--model", str(tmp_path / "missing.gguf"), "--out", str(tmp_path)]) == 2
    assert "make local-llm" in capsys.readouterr().err


class GroupsEverything:
    """A scripted bad grouping model: every chunk of the prompt in one group, whoever said it
    and whatever it was about."""

    def __init__(self) -> None:
        self._stats = LLMStats()

    @property
    def stats(self) -> LLMStats:
        return self._stats

    def __call__(self, prompt: str, /) -> str:
        numbers = [int(n) for n in re.findall(r"^(\d+)\. \[", prompt, re.MULTILINE)]
        self._stats = LLMStats(
            calls=self._stats.calls + 1, generated_tokens=self._stats.generated_tokens + 10
        )
        return json.dumps({"groups": [numbers], "unsure": []})


def test_the_group_detector_runs_beside_the_others_at_read_time(
    data_dir: Path, tmp_path: Path
) -> None:
    results = bench_llm(
        TINY,
        data_dir=data_dir,
        out=tmp_path / "out",
        embedder=HashingEmbedder(256),
        llm=LocalModels(judge=OneKeyForAll(), groups=GroupsEverything()),
        answer_llm=FirstLine(),
        model_name="fake",
        threads=None,
        methods=(PLAIN, KEYED, GROUPS, PERFECT_GROUPS),
    )
    report = (tmp_path / "out" / "report.md").read_text()
    assert "Read-time LLM cost" in report
    for track in results["tracks"]:
        methods = track["methods"]
        for name in (GROUPS, PERFECT_GROUPS):
            assert methods[name]["status"] == "ok", (track["name"], methods[name]["note"])
            writes, reads = methods[name]["writes"], methods[name]["reads"]
            assert writes["llm_calls"] == writes["closings"] == 0  # prose stored as it is
            assert reads["questions"] > 0
            assert reads["llm_calls_per_question"] <= 1.0  # one call per retrieved set at most
            assert reads["malformed"] == 0
        assert "reads" not in methods[KEYED]
        clean = {n: methods[n]["summary"]["clean"]["estimate"] for n in (PLAIN, PERFECT_GROUPS)}
        assert clean[PERFECT_GROUPS] >= clean[PLAIN], track["name"]
    # a perfect grouping model resolves what is retrieved together (SituatedQA: all of it)
    assert (
        _methods(results, "situatedqa-prose")[PERFECT_GROUPS]["summary"]["clean"]["estimate"] == 1
    )
    assert _methods(results, "chat")[GROUPS]["reads"]["generated_tokens_per_question"] > 0
