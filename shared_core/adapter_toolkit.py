"""What the framework adapters share, framework-neutral: they translate, this decides.

``langchain_temporal`` and ``llamaindex_temporal`` turn facts and hits into the frameworks'
documents and nodes, and the frameworks' documents and nodes into Phi_T candidates. The rules
for both directions live here once:

- **Fact -> metadata** (:func:`fact_metadata`, :func:`hit_metadata`): the fact's own metadata,
  then, winning on a clash, :data:`FACT_FIELDS` (times as ISO-8601 strings, ``None`` for an
  open end) and, for a search hit, ``score``, ``from_buffer`` and ``shadows``.
- **Metadata -> candidate** (:func:`candidate_from_metadata`, with :class:`MetadataFields`):
  tau is read from ``valid_from`` by default (:data:`DEFAULT_TIMESTAMP_FIELD`: the field both
  adapters write), as an aware datetime, an ISO-8601 string with an offset or epoch seconds;
  a document without it is undated (never removed, never removing another). The key is
  ``subject`` / ``relation`` / ``object``: with all three the document is keyed; with fewer
  it is prose (:data:`PARTIAL_KEY_POLICY`), because documents the library did not write often
  carry a ``subject`` of their own (an e-mail's, say), and a prose candidate is never removed
  by the key rule, so the lenient reading cannot hide a fact. Malformed values of a complete
  key, a bad time or namespace are :class:`~shared_core.errors.InvalidInputError` naming the
  document and the field. The metadata's top-level scalar fields (str, number, bool, None) go
  with the candidate as its ``metadata``, so a detector can tell speakers apart (``user_id``);
  other values (datetimes, lists, dicts) are left out, never an error.
- **The shadow record** (:func:`shadow_record`): one dict per candidate Phi_T removed, with the
  same fields in both adapters: ``id`` (the framework's id of the removed item), ``fact_id``
  (its fact id when temporal-rag stored it, else ``None``), ``position`` (its index in the
  list a postprocessor was given; ``None`` for search hits), ``text``, ``timestamp``,
  ``namespace``, ``dominated_by`` (the framework's id of the item that outdated it),
  ``detector`` and ``score``.
- **Survivors with their shadows** (:func:`survivors`): the kept items in rank order, each with
  the shadows it caused, after those an earlier stage had reported on it; the shadows a removed
  item carried move to its survivor. Async callers run Phi_T with
  :func:`shared_core.phi_t.atemporal_dominance` (a detector's async form awaited, other
  model-backed detectors in a worker thread).
- **Search options passed as keywords** (:func:`search_changes`, :func:`read_times`): the names
  are those of :class:`~shared_core.memory.options.SearchOptions`, and times may come as
  ISO-8601 strings with an offset or epoch seconds, as the frameworks pass them.
- **A memory the adapter opened** (:func:`open_owning`, :func:`owning`, :class:`MemoryOwner`):
  an adapter's ``open`` builds the adapter over ``TemporalMemory.open(path, config=config)``,
  closes that memory if building fails, and the adapter's ``close()`` closes it; a memory the
  caller built and passed in is the caller's to close.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol, TypeVar

from shared_core.errors import InvalidInputError
from shared_core.extractors.metadata import check_object, to_datetime
from shared_core.facts import (
    DEFAULT_NAMESPACE,
    Fact,
    FactKey,
    ObjectValue,
    check_namespace,
    freeze_metadata,
    key_relation,
    key_subject,
    thaw_metadata,
)
from shared_core.memory.config import MemoryConfig
from shared_core.memory.hits import Hit
from shared_core.memory.memory import TemporalMemory
from shared_core.memory.options import SearchChanges
from shared_core.phi_t import (
    Candidate,
    DominanceResult,
    Shadow,
    shadows_by_survivor,
)

DEFAULT_TIMESTAMP_FIELD = "valid_from"
"""Where both adapters' postprocessors read tau by default (the field both adapters write)."""
SHADOWS_FIELD = "shadows"
"""The metadata field that lists what Phi_T removed because of an item."""
FACT_ID_FIELD = "fact_id"
FACT_FIELDS = (
    FACT_ID_FIELD,
    "subject",
    "relation",
    "object",
    "valid_from",
    "valid_to",
    "recorded_at",
    "status",
    "namespace",
)
"""What a stored fact adds to its own metadata when an adapter returns it."""
HIT_FIELDS = ("score", "from_buffer", SHADOWS_FIELD)
"""What a search hit adds on top of :data:`FACT_FIELDS`."""
PARTIAL_KEY_POLICY = "prose"
"""A document with some but not all of the key fields is prose (see the module doc)."""
TIME_OPTIONS = ("valid_at", "known_at")

IdOf = Callable[[str, Mapping[str, Any]], str]
"""How an adapter names a stored fact: (fact id, the fact's metadata) -> the framework's id."""


def iso(value: datetime | None) -> str | None:
    """An aware datetime as an ISO-8601 string; ``None`` (an open end) stays ``None``."""
    return None if value is None else value.isoformat()


