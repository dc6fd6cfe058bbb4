"""The ledger's Protocol, :class:`LedgerStore`: what every bi-temporal fact ledger offers and
all that TemporalMemory asks of one (see :class:`~shared_core.ledger.ledger.Ledger`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from shared_core.facts import Cardinality, Fact, ObjectValue
from shared_core.ledger.prose import ProseSupersession
from shared_core.ledger.records import StatementRow, VersionRow
from shared_core.ledger.results import (
    ChangeCursor,
    ChangeSet,
    Explanation,
    StoredVersion,
    WriteResult,
)


@runtime_checkable
class LedgerStore(Protocol):
    """A bi-temporal fact ledger (see :class:`~shared_core.ledger.ledger.Ledger` for what each
    method does)."""

    def declare(self, relation: str, cardinality: Cardinality | str) -> None: ...
    def cardinality(self, relation: str) -> Cardinality: ...
    def declared_cardinality(self, relation: str) -> Cardinality | None: ...
    def write(self, fact: Fact) -> WriteResult: ...
    def write_many(
        self,
        facts: Iterable[Fact],
        *,
        supersessions: Iterable[ProseSupersession] = ...,
        replacing: Iterable[str] = ...,
        merge_prose: bool = ...,
    ) -> list[WriteResult]: ...
    def supersede(
        self,
        older_id: str,
        *,
        by: str,
        rule: str,
        score: float | None = ...,
        recorded_at: datetime | None = ...,
    ) -> WriteResult: ...
    def current(
        self, *, namespace: str = ..., subject: str | None = ..., relation: str | None = ...
    ) -> list[Fact]: ...
    def as_of(
        self,
        *,
        valid_at: datetime | None = ...,
        known_at: datetime | None = ...,
        namespace: str = ...,
        subject: str | None = ...,
        relation: str | None = ...,
    ) -> list[Fact]: ...
    def namespaces(
        self,
        *,
        prefix: str = ...,
        valid_at: datetime | None = ...,
        known_at: datetime | None = ...,
    ) -> list[str]: ...
    def history(
        self, subject: str, relation: str, *, namespace: str = ..., known_at: datetime | None = ...
    ) -> list[Fact]: ...
    def retract(
        self,
        subject: str,
        relation: str,
        object: ObjectValue | None = ...,
        *,
        at: datetime | None = ...,
        namespace: str = ...,
        text: str | None = ...,
        recorded_at: datetime | None = ...,
    ) -> WriteResult: ...
    def correct(
        self, fact_id: str, *, recorded_at: datetime | None = ..., **changes: Any
    ) -> WriteResult: ...
    def retire(
        self,
        fact_id: str,
        *,
        rule: str = ...,
        by: str | None = ...,
        recorded_at: datetime | None = ...,
    ) -> WriteResult: ...
    def retire_many(
        self, fact_ids: Iterable[str], *, rule: str = ..., recorded_at: datetime | None = ...
    ) -> list[WriteResult]: ...
    def unretire(self, fact_id: str, *, recorded_at: datetime | None = ...) -> WriteResult: ...
    def unretire_many(
        self, fact_ids: Iterable[str], *, recorded_at: datetime | None = ...
    ) -> list[WriteResult]: ...
    def explain(self, fact_id: str) -> Explanation: ...
    def get(self, fact_id: str) -> Fact: ...
    def export(self) -> tuple[list[StatementRow], list[VersionRow]]: ...
    def changes(self, since: ChangeCursor | None = ..., *, limit: int = ...) -> ChangeSet: ...
    def revision(self) -> tuple[int, int]: ...
    def mirror_lock(self) -> AbstractContextManager[None]: ...
    def versions(
        self,
        *,
        row_ids: Sequence[int] = ...,
        fact_ids: Sequence[str] = ...,
        known_at: datetime | None = ...,
        attributes: bool = ...,
    ) -> list[StoredVersion]: ...
    def visible_rows(
        self,
        row_ids: Sequence[int],
        *,
        namespace: str,
        valid_at: datetime | None,
        known_at: datetime | None = ...,
    ) -> set[int]: ...
    def list_visible_rows(
        self,
        *,
        namespace: str,
        valid_at: datetime | None,
        known_at: datetime | None = ...,
        limit: int,
    ) -> list[int] | None: ...
    def close(self) -> None: ...
