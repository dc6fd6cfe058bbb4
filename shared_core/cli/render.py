"""Terminal and JSON rendering of facts, timelines and explanations (for the CLI and demo).

Rich is imported only inside the functions that draw, so importing this module stays cheap.
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import fields, is_dataclass
from datetime import UTC, datetime, time
from enum import Enum
from typing import TYPE_CHECKING, Any, Literal

from shared_core.facts import Fact, Reason, thaw_metadata

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from shared_core.ledger import Explanation

IdStyle = Literal["full", "short", "none"]


# --------------------------------------------------------------------------- values
def format_time(value: datetime | None, *, missing: str = "—") -> str:
    """A compact UTC form for tables: the date alone at midnight, else to the second."""
    if value is None:
        return missing
    utc = value.astimezone(UTC)
    if utc.time() == time(0):
        return utc.date().isoformat()
    return utc.strftime("%Y-%m-%d %H:%M:%SZ")


def short_id(fact_id: str | None) -> str:
    """The last eight characters of a fact id, enough to tell facts apart in a table: a
    generated id begins with the time it was made, so facts written together share its start."""
    return "—" if fact_id is None else fact_id[-8:]


LANGGRAPH_ROOT = "langgraph"
LANGGRAPH_RELATION = "langgraph_item"
"""How langchain_temporal's LangGraph store names its items (langchain_temporal.langgraph_codec:
the namespace root and the relation; the value is in the metadata, the object a digest of it)."""


def is_langgraph_item(fact: Fact) -> bool:
    """Whether the fact is an item of a LangGraph store (its object is only a digest)."""
    root = fact.namespace.split(".", 1)[0]
    return (
        root == LANGGRAPH_ROOT
        and fact.relation == LANGGRAPH_RELATION
        and isinstance(fact.metadata.get("value"), Mapping)
    )


def shown_subject(fact: Fact) -> str:
    """The subject for display: a LangGraph item's key decoded (it is stored percent-encoded)."""
    if fact.subject is None:
        return ""
    if not is_langgraph_item(fact):
        return fact.subject
    return "" if fact.subject == "%" else urllib.parse.unquote(fact.subject)


def shown_object(fact: Fact) -> str:
    """The object for display (a LangGraph item's value as JSON, not its digest), or the text of
    plain prose."""
    if is_langgraph_item(fact):
        value = thaw_metadata(fact.metadata)["value"]
        return json.dumps(value, sort_keys=True, ensure_ascii=False)
    return fact.text if fact.object is None else str(fact.object)


def describe_reason(reason: Reason | None, labels: Mapping[str, str] | None = None) -> str:
    """E.g. ``superseded by Lisbon (ca376fe0)``; ``labels`` map fact ids to objects."""
    if reason is None:
        return ""
    text = reason.kind.phrase
    if reason.by is not None:
        label = (labels or {}).get(reason.by)
        text += f" {label} ({short_id(reason.by)})" if label else f" {short_id(reason.by)}"
    if reason.score is not None:
        text += f", score {reason.score:.3f}"
    return text


def why_ended(fact: Fact, labels: Mapping[str, str] | None = None) -> str:
    """Why a version is not current: its retirement in record time, else the end of validity."""
    if fact.retired_at is not None:
        return (
            f"retired {format_time(fact.retired_at)}: {describe_reason(fact.retire_reason, labels)}"
        )
    return describe_reason(fact.end_reason, labels)


# --------------------------------------------------------------------------- rendering
def plain(text: str) -> Text:
    from rich.text import Text

    return Text(text)  # never rich markup: ledger text may contain [brackets]


_FIXED_COLUMNS = {"valid from", "valid to", "recorded at", "retired at", "status", "as known on"}


def new_table(title: str, columns: Sequence[str]) -> Table:
    """A plain table: times and statuses never wrap, text columns fold when space is short."""
    from rich import box
    from rich.table import Table

    table = Table(
        title=title,
        title_justify="left",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        collapse_padding=True,
    )
    for name in columns:
        if name in _FIXED_COLUMNS:
            table.add_column(name, no_wrap=True)
        elif name == "id":
            table.add_column(name, overflow="fold", style="dim", min_width=8)
        else:
            table.add_column(name, overflow="fold", min_width=min(len(name), 8))
    return table


def _id_column(ids: IdStyle) -> list[str]:
    return [] if ids == "none" else ["id"]


