"""The row codecs of the SQL ledgers: statement, version, reason and stream rows as tuples.

Both SQL backends store the same columns in the same order, so a row reads the same from
either; their SQL (``sqlite/sql.py``, ``postgres/sql.py``) selects the column lists below.
"""

from __future__ import annotations

from typing import Any

from shared_core.clock import OPEN, Instant
from shared_core.facts import Reason, ReasonKind, decode_object, encode_object
from shared_core.ledger.records import StatementRow, VersionRow, light_statement
from shared_core.supersession import Statement, StreamState, Version

STATEMENT_COLUMNS = (
    "seq, fact_id, namespace, key_id, stream, subject, relation, object, value, kind, text, "
    "text_key, valid_from, valid_to, recorded_at, retired_at, retire_kind, retire_by, "
    "retire_rule, retire_score, metadata, end_kind, end_by, end_rule, end_score"
)
"""A statement row's columns, in the order :func:`decode_statement` reads."""
VERSION_COLUMNS = (
    "row_id, fact_id, head_seq, namespace, key_id, stream, value, valid_from, valid_to, "
    "end_kind, end_by, end_rule, end_score, recorded_at, retired_at, retire_kind, retire_by, "
    "retire_rule, retire_score"
)
"""A version row's columns, in the order :func:`decode_version` reads."""
FACT_COLUMNS = (
    "v.row_id, v.fact_id, v.head_seq, v.namespace, v.key_id, v.stream, v.value, v.valid_from, "
    "v.valid_to, v.end_kind, v.end_by, v.end_rule, v.end_score, v.recorded_at, v.retired_at, "
    "v.retire_kind, v.retire_by, v.retire_rule, v.retire_score, s.seq, s.fact_id, s.namespace, "
    "s.key_id, s.stream, s.subject, s.relation, s.object, s.value, s.kind, s.text, s.text_key, "
    "s.valid_from, s.valid_to, s.recorded_at, s.retired_at, s.retire_kind, s.retire_by, "
    "s.retire_rule, s.retire_score, s.metadata, s.end_kind, s.end_by, s.end_rule, s.end_score"
)
"""A version (``v``) and its head statement (``s``): see :func:`decode_fact_row`."""
N_VERSION = 19
"""How many of FACT_COLUMNS are the version's."""
N_STREAM_VERSION = 11
"""How many columns :func:`decode_stream_version` reads (a headed read's statement follows)."""


def suffix_start(valid_froms: list[Instant], before: Instant) -> Instant | None:
    """Where the rows of a suffix read of versions (their ``valid_from``, in order) start a
    suffix, or None when they are the whole stream (fewer than two start before ``before``)."""
    if sum(1 for v in valid_froms if v < before) < 2:
        return None
    return valid_froms[0]


def decode_reason(
    kind: str | None, by: str | None, rule: str | None, score: float | None
) -> Reason | None:
    return None if kind is None else Reason(ReasonKind(kind), by, rule or "", score)


def reason_columns(reason: Reason | None) -> tuple[Any, ...]:
    if reason is None:
        return (None, None, None, None)
    return (str(reason.kind), reason.by, reason.rule, reason.score)


def decode_statement(row: tuple[Any, ...]) -> StatementRow:
    return StatementRow(
        seq=row[0],
        fact_id=row[1],
        namespace=row[2],
        key_id=row[3],
        stream=row[4],
        subject=row[5],
        relation=row[6],
        object=None if row[7] is None else decode_object(row[7]),
        value=row[8],
        kind=row[9],
        text=row[10],
        text_key=row[11],
        valid_from=row[12],
        valid_to=row[13],
        recorded_at=row[14],
        retired_at=row[15],
        retire_reason=decode_reason(*row[16:20]),
        metadata=row[20],
        end_reason=decode_reason(*row[21:25]),
    )


def decode_stream_statement(row: tuple[Any, ...]) -> Statement:
    """A row of a stream's statement read as the rule's Statement."""
    seq, fact_id, key_id, value, kind, valid_from, valid_to, text_key = row[:8]
    end = decode_reason(*row[8:12])
    return light_statement(seq, fact_id, key_id, value, kind, valid_from, valid_to, text_key, end)


def statement_columns(row: StatementRow) -> tuple[Any, ...]:
    """A statement row's values in STATEMENT_COLUMNS order (decode_statement's inverse)."""
    return (
        row.seq,
        row.fact_id,
        row.namespace,
        row.key_id,
        row.stream,
        row.subject,
        row.relation,
        None if row.object is None else encode_object(row.object),
        row.value,
        row.kind,
        row.text,
        row.text_key,
        row.valid_from,
        row.valid_to,
        row.recorded_at,
        row.retired_at,
        *reason_columns(row.retire_reason),
        row.metadata,
        *reason_columns(row.end_reason),
    )


def version_columns(row: VersionRow) -> tuple[Any, ...]:
    """A version row's values in VERSION_COLUMNS order (decode_version's inverse)."""
    return (
        row.row_id,
        row.fact_id,
        row.head_seq,
        row.namespace,
        row.key_id,
        row.stream,
        row.value,
        row.valid_from,
        row.valid_to,
        *reason_columns(row.end),
        row.recorded_at,
        row.retired_at,
        *reason_columns(row.retire_reason),
    )


def new_version_columns(
    version: Version, *, namespace: str, key_id: int | None, stream: str, at: Instant
) -> tuple[Any, ...]:
    """A new version record's values, recorded at ``at`` and believed: its columns from
    ``fact_id`` to ``retired_at`` in VERSION_COLUMNS order (the row id is the store's)."""
    return (
        version.fact_id,
        version.head_seq,
        namespace,
        key_id,
        stream,
        version.value,
        version.valid_from,
        version.valid_to,
        *reason_columns(version.end),
        at,
        OPEN,
    )


def decode_version(row: tuple[Any, ...]) -> VersionRow:
    return VersionRow(
        row_id=row[0],
        fact_id=row[1],
        head_seq=row[2],
        namespace=row[3],
        key_id=row[4],
        stream=row[5],
        value=row[6],
        valid_from=row[7],
        valid_to=row[8],
        end=decode_reason(*row[9:13]),
        recorded_at=row[13],
        retired_at=row[14],
        retire_reason=decode_reason(*row[15:19]),
    )


def decode_fact_row(row: tuple[Any, ...]) -> tuple[VersionRow, StatementRow]:
    """A row of FACT_COLUMNS: the version and its head statement."""
    return decode_version(row[:N_VERSION]), decode_statement(row[N_VERSION:])


def decode_stream_version(row: tuple[Any, ...]) -> Version:
    """A row of a stream's (or suffix's) version read as the rule's Version."""
    end = decode_reason(row[5], row[6], row[7], row[8])
    return Version(row[0], row[1], row[2], row[3], row[4], end, row[9], row[10])


def decode_stream_state(
    statements: list[tuple[Any, ...]], versions: list[tuple[Any, ...]], *, start: Instant | None
) -> StreamState:
    """The stream state the rows of a stream's (or suffix's) statement and version reads hold:
    complete, or the suffix from ``start`` on."""
    return StreamState(
        tuple(decode_stream_statement(row) for row in statements),
        tuple(decode_stream_version(row) for row in versions),
        complete=start is None,
        start=start,
    )
