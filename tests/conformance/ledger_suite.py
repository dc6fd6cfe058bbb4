"""The conformance suite every ledger backend passes: subclass and implement ``open_ledger``."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from shared_core.clock import Clock, ManualClock, to_instant
from shared_core.errors import (
    CardinalityConflictError,
    FactIdConflictError,
    FactNotFoundError,
    InvalidInputError,
    InvalidOperationError,
    NothingToRetractError,
    NotRetiredError,
)
from shared_core.facts import Cardinality, Decision, Fact, FactKey, FactStatus, ReasonKind
from shared_core.ledger import ChangeCursor, InMemoryLedger, Ledger, LedgerStore
from shared_core.ledger.copying import copy_ledger
from shared_core.supersession import StreamState
from tests.conformance.ledger_ops import START, Replay, operations
from tests.conformance.prose_supersession_suite import ProseSupersessionConformance

NAIVE = datetime(2020, 1, 1)  # noqa: DTZ001 - naive on purpose: it must be refused


def d(year: int, month: int = 1, day: int = 1) -> datetime:
    return datetime(year, month, day, tzinfo=UTC)


def lives(city: str, year: int, **extra: object) -> Fact:
    return Fact(
        text=f"Maria lives in {city}",
        subject="Maria",
        relation="lives in",
        object=city,
        valid_from=d(year),
        **extra,  # type: ignore[arg-type]
    )


def objects(facts: list[Fact]) -> list[object]:
    return [f.object for f in facts]


class LedgerConformance(ProseSupersessionConformance):
    """Behaviour every :class:`LedgerStore` must have (the contract of docs/design.md), judged prose
    supersession included (:class:`ProseSupersessionConformance`)."""

    examples = 120

    def open_ledger(self, clock: Clock) -> AbstractContextManager[Ledger]:
        raise NotImplementedError

    @pytest.fixture
    def clock(self) -> ManualClock:
        return ManualClock(START)

    @pytest.fixture
    def ledger(self, clock: ManualClock) -> Iterator[Ledger]:
        with self.open_ledger(clock) as ledger:
            yield ledger

    # ------------------------------------------------------------ the oracle
    def test_matches_the_oracle_on_random_histories(self) -> None:
        @settings(
            max_examples=self.examples,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        )
        @given(ops=operations())
        def replay(ops: list[tuple[object, ...]]) -> None:
            clock = ManualClock(START)
            with self.open_ledger(clock) as ledger:
                Replay(ledger, clock).run(ops)

        replay()

    def test_a_copy_answers_and_goes_on_as_the_original(self) -> None:
        """dump/load (what `temporal-rag copy-ledger` does) into this backend and into the
        in-memory one: the same rows and as_of answers, and the next write decides alike."""

        @settings(
            max_examples=max(5, self.examples // 6),
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        )
        @given(ops=operations())
        def copied(ops: list[tuple[object, ...]]) -> None:
            clock = ManualClock(START)
            with self.open_ledger(clock) as source:
                Replay(source, clock).run(ops)
                after = lives("Reykjavik", 2030, id="written-after-the-copy")
                outcomes = []
                for make in (lambda: self.open_ledger(clock), lambda: InMemoryLedger(clock=clock)):
                    with make() as target:
                        report = copy_ledger(source, target, samples=40)
                        assert report.faithful, report.mismatches
                        assert target.dump() == source.dump()
                        written = target.write(after)  # new ids go on after the copied ones
                        outcomes.append((written.decision, target.dump()))
                written = source.write(after)
                assert outcomes == [(written.decision, source.dump())] * 2

        copied()

    def test_a_dump_loads_only_into_an_empty_ledger(self, ledger: Ledger) -> None:
        ledger.write(lives("Berlin", 2019))
        before = ledger.dump()
        with pytest.raises(InvalidOperationError, match="not empty"):
            ledger.load(before)
        assert ledger.dump() == before

    def test_the_backend_looks_up_stored_key_ids_alone(self, ledger: Ledger) -> None:
        """Backend.key_ids (what a write names ahead of its lock) finds the stored keys, in any
        order and repeated, and leaves out keys never used, namespaces included."""
        ledger.write(lives("Berlin", 2019))
        ledger.write(replace(lives("Porto", 2019), subject="Ana"))
        backend = ledger._backend
        maria, ana = (backend.key_id(FactKey("default", s, "lives_in")) for s in ("maria", "ana"))
        assert maria is not None
        assert ana is not None
        asked = [
            FactKey("default", "ana", "lives_in"),
            FactKey("elsewhere", "maria", "lives_in"),
            FactKey("default", "maria", "lives_in"),
            FactKey("default", "rui", "lives_in"),
            FactKey("default", "ana", "lives_in"),
        ]
        assert backend.key_ids(asked) == {asked[0]: ana, asked[2]: maria}
        assert backend.key_ids([]) == {}

    # ------------------------------------------------------------ write decisions
    def test_is_a_ledger_store(self, ledger: Ledger) -> None:
        assert isinstance(ledger, LedgerStore)

    def test_a_move_supersedes_the_old_city(self, ledger: Ledger, clock: ManualClock) -> None:
        berlin = ledger.write(lives("Berlin", 2019))
        clock.advance()
        lisbon = ledger.write(lives("Lisbon", 2021))
        assert (berlin.decision, lisbon.decision) == (Decision.NOVEL, Decision.SUPERSEDED)
        (closed,) = lisbon.closed
        assert closed.id == berlin.statement_id
        assert closed.valid_to == d(2021)
        assert closed.superseded_by == lisbon.statement_id
        assert closed.status is FactStatus.SUPERSEDED
        assert objects(ledger.current()) == ["Lisbon"]
        assert objects(ledger.as_of(valid_at=d(2020))) == ["Berlin"]

    def test_as_of_known_at_answers_with_what_was_recorded_then(
        self, ledger: Ledger, clock: ManualClock
    ) -> None:
        ledger.write(lives("Berlin", 2019))
        before_move = clock.advance()
        clock.advance()
        ledger.write(lives("Lisbon", 2021))
        assert objects(ledger.as_of(valid_at=d(2022), known_at=before_move)) == ["Berlin"]
        assert objects(ledger.as_of(valid_at=d(2022))) == ["Lisbon"]

    def test_namespaces_are_those_holding_a_visible_fact(
        self, ledger: Ledger, clock: ManualClock
    ) -> None:
        for namespace in ("users.ana", "users.bo", "usersx"):
            ledger.write(lives("Berlin", 2019, namespace=namespace))
        ledger.write(Fact(text="a note", namespace="teams.a", valid_from=d(2019)))
        before = clock.advance()
        clock.advance()
        ledger.retract("Maria", "lives in", at=d(2022), namespace="users.bo")
        assert ledger.namespaces() == ["teams.a", "users.ana", "usersx"]
        assert ledger.namespaces(prefix="users.") == ["users.ana"]
        assert ledger.namespaces(prefix="users.", valid_at=d(2020)) == ["users.ana", "users.bo"]
        assert ledger.namespaces(prefix="users.", known_at=before) == ["users.ana", "users.bo"]
        assert ledger.namespaces(valid_at=d(2018)) == []
        assert ledger.namespaces(prefix="users.bo") == []

    def test_a_late_older_fact_is_backfilled_not_current(
        self, ledger: Ledger, clock: ManualClock
    ) -> None:
        ledger.write(lives("Berlin", 2019))
        clock.advance()
        madrid = ledger.write(lives("Madrid", 2015))
        assert madrid.decision is Decision.BACKFILLED
        assert madrid.fact is not None
        assert madrid.fact.valid_to == d(2019)
        assert objects(ledger.current()) == ["Berlin"]
        assert objects(ledger.as_of(valid_at=d(2016))) == ["Madrid"]

    def test_a_slightly_late_fact_reads_only_the_end_of_a_long_stream(
        self, ledger: Ledger, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # broke (slow, not wrong): a fact older than the newest one of its key read and
        # re-derived the key's whole history, so writers sharing keys slowed down as it grew
        cities = [f"City {i}" for i in range(40)]
        ledger.write_many([lives(city, 1980 + i) for i, city in enumerate(cities)])
        backend = ledger._backend
        loaded: list[StreamState] = []
        load_tail = backend.load_tail

        def spy(*args: Any) -> StreamState:
            loaded.append(load_tail(*args))
            return loaded[-1]

        monkeypatch.setattr(backend, "load_tail", spy)
        late = ledger.write(replace(lives("Lisbon", 2017), valid_from=d(2017, 7)))
        assert late.decision is Decision.SUPERSEDED
        assert late.fact is not None
        assert (late.fact.valid_from, late.fact.valid_to) == (d(2017, 7), d(2018))
        assert objects(ledger.as_of(valid_at=d(2017, 3))) == ["City 37"]
        assert objects(ledger.as_of(valid_at=d(2017, 9))) == ["Lisbon"]
        assert objects(ledger.current()) == ["City 39"]
        (state,) = loaded
        assert not state.complete
        assert [v.valid_from for v in state.versions] == [
            to_instant(d(y)) for y in range(2016, 2020)
        ]

    def test_a_late_fact_with_the_current_object_extends_the_version_backwards(
        self, ledger: Ledger
    ) -> None:
        first = ledger.write(lives("Berlin", 2019))
        earlier = ledger.write(lives("berlin ", 2017))
        assert earlier.decision is Decision.BACKFILLED
        (version,) = ledger.history("maria", "lives_in")
        assert version.id == first.statement_id
        assert version.valid_from == d(2017)

    def test_the_same_object_again_reinforces_without_a_new_version(self, ledger: Ledger) -> None:
        ledger.write(lives("Berlin", 2019))
        again = ledger.write(
            Fact(
                text="Maria is still in Berlin",
                subject="MARIA",
                relation="Lives-In",
                object="BERLIN",
                valid_from=d(2020),
            )
        )
        assert again.decision is Decision.REINFORCED
        assert len(ledger.history("Maria", "lives in")) == 1
        explanation = ledger.explain(again.statement_id)
        assert explanation.part_of is not None
        assert explanation.part_of.object == "Berlin"

    def test_a_flip_flop_gives_three_versions(self, ledger: Ledger, clock: ManualClock) -> None:
        for year, drink in ((2019, "cola"), (2020, "coffee"), (2021, "cola")):
            clock.advance()
            ledger.write(
                Fact(
                    text=f"likes {drink}",
                    subject="Maria",
                    relation="favourite drink",
                    object=drink,
                    valid_from=d(year),
                )
            )
        history = ledger.history("Maria", "favourite drink")
        assert objects(history) == ["cola", "coffee", "cola"]
        assert [f.status for f in history] == [FactStatus.SUPERSEDED] * 2 + [FactStatus.CURRENT]

    def test_same_valid_from_another_object_is_a_correction(
        self, ledger: Ledger, clock: ManualClock
    ) -> None:
        wrong = ledger.write(lives("Lisbom", 2021))
        clock.advance()
        right = ledger.write(lives("Lisbon", 2021))
        assert right.decision is Decision.CORRECTED
        (retired,) = right.retired
        assert retired.id == wrong.statement_id
        assert retired.status is FactStatus.RETIRED
        assert retired.retire_reason is not None
        assert retired.retire_reason.kind is ReasonKind.CORRECTED
        assert objects(ledger.current()) == ["Lisbon"]
        assert objects(ledger.as_of(known_at=START)) == ["Lisbom"]  # what we believed then

    def test_an_identical_statement_is_a_no_op(self, ledger: Ledger) -> None:
        fact = lives("Berlin", 2019)
        ledger.write(fact)
        exported = ledger.export()
        assert ledger.write(fact).decision is Decision.DUPLICATE
        assert ledger.write(lives("Berlin", 2019)).decision is Decision.DUPLICATE
        assert ledger.export() == exported

    def test_reusing_an_id_for_other_content_is_refused(self, ledger: Ledger) -> None:
        ledger.write(lives("Berlin", 2019, id="fact-1"))
        with pytest.raises(FactIdConflictError, match="fact-1"):
            ledger.write(lives("Lisbon", 2021, id="fact-1"))

    def test_many_relations_accumulate(self, ledger: Ledger) -> None:
        ledger.declare("speaks", Cardinality.MANY)
        for year, language in ((2000, "German"), (2021, "Portuguese")):
            result = ledger.write(
                Fact(
                    text=f"speaks {language}",
                    subject="Maria",
                    relation="speaks",
                    object=language,
                    valid_from=d(year),
                )
            )
            assert result.decision is Decision.NOVEL
        assert sorted(objects(ledger.current(subject="maria", relation="speaks"))) == [
            "German",
            "Portuguese",
        ]

    def test_declarations_persist_and_cannot_flip_once_used(self, ledger: Ledger) -> None:
        assert ledger.cardinality("pets") is Cardinality.ONE
        ledger.declare("pets", "many")
        ledger.declare("pets", Cardinality.MANY)  # idempotent
        assert ledger.cardinality("Pets") is Cardinality.MANY
        ledger.write(Fact(text="has a cat", subject="Maria", relation="pets", object="cat"))
        with pytest.raises(CardinalityConflictError, match="pets"):
            ledger.declare("pets", Cardinality.ONE)
        with pytest.raises(InvalidInputError, match="cardinality"):
            ledger.declare("toys", "several")

    def test_declared_cardinality_tells_a_declaration_from_the_default(
        self, ledger: Ledger
    ) -> None:
        assert ledger.declared_cardinality("pets") is None  # ONE by default, not declared
        ledger.declare("pets", Cardinality.ONE)
        assert ledger.declared_cardinality("Pets") is Cardinality.ONE
        ledger.declare("toys", "many")
        assert ledger.declared_cardinality("toys") is Cardinality.MANY

    # ------------------------------------------------------------ retractions and undo
    def test_a_retraction_closes_the_current_value(
        self, ledger: Ledger, clock: ManualClock
    ) -> None:
        veggie = ledger.write(
            Fact(
                text="Maria is vegetarian",
                subject="Maria",
                relation="diet",
                object="vegetarian",
                valid_from=d(2018),
            )
        )
        clock.advance()
        result = ledger.retract("Maria", "diet", "vegetarian", at=d(2022))
        assert result.decision is Decision.RETRACTED
        (closed,) = result.closed
        assert closed.id == veggie.statement_id
        assert closed.status is FactStatus.RETRACTED
        assert ledger.current(subject="Maria", relation="diet") == []
        assert (
            ledger.retract("Maria", "diet", "vegetarian", at=d(2022)).decision is Decision.DUPLICATE
        )
        clock.advance()
        undone = ledger.unretire(veggie.statement_id)
        assert undone.decision is Decision.RESTORED
        assert objects(ledger.current(subject="Maria", relation="diet")) == ["vegetarian"]

    def test_retracting_a_value_that_is_not_there_is_an_error(self, ledger: Ledger) -> None:
        with pytest.raises(NothingToRetractError):
            ledger.retract("Maria", "diet")
        ledger.write(lives("Berlin", 2019))
        with pytest.raises(NothingToRetractError, match="Berlin"):
            ledger.retract("Maria", "lives in", "Lisbon")
        with pytest.raises(NothingToRetractError):
            ledger.retract("Maria", "lives in", at=d(2010))

    def test_retracting_all_values_of_a_many_relation(self, ledger: Ledger) -> None:
        ledger.declare("speaks", Cardinality.MANY)
        for language in ("German", "Portuguese"):
            ledger.write(
                Fact(
                    text=language,
                    subject="Maria",
                    relation="speaks",
                    object=language,
                    valid_from=d(2000),
                )
            )
        result = ledger.retract("Maria", "speaks", at=d(2020))
        assert sorted(objects(list(result.closed))) == ["German", "Portuguese"]
        assert ledger.current(subject="Maria", relation="speaks") == []
        restored = ledger.unretire(result.statement_id)
        assert restored.decision is Decision.RESTORED
        assert len(ledger.current(subject="Maria", relation="speaks")) == 2

    def test_correct_replaces_a_wrong_fact(self, ledger: Ledger, clock: ManualClock) -> None:
        acme = ledger.write(
            Fact(
                text="works at Acme",
                subject="Maria",
                relation="employer",
                object="Acme",
                valid_from=d(2020),
            )
        )
        clock.advance()
        fixed = ledger.correct(acme.statement_id, object="Globex", text="works at Globex")
        assert fixed.decision is Decision.CORRECTED
        assert fixed.fact is not None
        assert (fixed.fact.object, fixed.fact.valid_from) == ("Globex", d(2020))
        explanation = ledger.explain(acme.statement_id)
        assert explanation.reason is not None
        assert explanation.reason.kind is ReasonKind.CORRECTED
        assert explanation.reason.by == fixed.statement_id
        assert "corrected by" in explanation.summary()
        with pytest.raises(InvalidOperationError):
            ledger.correct(acme.statement_id, object="Initech")
        with pytest.raises(InvalidInputError, match="nothing to correct"):
            ledger.correct(fixed.statement_id)
        with pytest.raises(InvalidInputError, match="id"):
            ledger.correct(fixed.statement_id, id="x")

    def test_retire_and_unretire_round_trip(self, ledger: Ledger, clock: ManualClock) -> None:
        wrong = ledger.write(lives("Atlantis", 2020))
        clock.advance()
        assert ledger.retire(wrong.statement_id).decision is Decision.WITHDRAWN
        assert ledger.current() == []
        (marked,) = ledger.history("Maria", "lives in")
        assert marked.status is FactStatus.RETIRED
        assert marked.retire_reason is not None
        assert marked.retire_reason.kind is ReasonKind.WITHDRAWN
        with pytest.raises(InvalidOperationError):
            ledger.retire(wrong.statement_id)
        clock.advance()
        assert ledger.unretire(wrong.statement_id).decision is Decision.RESTORED
        assert objects(ledger.current()) == ["Atlantis"]
        assert ledger.unretire(wrong.statement_id).decision is Decision.DUPLICATE

    def test_unretire_of_a_superseded_fact_says_what_to_do(self, ledger: Ledger) -> None:
        berlin = ledger.write(lives("Berlin", 2019))
        lisbon = ledger.write(lives("Lisbon", 2021))
        with pytest.raises(NotRetiredError, match=lisbon.statement_id):
            ledger.unretire(berlin.statement_id)

    def test_unknown_fact_ids_are_lookup_errors(self, ledger: Ledger) -> None:
        for call in (ledger.explain, ledger.unretire, ledger.retire, ledger.get):
            with pytest.raises(FactNotFoundError, match="nope"):
                call("nope")
        with pytest.raises(FactNotFoundError):
            ledger.correct("nope", object="x")

    # ------------------------------------------------------------ reads
    def test_history_is_in_valid_time_order_and_marks_retired(
        self, ledger: Ledger, clock: ManualClock
    ) -> None:
        ledger.write(lives("Lisbon", 2021))
        clock.advance()
        ledger.write(lives("Berlin", 2019))
        clock.advance()
        ledger.write(lives("Porto", 2021))  # corrects Lisbon
        history = ledger.history("Maria", "lives in")
        assert [(f.object, f.status) for f in history] == [
            ("Berlin", FactStatus.SUPERSEDED),
            ("Lisbon", FactStatus.RETIRED),
            ("Porto", FactStatus.CURRENT),
        ]
        then = ledger.history("Maria", "lives in", known_at=START)
        assert [(f.object, f.status) for f in then] == [("Lisbon", FactStatus.CURRENT)]

    def test_explain_and_get_describe_a_superseded_fact(self, ledger: Ledger) -> None:
        berlin = ledger.write(lives("Berlin", 2019))
        lisbon = ledger.write(lives("Lisbon", 2021))
        fact = ledger.get(berlin.statement_id)
        assert fact.valid_to == d(2021)
        assert fact.superseded_by == lisbon.statement_id
        explanation = ledger.explain(berlin.statement_id)
        assert explanation.reason is not None
        assert explanation.reason.rule == "supersession"
        assert lisbon.statement_id in explanation.summary()
        assert [s.text for s in explanation.statements] == ["Maria lives in Berlin"]

    def test_namespaces_never_see_each_other(self, ledger: Ledger) -> None:
        ledger.write(lives("Berlin", 2019, namespace="alice"))
        ledger.write(lives("Lisbon", 2021, namespace="bob"))
        assert objects(ledger.current(namespace="alice")) == ["Berlin"]
        assert objects(ledger.current(namespace="bob")) == ["Lisbon"]
        assert ledger.current() == []
        assert objects(ledger.history("Maria", "lives in", namespace="alice")) == ["Berlin"]

    def test_prose_is_kept_and_never_supersedes(self, ledger: Ledger) -> None:
        first = ledger.write(Fact(text="We moved the standup to 10am", valid_from=d(2023)))
        second = ledger.write(Fact(text="We moved the standup to 11am", valid_from=d(2023, 2)))
        assert (first.decision, second.decision) == (Decision.NOVEL, Decision.NOVEL)
        assert len(ledger.current()) == 2
        assert ledger.current(subject="we", relation="moved") == []
        again = ledger.write(Fact(text="we moved  the standup to 10AM", valid_from=d(2023)))
        assert again.decision is Decision.DUPLICATE

    def test_filters_by_subject_or_relation(self, ledger: Ledger) -> None:
        ledger.write(lives("Berlin", 2019))
        ledger.write(
            Fact(
                text="Maria works at Acme",
                subject="Maria",
                relation="employer",
                object="Acme",
                valid_from=d(2019),
            )
        )
        ledger.write(
            Fact(
                text="Jo works at Initech",
                subject="Jo",
                relation="employer",
                object="Initech",
                valid_from=d(2019),
            )
        )
        ledger.write(Fact(text="some prose", valid_from=d(2019)))
        assert objects(ledger.current(subject="maria")) == ["Acme", "Berlin"]
        assert objects(ledger.current(relation="employer")) == ["Initech", "Acme"]
        assert objects(ledger.current())[-1] is None  # prose comes last

    # ------------------------------------------------------------ record time
    def test_explicit_record_times_import_a_log_in_order(self, ledger: Ledger) -> None:
        ledger.write(lives("Berlin", 2019, recorded_at=d(2019, 2)))
        ledger.write(lives("Lisbon", 2021, recorded_at=d(2021, 3)))
        assert objects(ledger.as_of(valid_at=d(2022), known_at=d(2021, 1))) == ["Berlin"]
        with pytest.raises(InvalidInputError, match=r"recorded_at.*backwards"):
            ledger.write(lives("Porto", 2022, recorded_at=d(2020)))
        with pytest.raises(InvalidInputError, match=r"recorded_at.*future"):
            ledger.write(lives("Porto", 2022, recorded_at=START + timedelta(days=1)))

    def test_record_time_never_goes_backwards_when_the_clock_does(
        self, ledger: Ledger, clock: ManualClock
    ) -> None:
        first = ledger.write(lives("Berlin", 2019))
        clock.set(START - timedelta(days=30))
        second = ledger.write(lives("Lisbon", 2021))
        assert first.fact is not None
        assert second.fact is not None
        assert second.fact.recorded_at is not None
        assert first.fact.recorded_at is not None
        assert second.fact.recorded_at >= first.fact.recorded_at

    # ------------------------------------------------------------ bad input
    @pytest.mark.parametrize(
        ("fields", "field"),
        [
            ({"valid_from": NAIVE}, "valid_from"),
            ({"valid_from": d(2020), "valid_to": d(2019)}, "valid_to"),
            ({"subject": "Maria", "object": "x"}, "relation"),
            ({"relation": "lives in", "object": "x"}, "subject"),
            ({"subject": "Maria", "relation": "lives in"}, "object"),
            ({"subject": "Maria", "relation": "lives in", "object": [1]}, "object"),
            ({"subject": "Maria", "relation": "lives in", "object": float("nan")}, "object"),
            ({"subject": " ", "relation": "lives in", "object": "x"}, "subject"),
            ({"text": ""}, "text"),
            ({"namespace": ""}, "namespace"),
            ({"metadata": {"when": datetime.now(UTC)}}, "metadata.when"),
            ({"text": "\ud800"}, "text"),
        ],
    )
    def test_bad_facts_are_refused_with_the_field_named(
        self, ledger: Ledger, fields: dict[str, object], field: str
    ) -> None:
        values: dict[str, object] = {"text": "Maria lives in Berlin", **fields}
        with pytest.raises(InvalidInputError) as caught:
            ledger.write(Fact(**values))  # type: ignore[arg-type]
        assert caught.value.field == field
        assert caught.value.fix
        assert ledger.export() == ([], [])

    def test_a_batch_with_one_bad_fact_writes_nothing(self, ledger: Ledger) -> None:
        good = lives("Berlin", 2019)
        late = lives("Lisbon", 2021, recorded_at=START + timedelta(days=9))
        with pytest.raises(InvalidInputError, match=r"facts\[1\]\.recorded_at"):
            ledger.write_many([good, late])
        with pytest.raises(InvalidInputError, match=r"facts\[1\]"):
            ledger.write_many([good, "not a fact"])  # type: ignore[list-item]
        assert ledger.export() == ([], [])
        assert ledger.current() == []

    def test_ledger_owned_fields_are_refused_on_input(self, ledger: Ledger) -> None:
        with pytest.raises(InvalidInputError, match="retired_at"):
            ledger.write(lives("Berlin", 2019, retired_at=d(2020)))

    def test_naive_query_times_are_refused(self, ledger: Ledger) -> None:
        with pytest.raises(InvalidInputError, match="valid_at"):
            ledger.as_of(valid_at=NAIVE)
        with pytest.raises(InvalidInputError, match="known_at"):
            ledger.history("Maria", "lives in", known_at=NAIVE)

    def test_other_timezones_mean_the_same_instant(self, ledger: Ledger) -> None:
        plus_two = timezone(timedelta(hours=2))
        ledger.write(lives("Berlin", 2019))
        at_midnight_utc = datetime(2020, 1, 1, 2, tzinfo=plus_two)
        assert objects(ledger.as_of(valid_at=at_midnight_utc)) == ["Berlin"]

    def test_sql_looking_strings_are_stored_verbatim(self, ledger: Ledger) -> None:
        nasty = "Robert'); DROP TABLE statements;--"
        result = ledger.write(
            Fact(
                text=nasty,
                subject=nasty,
                relation="name",
                object=nasty,
                namespace=nasty,
                metadata={"x": nasty},
                valid_from=d(2020),
            )
        )
        (fact,) = ledger.current(namespace=nasty)
        assert (fact.text, fact.subject, fact.object, fact.metadata["x"]) == (nasty,) * 4
        assert ledger.get(result.statement_id).namespace == nasty

    # ------------------------------------------------------------ change feed
    def test_the_change_feed_pages_and_reports_retirements(
        self, ledger: Ledger, clock: ManualClock
    ) -> None:
        for year, city in enumerate(("Berlin", "Lisbon", "Porto", "Faro"), start=2019):
            clock.advance(timedelta(days=1))
            ledger.write(lives(city, year))
        first = ledger.changes(limit=3)
        assert first.more
        assert [r.row_id for r in first.records] == [1, 2, 3]
        rest = ledger.changes(first.cursor, limit=100)
        assert not rest.more
        mirror = {r.row_id: r for r in (*first.records, *rest.records)}
        _, versions = ledger.export()
        assert set(mirror) == {v.row_id for v in versions}
        assert ledger.changes(rest.cursor).records == (), "nothing new, nothing delivered"
        clock.advance(timedelta(days=1))
        retired = ledger.retire(ledger.current()[0].id)
        after = ledger.changes(rest.cursor)
        assert {r.fact_id for r in after.records if not r.believed} >= {
            f.id for f in retired.retired
        }
        assert all(r.text.startswith("Maria lives in") for r in after.records)

    def test_paging_the_change_feed_sends_each_row_once(
        self, ledger: Ledger, clock: ManualClock
    ) -> None:
        # broke: a page that hit the limit kept the cursor's retirement time, so each later
        # page sent every retirement of the pages before it again (quadratic at 1M rows)
        for year in range(1900, 1960):
            clock.advance(timedelta(days=1))
            ledger.write(lives(f"city {year}", year))  # each write retires the last version
        _, versions = ledger.export()
        sent: list[int] = []
        page = ledger.changes(limit=5)
        sent += [r.row_id for r in page.records]
        while page.more:
            page = ledger.changes(page.cursor, limit=5)
            sent += [r.row_id for r in page.records]
        assert sorted(sent) == sorted(v.row_id for v in versions)  # each once
        assert ledger.changes(page.cursor).records == ()

    def test_a_cursor_from_another_ledger_comes_back_behind(self, ledger: Ledger) -> None:
        ledger.write(lives("Berlin", 2019))
        ahead = ChangeCursor(after_row=10_000, retired_from=2**62)
        page = ledger.changes(ahead)
        assert page.cursor.after_row < ahead.after_row
        with pytest.raises(InvalidInputError, match="limit"):
            ledger.changes(limit=0)

    def test_versions_by_row_and_fact_show_what_was_known(
        self, ledger: Ledger, clock: ManualClock
    ) -> None:
        berlin = ledger.write(lives("Berlin", 2019)).fact
        assert berlin is not None
        before = clock.advance(timedelta(days=1))
        clock.advance(timedelta(days=1))
        ledger.write(lives("Lisbon", 2021))
        rows = ledger.versions(fact_ids=[berlin.id])
        assert [r.record.believed for r in rows] == [False, True]
        assert rows[1].fact.valid_to == d(2021)
        then = ledger.versions(row_ids=[rows[0].record.row_id, 999], known_at=before)
        assert len(then) == 1
        assert then[0].fact.valid_to is None
        assert then[0].fact.retired_at is None

    def test_retire_many_is_one_transaction(self, ledger: Ledger, clock: ManualClock) -> None:
        berlin = ledger.write(lives("Berlin", 2019)).statement_id
        lisbon = ledger.write(lives("Lisbon", 2021)).statement_id
        clock.advance(timedelta(days=1))
        with pytest.raises(FactNotFoundError):
            ledger.retire_many([lisbon, "no-such-fact"])
        assert objects(ledger.current()) == ["Lisbon"], "nothing was retired"
        results = ledger.retire_many([lisbon, berlin, lisbon])
        assert [r.decision for r in results] == [Decision.WITHDRAWN, Decision.WITHDRAWN]
        assert ledger.current() == []
        assert ledger.retire_many([berlin]) == [], "already retired: skipped"

    def test_replacing_withdraws_what_the_write_did_not_end(
        self, ledger: Ledger, clock: ManualClock
    ) -> None:
        draft = ledger.write(Fact(text="The plan is draft one.")).statement_id
        before = clock.advance(timedelta(days=1))
        clock.advance(timedelta(days=1))
        [result] = ledger.write_many([Fact(text="The plan is draft two.")], replacing=[draft])
        assert result.decision is Decision.NOVEL
        assert [f.text for f in ledger.current()] == ["The plan is draft two."]
        assert ledger.get(draft).status is FactStatus.RETIRED
        then = ledger.as_of(known_at=before)
        assert [f.text for f in then] == ["The plan is draft one."], "history keeps it"

    def test_a_replaced_value_the_write_superseded_stays_as_history(self, ledger: Ledger) -> None:
        berlin = ledger.write(lives("Berlin", 2019)).statement_id
        [result] = ledger.write_many([lives("Lisbon", 2021)], replacing=[berlin])
        assert [f.id for f in result.closed] == [berlin]
        assert objects(ledger.current()) == ["Lisbon"]
        assert objects(ledger.as_of(valid_at=d(2020))) == ["Berlin"]
        assert ledger.get(berlin).status is FactStatus.SUPERSEDED

    def test_replacing_a_statement_by_itself_changes_nothing(self, ledger: Ledger) -> None:
        note = ledger.write(Fact(text="The office opens at nine.")).statement_id
        [result] = ledger.write_many([Fact(text="The office opens at nine.")], replacing=[note])
        assert result.decision is Decision.DUPLICATE
        assert [f.id for f in ledger.current()] == [note]

    def test_replacing_by_the_same_value_with_new_metadata_keeps_the_new_metadata(
        self, ledger: Ledger
    ) -> None:
        note = ledger.write(Fact(text="The office opens at nine.", metadata={"n": 1}))
        berlin = ledger.write(lives("Berlin", 2019, metadata={"n": 1}))
        replaced = [note.statement_id, berlin.statement_id]
        results = ledger.write_many(
            [
                Fact(text="The office opens at nine.", metadata={"n": 2}),
                lives("Berlin", 2019, metadata={"n": 2}),
            ],
            replacing=replaced,
        )
        assert [r.decision for r in results] == [Decision.NOVEL, Decision.NOVEL]
        assert sorted(f.metadata["n"] for f in ledger.current()) == [2, 2]
        assert objects(ledger.as_of(valid_at=d(2020))) == ["Berlin"]

    def test_replacing_is_one_transaction(self, ledger: Ledger) -> None:
        note = ledger.write(Fact(text="The office opens at nine.")).statement_id
        with pytest.raises(FactNotFoundError):
            ledger.write_many([Fact(text="It opens at ten.")], replacing=[note, "no-such-fact"])
        assert [f.id for f in ledger.current()] == [note], "nothing written, nothing withdrawn"
        with pytest.raises(InvalidInputError, match=r"replacing\[0\]"):
            ledger.write_many([Fact(text="It opens at ten.")], replacing=[""])

    def test_prose_is_merged_unless_told_otherwise(self, ledger: Ledger) -> None:
        text = "The office opens at nine."
        merged = ledger.write_many([Fact(text=text), Fact(text=text)])
        assert [r.decision for r in merged] == [Decision.NOVEL, Decision.DUPLICATE]
        kept = ledger.write_many([Fact(text=text), Fact(text=text)], merge_prose=False)
        assert [r.decision for r in kept] == [Decision.NOVEL, Decision.NOVEL]
        assert len(ledger.current()) == 3
