"""The write plan of TemporalMemory: each item (text or Fact) becomes the statements to store."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from shared_core.errors import InvalidInputError
from shared_core.extractors.base import Extraction, Extractor
from shared_core.facts import Fact
from shared_core.ledger.results import WriteResult
from shared_core.memory.hits import Added


@dataclass(frozen=True, slots=True)
class Plan:
    """One item's text, the statements to write for it, and the extractor's problem."""

    text: str
    statements: tuple[Fact, ...]
    problem: str | None = None


def check_metadatas(items: Sequence[object], metadatas: Sequence[object] | None) -> None:
    """InvalidInputError unless there is one metadata mapping per item (or none at all)."""
    if metadatas is not None and len(metadatas) != len(items):
        raise InvalidInputError(
            "metadatas",
            f"has {len(metadatas)} entries for {len(items)} items",
            "pass one metadata mapping per item, or none",
        )


def plan_item(
    extractor: Extractor,
    item: str | Fact,
    metadata: Mapping[str, Any],
    *,
    position: int,
    namespace: str,
    valid_from: datetime | None,
    valid_to: datetime | None = None,
) -> Plan:
    """A Fact is written as given; a text goes through the extractor (keyed facts, or prose).
    ``valid_from`` / ``valid_to`` fill the valid time a statement does not carry itself.

    A missing valid_from stays None: the ledger then uses the record time, and plain prose
    repeated later is recognised as the same statement (not stored twice).
    """
    if isinstance(item, Fact):
        defaults: dict[str, Any] = {
            name: value
            for name, value in (("valid_from", valid_from), ("valid_to", valid_to))
            if value is not None and getattr(item, name) is None
        }
        return Plan(item.text, (replace(item, **defaults) if defaults else item,))
    _check_text(item, position)
    try:
        extraction = extractor.extract(item, dict(metadata))
    except InvalidInputError as exc:
        raise exc.at(f"items[{position}]") from exc.__cause__
    statements = _statements(item, extraction, metadata, namespace, (valid_from, valid_to))
    return Plan(item, statements, extraction.problem)


async def aplan_item(
    extractor: Extractor,
    item: str | Fact,
    metadata: Mapping[str, Any],
    *,
    position: int,
    namespace: str,
    valid_from: datetime | None,
    valid_to: datetime | None = None,
) -> Plan:
    """:func:`plan_item` with the extractor's async form, ``aextract``, awaited (an
    extractor that calls an LLM has one; see :mod:`shared_core.extractors.base`)."""
    if isinstance(item, Fact):
        return plan_item(
            extractor,
            item,
            metadata,
            position=position,
            namespace=namespace,
            valid_from=valid_from,
            valid_to=valid_to,
        )
    _check_text(item, position)
    try:
        extraction: Extraction = await extractor.aextract(item, dict(metadata))  # type: ignore[attr-defined]
    except InvalidInputError as exc:
        raise exc.at(f"items[{position}]") from exc.__cause__
    statements = _statements(item, extraction, metadata, namespace, (valid_from, valid_to))
    return Plan(item, statements, extraction.problem)


def _check_text(item: object, position: int) -> None:
    if not isinstance(item, str) or not item.strip():
        raise InvalidInputError(
            f"items[{position}]", "is empty or not a string", "pass text to remember, or a Fact"
        )


def _statements(
    text: str,
    extraction: Extraction,
    metadata: Mapping[str, Any],
    namespace: str,
    valid: tuple[datetime | None, datetime | None],
) -> tuple[Fact, ...]:
    valid_from, valid_to = valid
    if not extraction.facts:
        prose = Fact(
            text=text,
            namespace=namespace,
            valid_from=extraction.valid_from or valid_from,
            valid_to=extraction.valid_to or valid_to,
            metadata=metadata if extraction.metadata is None else extraction.metadata,
        )
        return (prose,)
    return tuple(
        Fact(
            text=found.text,
            subject=found.subject,
            relation=found.relation,
            object=found.object,
            valid_from=found.valid_from or valid_from,
            valid_to=found.valid_to or valid_to,
            namespace=namespace,
            metadata=found.metadata,
        )
        for found in extraction.facts
    )


def added(plans: Sequence[Plan], results: Sequence[WriteResult]) -> list[Added]:
    """One :class:`Added` per plan, from the results of writing all plans' statements in order."""
    out, position = [], 0
    for plan in plans:
        writes = tuple(results[position : position + len(plan.statements)])
        position += len(plan.statements)
        out.append(Added(text=plan.text, writes=writes, problem=plan.problem))
    return out