def fact_id_itself(fact_id: str, metadata: Mapping[str, Any]) -> str:
    """The default :data:`IdOf`: a fact is known by its fact id."""
    return fact_id


def fact_metadata(fact: Fact) -> dict[str, Any]:
    """The fact's own metadata (plain dicts and lists), then :data:`FACT_FIELDS`."""
    metadata: dict[str, Any] = thaw_metadata(fact.metadata)
    metadata.update(
        {
            FACT_ID_FIELD: fact.id,
            "subject": fact.subject,
            "relation": fact.relation,
            "object": fact.object,
            "valid_from": iso(fact.valid_from),
            "valid_to": iso(fact.valid_to),
            "recorded_at": iso(fact.recorded_at),
            "status": str(fact.status),
            "namespace": fact.namespace,
        }
    )
    return metadata


def hit_metadata(hit: Hit, *, id_of: IdOf = fact_id_itself) -> dict[str, Any]:
    """:func:`fact_metadata` of the hit's fact, then ``score``, ``from_buffer`` and ``shadows``
    (one :func:`shadow_record` per candidate Phi_T removed because of it, named by ``id_of``)."""
    names = {hit.fact.id: id_of(hit.fact.id, hit.fact.metadata)}
    for shadow in hit.shadows:
        names[shadow.candidate.id] = id_of(shadow.candidate.id, shadow.candidate.metadata)
    shadows = [
        shadow_record(
            shadow,
            id=names[shadow.candidate.id],
            fact_id=shadow.candidate.id,
            dominated_by=names.get(shadow.dominated_by, shadow.dominated_by),
        )
        for shadow in hit.shadows
    ]
    metadata = fact_metadata(hit.fact)
    metadata.update({"score": hit.score, "from_buffer": hit.from_buffer, SHADOWS_FIELD: shadows})
    return metadata


def shadow_record(
    shadow: Shadow,
    *,
    id: str | None,
    dominated_by: str | None,
    fact_id: str | None = None,
    position: int | None = None,
) -> dict[str, Any]:
    """One removed candidate as a JSON-ready dict (see the module doc for the fields)."""
    candidate = shadow.candidate
    return {
        "id": id,
        FACT_ID_FIELD: fact_id,
        "position": position,
        "text": candidate.text,
        "timestamp": iso(candidate.timestamp),
        "namespace": candidate.namespace,
        "dominated_by": dominated_by,
        "detector": shadow.detector,
        "score": shadow.score,
    }


@dataclass(frozen=True, slots=True, kw_only=True)
class MetadataFields:
    """Which metadata fields hold tau, the key and the namespace of a document or node.

    ``namespace`` may be ``None``: every item is then in the default namespace.
    """

    timestamp: str = DEFAULT_TIMESTAMP_FIELD
    subject: str = "subject"
    relation: str = "relation"
    object: str = "object"
    namespace: str | None = "namespace"


class MetadataKeys(Protocol):
    """What a postprocessor holds to say where its items keep tau, the key and the namespace
    (both adapters' postprocessors have these options)."""

    timestamp_key: str
    subject_key: str
    relation_key: str
    object_key: str
    namespace_key: str | None


def metadata_fields(keys: MetadataKeys) -> MetadataFields:
    """The :class:`MetadataFields` a postprocessor's options name."""
    return MetadataFields(
        timestamp=keys.timestamp_key,
        subject=keys.subject_key,
        relation=keys.relation_key,
        object=keys.object_key,
        namespace=keys.namespace_key,
    )


def candidate_from_metadata(
    *,
    position: int,
    text: str,
    metadata: Mapping[str, Any],
    fields: MetadataFields,
    label: str,
    score: float | None = None,
) -> Candidate:
    """An item of a retrieved list as Phi_T sees it; its id is its position (a list may hold
    the same document twice). ``label`` names the item in errors (``documents[3] (doc-7)``)."""

    def where(name: str) -> str:
        return f"{label}.metadata[{name!r}]"

    namespace = DEFAULT_NAMESPACE
    if fields.namespace is not None and metadata.get(fields.namespace) is not None:
        namespace = check_namespace(metadata[fields.namespace], where(fields.namespace))
    key, value = _key(metadata, namespace, fields, where)
    return Candidate(
        id=str(position),
        text=text,
        timestamp=to_datetime(metadata.get(fields.timestamp), where(fields.timestamp)),
        namespace=namespace,
        key=key,
        object=value,
        score=score,
        metadata=_scalars(metadata),
    )


