"""The story behind ``temporal-rag demo``: what a memory learns about Maria, and when.

Two clocks run through it. *Valid time* is when something was true for Maria (she lived in
Berlin from 2020); *record time* is when the memory learnt it (it heard about Berlin in March
2021). The story is replayed with a manual clock set to each record time, so that "as known on
2022-01-01" means something afterwards:

- Maria moves Berlin -> Lisbon (a new object supersedes the old one);
- her favourite drink flip-flops cola -> coffee -> cola (each change supersedes);
- long after, the memory learns she lived in Madrid before Berlin (backfilled into history);
- ``speaks`` is declared MANY: German and Portuguese accumulate;
- she stops being vegetarian (a retraction ends the fact);
- her employer was recorded wrongly as Acme and is corrected to Globex (the wrong record is
  retired in record time: it was never true).

Then the ledger is reopened from disk and queried: the current state, one key's timeline and
as-of answers that contrast valid time with record time.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from shared_core.cli.options import PROG
from shared_core.cli.render import add_row, facts_table, format_time, new_table, timeline_table
from shared_core.clock import ManualClock
from shared_core.facts import Cardinality, Decision, Fact
from shared_core.ledger import SQLiteLedger, WriteResult

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

SUBJECT = "Maria"

_DECISION_STYLES = {
    Decision.NOVEL: "green",
    Decision.REINFORCED: "cyan",
    Decision.SUPERSEDED: "yellow",
    Decision.BACKFILLED: "magenta",
    Decision.CORRECTED: "red",
    Decision.RETRACTED: "red",
    Decision.DUPLICATE: "dim",
}


def day(text: str) -> datetime:
    """Midnight UTC of an ISO date (the story's times are all whole days)."""
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class AsOfQuestion:
    """A question asked twice: once as known back then, once as known now."""

    question: str
    relation: str
    valid_at: str
    known_then: str


QUESTIONS = (
    AsOfQuestion("Where did Maria live on 2022-06-01?", "lives in", "2022-06-01", "2022-01-01"),
    AsOfQuestion("Where did Maria live on 2019-06-01?", "lives in", "2019-06-01", "2022-06-01"),
    AsOfQuestion("Where did Maria work on 2022-01-01?", "employer", "2022-01-01", "2022-01-01"),
)


class Narrator:
    """Writes the story into a ledger at given record times and prints one line per write."""

    def __init__(self, ledger: SQLiteLedger, clock: ManualClock, console: Console) -> None:
        self.ledger = ledger
        self._clock = clock
        self._console = console

    def learn(self, learnt: str, text: str, relation: str, obj: str, *, since: str) -> WriteResult:
        """On ``learnt`` the memory reads that Maria's ``relation`` is ``obj`` since ``since``."""
        when = self._at(learnt)
        fact = Fact(
            text=text,
            subject=SUBJECT,
            relation=relation,
            object=obj,
            valid_from=day(since),
            recorded_at=when,
        )
        return self._say(learnt, text, self.ledger.write(fact))

    def retract(self, learnt: str, text: str, relation: str, obj: str, *, at: str) -> WriteResult:
        """On ``learnt`` the memory reads ``text``: ``obj`` stopped being true at ``at``."""
        self._at(learnt)
        result = self.ledger.retract(SUBJECT, relation, obj, at=day(at), text=text)
        return self._say(learnt, text, result)

    def correct(self, learnt: str, text: str, fact_id: str, obj: str) -> WriteResult:
        """On ``learnt`` the memory learns that statement ``fact_id`` was wrong: it is ``obj``."""
        self._at(learnt)
        return self._say(learnt, text, self.ledger.correct(fact_id, object=obj, text=text))

    def note(self, text: str) -> None:
        """A line of narration."""
        from rich.text import Text

        self._console.print(Text(text, style="italic"))

    def _at(self, learnt: str) -> datetime:
        when = day(learnt)
        self._clock.set(when)  # retract and correct take their record time from the clock
        return when

    def _say(self, learnt: str, text: str, result: WriteResult) -> WriteResult:
        style = _DECISION_STYLES.get(result.decision, "")
        self._console.print(
            write_line(learnt, (str(result.decision).upper(), style), text, describe_effect(result))
        )
        return result


def write_line(learnt: str, decision: tuple[str, str], text: str, effect: str) -> Table:
    """One aligned line (wrapped within its columns): when, decision, what was read, effect."""
    from rich.table import Table
    from rich.text import Text

    line = Table.grid(padding=(0, 2), expand=True)
    line.add_column(width=10, no_wrap=True)
    line.add_column(width=10, no_wrap=True)
    line.add_column(ratio=1)
    line.add_column(ratio=1, style="dim")
    line.add_row(Text(learnt), Text(decision[0], style=decision[1]), Text(text), Text(effect))
    return line


def describe_effect(result: WriteResult) -> str:
    """What a write did to the timeline, in a few words."""
    parts = []
    fact = result.fact
    if fact is not None and fact.valid_from is not None:
        span = f"from {format_time(fact.valid_from)}"
        if fact.valid_to is not None:
            span = f"{format_time(fact.valid_from)} -> {format_time(fact.valid_to)}"
        parts.append(f"{fact.relation} = {fact.object} {span}")
    for closed in result.closed:
        verb = "ended" if result.decision is Decision.RETRACTED else "closed"
        parts.append(f"{verb} {closed.object} at {format_time(closed.valid_to)}")
    for retired in result.retired:
        parts.append(f"retired {retired.object} (it was never true)")
    return "; ".join(parts)


def tell_story(narrator: Narrator) -> str:
    """Write Maria's timeline; returns the id of the wrong employer statement (Acme)."""
    n = narrator
    n.ledger.declare("speaks", Cardinality.MANY)
    n.note("Declared `speaks` as MANY: languages accumulate instead of replacing each other.")
    n.learn("2021-03-01", "Maria lives in Berlin.", "lives in", "Berlin", since="2020-01-01")
    n.learn(
        "2021-03-01",
        "Maria's favourite drink is cola.",
        "favourite drink",
        "cola",
        since="2021-03-01",
    )
    n.learn("2021-03-02", "Maria speaks German.", "speaks", "German", since="2020-01-01")
    n.learn("2021-04-01", "Maria is vegetarian.", "diet", "vegetarian", since="2021-04-01")
    acme = n.learn("2021-05-01", "Maria works at Acme.", "employer", "Acme", since="2021-05-01")
    n.learn(
        "2021-09-01", "Maria prefers coffee now.", "favourite drink", "coffee", since="2021-09-01"
    )
    n.learn(
        "2022-05-10", "Maria moved to Lisbon on May 1st.", "lives in", "Lisbon", since="2022-05-01"
    )
    n.learn(
        "2022-06-01", "Maria speaks Portuguese now.", "speaks", "Portuguese", since="2022-06-01"
    )
    n.learn("2022-08-01", "Maria is back to cola.", "favourite drink", "cola", since="2022-08-01")
    n.learn(
        "2022-09-01",
        "Before Berlin, Maria lived in Madrid (from 2018).",
        "lives in",
        "Madrid",
        since="2018-01-01",
    )
    n.retract(
        "2023-01-15",
        "Maria is no longer vegetarian (since New Year).",
        "diet",
        "vegetarian",
        at="2023-01-01",
    )
    n.learn("2023-03-01", "Maria still lives in Lisbon.", "lives in", "Lisbon", since="2023-03-01")
    n.learn("2023-03-01", "Maria still lives in Lisbon.", "lives in", "Lisbon", since="2023-03-01")
    n.correct(
        "2023-04-01", "Correction: Maria works at Globex, not Acme.", acme.statement_id, "Globex"
    )
    return acme.statement_id


def show_results(ledger: SQLiteLedger, console: Console) -> None:
    """The current state, the timeline of where Maria lived, and as-of answers."""
    console.print()
    console.print(
        facts_table(ledger.current(subject=SUBJECT), title="Maria now (as known now)", ids="none")
    )
    console.print()
    history = ledger.history(SUBJECT, "lives in")
    console.print(
        timeline_table(history, title="Timeline of Maria / lives in (as known now)", ids="none")
    )
    console.print()
    console.print(as_of_table(ledger))
    console.print()


def as_of_table(ledger: SQLiteLedger) -> Table:
    """Each question answered as known back then and as known now."""
    table = new_table("As of: valid time vs record time", ["question", "as known on", "answer"])
    for q in QUESTIONS:
        for known_at, label in ((day(q.known_then), q.known_then), (None, "now")):
            facts = ledger.as_of(
                valid_at=day(q.valid_at), known_at=known_at, subject=SUBJECT, relation=q.relation
            )
            answer = ", ".join(str(f.object) for f in facts) or "(nothing known)"
            add_row(table, [q.question, label, answer])
    return table


def show_next_steps(path: Path, acme_id: str, console: Console) -> None:
    """The read commands to try on the file the demo wrote."""
    from rich.text import Text

    console.print(Text(f"The ledger is in {path}. Try:", style="bold"))
    ledger = shlex.quote(str(path))
    for command in (
        f"{PROG} current --ledger {ledger}",
        f"{PROG} history Maria 'favourite drink' --ledger {ledger}",
        f"{PROG} as-of --ledger {ledger} --valid-at 2022-06-01T00:00:00Z "
        "--known-at 2022-01-01T00:00:00Z",
        f"{PROG} explain {acme_id} --ledger {ledger}",
    ):
        console.print(Text(f"  {command}"), soft_wrap=True)


def run_demo(path: Path, console: Console) -> str:
    """Write the story into a ledger at ``path`` and show it; returns the Acme statement id."""
    from rich.text import Text

    console.print(Text(f"Writing Maria's timeline into {path}", style="bold"))
    console.print(
        write_line(
            "learnt on",
            ("decision", "bold"),
            "what the memory read",
            "what changed in the timeline",
        )
    )
    clock = ManualClock(day("2021-01-01"))
    with SQLiteLedger(path, clock=clock) as ledger:
        acme_id = tell_story(Narrator(ledger, clock, console))
    with SQLiteLedger(path) as ledger:  # reopened from disk, with the real clock
        show_results(ledger, console)
    show_next_steps(path, acme_id, console)
    return acme_id
