"""Judging prose at write time: a pair scorer decides which prose statements a new one ends.

Keyed facts are superseded by the key rule in the ledger. Prose has no key, so
:class:`~shared_core.memory.TemporalMemory` can be given a :class:`ProseJudge`: for every new
prose statement of an ``add``/``add_many`` it gathers candidates and scores them with a
:class:`~shared_core.detectors.nli.PairScorer` (premise = the earlier-valid text, hypothesis =
the later-valid one); every pair scoring at least ``threshold`` becomes a
:class:`~shared_core.ledger.prose.ProseSupersession` written in the same ledger transaction as
the batch, so the earlier statement stops being current (history keeps it).

Candidates of a new statement, all prose of its namespace and its speaker (a stored statement's
is its metadata's ``speaker_field``) with cosine >= ``min_cosine`` and a different normalised
text:

- the ``neighbours`` nearest stored statements valid now or valid at the new statement's
  ``valid_from`` (so a late-arriving old statement meets the newer ones that close it). The
  index holds keyed facts too, so it is asked for ``3 * neighbours`` and the prose kept;
  a statement valid from now costs one index query, a back- or future-dated one two;
- the ``neighbours`` nearest earlier prose statements of the same batch (cosine of the batch's
  vectors).

A missing ``valid_from`` means "now" (the ledger uses the record time), i.e. newest. Pairs with
equal valid times are skipped (nothing orders them). All pairs of a batch go to the scorer in
one call; no call (and no index query) happens when the batch has no prose or no candidate.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from shared_core.clock import Instant, to_instant
from shared_core.detectors.kappa import KappaScorer
from shared_core.detectors.nli import PairScorer, checked_scores
from shared_core.errors import InvalidInputError
from shared_core.facts import Fact, normalize_text
from shared_core.index.base import Vector, VectorIndex
from shared_core.judging.base import Judgement, WriteBatch, checked_number
from shared_core.ledger.prose import ProseSupersession
from shared_core.ledger.protocol import LedgerStore

OVERFETCH = 3
"""The index is asked for this many times ``neighbours`` records (keyed facts share it)."""


@dataclass(frozen=True, slots=True)
class ProseJudge:
    """How TemporalMemory judges new prose at write time (see the module doc).

    ``scorer`` gives the probability that the later text makes the earlier one no longer true;
    ``threshold`` (in (0, 1]) is the score from which the earlier one is closed; ``name`` is the
    rule recorded in the reason (e.g. ``"kappa-minilm-v1"``); ``min_cosine`` (in [-1, 1]) is
    the embedding pre-filter; ``neighbours`` (>= 1) bounds the candidates per new statement.
    """

    scorer: PairScorer
    threshold: float
    name: str
    min_cosine: float = 0.3
    neighbours: int = 10

    def __post_init__(self) -> None:
        if not callable(getattr(self.scorer, "contradiction_scores", None)):
            raise InvalidInputError(
                "scorer",
                f"is a {type(self.scorer).__name__} without contradiction_scores",
                "pass a PairScorer (e.g. a TransformersNLIScorer)",
            )
        threshold = checked_number("threshold", self.threshold, 0.0, 1.0, low_open=True)
        min_cosine = checked_number("min_cosine", self.min_cosine, -1.0, 1.0)
        if not isinstance(self.name, str) or not self.name.strip():
            raise InvalidInputError("name", f"is {self.name!r}", "pass the detector's name")
        count = self.neighbours
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            raise InvalidInputError("neighbours", f"is {count!r}", "pass an int >= 1")
        object.__setattr__(self, "threshold", threshold)
        object.__setattr__(self, "min_cosine", min_cosine)

    def judge(self, batch: WriteBatch) -> Judgement:
        """The batch's statements as planned, with the prose supersessions its new prose makes
        (:func:`judge_batch`); only statements of one speaker are paired."""
        if not batch.prose:
            return Judgement.unchanged(batch)
        edges = judge_batch(
            self,
            batch.statements,
            batch.vectors,
            index=batch.index,
            ledger=batch.ledger,
            now=batch.now,
            speakers=batch.speakers,
            speaker_field=batch.speaker_field,
        )
        return Judgement(
            statements=tuple((fact,) for fact in batch.statements), supersessions=edges
        )


@dataclass(frozen=True, slots=True)
class _Prose:
    """A prose statement taking part in the judging."""

    id: str
    text: str
    namespace: str
    valid_from: Instant
    text_key: str
    speaker: str | None = None


def judge_batch(
    judge: ProseJudge,
    facts: Sequence[Fact],
    vectors: Mapping[str, Vector],
    *,
    index: VectorIndex,
    ledger: LedgerStore,
    now: Instant,
    speakers: Sequence[str | None] | None = None,
    speaker_field: str | None = None,
) -> tuple[ProseSupersession, ...]:
    """The supersessions to write with ``facts`` (``vectors`` maps their texts to vectors).

    ``speakers`` (parallel to ``facts``) says who wrote each; a stored statement's speaker is
    its metadata's ``speaker_field`` (none without one). Only statements of the same speaker
    (or both of none) are paired."""
    who = list(speakers) if speakers is not None else [None] * len(facts)
    new = list(
        {
            f.id: _prose(f, now, speaker)
            for f, speaker in zip(facts, who, strict=True)
            if f.key is None
        }.values()
    )
    if not new:
        return ()
    pairs: dict[tuple[str, str], tuple[str, str]] = {}
    neighbours = _stored(judge, new, vectors, index, ledger, now, speaker_field)
    for statement, stored in zip(new, neighbours, strict=True):
        for other in stored:
            _add_pair(pairs, other, statement)
    for earlier, later in _in_batch(judge, new, vectors):
        _add_pair(pairs, earlier, later)
    if not pairs:
        return ()
    ordered = list(pairs)
    scores = _score(judge, [pairs[key] for key in ordered])
    return tuple(
        ProseSupersession(older=older, newer=newer, rule=judge.name, score=score)
        for (older, newer), score in zip(ordered, scores, strict=True)
        if score >= judge.threshold
    )


def _prose(fact: Fact, now: Instant, speaker: str | None) -> _Prose:
    start = now if fact.valid_from is None else to_instant(fact.valid_from, "valid_from")
    return _Prose(fact.id, fact.text, fact.namespace, start, normalize_text(fact.text), speaker)


def stored_speaker(fact: Fact, speaker_field: str | None) -> str | None:
    """Who wrote a stored statement: its metadata's ``speaker_field`` as text (None without a
    field or a value)."""
    if speaker_field is None:
        return None
    value = fact.metadata.get(speaker_field)
    return None if value is None or isinstance(value, bool) else str(value)


def _add_pair(pairs: dict[tuple[str, str], tuple[str, str]], a: _Prose, b: _Prose) -> None:
    """Record (earlier, later) unless nothing orders them, they say the same, or two speakers
    said them."""
    if a.valid_from == b.valid_from or a.id == b.id or a.text_key == b.text_key:
        return
    if a.speaker != b.speaker or a.namespace != b.namespace:
        return
    older, newer = (a, b) if a.valid_from < b.valid_from else (b, a)
    pairs.setdefault((older.id, newer.id), (older.text, newer.text))


def _stored(
    judge: ProseJudge,
    new: Sequence[_Prose],
    vectors: Mapping[str, Vector],
    index: VectorIndex,
    ledger: LedgerStore,
    now: Instant,
    speaker_field: str | None,
) -> list[list[_Prose]]:
    """Per new statement, the nearest stored prose of its speaker valid now or at its
    valid_from."""
    found: list[dict[int, float]] = []
    for statement in new:
        scores: dict[int, float] = {}
        for valid_at in dict.fromkeys((now, statement.valid_from)):
            for match in index.search(
                vectors[statement.text],
                k=judge.neighbours * OVERFETCH,
                namespace=statement.namespace,
                valid_at=valid_at,
                known_at=None,
                rows_only=True,  # the rows are read from the ledger below
            ):
                if match.score >= judge.min_cosine:
                    scores[match.row_id] = max(match.score, scores.get(match.row_id, -math.inf))
        found.append(scores)
    rows = sorted({row_id for scores in found for row_id in scores})
    stored = {
        v.record.row_id: v.fact
        for v in (ledger.versions(row_ids=rows, attributes=False) if rows else [])
        if v.fact.key is None
    }
    out = []
    for statement, scores in zip(new, found, strict=True):
        best: dict[str, tuple[float, _Prose]] = {}
        for row_id, score in scores.items():
            fact = stored.get(row_id)
            if fact is None:
                continue
            other = _prose(fact, now, stored_speaker(fact, speaker_field))
            if other.id == statement.id or other.text_key == statement.text_key:
                continue
            if other.speaker != statement.speaker:
                continue
            if other.id not in best or score > best[other.id][0]:
                best[other.id] = (score, other)
        ranked = sorted(best.values(), key=lambda item: (-item[0], item[1].id))
        out.append([other for _, other in ranked[: judge.neighbours]])
    return out


def _in_batch(
    judge: ProseJudge, new: Sequence[_Prose], vectors: Mapping[str, Vector]
) -> list[tuple[_Prose, _Prose]]:
    """(earlier item, later item) of the batch: each item's nearest earlier items."""
    import numpy as np

    groups: dict[tuple[str, str | None], list[_Prose]] = {}
    for statement in new:
        groups.setdefault((statement.namespace, statement.speaker), []).append(statement)
    pairs: list[tuple[_Prose, _Prose]] = []
    for group in groups.values():
        if len(group) < 2:
            continue
        matrix = np.asarray([vectors[s.text] for s in group], dtype=np.float64)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        unit = matrix / np.where(norms > 0.0, norms, 1.0)
        cosines = unit @ unit.T
        for later in range(1, len(group)):
            row = cosines[later, :later]
            kept = [
                earlier
                for earlier in np.argsort(-row, kind="stable")
                if row[earlier] >= judge.min_cosine
                and group[earlier].text_key != group[later].text_key
            ][: judge.neighbours]
            pairs += [(group[int(earlier)], group[later]) for earlier in kept]
    return pairs


def _score(judge: ProseJudge, pairs: list[tuple[str, str]]) -> list[float]:
    """One scorer call for every pair, its answers checked; failures are DetectorError."""
    return checked_scores(judge.scorer, pairs, name=judge.name)


def kappa_judge(*, scorer: KappaScorer | None = None, neighbours: int = 10) -> ProseJudge:
    """Write-time judging of prose with kappa (``MemoryConfig(prose_judge=...)``): each new
    statement against its ``neighbours`` nearest stored ones, at the card's dev-set threshold
    and cosine pre-filter."""
    scorer = KappaScorer() if scorer is None else scorer
    return ProseJudge(
        scorer=scorer,
        threshold=scorer.card.threshold,
        name=scorer.card.name,
        min_cosine=scorer.card.min_cosine,
        neighbours=neighbours,
    )