def _id_cell(fact: Fact, ids: IdStyle) -> list[str]:
    if ids == "none":
        return []
    return [fact.id if ids == "full" else short_id(fact.id)]


def fit_ids(console: Console, build: Callable[[IdStyle], Table]) -> Table:
    """The table with full fact ids if it fits the console, else with shortened ids."""
    from rich.measure import Measurement

    table = build("full")
    unbounded = console.options.update(max_width=10_000)  # the width it wants, unclamped
    if Measurement.get(console, unbounded, table).maximum <= console.width:
        return table
    table = build("short")
    table.caption = "ids shortened to fit: widen the terminal or use --json for full ids"
    table.caption_justify = "left"
    return table


def add_row(table: Table, cells: Iterable[str]) -> None:
    """Add a row of literal text (no rich markup)."""
    from rich.text import Text

    table.add_row(*(Text(cell) for cell in cells))


def facts_table(facts: Sequence[Fact], *, title: str, ids: IdStyle = "full") -> Table:
    """Facts valid at one instant: who, what, since when, known since when (and their ids)."""
    show_to = any(fact.valid_to is not None for fact in facts)
    columns = ["subject", "relation", "object", "valid from"]
    columns += ["valid to"] if show_to else []
    table = new_table(title, [*columns, "recorded at", *_id_column(ids)])
    for fact in facts:
        cells = [
            shown_subject(fact),
            fact.relation or "",
            shown_object(fact),
            format_time(fact.valid_from),
        ]
        cells += [format_time(fact.valid_to, missing="open")] if show_to else []
        cells += [format_time(fact.recorded_at), *_id_cell(fact, ids)]
        add_row(table, cells)
    return table


def timeline_table(facts: Sequence[Fact], *, title: str, ids: IdStyle = "full") -> Table:
    """One key's versions in valid-time order, with why each ended or was retired."""
    labels = {fact.id: shown_object(fact) for fact in facts}
    columns = [
        "object",
        "valid from",
        "valid to",
        "recorded at",
        "status",
        "why it ended / was retired",
        *_id_column(ids),
    ]
    table = new_table(title, columns)
    for fact in facts:
        add_row(
            table,
            [
                *_interval_cells(fact),
                str(fact.status),
                why_ended(fact, labels),
                *_id_cell(fact, ids),
            ],
        )
    return table


def versions_table(explanation: Explanation) -> Table:
    """Every record of the version named by an explained fact id, in record order."""
    columns = [
        "object",
        "valid from",
        "valid to",
        "recorded at",
        "retired at",
        "status",
        "why it ended / was retired",
    ]
    table = new_table(f"Version records of {explanation.fact_id}", columns)
    for fact in explanation.versions:
        add_row(
            table,
            [
                *_interval_cells(fact),
                format_time(fact.retired_at, missing="believed"),
                str(fact.status),
                why_ended(fact),
            ],
        )
    return table


def _interval_cells(fact: Fact) -> list[str]:
    """Object, valid from, valid to and recorded at: the first columns of every timeline."""
    return [
        shown_object(fact),
        format_time(fact.valid_from),
        format_time(fact.valid_to, missing="open"),
        format_time(fact.recorded_at),
    ]


def print_facts(console: Console, facts: Sequence[Fact], title: str, *, empty: str) -> None:
    """A table of facts, or one line saying there are none."""
    if facts:
        console.print(fit_ids(console, lambda ids: facts_table(facts, title=title, ids=ids)))
    else:
        console.print(plain(f"{title}: {empty}"))


# --------------------------------------------------------------------------- JSON
def to_jsonable(value: Any) -> Any:
    """Plain JSON values from facts, records, reasons, datetimes and enums."""
    if isinstance(value, Fact):
        return value.to_dict()
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Enum):
        return value.value
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, Mapping):
        return {str(key): to_jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(item) for item in value]
    return value


def explanation_to_dict(explanation: Explanation) -> dict[str, Any]:
    """An explanation as JSON-ready data (its summary included)."""
    return {
        "fact_id": explanation.fact_id,
        "summary": explanation.summary(),
        "reason": to_jsonable(explanation.reason),
        "statements": to_jsonable(explanation.statements),
        "versions": to_jsonable(explanation.versions),
        "part_of": to_jsonable(explanation.part_of),
    }


def emit_json(console: Console, payload: Any) -> None:
    """Write ``payload`` as indented JSON to the console's file."""
    console.file.write(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
    console.file.flush()
