"""The ``temporal-rag`` command line: the demo, the read commands and their error paths."""

from __future__ import annotations

import io
import json
import os
import re
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from shared_core import Cardinality, InMemoryLedger, SQLiteLedger
from shared_core.cli.commands import DEFAULT_DEMO_LEDGER, main
from shared_core.cli.demo import describe_effect
from shared_core.facts import Fact


@dataclass(frozen=True)
class Run:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


RunCli = Callable[..., Run]


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> RunCli:
    """Run ``temporal-rag`` with a fixed-width console; stderr comes from capsys."""

    def run(*argv: str, width: int = 160) -> Run:
        buffer = io.StringIO()
        console = Console(file=buffer, width=width, color_system=None, highlight=False)
        capsys.readouterr()
        code = main(list(argv), console=console)
        captured = capsys.readouterr()
        return Run(code, buffer.getvalue() + captured.out, captured.err)

    return run


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """One demo ledger shared by the read-command tests (they never write), and its output."""
    path = tmp_path_factory.mktemp("demo") / "demo.sqlite"
    buffer = io.StringIO()
    console = Console(file=buffer, width=160, color_system=None, highlight=False)
    assert main(["demo", "--ledger", str(path)], console=console) == 0
    return path, buffer.getvalue()


@pytest.fixture
def ledger(demo: tuple[Path, str]) -> str:
    return str(demo[0])


