"""VitaminC's real revisions as labelled pairs: the pair rules on a tiny in-test sample, the page
split, and the reader on the shared data folder (skipped when it is absent)."""

from __future__ import annotations

import os
import zipfile
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared_core.errors import InvalidInputError
from temporal_rag_training.labelled import LabelledPair, verdict_of
from temporal_rag_training.vitaminc import (
    VITAMINC_ZIP,
    VitaminCRow,
    build_pairs,
    edit_size,
    read_rows,
    split_pages,
    split_pairs,
)

BEFORE = "The band has sold more than 23 million records in the UK ."
AFTER = "The band has sold more than 24 million records in the UK ."
REWRITTEN = "By 2019 the group , then on a new label , had sold 24 million albums and singles ."


def row(case: str, label: str, claim: str, evidence: str, page: str = "Westlife") -> VitaminCRow:
    return VitaminCRow(case_id=case, page=page, label=label, claim=claim, evidence=evidence)


def contrastive(case: str, before: str, after: str, page: str = "Westlife") -> list[VitaminCRow]:
    """A case as VitaminC writes one: two claims, each supported by one side, refuted by the
    other."""
    return [
        row(case, "SUPPORTS", "It sold under 23.5 million .", before, page),
        row(case, "REFUTES", "It sold under 23.5 million .", after, page),
        row(case, "REFUTES", "It sold over 23.5 million .", before, page),
        row(case, "SUPPORTS", "It sold over 23.5 million .", after, page),
    ]


def test_a_one_value_revision_that_refutes_a_claim_ends_in_both_orders() -> None:
    pairs = build_pairs(contrastive("c1", BEFORE, AFTER), seed=0)
    changes = [p for p in pairs if p.kind == "revision_change"]
    assert {(p.older, p.newer) for p in changes} == {(BEFORE, AFTER), (AFTER, BEFORE)}
    assert all(p.label == 1 and verdict_of(p.kind) == 1 for p in changes)


def test_a_revision_of_many_tokens_is_not_an_ends_pair() -> None:
    assert edit_size(BEFORE, REWRITTEN) > 6
    pairs = build_pairs(contrastive("c1", BEFORE, REWRITTEN), seed=0)
    assert not [p for p in pairs if p.kind == "revision_change"]


def test_a_value_change_nothing_refutes_is_left_out() -> None:
    """ "more than 23 million" -> "more than 24 million" with the claim NOT ENOUGH INFO on one
    side: no ends pair (the change is real but VitaminC does not call it a contradiction)."""
    rows = [
        row("c1", "SUPPORTS", "It sold more than 20 million .", BEFORE),
        row("c1", "NOT ENOUGH INFO", "It sold more than 20 million .", AFTER),
    ]
    kinds = Counter(p.kind for p in build_pairs(rows, seed=0))
    assert kinds == {"supported_claim": 1, "unsupported_claim": 1}


def test_supported_claims_restate_unsupported_ones_are_neither_refuted_ones_are_left_out() -> None:
    pairs = build_pairs(contrastive("c1", BEFORE, AFTER), seed=3)
    claims = [p for p in pairs if p.kind != "revision_change"]
    assert Counter(p.kind for p in claims) == {"supported_claim": 2}
    assert all(verdict_of(p.kind) == 2 and p.label == 0 for p in claims)
    for pair in claims:
        assert {pair.older, pair.newer} in (
            {BEFORE, "It sold under 23.5 million ."},
            {AFTER, "It sold over 23.5 million ."},
        )
    nei = build_pairs([row("c2", "NOT ENOUGH INFO", "It toured Asia .", BEFORE)], seed=0)
    assert [(p.kind, verdict_of(p.kind)) for p in nei] == [("unsupported_claim", 0)]


def test_unrelated_sentences_of_one_page_are_neither_near_copies_are_not_paired() -> None:
    other = "Westlife were an Irish boy band , formed in Sligo in 1998 ."
    near_copy = "The band has sold more than 25 million records in the UK ."
    rows = [
        *contrastive("c1", BEFORE, AFTER),
        row("c2", "SUPPORTS", "Westlife formed in 1998 .", other),
        row("c3", "SUPPORTS", "It sold 25 million .", near_copy),
        row("c4", "SUPPORTS", "It is a city .", "Sligo is a town in Ireland .", page="Sligo"),
    ]
    same_page = [p for p in build_pairs(rows, seed=0) if p.kind == "same_page"]
    assert same_page
    for pair in same_page:
        assert other in (pair.older, pair.newer)
        assert {pair.older, pair.newer} & {BEFORE, AFTER, near_copy}
        assert not {pair.older, pair.newer} >= {near_copy, BEFORE}
        assert verdict_of(pair.kind) == 0


