"""How removed candidates (Phi_T's shadows) are described in a Document's metadata."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from shared_core.dominance import Shadow

SHADOWS_KEY = "shadows"


def iso(value: datetime | None) -> str | None:
    """An aware datetime as an ISO-8601 string; ``None`` stays ``None`` (an open end)."""
    return None if value is None else value.isoformat()


def shadow_entry(shadow: Shadow, *, id: str | None, dominated_by: str | None) -> dict[str, Any]:
    """One removed candidate as a plain dict (JSON-ready when the ids are)."""
    candidate = shadow.candidate
    return {
        "id": id,
        "text": candidate.text,
        "timestamp": iso(candidate.timestamp),
        "namespace": candidate.namespace,
        "dominated_by": dominated_by,
        "detector": shadow.detector,
        "score": shadow.score,
    }


def prior_shadows(metadata: Mapping[str, Any]) -> list[Any]:
    """The shadows an earlier stage (another compressor, the retriever) already reported."""
    found = metadata.get(SHADOWS_KEY)
    return list(found) if isinstance(found, list) else []
