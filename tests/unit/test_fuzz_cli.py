"""Hostile arguments to the ``temporal-rag`` command (issue 9, part 3).

Whatever the argv, ``main(argv)`` returns an exit code (0 success, 1 error, 2 usage) and, when it
fails, prints a one-line ``temporal-rag: error: ...`` or argparse's usage message: never a
traceback, never an exception out of ``main``. The ledger it reads is never changed by a read.
"""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console

from shared_core.cli import main

CLI = settings(
    max_examples=120,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
HOSTILE = [
    "'; DROP TABLE statements; --",
    "Maria",
    "lives in",
    "default",
    "",
    " ",
    "-",
    "--",
    "-h",
    "\x00",
    "a\x00b",
    "\x1b[2J\x1b[31m",
    "\ud800",
    "🙂",
    "%s%n%x",
    "{}",
    "2024-01-01T00:00:00Z",
    "2024-01-01T00:00:00",  # naive
    "9999-12-31T23:59:59+00:00",
    "0001-01-01T00:00:00-14:00",
    "99999-01-01T00:00:00Z",
    "nan",
    "inf",
    "-1",
    "1e309",
    "x" * 5000,
]
COMMANDS = ["current", "history", "as-of", "explain", "demo", "nonsense", "--version", "--help"]
OPTIONS = [
    "--ledger",
    "--namespace",
    "--subject",
    "--relation",
    "--known-at",
    "--valid-at",
    "--json",
]


@pytest.fixture(scope="module")
def ledgers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("cli-fuzz")
    demo = folder / "demo.sqlite"
    quiet = Console(file=io.StringIO(), width=120)
    assert main(["demo", "--ledger", str(demo)], console=quiet) == 0
    garbage = folder / "garbage.sqlite"
    garbage.write_bytes(b"definitely not sqlite\n" * 100)
    empty = folder / "empty.sqlite"
    empty.write_bytes(b"")
    truncated = folder / "truncated.sqlite"
    truncated.write_bytes(demo.read_bytes()[:3000])
    return {
        "demo": demo,
        "garbage": garbage,
        "empty": empty,
        "truncated": truncated,
        "missing": folder / "missing.sqlite",
        "directory": folder,
    }


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""


def _token(ledgers: dict[str, Path]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from(HOSTILE),
        st.sampled_from(OPTIONS),
        st.sampled_from([str(p) for name, p in ledgers.items() if name != "demo"]),
        st.text(max_size=12),
    )


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    buffer = io.StringIO()
    console = Console(file=buffer, width=120, color_system=None)
    capsys.readouterr()
    code = main(argv, console=console)
    captured = capsys.readouterr()
    return code, buffer.getvalue() + captured.out, captured.err


def _check(code: object, out: str, err: str) -> None:
    assert isinstance(code, int)
    assert code in {0, 1, 2}
    assert "Traceback" not in out
    assert "Traceback" not in err
    if code != 0:
        assert err.strip(), "a failure must say why"
        assert "error" in err or "usage" in err


@CLI
@given(data=st.data())
def test_random_argv_never_raises_and_fails_with_a_message(
    data: st.DataObject,
    ledgers: dict[str, Path],
    capsys: pytest.CaptureFixture[str],
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path_factory.mktemp("cwd"))  # a stray `demo` writes here, not in the repo
    before = _digest(ledgers["demo"])
    command = data.draw(st.sampled_from(COMMANDS))
    ledger = data.draw(st.sampled_from(list(ledgers)))
    rest = data.draw(st.lists(_token(ledgers), max_size=6))
    argv = [command, "--ledger", str(ledgers[ledger]), *rest]
    if command == "demo":
        argv = [
            command,
            "--ledger",
            str(ledgers[ledger] if ledger != "demo" else ledgers["missing"]),
            *rest,
        ]
    argv = data.draw(st.sampled_from([argv, argv[:1] + rest, rest]))
    if "bench" in argv:
        return
    code, out, err = _run(argv, capsys)
    _check(code, out, err)
    assert _digest(ledgers["demo"]) == before, "a read command changed the ledger"
    for path in ledgers["missing"].parent.glob("missing.sqlite*"):  # a stray demo: start clean
        path.unlink()


@pytest.mark.parametrize("which", ["garbage", "empty", "truncated", "missing", "directory"])
@pytest.mark.parametrize(
    "argv",
    [
        ["current"],
        ["current", "--json"],
        ["history", "Maria", "lives in"],
        ["as-of", "--valid-at", "2020-01-01T00:00:00Z"],
        ["explain", "no-such-id"],
    ],
)
def test_every_read_command_on_a_bad_ledger_is_a_clean_error(
    which: str, argv: list[str], ledgers: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    path = ledgers[which]
    before = _digest(path)
    code, out, err = _run([*argv, "--ledger", str(path)], capsys)
    _check(code, out, err)
    assert code != 0
    assert _digest(path) == before
    assert not path.parent.joinpath("missing.sqlite").exists()  # reads never create a ledger


@pytest.mark.parametrize(
    "argv",
    [
        ["bench", "--profile", "'; DROP TABLE x; --"],
        ["bench", "--k", "0"],
        ["bench", "--k", "nan"],
        ["bench", "--seed", "-1"],
        ["bench", "--limit", "1e309"],
        ["bench", "--no-such-flag"],
        ["bench", "--dataset", "\x00"],
    ],
)
def test_bench_refuses_bad_arguments_before_running(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _run(argv, capsys)
    _check(code, out, err)
    assert code == 2


@pytest.mark.parametrize("value", ["\x00", "\ud800", "x" * 100_000, "'; DROP TABLE keys; --"])
@pytest.mark.parametrize("option", ["--namespace", "--subject", "--relation"])
def test_hostile_filter_values_read_nothing_and_break_nothing(
    value: str, option: str, ledgers: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    before = _digest(ledgers["demo"])
    code, out, err = _run(
        ["current", "--json", "--ledger", str(ledgers["demo"]), option, value], capsys
    )
    _check(code, out, err)
    assert _digest(ledgers["demo"]) == before