def test_the_same_rows_and_seed_give_the_same_pairs() -> None:
    rows = [*contrastive("c1", BEFORE, AFTER), *contrastive("c2", AFTER, REWRITTEN)]
    assert build_pairs(rows, seed=7) == build_pairs(list(rows), seed=7)

    def unordered(pairs: list[LabelledPair]) -> Counter[tuple[str, frozenset[str]]]:
        return Counter((p.kind, frozenset((p.older, p.newer))) for p in pairs)

    reordered = build_pairs(list(reversed(rows)), seed=7)
    assert unordered(reordered) == unordered(build_pairs(rows, seed=7))


def test_a_bad_seed_is_refused_naming_the_field() -> None:
    with pytest.raises(InvalidInputError, match="seed"):
        build_pairs([], seed=True)


pages = st.lists(st.text(min_size=1, max_size=8), max_size=60)


@given(pages=pages, seed=st.integers(0, 2**32), dev=st.floats(0, 0.4), test=st.floats(0, 0.4))
def test_every_page_is_in_exactly_one_split_whatever_the_order(
    pages: list[str], seed: int, dev: float, test: float
) -> None:
    splits = split_pages(pages, seed=seed, dev=dev, test=test)
    assert set(splits) == set(pages)
    assert set(splits.values()) <= {"train", "dev", "test"}
    assert split_pages(list(reversed(pages)), seed=seed, dev=dev, test=test) == splits


def test_no_page_is_in_two_splits_of_the_pairs() -> None:
    rows = [
        *(r for n in range(30) for r in contrastive(f"c{n}", BEFORE, AFTER, page=f"p{n % 10}")),
    ]
    split = split_pages((r.page for r in rows), seed=1)
    assert Counter(split.values()) == {"train": 8, "dev": 1, "test": 1}
    built = split_pairs(rows, seed=1)
    assert sum(len(pairs) for pairs in built.values()) > 0
    assert built["train"] == build_pairs([r for r in rows if split[r.page] == "train"], seed=1)


def test_shares_that_leave_nothing_for_train_are_refused() -> None:
    with pytest.raises(InvalidInputError, match="dev"):
        split_pages(["a"], seed=0, dev=0.5, test=0.5)


def test_a_missing_data_folder_names_the_option(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="--data-dir"):
        read_rows(tmp_path)


def test_rows_are_read_in_place_from_the_zip(tmp_path: Path) -> None:
    path = tmp_path / VITAMINC_ZIP
    path.parent.mkdir(parents=True)
    line = (
        '{"unique_id": "x_1", "case_id": "x", "label": "SUPPORTS", "claim": "A  claim .",'
        ' "evidence": "An evidence .", "page": "P", "group": "g"}\n'
    )
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("vitaminc_real/test.jsonl", line)
        archive.writestr("vitaminc_real/README.txt", "not rows")
    assert read_rows(tmp_path) == [row("x", "SUPPORTS", "A claim .", "An evidence .", page="P")]


SHARED = Path(
    os.environ.get("TEMPORAL_RAG_DATA")
    or Path(__file__).resolve().parents[2].parent / "shared" / "data"
)


@pytest.mark.skipif(
    not (SHARED / VITAMINC_ZIP).is_file(),
    reason=f"VitaminC is not at {SHARED / VITAMINC_ZIP} "
    "(the shared data folder beside the repo, or $TEMPORAL_RAG_DATA)",
)
def test_the_real_set_gives_every_kind_in_every_split() -> None:
    rows = read_rows(SHARED)
    assert len(rows) == 34_481
    split = split_pages((r.page for r in rows), seed=13)
    built = split_pairs(rows, seed=13)
    for name, pairs in built.items():
        kinds = Counter(p.kind for p in pairs)
        assert set(kinds) == {
            "revision_change",
            "supported_claim",
            "unsupported_claim",
            "same_page",
        }
        texts = {t for r in rows if split[r.page] == name for t in (r.claim, r.evidence)}
        assert {t for p in pairs for t in (p.older, p.newer)} <= texts
