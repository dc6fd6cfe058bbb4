"""The pair tables besides the attribute families: logs, current states, versions, instances and
implied states. Data model and loader; :mod:`temporal_rag_training.makers` makes pairs of them.

Logs (``families/logs.json``): dated or numbered records where an entry for another period is a
new record (label 0), and "current X" states with the same vocabulary, which do change (label
1). Instances (``instances.json``): one attribute of two similar instances (staging and
production); the other instance's value is label 0, a change of the same one label 1. Implied
states (``implied.json``): a state, then evidence that it is over (label 1), a retraction
(label 1) or a plan that does not end it (label 0). Each file is loaded on first use.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass

from temporal_rag_training.datafiles import Node, build, read
from temporal_rag_training.subjects import subject_pools

LOGS_FILE = "logs.json"
INSTANCES_FILE = "instances.json"
IMPLIED_FILE = "implied.json"
PERIODS = (
    "month",
    "quarter",
    "week",
    "sprint",
    "build",
    "ticket",
    "date",
    "weekday",
    "term",
    "year",
    "version",
)
DATE = "date"  # the value of a log whose {n} is a date ("on March 3")

Number = tuple[int, int, int, str] | tuple[str, ...]  # (low, high, step, format) or words


@dataclass(frozen=True, slots=True)
class Log:
    """Entries of one log: ``{when}`` a marker of ``period``, ``{n}`` a draw of ``value``."""

    name: str
    period: str  # one of PERIODS
    value: str  # a key of LogTables.values, or DATE
    entries: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class State:
    """A "current X" state of ``value`` and its changes (``{n}``, ``{old}``; ``+``/``-``)."""

    name: str
    value: str
    state: tuple[str, ...]
    change: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Instances:
    """One attribute of pairs of similar instances: ``{S}`` the instance, ``{v}`` its value."""

    name: str
    pairs: tuple[tuple[str, str], ...]
    values: tuple[str, ...]
    state: tuple[str, ...]
    change: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Implied:
    """A state and what ends it or not. ``subjects``: "person", "|"-separated subject pools
    or "|"-separated thing names."""

    name: str
    subjects: str
    state: tuple[str, ...]
    evidence: tuple[str, ...]
    plans: tuple[str, ...] = ()
    retract: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class LogTables:
    """The contents of ``logs.json``: number pools, school terms, logs, states, versions."""

    values: Mapping[str, Number]
    terms: tuple[tuple[str, str], ...]
    logs: tuple[Log, ...]
    states: tuple[State, ...]
    versions: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]  # (states, changes)


@functools.cache
def log_tables() -> LogTables:
    """The logs, states and versions of ``logs.json``."""
    root = read(LOGS_FILE)
    root.entries(["values", "terms", "logs", "states", "versions"])
    values = {key: _number(node) for key, node in root.require("values").members()}
    return LogTables(
        values=values,
        terms=tuple(_pair(node) for node in root.require("terms").children()),
        logs=tuple(_log(node.labelled(), values) for node in root.require("logs").children()),
        states=tuple(_state(node.labelled(), values) for node in root.require("states").children()),
        versions=tuple(_version(node) for node in root.require("versions").children()),
    )


def _log(node: Node, values: Mapping[str, Number]) -> Log:
    log = build(Log, node)
    if log.period not in PERIODS:
        node.require("period").fail(f"should be one of {list(PERIODS)}")
    if log.value not in values and log.value != DATE:
        node.require("value").fail(f"should be {DATE!r} or one of {sorted(values)}")
    return log


def _state(node: Node, values: Mapping[str, Number]) -> State:
    state = build(State, node)
    if state.value not in values:
        node.require("value").fail(f"should be one of {sorted(values)}")
    return state


def _number(node: Node) -> Number:
    if isinstance(node.value, list):
        return node.texts()
    node.entries(["low", "high", "step", "format"])
    low, high, step = (node.require(key).integer() for key in ("low", "high", "step"))
    if not low <= high or step < 1:
        node.fail("should have low <= high and step >= 1")
    return low, high, step, node.require("format").text()


def _pair(node: Node) -> tuple[str, str]:
    pair = node.texts()
    if len(pair) != 2:
        node.fail("should be a list of two strings")
    return pair[0], pair[1]


def _version(node: Node) -> tuple[tuple[str, ...], tuple[str, ...]]:
    node.entries(["state", "change"])
    return node.require("state").texts(), node.require("change").texts()


@functools.cache
def instances() -> tuple[Instances, ...]:
    """The instance tables of ``instances.json``."""
    root = read(INSTANCES_FILE)
    root.entries(["instances"])
    out = []
    for node in root.require("instances").children():
        table = build(Instances, node.labelled())
        if len(table.values) < 2 or not table.pairs:
            node.labelled().fail("should have pairs and at least two values")
        out.append(table)
    return tuple(out)


@functools.cache
def implied_states() -> tuple[Implied, ...]:
    """The implied-state tables of ``implied.json``."""
    root = read(IMPLIED_FILE)
    root.entries(["implied"])
    return tuple(_implied(node.labelled()) for node in root.require("implied").children())


def _implied(node: Node) -> Implied:
    subjects = node.require("subjects").texts()
    in_pools = [name in subject_pools() for name in subjects]
    if not subjects or ("person" in subjects and len(subjects) > 1):
        node.require("subjects").fail('should be ["person"], subject pools or thing names')
    if any(in_pools) and not all(in_pools):
        node.require("subjects").fail("mixes subject pools and thing names")
    return build(Implied, node, subjects="|".join(subjects))


def table_names() -> tuple[str, ...]:
    """The family names of the pairs made from these tables."""
    tables = log_tables()
    return (
        *(log.name for log in tables.logs),
        *(state.name for state in tables.states),
        "current_version",
        *(table.name for table in instances()),
        *(table.name for table in implied_states()),
    )
