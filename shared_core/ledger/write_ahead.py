"""What a write names before its transaction starts, and its results once it is stamped.

A write names its first reads (and, when it may run in parallel, its keys and explicit valid
times) before its transaction begins, so that a backend on a server can run them with its
locks (:class:`~shared_core.ledger.backend.WriteReads`); a parallel write stamped at its
commit with a later record time than it planned with has its results moved to it.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from shared_core.clock import Instant, from_instant, optional_instant, to_instant
from shared_core.errors import InvalidInputError
from shared_core.facts import Cardinality, Fact, normalize_text
from shared_core.ledger.backend import Backend, ProseRead, TailRead, WriteReads
from shared_core.ledger.results import WriteResult
from shared_core.ledger.writing import stream_of


def expected_reads(
    backend: Backend, facts: list[Fact], *, now: Instant, merge_prose: bool, parallel: bool
) -> WriteReads:
    """The reads a batch writing ``facts`` starts with (see WriteReads), named before its
    transaction from what the backend knows outside it: every fact id, the tail of each
    keyed fact's stream when its key is stored (from its valid_from, or ``now`` for one that
    defaults to its record time, which is no earlier), the stored prose a prose fact may
    repeat; for a ``parallel`` write also the keys and explicit valid times. A fact whose
    times do not convert is left out: its write reports the error."""
    tails: dict[tuple[int, str], Instant] = {}
    prose: list[ProseRead] = []
    times: set[Instant] = set()
    key_ids = backend.key_ids([fact.key for fact in facts if fact.key is not None])
    for fact in facts:
        try:
            valid_from = None if fact.valid_from is None else to_instant(fact.valid_from)
            valid_to = optional_instant(fact.valid_to, "valid_to")
        except InvalidInputError:
            continue
        times.update(t for t in (valid_from, valid_to) if t is not None)
        key = fact.key
        if key is None:
            if merge_prose:
                text_key = normalize_text(fact.text)
                prose.append(ProseRead(fact.namespace, text_key, valid_from, valid_to))
            continue
        key_id = key_ids.get(key)
        if key_id is not None:
            cardinality = backend.cardinality(key.relation) or Cardinality.ONE
            handle = (key_id, stream_of(cardinality, fact.object_key))
            since = now if valid_from is None else valid_from
            tails[handle] = min(since, tails.get(handle, since))
    return WriteReads(
        fact_ids=tuple(fact.id for fact in facts),
        tails=tuple(TailRead(key_id, stream, since) for (key_id, stream), since in tails.items()),
        prose=tuple(prose),
        keys=tuple(dict.fromkeys(f.key for f in facts if f.key is not None)) if parallel else (),
        times=tuple(sorted(times)) if parallel else (),
        parallel=parallel,
    )


def restamped(result: WriteResult, planned: Instant, stamped: Instant) -> WriteResult:
    """``result`` with every instant that was the record time it was planned with moved to
    the one it was stamped with (see ``Backend.moved_record_time``)."""
    before, after = from_instant(planned), from_instant(stamped)

    def at(when: datetime | None) -> datetime | None:
        return after if when == before else when

    def moved(fact: Fact) -> Fact:
        return replace(
            fact,
            valid_from=at(fact.valid_from),
            valid_to=at(fact.valid_to),
            recorded_at=at(fact.recorded_at),
            retired_at=at(fact.retired_at),
        )

    return replace(
        result,
        fact=None if result.fact is None else moved(result.fact),
        closed=tuple(moved(f) for f in result.closed),
        retired=tuple(moved(f) for f in result.retired),
    )


__all__ = ["expected_reads", "restamped"]