def _scalars(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """The top-level fields whose values are JSON scalars a candidate can hold."""
    out: dict[str, Any] = {}
    for name, value in metadata.items():
        if not isinstance(name, str) or not isinstance(value, str | int | float | None):
            continue
        try:
            freeze_metadata({name: value}, "metadata")
        except InvalidInputError:
            continue  # a NaN, a lone surrogate: not this candidate's business
        out[name] = value
    return out


def _key(
    metadata: Mapping[str, Any],
    namespace: str,
    fields: MetadataFields,
    where: Callable[[str], str],
) -> tuple[FactKey | None, ObjectValue | None]:
    subject = metadata.get(fields.subject)
    relation = metadata.get(fields.relation)
    value = metadata.get(fields.object)
    if subject is None or relation is None or value is None:
        return None, None  # PARTIAL_KEY_POLICY: prose
    key = FactKey(
        namespace,
        key_subject(subject, where(fields.subject)),
        key_relation(relation, where(fields.relation)),
    )
    return key, check_object(value, where(fields.object))


@dataclass(frozen=True, slots=True)
class Survivor:
    """A kept item: its ``position`` in the input and the shadow records its metadata should
    now list (``added`` is False when that is exactly what it already listed)."""

    position: int
    shadows: tuple[dict[str, Any], ...]
    added: bool


def survivors(
    result: DominanceResult,
    *,
    ids: Sequence[str | None],
    metadatas: Sequence[Mapping[str, Any]],
    shadows_field: str = SHADOWS_FIELD,
) -> list[Survivor]:
    """The kept items of a Phi_T run over candidates built by :func:`candidate_from_metadata`
    (ids are positions), in rank order. Each lists its earlier shadows, then one record per
    item it outdated, each followed by the shadows that item had listed (carried over)."""
    groups = shadows_by_survivor(result)
    out = []
    for candidate in result.kept:
        position = int(candidate.id)
        shadows = prior_shadows(metadatas[position], shadows_field)
        removed = groups.get(candidate.id, ())
        for shadow in removed:
            where = int(shadow.candidate.id)
            fact_id = metadatas[where].get(FACT_ID_FIELD)
            record = shadow_record(
                shadow,
                id=ids[where],
                fact_id=fact_id if isinstance(fact_id, str) else None,
                dominated_by=ids[int(shadow.dominated_by)],
                position=where,
            )
            shadows += [record, *prior_shadows(metadatas[where], shadows_field)]
        out.append(Survivor(position, tuple(shadows), added=bool(removed)))
    return out


def prior_shadows(metadata: Mapping[str, Any], field: str = SHADOWS_FIELD) -> list[Any]:
    """The shadows an earlier stage (another postprocessor, the retriever) already reported."""
    found = metadata.get(field)
    return list(found) if isinstance(found, list) else []


def check_keywords(options: Mapping[str, Any], *, allowed: Sequence[str], call: str) -> None:
    """Refuse keywords a method does not take, naming them and the ones it does take."""
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise InvalidInputError(
            f"{call}(**kwargs)",
            f"{', '.join(unknown)} {'is' if len(unknown) == 1 else 'are'} not supported",
            f"use {', '.join(allowed)}",
        )


def search_changes(
    options: Mapping[str, Any], *, allowed: Sequence[str], call: str
) -> SearchChanges:
    """Search options a framework passed as keywords, checked and translated: unknown names are
    an error listing the ``allowed`` ones, and ``valid_at`` / ``known_at`` may also be ISO-8601
    strings with an offset or epoch seconds (the values SearchOptions then checks)."""
    check_keywords(options, allowed=allowed, call=call)
    return read_times(options)  # type: ignore[arg-type]  # the names were checked above


def read_times(changes: SearchChanges) -> SearchChanges:
    """``changes`` with ``valid_at`` / ``known_at`` read from what the frameworks pass: an aware
    datetime, an ISO-8601 string with an offset or epoch seconds."""
    read: dict[str, Any] = dict(changes)
    for name in TIME_OPTIONS:
        if name in read:
            read[name] = to_datetime(read[name], name)
    return read  # type: ignore[return-value]  # the same keys as given


class MemoryOwner:
    """Whether an adapter opened its memory itself: then the adapter's ``close()`` closes the
    memory (see :func:`owning`); a memory the caller passed in is the caller's to close."""

    def __init__(self, memory: TemporalMemory) -> None:
        self.memory = memory
        self.owns = False

    def close(self) -> None:
        """Close the memory if the adapter owns it; idempotent."""
        if self.owns:
            self.memory.close()


class OwnsMemory(Protocol):
    """An adapter that may own its memory (it closes it through its :class:`MemoryOwner`)."""

    @property
    def memory_owner(self) -> MemoryOwner: ...


Adapter = TypeVar("Adapter", bound=OwnsMemory)


def owning(memory: TemporalMemory, build: Callable[[TemporalMemory], Adapter]) -> Adapter:
    """``build(memory)``, an adapter that owns ``memory`` from then on; ``memory`` is closed if
    building fails (the caller never gets the adapter)."""
    try:
        adapter = build(memory)
    except BaseException:
        memory.close()
        raise
    adapter.memory_owner.owns = True
    return adapter


def open_owning(
    path: str | Path, config: MemoryConfig | None, build: Callable[[TemporalMemory], Adapter]
) -> Adapter:
    """:func:`owning` over ``TemporalMemory.open(path, config=config)``: what an adapter's
    ``open`` does."""
    return owning(TemporalMemory.open(path, config=config), build)
