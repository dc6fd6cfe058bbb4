"""Judged prose supersession in the ledger (``supersede`` and ``write_many(supersessions=)``).

Mixed into :class:`~tests.conformance.ledger_suite.LedgerConformance`, so every ledger backend
runs it with that class's ``ledger`` and ``clock`` fixtures.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from shared_core.clock import OPEN, ManualClock, to_instant
from shared_core.errors import FactNotFoundError, InvalidInputError, InvalidOperationError
from shared_core.facts import Decision, Fact, FactStatus, Reason, ReasonKind
from shared_core.ledger import Ledger, ProseSupersession

RULE = "kappa-test-v1"


def d(year: int, month: int = 1, day: int = 1) -> datetime:
    return datetime(year, month, day, tzinfo=UTC)


def prose(text: str, year: int, **extra: object) -> Fact:
    return Fact(text=text, valid_from=d(year), **extra)  # type: ignore[arg-type]


def stored(ledger: Ledger, fact: Fact) -> Fact:
    """Write ``fact`` and return the version that carries it."""
    written = ledger.write(fact).fact
    assert written is not None
    return written


def texts(facts: list[Fact]) -> list[str]:
    return sorted(f.text for f in facts)


class ProseSupersessionConformance:
    """Behaviour of judged prose edges every ledger must have."""

    def test_superseded_prose_is_not_current_but_stays_in_history(self, ledger: Ledger) -> None:
        old = stored(ledger, prose("The standup is at 9", 2020))
        new = stored(ledger, prose("The standup moved to 10", 2022))
        result = ledger.supersede(old.id, by=new.id, rule=RULE, score=0.93)
        assert result.decision is Decision.SUPERSEDED
        assert result.fact is None
        assert [(f.id, f.valid_to) for f in result.closed] == [(old.id, d(2022))]
        assert texts(ledger.current()) == ["The standup moved to 10"]
        assert texts(ledger.as_of(valid_at=d(2021))) == ["The standup is at 9"]
        closed = ledger.get(old.id)
        assert closed.valid_to == d(2022)
        assert closed.status is FactStatus.SUPERSEDED
        assert closed.end_reason == Reason(ReasonKind.SUPERSEDED, new.id, RULE, 0.93)
        explanation = ledger.explain(old.id)
        assert explanation.reason == Reason(ReasonKind.SUPERSEDED, new.id, RULE, 0.93)
        assert f"superseded by {new.id} (rule: {RULE}, score 0.930)" in explanation.summary()

    def test_what_was_known_before_the_edge_is_unchanged(
        self, ledger: Ledger, clock: ManualClock
    ) -> None:
        old = stored(ledger, prose("The standup is at 9", 2020))
        new = stored(ledger, prose("The standup moved to 10", 2022))
        before = clock.now()
        clock.advance(timedelta(seconds=5))
        ledger.supersede(old.id, by=new.id, rule=RULE, score=0.9)
        assert texts(ledger.as_of(known_at=before)) == [
            "The standup is at 9",
            "The standup moved to 10",
        ]
        assert texts(ledger.current()) == ["The standup moved to 10"]

    def test_a_late_arriving_older_statement_is_closed_by_the_stored_newer_one(
        self, ledger: Ledger
    ) -> None:
        new = stored(ledger, prose("The office is in Lisbon", 2022))
        late = stored(ledger, prose("The office is in Berlin", 2019))
        result = ledger.supersede(new.id, by=late.id, rule=RULE, score=0.8)  # names swapped
        assert [(f.id, f.valid_to) for f in result.closed] == [(late.id, d(2022))]
        assert ledger.get(late.id).end_reason == Reason(ReasonKind.SUPERSEDED, new.id, RULE, 0.8)
        assert ledger.get(new.id).valid_to is None
        assert texts(ledger.current()) == ["The office is in Lisbon"]
        assert texts(ledger.as_of(valid_at=d(2020))) == ["The office is in Berlin"]

    def test_blind_calls_that_cannot_close_anything_change_nothing(self, ledger: Ledger) -> None:
        a = stored(ledger, prose("The pool opens at 8", 2020, valid_to=d(2021)))
        b = stored(ledger, prose("The pool opens at 7", 2022))
        c = stored(ledger, prose("The pool opens at 6", 2022))
        before = ledger.export()
        assert ledger.supersede(a.id, by=b.id, rule=RULE).decision is Decision.DUPLICATE
        assert ledger.supersede(b.id, by=c.id, rule=RULE).decision is Decision.DUPLICATE  # a tie
        assert ledger.export() == before

    def test_the_same_edge_twice_is_a_no_op(self, ledger: Ledger) -> None:
        old = stored(ledger, prose("Lunch is at noon", 2020))
        new = stored(ledger, prose("Lunch is at one", 2021))
        assert ledger.supersede(old.id, by=new.id, rule=RULE).decision is Decision.SUPERSEDED
        before = ledger.export()
        assert ledger.supersede(old.id, by=new.id, rule=RULE).decision is Decision.DUPLICATE
        assert ledger.export() == before

    def test_the_earliest_closing_wins_in_any_order(self, ledger: Ledger) -> None:
        old = stored(ledger, prose("Lunch is at noon", 2020))
        later = stored(ledger, prose("Lunch is at two", 2023))
        sooner = stored(ledger, prose("Lunch is at one", 2021))
        ledger.supersede(old.id, by=later.id, rule=RULE, score=0.7)
        result = ledger.supersede(old.id, by=sooner.id, rule=RULE, score=0.9)
        assert result.decision is Decision.SUPERSEDED
        closed = ledger.get(old.id)
        assert closed.valid_to == d(2021)
        assert closed.end_reason == Reason(ReasonKind.SUPERSEDED, sooner.id, RULE, 0.9)
        assert ledger.supersede(old.id, by=later.id, rule=RULE).decision is Decision.DUPLICATE

    def test_keyed_facts_unknown_ids_and_records_are_refused(self, ledger: Ledger) -> None:
        keyed = stored(
            ledger,
            Fact(text="Maria lives in Berlin", subject="Maria", relation="lives in",
                 object="Berlin", valid_from=d(2020)),
        )  # fmt: skip
        old = stored(ledger, prose("The gym is closed", 2020))
        new = stored(ledger, prose("The gym is open", 2021))
        other = stored(ledger, prose("The gym is shut", 2022, namespace="tenant-b"))
        with pytest.raises(InvalidOperationError, match="key rule"):
            ledger.supersede(keyed.id, by=new.id, rule=RULE)
        with pytest.raises(InvalidOperationError, match="key rule"):
            ledger.supersede(old.id, by=keyed.id, rule=RULE)
        with pytest.raises(FactNotFoundError):
            ledger.supersede("no-such-id", by=new.id, rule=RULE)
        with pytest.raises(FactNotFoundError):
            ledger.supersede(old.id, by="no-such-id", rule=RULE)
        with pytest.raises(InvalidOperationError, match="namespaces"):
            ledger.supersede(old.id, by=other.id, rule=RULE)
        edge = ledger.supersede(old.id, by=new.id, rule=RULE)
        with pytest.raises(InvalidOperationError, match="supersession record"):
            ledger.supersede(edge.statement_id, by=new.id, rule=RULE)

    def test_an_edge_closes_a_claim_of_another_key_of_one_subject(self, ledger: Ledger) -> None:
        # two claims of one speaker in two slots: one that a later claim also ends stayed open
        def claim(text: str, slot: str, year: int) -> Fact:
            return Fact(text=text, subject="ana", relation=slot, object=text, valid_from=d(year))

        old = stored(ledger, claim("I live in Denver", "home_city", 2020))
        stray = stored(ledger, claim("Settled in Lisbon", "home_city_1a2b3c4d", 2021))
        new = stored(ledger, claim("I'm in Oslo now", "home_city", 2022))
        assert ledger.get(old.id).valid_to == d(2022)  # the key rule closed its own slot
        result = ledger.supersede(stray.id, by=new.id, rule=RULE, score=0.95)
        assert result.decision is Decision.SUPERSEDED
        closed = ledger.get(stray.id)
        assert (closed.valid_to, closed.status) == (d(2022), FactStatus.SUPERSEDED)
        assert closed.end_reason == Reason(ReasonKind.SUPERSEDED, new.id, RULE, 0.95)
        assert texts(ledger.current()) == ["I'm in Oslo now"]
        assert texts(ledger.as_of(valid_at=d(2021, 6))) == ["I live in Denver", "Settled in Lisbon"]
        assert ledger.unretire(stray.id).decision is Decision.RESTORED
        assert ledger.get(stray.id).valid_to is None

    def test_an_edge_never_joins_one_key_or_two_subjects(self, ledger: Ledger) -> None:
        def claim(text: str, subject: str, slot: str, year: int) -> Fact:
            return Fact(text=text, subject=subject, relation=slot, object=text, valid_from=d(year))

        ana = stored(ledger, claim("Ana lives in Lisbon", "ana", "home_city", 2020))
        again = stored(ledger, claim("Ana moved to Oslo", "ana", "home_city", 2021))
        ben = stored(ledger, claim("Ben lives in Rome", "ben", "home_city_2", 2022))
        with pytest.raises(InvalidOperationError, match="key rule"):
            ledger.supersede(ana.id, by=again.id, rule=RULE)
        before = ledger.export()
        with pytest.raises(InvalidOperationError, match="different subjects"):
            ledger.supersede(again.id, by=ben.id, rule=RULE)
        assert ledger.export() == before

    @pytest.mark.parametrize(
        ("fields", "field"),
        [
            ({"older": "", "newer": "b", "rule": RULE}, "older"),
            ({"older": "a", "newer": "a", "rule": RULE}, "newer"),
            ({"older": "a", "newer": "b", "rule": " "}, "rule"),
            ({"older": "a", "newer": "b", "rule": RULE, "score": float("nan")}, "score"),
            ({"older": "a", "newer": "b", "rule": RULE, "score": True}, "score"),
        ],
    )
    def test_bad_edges_are_refused_with_the_field_named(
        self, ledger: Ledger, fields: dict[str, object], field: str
    ) -> None:
        with pytest.raises(InvalidInputError) as error:
            ProseSupersession(**fields)  # type: ignore[arg-type]
        assert error.value.field == field
        with pytest.raises(InvalidInputError) as error:
            ledger.write_many([], supersessions=["not an edge"])  # type: ignore[list-item]
        assert error.value.field == "supersessions[0]"

    def test_write_many_applies_edges_in_the_same_transaction(self, ledger: Ledger) -> None:
        kept = stored(ledger, prose("The library opens at 9", 2020))
        first = prose("The library opens at 10", 2021)
        second = prose("The library opens at 11", 2022)
        results = ledger.write_many(
            [first, second],
            supersessions=[
                ProseSupersession(kept.id, first.id, RULE, 0.8),
                ProseSupersession(first.id, second.id, RULE, 0.9),
            ],
        )
        assert [r.decision for r in results] == [Decision.NOVEL, Decision.NOVEL]
        assert [(f.id, f.valid_to) for f in results[0].closed] == [(kept.id, d(2021))]
        assert [(f.id, f.valid_to) for f in results[1].closed] == [(first.id, d(2022))]
        assert results[0].fact is not None
        assert results[0].fact.valid_to == d(2022)  # as it ends up
        assert results[1].fact is not None
        assert results[1].fact.valid_to is None
        assert texts(ledger.current()) == ["The library opens at 11"]
        assert texts(ledger.as_of(valid_at=d(2021, 6))) == ["The library opens at 10"]

    def test_a_late_statement_of_the_batch_shows_its_own_closing(self, ledger: Ledger) -> None:
        kept = stored(ledger, prose("The shop opens at 9", 2022))
        late = prose("The shop opens at 8", 2019)
        [result] = ledger.write_many(
            [late], supersessions=[ProseSupersession(kept.id, late.id, RULE, 0.75)]
        )
        assert result.fact is not None
        assert result.fact.valid_to == d(2022)
        assert result.fact.end_reason == Reason(ReasonKind.SUPERSEDED, kept.id, RULE, 0.75)
        assert [f.id for f in result.closed] == [late.id]

    def test_a_bad_edge_writes_nothing_of_the_batch(self, ledger: Ledger) -> None:
        before = ledger.export()
        fresh = prose("The bakery opens at 6", 2021)
        with pytest.raises(FactNotFoundError):
            ledger.write_many(
                [fresh], supersessions=[ProseSupersession("missing", fresh.id, RULE, 0.9)]
            )
        assert ledger.export() == before

    def test_an_edge_naming_a_duplicate_of_the_batch_is_skipped(self, ledger: Ledger) -> None:
        kept = stored(ledger, prose("The bar opens at 5", 2020))
        again = prose("The bar opens at 5", 2020)  # identical: a duplicate, never stored
        newer = prose("The bar opens at 6", 2021)
        results = ledger.write_many(
            [again, newer], supersessions=[ProseSupersession(again.id, newer.id, RULE, 0.9)]
        )
        assert [r.decision for r in results] == [Decision.DUPLICATE, Decision.NOVEL]
        assert results[1].closed == ()
        assert ledger.get(kept.id).valid_to is None

    def test_unretire_undoes_the_edge_and_retiring_the_newer_does_not(self, ledger: Ledger) -> None:
        old = stored(ledger, prose("The cafe is cash only", 2020))
        new = stored(ledger, prose("The cafe takes cards", 2021))
        ledger.supersede(old.id, by=new.id, rule=RULE, score=0.9)
        ledger.retire(new.id)  # the judged edge is a record of its own: it stays
        assert ledger.current() == []
        assert ledger.get(old.id).valid_to == d(2021)
        restored = ledger.unretire(old.id)
        assert restored.decision is Decision.RESTORED
        assert restored.fact is not None
        assert restored.fact.valid_to is None
        assert texts(ledger.current()) == ["The cafe is cash only"]
        ledger.unretire(new.id)
        assert len(ledger.current()) == 2
        edge = ledger.supersede(old.id, by=new.id, rule=RULE, score=0.9)
        assert texts(ledger.current()) == ["The cafe takes cards"]
        assert ledger.unretire(edge.statement_id).decision is Decision.RESTORED
        assert len(ledger.current()) == 2

    def test_the_edge_record_is_explained_and_exported(self, ledger: Ledger) -> None:
        old = stored(ledger, prose("The lab is on floor 2", 2020))
        new = stored(ledger, prose("The lab moved to floor 5", 2021))
        edge = ledger.supersede(old.id, by=new.id, rule=RULE, score=0.61)
        [record] = ledger.explain(edge.statement_id).statements
        assert record.kind == "retraction"
        assert record.valid_from == d(2021)
        assert record.end_reason == Reason(ReasonKind.SUPERSEDED, new.id, RULE, 0.61)
        statements, _ = ledger.export()
        assert statements[-1].end_reason == Reason(ReasonKind.SUPERSEDED, new.id, RULE, 0.61)
        assert statements[-1].stream == old.id
        assert statements[-1].key_id is None

    def test_the_change_feed_carries_the_closed_version(self, ledger: Ledger) -> None:
        old = stored(ledger, prose("The desk is by the window", 2020))
        new = stored(ledger, prose("The desk is by the door", 2021))
        cursor = ledger.changes().cursor
        ledger.supersede(old.id, by=new.id, rule=RULE, score=0.9)
        page = ledger.changes(cursor)
        assert sorted((r.fact_id, r.believed, r.valid_to) for r in page.records) == sorted(
            [(old.id, False, OPEN), (old.id, True, to_instant(d(2021)))]
        )

    def test_an_explicit_record_time_is_used(self, ledger: Ledger, clock: ManualClock) -> None:
        old = stored(ledger, prose("The van is blue", 2020))
        new = stored(ledger, prose("The van is red", 2021))
        clock.advance(timedelta(seconds=60))
        pinned = clock.now().replace(microsecond=0)
        [closed] = ledger.supersede(old.id, by=new.id, rule=RULE, recorded_at=pinned).closed
        assert closed.recorded_at == pinned
