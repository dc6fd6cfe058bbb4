"""The shipped prose conflict detector (kappa-minilm): offline loading, its card, read-time and
write-time use (its quality and its training are tested in tests/training/)."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shared_core.detectors.kappa import (
    CARD_FILE,
    KAPPA_FOLDER,
    WEIGHTS_FILE,
    KappaScorer,
    dequantize,
    file_sha256,
    kappa_detector,
    quantize,
)
from shared_core.errors import DetectorError, InvalidInputError, ModelNotFoundError
from shared_core.phi_t import Candidate, temporal_dominance

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def scorer() -> KappaScorer:
    loaded = KappaScorer()
    loaded.load()
    return loaded


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"network access attempted: {args[:2]!r}")

    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    return


def test_the_model_loads_without_the_network(no_network: None) -> None:
    fresh = KappaScorer()
    scores = fresh.contradiction_scores(
        [("Maria lives in Lisbon.", "Maria moved to Porto last spring.")]
    )
    assert len(scores) == 1
    assert 0.0 <= scores[0] <= 1.0


def test_the_shipped_weights_are_the_ones_the_card_describes() -> None:
    card = json.loads((KAPPA_FOLDER / CARD_FILE).read_text())
    assert file_sha256(KAPPA_FOLDER / WEIGHTS_FILE) == card["facts"]["weights_sha256"]
    assert (KAPPA_FOLDER / WEIGHTS_FILE).stat().st_size < 16_000_000
    assert 0.0 < card["threshold"] < 1.0
    assert (KAPPA_FOLDER / "LICENSE").is_file()


def test_read_time_phi_t_on_prose_drops_the_contradicted_statement(scorer: KappaScorer) -> None:
    from datetime import UTC, datetime

    def at(year: int) -> datetime:
        return datetime(year, 1, 1, tzinfo=UTC)

    candidates = [
        Candidate(id="a", text="Priya works as a nurse at the city hospital.", timestamp=at(2020)),
        Candidate(
            id="b",
            text="Priya quit nursing and now teaches chemistry at a high school.",
            timestamp=at(2023),
        ),
        Candidate(id="c", text="Priya has two cats called Miso and Tofu.", timestamp=at(2021)),
    ]
    result = temporal_dominance(candidates, kappa_detector(scorer=scorer))
    assert [c.id for c in result.kept] == ["b", "c"]


def test_quantisation_round_trip_is_close() -> None:
    import torch

    state = {"layer.weight": torch.randn(8, 16), "layer.bias": torch.randn(8)}
    restored = dequantize(torch, quantize(torch, state))
    assert torch.allclose(restored["layer.bias"], state["layer.bias"])
    error = (restored["layer.weight"] - state["layer.weight"]).abs().max()
    assert float(error) <= float(state["layer.weight"].abs().max()) / 127


def test_a_folder_without_a_model_is_refused_clearly(tmp_path: Path) -> None:
    with pytest.raises(ModelNotFoundError, match="make train-kappa"):
        KappaScorer(folder=tmp_path)


def test_weights_for_another_base_model_are_refused(tmp_path: Path) -> None:
    card = json.loads((KAPPA_FOLDER / CARD_FILE).read_text())
    card["base_sha256"] = "0" * 64
    (tmp_path / CARD_FILE).write_text(json.dumps(card))
    (tmp_path / WEIGHTS_FILE).write_bytes((KAPPA_FOLDER / WEIGHTS_FILE).read_bytes())
    with pytest.raises(ModelNotFoundError, match="another copy"):
        KappaScorer(folder=tmp_path).load()


def test_a_damaged_card_is_a_detector_error(tmp_path: Path) -> None:
    (tmp_path / CARD_FILE).write_text("{not json")
    with pytest.raises(DetectorError, match="kappa card"):
        KappaScorer(folder=tmp_path)


def test_bad_options_name_the_field() -> None:
    with pytest.raises(InvalidInputError, match="batch_size"):
        KappaScorer(batch_size=0)
    with pytest.raises(InvalidInputError, match=r"pairs\[0\]"):
        KappaScorer().contradiction_scores([("only one",)])  # type: ignore[list-item]


def test_open_no_longer_judges_prose_by_default(tmp_path: Path) -> None:
    """The default judge closed 89% of LoCoMo's real observations: open() now judges nothing
    unless asked, so a default never hides what plain retrieval would find."""
    from datetime import UTC, datetime

    from shared_core import TemporalMemory

    texts = [
        "Anika Quintero works for Lumen Games.",
        "Anika Quintero has two cats, Miso and Tofu.",
        "Anika Quintero left Lumen Games and now works at Harborview Logistics.",
    ]
    with TemporalMemory.open(tmp_path / "memory") as memory:
        assert memory.prose_judge is None
        added = [
            memory.add(text, valid_from=datetime(year, 1, 1, tzinfo=UTC))
            for year, text in zip((2021, 2022, 2023), texts, strict=True)
        ]
        found = {h.fact.text for h in memory.search("Where does Anika work?", k=5)}
    assert [a.closed for a in added] == [(), (), ()]
    assert found == set(texts)


def test_open_with_kappa_makes_claims_and_leaves_unsure_prose_alone(tmp_path: Path) -> None:
    from datetime import UTC, datetime

    from shared_core import ClaimJudge, MemoryConfig, TemporalMemory

    def at(year: int) -> datetime:
        return datetime(year, 1, 1, tzinfo=UTC)

    with TemporalMemory.open(
        tmp_path / "memory", config=MemoryConfig(prose_judge="kappa")
    ) as memory:
        judge = memory.prose_judge
        framed = memory.add("Anika Quintero's home city is Denver.", valid_from=at(2021))
        news = memory.add("Anika Quintero has two cats, Miso and Tofu.", valid_from=at(2022))
        later = memory.add("Anika Quintero's home city is Lisbon.", valid_from=at(2023))
        claim = framed.writes[0].fact
        assert claim is not None
        history = memory.history("Anika Quintero", claim.relation)
    assert isinstance(judge, ClaimJudge)
    assert judge.name == "kappa-minilm-v3+frames-minilm-v2"
    # the head reads home_city at 0.88, under its 0.9 frame threshold: a slot of its own name
    assert (claim.subject, claim.relation.startswith("statement_")) == ("anika quintero", True)
    assert claim.metadata["claim_verdict"] == "new"
    assert news.writes[0].fact is not None
    assert news.writes[0].fact.key is None  # other news: no frame, plain prose
    # a bare change of value: kappa says "ends" and the frame head reads the two statements as
    # one attribute (0.99; frames-minilm-v1 read 0.896, under the 0.9 gate, and missed it)
    assert [f.id for f in later.closed] == [claim.id]
    assert later.writes[0].fact is not None
    assert later.writes[0].fact.metadata["claim_verdict"] == "ends"
    assert [f.text for f in history] == [
        "Anika Quintero's home city is Denver.",
        "Anika Quintero's home city is Lisbon.",
    ]


def test_without_a_prose_judge_prose_is_only_judged_at_read_time(tmp_path: Path) -> None:
    from datetime import UTC, datetime

    from shared_core import MemoryConfig, TemporalMemory

    texts = [
        "Anika Quintero works for Lumen Games.",
        "Anika Quintero left Lumen Games and now works at Harborview Logistics.",
    ]
    with TemporalMemory.open(tmp_path / "memory", config=MemoryConfig(prose_judge=None)) as memory:
        for year, text in zip((2021, 2023), texts, strict=True):
            memory.add(text, valid_from=datetime(year, 1, 1, tzinfo=UTC))
        plain = {h.fact.text for h in memory.search("Where does Anika work?", k=5)}
        judged = memory.search("Where does Anika work?", k=5, detector=kappa_detector())
    assert plain == set(texts)
    assert [h.fact.text for h in judged] == texts[1:]
    assert [s.candidate.text for s in judged[0].shadows] == texts[:1]


def test_a_missing_torch_names_the_extra_and_the_way_out(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    from shared_core.detectors import kappa
    from shared_core.errors import MissingDependencyError

    real = importlib.import_module

    def without_torch(name: str, *args: Any) -> Any:
        if name == "torch":
            raise ImportError("No module named 'torch'")
        return real(name, *args)

    monkeypatch.setattr(kappa.importlib, "import_module", without_torch)
    with pytest.raises(MissingDependencyError, match=r"embedded.*prose_judge=None"):
        KappaScorer().contradiction_scores([("a b c", "d e f")])


def test_the_shipped_card_gives_three_verdicts_and_restates_a_paraphrase() -> None:
    scorer = KappaScorer()
    assert scorer.card.verdicts == ("neither", "ends", "restates")
    pairs = [
        ("Maria lives in Berlin.", "Maria moved to Lisbon."),
        ("Maria lives in Berlin.", "Maria's home is in Berlin."),
    ]
    changed, same = scorer.verdict_scores(pairs)
    assert all(v.ends + v.restates + v.neither == pytest.approx(1.0) for v in (changed, same))
    assert changed.ends >= scorer.card.threshold
    assert same.restates > same.ends
    assert [changed.ends, same.ends] == pytest.approx(scorer.contradiction_scores(pairs))


def test_a_single_logit_card_gives_verdicts_that_never_restate(tmp_path: Path) -> None:
    # a v1-style card (one logit, no verdicts): made here from the shipped weights' "ends" row

    import safetensors.torch

    from shared_core.detectors.kappa import CARD_FILE, KAPPA_FOLDER, WEIGHTS_FILE

    weights = safetensors.torch.load_file(str(KAPPA_FOLDER / WEIGHTS_FILE))
    for name in ("classifier.bias", "classifier.weight.__scale__", "classifier.weight"):
        weights[name] = weights[name][1:2].contiguous()
    safetensors.torch.save_file(weights, str(tmp_path / WEIGHTS_FILE))
    card = json.loads((KAPPA_FOLDER / CARD_FILE).read_text())
    for name in ("verdicts", "restates_threshold"):
        card.pop(name)
    (tmp_path / CARD_FILE).write_text(json.dumps(card))
    scorer = KappaScorer(folder=tmp_path)
    pairs = [("Maria lives in Berlin.", "Maria moved to Lisbon."), ("A b c.", "A b c again.")]
    verdicts = scorer.verdict_scores(pairs)
    assert [v.restates for v in verdicts] == [0.0, 0.0]
    assert [v.ends for v in verdicts] == pytest.approx(scorer.contradiction_scores(pairs))
    assert all(v.ends + v.neither == pytest.approx(1.0) for v in verdicts)


def test_a_card_with_unknown_verdicts_is_refused() -> None:
    from shared_core.detectors.kappa import KappaCard

    with pytest.raises(DetectorError, match="must be ends, restates and neither"):
        KappaCard("k", 0.5, 128, 0.0, "sha", verdicts=("ends", "maybe", "neither"))
