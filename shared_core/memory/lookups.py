"""The reads a TemporalMemory's ledger answers alone: no query, no index, no ranking.

:class:`LedgerLookups` is a part of :class:`~shared_core.memory.core.TemporalMemory` (a mixin
reading its ``ledger``): a key's history, the facts at a time, the namespaces, the facts a
metadata filter selects and a fact's records, each with its async twin.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from shared_core.facts import DEFAULT_NAMESPACE, Fact
from shared_core.filters import Filter, as_filter
from shared_core.ledger.protocol import LedgerStore
from shared_core.ledger.results import Explanation
from shared_core.memory.selection import select_facts
from shared_core.memory.twins import async_twin


class LedgerLookups:
    """What the memory reads straight from its ledger (see each method)."""

    ledger: LedgerStore

    def history(
        self,
        subject: str,
        relation: str,
        *,
        namespace: str = DEFAULT_NAMESPACE,
        known_at: datetime | None = None,
    ) -> list[Fact]:
        """Every version of one key in valid-time order (see ``Ledger.history``)."""
        return self.ledger.history(subject, relation, namespace=namespace, known_at=known_at)

    def as_of(
        self,
        *,
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
        namespace: str = DEFAULT_NAMESPACE,
        subject: str | None = None,
        relation: str | None = None,
    ) -> list[Fact]:
        """Every fact valid at ``valid_at`` as known at ``known_at`` (no query, no ranking)."""
        return self.ledger.as_of(
            valid_at=valid_at,
            known_at=known_at,
            namespace=namespace,
            subject=subject,
            relation=relation,
        )

    def namespaces(
        self,
        *,
        prefix: str = "",
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
    ) -> list[str]:
        """The namespaces holding a fact valid at ``valid_at`` as known at ``known_at``
        (default now), those starting with ``prefix``, sorted (see ``Ledger.namespaces``)."""
        return self.ledger.namespaces(prefix=prefix, valid_at=valid_at, known_at=known_at)

    def select(
        self,
        where: Filter | Mapping[str, Any] | None = None,
        *,
        namespace: str = DEFAULT_NAMESPACE,
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
        include_history: bool = False,
    ) -> list[Fact]:
        """Every fact matching a metadata filter (no query, no ranking), valid at ``valid_at``
        as known at ``known_at`` (default now); ``include_history``: at any valid time.

        It reads the ledger, so it costs time linear in the namespace's facts (all the facts
        ever stored, with ``include_history``): meant for deletes and audits, not per query.
        """
        return select_facts(
            self.ledger,
            as_filter(where),
            namespace=namespace,
            valid_at=valid_at,
            known_at=known_at,
            include_history=include_history,
        )

    def explain(self, fact_id: str) -> Explanation:
        """Every record of a fact id and why it is (not) current."""
        return self.ledger.explain(fact_id)

    ahistory = async_twin(history)
    aas_of = async_twin(as_of)
    anamespaces = async_twin(namespaces)
    aselect = async_twin(select)
    aexplain = async_twin(explain)
