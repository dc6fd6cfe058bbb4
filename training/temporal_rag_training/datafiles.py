"""Reading the pair generator's data files, ``families/*.json``, into frozen dataclasses.

The files ship inside the package and are read with :mod:`importlib.resources`, so they are
found in a wheel as in a source checkout. A missing or malformed file, an unknown or duplicate
key, or a value of the wrong type raises :class:`DataFileError` naming the file and the field
(``people.json, field families[3] "home_city".values[2].forms``). The keys ``about`` and
``note`` hold comments for people and are skipped.
"""

from __future__ import annotations

import dataclasses
import json
import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any, NoReturn, TypeVar

from shared_core.errors import TemporalRagError

DATA_FOLDER = "families"
NOTES = frozenset({"about", "note"})

T = TypeVar("T")


class DataFileError(TemporalRagError, ValueError):
    """A data file of the pair generator is missing or holds something it cannot use."""

    def __init__(self, file: str, field: str, problem: str) -> None:
        self.file = file
        self.field = field
        self.problem = problem
        where = f"{DATA_FOLDER}/{file}" + (f", field {field}" if field else "")
        super().__init__(f"{where}: {problem}")


@dataclass(frozen=True, slots=True)
class Node:
    """A JSON value read from a data file, and where it was found (for error messages)."""

    value: object
    file: str
    field: str = ""

    def fail(self, problem: str) -> NoReturn:
        """Raise a :class:`DataFileError` about this value."""
        raise DataFileError(self.file, self.field, problem)

    def _child(self, key: str) -> Node:
        field = f"{self.field}.{key}" if self.field else key
        return Node(self.entries()[key], self.file, field)

    def entries(self, allowed: Iterable[str] | None = None) -> dict[str, Any]:
        """The object's keys and values, comments left out; other keys than ``allowed`` fail."""
        if not isinstance(self.value, dict):
            self.fail(f"should be an object, not {_kind(self.value)}")
        found = {key: value for key, value in self.value.items() if key not in NOTES}
        if allowed is not None:
            unknown = sorted(set(found) - set(allowed))
            if unknown:
                self.fail(f"has unknown keys {unknown}; known: {sorted(allowed)}")
        return found

    def get(self, key: str) -> Node | None:
        """The value of ``key``, or None when the object has no such key."""
        return self._child(key) if key in self.entries() else None

    def require(self, key: str) -> Node:
        """The value of ``key``; fails when it is missing."""
        if key not in self.entries():
            self.fail(f"has no {key!r}")
        return self._child(key)

    def children(self) -> list[Node]:
        """The items of a list."""
        if not isinstance(self.value, list):
            self.fail(f"should be a list, not {_kind(self.value)}")
        return [Node(item, self.file, f"{self.field}[{i}]") for i, item in enumerate(self.value)]

    def members(self) -> list[tuple[str, Node]]:
        """The keys and values of an object, in file order."""
        return [(key, self._child(key)) for key in self.entries()]

    def labelled(self) -> Node:
        """This object with its ``name`` added to its field, for easier finding."""
        name = self.entries().get("name")
        return Node(self.value, self.file, f'{self.field} "{name}"') if name else self

    def text(self) -> str:
        """A string."""
        if not isinstance(self.value, str):
            self.fail(f"should be a string, not {_kind(self.value)}")
        return self.value

    def texts(self) -> tuple[str, ...]:
        """A list of strings."""
        if not isinstance(self.value, list) or not all(isinstance(v, str) for v in self.value):
            self.fail(f"should be a list of strings, not {_kind(self.value)}")
        return tuple(self.value)

    def flag(self) -> bool:
        """A boolean."""
        if not isinstance(self.value, bool):
            self.fail(f"should be true or false, not {_kind(self.value)}")
        return self.value

    def integer(self) -> int:
        """An integer."""
        if isinstance(self.value, bool) or not isinstance(self.value, int):
            self.fail(f"should be an integer, not {_kind(self.value)}")
        return self.value


def _kind(value: object) -> str:
    """How a JSON value is shown in an error: "a list [1, 2]"."""
    if value is None:
        return "null"
    shown = json.dumps(value, ensure_ascii=False)
    shown = shown if len(shown) <= 40 else shown[:37] + "..."
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}
    return f"{names.get(type(value), 'a number')} {shown}"


def data_folder() -> Traversable:
    """Where the data files are: the ``families`` folder of this package."""
    return resources.files("temporal_rag_training") / DATA_FOLDER


def read(file: str) -> Node:
    """The parsed contents of the data file ``file`` (in :func:`data_folder`)."""
    source = data_folder() / file
    try:
        text = source.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DataFileError(file, "", "is missing; reinstall temporal-rag-training") from None
    try:
        value = json.loads(text, object_pairs_hook=_no_duplicates)
    except ValueError as error:
        raise DataFileError(file, "", f"is not valid JSON: {error}") from None
    return Node(value, file)


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"the key {key!r} appears twice in one object")
        out[key] = value
    return out


def build(cls: type[T], node: Node, also: Iterable[str] = (), /, **given: object) -> T:
    """A ``cls`` (a dataclass) from the JSON object ``node``: each field not in ``given`` from
    the key of its name, checked against the field's type (absent: the field's default). Keys
    in ``also`` are read by the caller; any other key fails."""
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    entries = node.entries([*(f.name for f in fields), *also])
    hints = _hints(cls)
    values: dict[str, object] = {}
    for field in fields:
        if field.name in given:
            values[field.name] = given[field.name]
        elif field.name in entries:
            values[field.name] = _convert(node.require(field.name), hints[field.name])
        elif field.default is dataclasses.MISSING:
            node.fail(f"has no {field.name!r}")
    factory: Callable[..., T] = cls
    return factory(**values)


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    """The resolved field types of ``cls``, cached."""
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def _convert(node: Node, hint: Any) -> object:
    if hint is str:
        return node.text()
    if hint is bool:
        return node.flag()
    if hint is int:
        return node.integer()
    args = typing.get_args(hint)
    if typing.get_origin(hint) is tuple and args == (str, ...):
        return node.texts()
    if typing.get_origin(hint) is tuple and len(args) == 2 and args[1] is Ellipsis:
        return tuple(_convert(child, args[0]) for child in node.children())
    if typing.get_origin(hint) is tuple:
        items = node.children()
        if len(items) != len(args):
            node.fail(f"should be a list of {len(args)} items, not {len(items)}")
        return tuple(_convert(item, arg) for item, arg in zip(items, args, strict=True))
    raise TypeError(f"no conversion from JSON to {hint!r}")  # a field type this reader lacks