def _day(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def _no_traceback(run: Run) -> None:
    assert "Traceback" not in run.err
    assert "Traceback" not in run.out


# --------------------------------------------------------------------------- demo
def test_demo_prints_every_decision(demo: tuple[Path, str]) -> None:
    _, out = demo
    for decision in (
        "NOVEL",
        "SUPERSEDED",
        "BACKFILLED",
        "REINFORCED",
        "DUPLICATE",
        "RETRACTED",
        "CORRECTED",
    ):
        assert decision in out, decision
    assert "closed Berlin at 2022-05-01" in out
    assert "lives in = Madrid 2018-01-01 -> 2020-01-01" in out
    assert "ended vegetarian at 2023-01-01" in out
    assert "retired Acme (it was never true)" in out


def test_demo_prints_current_state_timeline_and_as_of(demo: tuple[Path, str]) -> None:
    _, out = demo
    current = out[out.index("Maria now") : out.index("Timeline of Maria")]
    for value in ("Lisbon", "cola", "German", "Portuguese", "Globex"):
        assert value in current, value
    for gone in ("Berlin", "coffee", "vegetarian", "Acme"):
        assert gone not in current, gone
    timeline = out[out.index("Timeline of Maria") : out.index("As of")]
    lines = [line for line in timeline.splitlines() if line.strip()]
    rows = [line.split()[0] for line in lines if line.split()[0] in {"Madrid", "Berlin", "Lisbon"}]
    assert rows == ["Madrid", "Berlin", "Lisbon"]  # valid-time order, backfill first
    assert "superseded by Lisbon" in timeline
    as_of = out[out.index("As of") :]
    assert re.search(r"2022-06-01\?\s+2022-01-01\s+Berlin", as_of)
    assert "(nothing known)" in as_of
    for answer in ("Lisbon", "Madrid", "Acme", "Globex"):
        assert answer in as_of, answer
    assert "temporal-rag explain" in out


def test_demo_ledger_holds_the_final_state(ledger: str) -> None:
    with SQLiteLedger(ledger) as store:
        current = store.current(subject="Maria")
        assert store.cardinality("speaks") is Cardinality.MANY
    by_relation: dict[str, set[object]] = {}
    for fact in current:
        by_relation.setdefault(str(fact.relation), set()).add(fact.object)
    assert by_relation == {
        "lives in": {"Lisbon"},
        "favourite drink": {"cola"},
        "speaks": {"German", "Portuguese"},
        "employer": {"Globex"},
    }


def test_demo_defaults_to_a_file_in_cwd_and_stdout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert (tmp_path / DEFAULT_DEMO_LEDGER).stat().st_size > 0
    assert "BACKFILLED" in out
    assert "Globex" in out


def test_demo_refuses_to_overwrite_without_fresh(cli: RunCli, tmp_path: Path) -> None:
    path = tmp_path / "demo.sqlite"
    assert cli("demo", "--ledger", str(path)).code == 0
    before = path.read_bytes()
    again = cli("demo", "--ledger", str(path))
    assert again.code == 1
    assert "--fresh" in again.err
    _no_traceback(again)
    assert path.read_bytes() == before
    with SQLiteLedger(path) as store:  # nothing was written twice
        assert len(store.history("Maria", "lives in")) == 3


def test_demo_fresh_replaces_the_ledger_and_its_side_files(cli: RunCli, tmp_path: Path) -> None:
    path = tmp_path / "demo.sqlite"
    assert cli("demo", "--ledger", str(path)).code == 0
    stale = [tmp_path / "demo.sqlite-wal", tmp_path / "demo.sqlite-shm"]
    for side in stale:
        side.write_bytes(b"stale")
    result = cli("demo", "--ledger", str(path), "--fresh")
    assert result.code == 0, result.err
    assert "CORRECTED" in result.out
    assert not any(side.exists() and side.read_bytes() == b"stale" for side in stale)
    with SQLiteLedger(path) as store:
        assert len(store.history("Maria", "lives in")) == 3


def test_demo_fresh_never_deletes_a_file_that_is_not_a_ledger(cli: RunCli, tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("my precious notes")
    result = cli("demo", "--ledger", str(notes), "--fresh")
    assert result.code == 1
    assert "refusing to delete" in result.err
    assert notes.read_text() == "my precious notes"


def test_demo_into_a_missing_directory_is_a_usage_error(cli: RunCli, tmp_path: Path) -> None:
    result = cli("demo", "--ledger", str(tmp_path / "missing" / "demo.sqlite"))
    assert result.code == 2
    assert "does not exist" in result.err
    assert result.out == ""


def test_describe_effect_of_a_duplicate_names_the_version() -> None:
    with InMemoryLedger() as store:
        fact = Fact(text="x", subject="a", relation="r", object="b", valid_from=_day("2020-01-01"))
        store.write(fact)
        assert describe_effect(store.write(fact)) == "r = b from 2020-01-01"


# --------------------------------------------------------------------------- current
def test_current_table(cli: RunCli, ledger: str) -> None:
    result = cli("current", "--ledger", ledger)
    assert result.code == 0, result.err
    for value in ("Lisbon", "cola", "German", "Portuguese", "Globex"):
        assert value in result.out
    assert "vegetarian" not in result.out


def test_current_json_with_filters(cli: RunCli, ledger: str) -> None:
    result = cli(
        "current", "--ledger", ledger, "--subject", "MARIA", "--relation", "speaks", "--json"
    )
    assert result.code == 0, result.err
    facts = result.json()
    assert sorted(f["object"] for f in facts) == ["German", "Portuguese"]
    assert all(f["status"] == "current" and f["valid_to"] is None for f in facts)
    assert all(len(f["id"]) == 32 for f in facts)


def test_current_in_another_namespace_is_empty(cli: RunCli, ledger: str) -> None:
    assert cli("current", "--ledger", ledger, "--namespace", "other", "--json").json() == []
    text = cli("current", "--ledger", ledger, "--namespace", "other")
    assert text.code == 0
    assert "Nothing is current" in text.out


def test_full_ids_when_they_fit_short_ids_otherwise(cli: RunCli, ledger: str) -> None:
    ids = [f["id"] for f in cli("current", "--ledger", ledger, "--json").json()]
    wide = cli("current", "--ledger", ledger, width=160).out
    assert all(fact_id in wide for fact_id in ids)
    narrow = cli("current", "--ledger", ledger, width=80).out
    assert not any(fact_id in narrow for fact_id in ids)
    assert all(fact_id[-8:] in narrow for fact_id in ids)
    assert "ids shortened" in narrow
    assert max(len(line) for line in narrow.splitlines()) <= 80


# --------------------------------------------------------------------------- history
def test_history_table(cli: RunCli, ledger: str) -> None:
    result = cli("history", "maria", "Lives-In", "--ledger", ledger)
    assert result.code == 0, result.err
    out = result.out
    assert out.index("Madrid") < out.index("Berlin") < out.index("Lisbon")
    assert "superseded by Berlin" in out
    assert "superseded by Lisbon" in out
    assert "current" in out


def test_history_json_marks_the_corrected_record(cli: RunCli, ledger: str) -> None:
    facts = cli("history", "Maria", "employer", "--ledger", ledger, "--json").json()
    assert [(f["object"], f["status"]) for f in facts] == [
        ("Acme", "retired"),
        ("Globex", "current"),
    ]
    assert facts[0]["retire_reason"]["kind"] == "corrected"
    assert facts[0]["retire_reason"]["by"] == facts[1]["id"]
    text = cli("history", "Maria", "employer", "--ledger", ledger).out
    assert "retired 2023-04-01: corrected by Globex" in text


def test_history_known_at_hides_what_was_learnt_later(cli: RunCli, ledger: str) -> None:
    facts = cli(
        "history",
        "Maria",
        "lives in",
        "--ledger",
        ledger,
        "--known-at",
        "2022-01-01T00:00:00Z",
        "--json",
    ).json()
    assert [(f["object"], f["status"]) for f in facts] == [("Berlin", "current")]


def test_history_of_an_unknown_key_is_empty(cli: RunCli, ledger: str) -> None:
    result = cli("history", "Bob", "lives in", "--ledger", ledger)
    assert result.code == 0
    assert "no versions" in result.out
    assert cli("history", "Bob", "lives in", "--ledger", ledger, "--json").json() == []


# --------------------------------------------------------------------------- as-of
def test_as_of_contrasts_record_time(cli: RunCli, ledger: str) -> None:
    then = cli(
        "as-of", "--ledger", ledger, "--subject", "Maria", "--relation", "lives in",
        "--valid-at", "2022-06-01T00:00:00Z", "--known-at", "2022-01-01T00:00:00Z", "--json",
    ).json()  # fmt: skip
    now = cli(
        "as-of", "--ledger", ledger, "--subject", "Maria", "--relation", "lives in",
        "--valid-at", "2022-06-01T00:00:00Z", "--json",
    ).json()  # fmt: skip
    assert [f["object"] for f in then] == ["Berlin"]
    assert then[0]["status"] == "current"  # as it stood then, not as the record ended later
    assert [f["object"] for f in now] == ["Lisbon"]


def test_as_of_table_across_relations(cli: RunCli, ledger: str) -> None:
    result = cli(
        "as-of", "--ledger", ledger, "--valid-at", "2022-06-01T02:00:00+02:00",
        "--known-at", "2022-01-01T00:00:00Z",
    )  # fmt: skip
    assert result.code == 0, result.err
    assert "Valid at 2022-06-01, as known at 2022-01-01" in result.out
    for value in ("Berlin", "coffee", "vegetarian", "Acme", "German"):
        assert value in result.out, value
    for value in ("Lisbon", "Portuguese", "Globex", "retired"):
        assert value not in result.out, value


def test_as_of_before_anything_was_known(cli: RunCli, ledger: str) -> None:
    result = cli("as-of", "--ledger", ledger, "--valid-at", "1990-01-01T00:00:00Z")
    assert result.code == 0
    assert "Nothing was valid then" in result.out


# --------------------------------------------------------------------------- explain
def _acme_id(cli: RunCli, ledger: str) -> str:
    facts = cli("history", "Maria", "employer", "--ledger", ledger, "--json").json()
    fact_id = facts[0]["id"]
    assert isinstance(fact_id, str)
    return fact_id


def test_explain_text(cli: RunCli, ledger: str) -> None:
    acme = _acme_id(cli, ledger)
    result = cli("explain", acme, "--ledger", ledger)
    assert result.code == 0, result.err
    assert f"{acme}: assertion 'Maria works at Acme.'" in result.out
    assert "corrected by" in result.out
    assert f"Version records of {acme}" in result.out
    assert "2023-04-01" in result.out


def test_explain_json(cli: RunCli, ledger: str) -> None:
    acme = _acme_id(cli, ledger)
    data = cli("explain", acme, "--ledger", ledger, "--json").json()
    assert data["fact_id"] == acme
    assert data["reason"]["kind"] == "corrected"
    assert data["statements"][0]["text"] == "Maria works at Acme."
    assert data["statements"][0]["retired_at"] == "2023-04-01T00:00:00+00:00"
    assert [v["status"] for v in data["versions"]] == ["retired"]
    assert "corrected by" in data["summary"]


def test_explain_a_revised_version_lists_every_record(cli: RunCli, ledger: str) -> None:
    facts = cli("history", "Maria", "lives in", "--ledger", ledger, "--json").json()
    berlin = next(f["id"] for f in facts if f["object"] == "Berlin")
    data = cli("explain", berlin, "--ledger", ledger, "--json").json()
    assert [v["status"] for v in data["versions"]] == ["retired", "superseded"]
    text = cli("explain", berlin, "--ledger", ledger).out
    assert "revised because of" in text
    assert "superseded by" in text


# --------------------------------------------------------------------------- errors
def test_missing_ledger_is_not_created(cli: RunCli, tmp_path: Path) -> None:
    path = tmp_path / "nope.sqlite"
    for argv in (
        ["current"],
        ["history", "Maria", "lives in"],
        ["as-of"],
        ["explain", "0" * 32],
    ):
        result = cli(*argv, "--ledger", str(path))
        assert result.code == 2, argv
        assert "does not exist" in result.err
        _no_traceback(result)
    assert list(tmp_path.iterdir()) == []


def test_a_file_that_is_not_a_ledger(cli: RunCli, tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("hello, I am not a database")
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE t (x)")
    conn.close()
    empty = tmp_path / "empty.sqlite"
    empty.touch()
    blank = tmp_path / "blank.db"  # a valid SQLite file without tables
    conn = sqlite3.connect(blank)
    conn.execute("PRAGMA user_version = 7")
    conn.close()
    for path in (text, other, empty, blank, tmp_path):
        result = cli("current", "--ledger", str(path))
        assert result.code == 2, path
        assert str(path) in result.err
        assert "ledger" in result.err
        _no_traceback(result)
    assert text.read_text() == "hello, I am not a database"
    assert empty.stat().st_size == 0
    conn = sqlite3.connect(blank)
    assert conn.execute("SELECT count(*) FROM sqlite_master").fetchone() == (0,)
    conn.close()


@pytest.mark.parametrize(
    ("value", "message"),
    [("2022-06-01", "has no UTC offset"), ("2022-06-01T00:00:00", "has no UTC offset"),
     ("next tuesday", "is not an ISO-8601 datetime")],
)  # fmt: skip
def test_naive_or_bad_datetimes_are_usage_errors(
    cli: RunCli, ledger: str, value: str, message: str
) -> None:
    for option in ("--valid-at", "--known-at"):
        result = cli("as-of", "--ledger", ledger, option, value)
        assert result.code == 2
        assert message in result.err
        assert option in result.err
        _no_traceback(result)
    result = cli("history", "Maria", "lives in", "--ledger", ledger, "--known-at", value)
    assert result.code == 2
    assert message in result.err


def test_unknown_fact_id(cli: RunCli, ledger: str) -> None:
    result = cli("explain", "deadbeef", "--ledger", ledger)
    assert result.code == 1
    assert "no fact with id 'deadbeef'" in result.err
    assert result.out == ""
    _no_traceback(result)


def test_invalid_input_is_a_usage_error(cli: RunCli, ledger: str) -> None:
    result = cli("current", "--ledger", ledger, "--namespace", " ")
    assert result.code == 2
    assert "namespace" in result.err
    _no_traceback(result)


def test_usage_errors_and_help(cli: RunCli) -> None:
    assert cli().code == 2
    assert cli("current").code == 2  # --ledger is required
    assert cli("frobnicate").code == 2
    helped = cli("--help")
    assert helped.code == 0
    assert "as-of" in helped.out


def test_ledger_text_is_never_read_as_markup(cli: RunCli, tmp_path: Path) -> None:
    path = tmp_path / "markup.sqlite"
    with SQLiteLedger(path) as store:
        store.write(Fact(text="[bold]x[/bold]", subject="[red]s", relation="r", object="[b]o[/b]"))
    result = cli("current", "--ledger", str(path))
    assert result.code == 0, result.err
    assert "[red]s" in result.out
    assert "[b]o[/b]" in result.out


def test_importing_the_cli_does_not_import_rich() -> None:
    code = "import sys, shared_core.cli, shared_core.cli.demo; print('rich' in sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "False"


# ---------------------------------------------------------------- commands of other distributions
def test_the_benchmark_and_the_training_pipeline_add_their_commands(cli: RunCli) -> None:
    """Both are installed by make (benchmarks/, training/); the core only finds them."""
    helped = cli("--help")
    assert helped.code == 0
    assert "bench" in helped.out
    assert "kappa-eval" in helped.out


def test_a_command_that_cannot_load_is_left_out(
    cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    import argparse

    from shared_core.cli import commands as cli_commands

    def hello(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
        command = commands.add_parser("hello", help="say hello")
        command.set_defaults(handler=lambda args, console: console.print("hello") or 0)

    class Point:
        def __init__(self, name: str, target: Any) -> None:
            self.name = name
            self.target = target

        def load(self) -> Any:
            if isinstance(self.target, Exception):
                raise self.target
            return self.target

    points = [Point("broken", ImportError("no module named 'gone'")), Point("hello", hello)]
    monkeypatch.setattr(cli_commands, "plugin_entry_points", lambda: points)
    assert cli("hello").out.strip() == "hello"
    assert "broken" not in cli("--help").out


def test_the_version_is_the_installed_distributions() -> None:
    import importlib.metadata

    import shared_core

    assert shared_core.__version__ == importlib.metadata.version("temporal-rag")


# --------------------------------------------------------------------------- issue 32, item 5
def test_explain_accepts_the_short_id_a_table_shows(cli: RunCli, ledger: str) -> None:
    acme = _acme_id(cli, ledger)
    table = cli("history", "Maria", "employer", "--ledger", ledger, width=110).out
    assert acme[-8:] in table  # the short id the table prints
    assert acme not in table
    short = cli("explain", acme[-8:], "--ledger", ledger, "--json")
    assert short.code == 0, short.err
    assert short.json()["fact_id"] == acme
    assert cli("explain", acme[:24], "--ledger", ledger).code == 0  # a unique start too


def test_an_ambiguous_short_id_lists_the_candidates(cli: RunCli, tmp_path: Path) -> None:
    path = tmp_path / "ids.sqlite"
    with SQLiteLedger(path) as store:
        for fact_id in ("aaaa0001xyz", "bbbb0002xyz"):
            store.write(Fact(text=fact_id, subject="s", relation=fact_id, object="o", id=fact_id))
    result = cli("explain", "xyz", "--ledger", str(path))
    assert result.code == 2
    assert "'xyz' is the short form of 2 fact ids: aaaa0001xyz, bbbb0002xyz" in result.err
    _no_traceback(result)
    assert cli("explain", "0002xyz", "--ledger", str(path)).code == 0
    missing = cli("explain", "nothing", "--ledger", str(path))
    assert (missing.code, "no fact with id 'nothing'" in missing.err) == (1, True)


def test_namespaces_lists_each_namespace_with_its_count(cli: RunCli, tmp_path: Path) -> None:
    path = tmp_path / "spaces.sqlite"
    with SQLiteLedger(path) as store:
        for namespace, count in (("ana", 2), ("bo", 1)):
            for i in range(count):
                store.write(
                    Fact(text="t", subject="s", relation=f"r{i}", object="o", namespace=namespace)
                )
    assert cli("namespaces", "--ledger", str(path), "--json").json() == [
        {"namespace": "ana", "current": 2},
        {"namespace": "bo", "current": 1},
    ]
    table = cli("namespaces", "--ledger", str(path)).out
    assert re.search(r"ana\s+2", table)
    assert re.search(r"bo\s+1", table)


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() == 0,
    reason="root ignores file permissions, so a chmod-ed folder is not read-only to it",
)
def test_a_read_only_folder_says_so(cli: RunCli, tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    path = folder / "ledger.sqlite"
    with SQLiteLedger(path) as store:
        store.write(Fact(text="t", subject="s", relation="r", object="o"))
    folder.chmod(0o555)
    try:
        for argv in (("current", "--ledger", str(path)), ("repair", str(folder))):
            result = cli(*argv)
            assert result.code == 2
            assert f"{folder} is a read-only folder" in result.err
            _no_traceback(result)
    finally:
        folder.chmod(0o755)


def test_a_read_only_ledger_is_a_clear_error(
    cli: RunCli, ledger: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the chmod test checks, for a run as root (which writes anything)."""
    monkeypatch.setattr(
        "shared_core.cli.commands.os.access", lambda target, mode: Path(target) != Path(ledger)
    )
    result = cli("current", "--ledger", ledger)
    assert result.code == 2
    assert f"{ledger} is a read-only file: the ledger cannot be opened there" in result.err
    assert "copy-ledger" in result.err
    _no_traceback(result)


def test_a_langgraph_ledger_shows_values_not_digests(cli: RunCli, tmp_path: Path) -> None:
    from langchain_temporal import TemporalStore
    from langchain_temporal.langgraph_codec import ITEM_RELATION, NAMESPACE_ROOT
    from shared_core.cli.render import LANGGRAPH_RELATION, LANGGRAPH_ROOT
    from shared_core.embedders.base import HashingEmbedder
    from shared_core.index.numpy_index import NumpyIndex
    from shared_core.memory import MemoryConfig, TemporalMemory

    assert (LANGGRAPH_ROOT, LANGGRAPH_RELATION) == (NAMESPACE_ROOT, ITEM_RELATION)
    path = tmp_path / "graph.sqlite"
    config = MemoryConfig(embedder=HashingEmbedder(16))
    with TemporalMemory(ledger=SQLiteLedger(path), index=NumpyIndex(), config=config) as memory:
        store = TemporalStore(memory)
        store.put(("users", "ana"), "Prefs", {"food": "pizza"})
        store.put(("users", "ana"), "Prefs", {"food": "sushi"})
        digest = memory.as_of(namespace="langgraph.users.ana")[0].object
    out = cli("current", "--ledger", str(path), "--namespace", "langgraph.users.ana").out
    assert '{"food": "sushi"}' in out
    assert "Prefs" in out
    assert str(digest) not in out
    assert "%50refs" not in out
    timeline = cli(
        "history", "%50refs", ITEM_RELATION, "--ledger", str(path), "--namespace",
        "langgraph.users.ana",
    ).out  # fmt: skip
    assert '{"food": "pizza"}' in timeline
    assert '{"food": "sushi"}' in timeline
    assert "langgraph.users.ana" in cli("namespaces", "--ledger", str(path)).out
