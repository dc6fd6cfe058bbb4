"""What the memory already knows, as an LLM judge shows it: the current keyed facts of a
statement's namespace nearest to it in meaning, within its speaker's scope.

A speaker's scope is the keys :func:`~shared_core.judging.base.scoped_subject` gives their
statements: their own subject (first person) and the subjects they named (``ana::tom``); a
write without a speaker sees the unscoped subjects. A key of another speaker is never shown,
so it can never be reused.
"""

from __future__ import annotations

from dataclasses import dataclass

from shared_core.facts import Cardinality, Fact, ObjectValue, key_subject
from shared_core.index.base import Vector
from shared_core.judging.base import SPEAKER_SEPARATOR, WriteBatch, speaker_subject

OVERFETCH = 8
"""Index matches read per key shown: prose and other speakers' rows are skipped."""


@dataclass(frozen=True, slots=True)
class KnownKey:
    """One (subject, relation) of the memory (keyed form), its current objects and cardinality."""

    namespace: str
    subject: str
    relation: str
    objects: tuple[ObjectValue, ...]
    cardinality: Cardinality


def in_scope(fact: Fact, speaker: str | None, speaker_field: str | None) -> bool:
    """Whether keyed ``fact`` belongs to ``speaker``'s scope (see the module doc)."""
    key = fact.key
    if key is None:
        return False
    recorded = fact.metadata.get(speaker_field, speaker) if speaker_field is not None else speaker
    if recorded != speaker:
        return False
    if speaker is None:
        return SPEAKER_SEPARATOR not in key.subject
    own = key_subject(speaker)
    return key.subject == own or key.subject.startswith(own + SPEAKER_SEPARATOR)


def shown_subject(subject: str, speaker: str | None) -> str:
    """How a prompt names a keyed subject to ``speaker``: their own as "I", a subject they
    named without the scope prefix."""
    if subject == speaker_subject(speaker):
        return "I"
    if speaker is not None:
        prefix = key_subject(speaker) + SPEAKER_SEPARATOR
        if subject.startswith(prefix):
            return subject[len(prefix) :]
    return subject


def nearest_known(
    batch: WriteBatch, vector: Vector, *, namespace: str, speaker: str | None, limit: int
) -> list[KnownKey]:
    """Up to ``limit`` keys of the current keyed facts nearest to ``vector`` in ``namespace``,
    within ``speaker``'s scope, nearest first."""
    matches = batch.index.search(
        vector,
        k=limit * OVERFETCH,
        namespace=namespace,
        valid_at=batch.now,
        known_at=None,
        rows_only=True,  # the facts are read from the ledger, the source of truth
    )
    if not matches:
        return []
    versions = batch.ledger.versions(row_ids=[m.row_id for m in matches], attributes=False)
    by_row = {v.record.row_id: v.fact for v in versions}
    order: list[tuple[str, str]] = []
    for match in matches:
        fact = by_row.get(match.row_id)
        if fact is None or not in_scope(fact, speaker, batch.speaker_field):
            continue
        key = fact.key
        assert key is not None  # in_scope holds only for keyed facts
        if (key.subject, key.relation) not in order:
            order.append((key.subject, key.relation))
        if len(order) == limit:
            break
    return [_known(batch, namespace, subject, relation) for subject, relation in order]


def _known(batch: WriteBatch, namespace: str, subject: str, relation: str) -> KnownKey:
    current = batch.ledger.current(namespace=namespace, subject=subject, relation=relation)
    objects = tuple(dict.fromkeys(f.object for f in current if f.object is not None))
    return KnownKey(namespace, subject, relation, objects, batch.ledger.cardinality(relation))


def subject_relations(batch: WriteBatch, namespace: str, subject: str) -> tuple[str, ...]:
    """The relations ``subject`` currently has in ``namespace``."""
    facts = batch.ledger.current(namespace=namespace, subject=subject)
    return tuple(dict.fromkeys(f.key.relation for f in facts if f.key is not None))


__all__ = ["KnownKey", "in_scope", "nearest_known", "shown_subject", "subject_relations"]
