"""kappa by an LLM judge: any text-in/text-out callable says which statements a newer one outdates.

The detector takes a :data:`~shared_core.llm_calls.TextLLM`: ``str -> str``, its async form, or
both (the LangChain and LlamaIndex adapters' ``text_llm`` turns chat models and LLMs into one
with both). :meth:`LLMConflictDetector.afind_conflicts` awaits an async form on the running
loop; see :mod:`shared_core.llm_calls` for how each path calls each kind. This module uses only
the standard library.

Two modes:

- ``"set"`` (default): one prompt lists the candidates as numbered statements with their dates
  (oldest first) and asks for the (older, newer) pairs as strict JSON,
  ``{"conflicts": [[older, newer], ...]}``. See :data:`SET_TEMPLATE`.
- ``"pairwise"``: one prompt per (older, newer) pair that Phi_T could act on (see
  :func:`~shared_core.phi_t.ordered_pairs`), answered yes or no. See :data:`PAIR_TEMPLATE`.

Only dated candidates in the same namespace can dominate each other (see
:mod:`shared_core.phi_t`), so only they are shown to the LLM, one namespace at a time. A
namespace with fewer than two of them, or whose candidates all share one timestamp, costs no call.

The LLM's answer is parsed defensively and never crashes the detector: see
:class:`LLMConflictDetector` for what is accepted, and :class:`LLMDetectorStats` for what is
counted when an answer or a pair in it is unusable.
"""

from __future__ import annotations

import logging
import string
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from itertools import combinations
from typing import Any, Literal

from shared_core.detectors.llm_answers import (
    find_json,
    has_conflict_list,
    read_pairs,
    read_verdict,
    snippet,
)
from shared_core.detectors.llm_caller import DetectorCalls, OnError
from shared_core.detectors.llm_prompts import QUERY_BLOCK, date_labels, one_line, query_fields
from shared_core.errors import InvalidInputError
from shared_core.llm_calls import TextLLM, check_llm
from shared_core.phi_t import Candidate, Conflict, ordered_pairs

logger = logging.getLogger(__name__)

Mode = Literal["set", "pairwise"]

#: The set-mode prompt. Fields: ``{statements}`` (required: one line per statement,
#: ``"3. [2024-05-01] Maria moved to Lisbon."``, oldest first, numbered from 1), ``{count}``
#: (how many), ``{query}`` (the query, or empty) and ``{query_block}`` (a line naming the
#: query, or empty). Dates are UTC calendar dates; when two statements of one prompt share a
#: date but not a time, every statement of that prompt shows its full UTC timestamp instead.
#: Literal braces are written ``{{`` and ``}}`` (``str.format`` rules).
SET_TEMPLATE = """\
You are checking a memory for statements that are no longer true.

The numbered statements below are listed from oldest to newest, each with its date.
{query_block}
Statements:
{statements}

List every pair (older, newer) where the newer statement makes the older one no longer true: \
it says that the same thing about the same subject has changed (a move, a new job, a new \
preference, a relationship that ended) or it corrects the older statement. Statements about \
different things, statements that only add detail, and statements that can both be true at \
the same time are not such pairs.

Answer with JSON only, in exactly this form, using the statement numbers, older first:
{{"conflicts": [[older, newer], ...]}}
If there are no such pairs, answer {{"conflicts": []}}.
"""

#: The pairwise prompt. Fields: ``{older}`` and ``{newer}`` (required: the two statements'
#: texts), ``{older_date}``, ``{newer_date}``, ``{query}`` and ``{query_block}`` (as in
#: :data:`SET_TEMPLATE`). The answer is read as yes or no (see :class:`LLMConflictDetector`).
PAIR_TEMPLATE = """\
You are checking a memory for statements that are no longer true.
{query_block}
Older statement ({older_date}): {older}
Newer statement ({newer_date}): {newer}

Does the newer statement make the older one no longer true? It does if it says that the same \
thing about the same subject has changed, or if it corrects the older statement. It does not if \
the statements are about different things, if the newer one only adds detail, or if both can \
be true at the same time.

Answer with one word: yes or no.
"""

Pairs = set[tuple[int, int]]
Job = tuple[str, Callable[[str], Pairs]]  # a prompt, and how to read its answer

# mode -> (required fields, optional fields)
_FIELDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "set": (("statements",), ("count", "query", "query_block")),
    "pairwise": (("older", "newer"), ("older_date", "newer_date", "query", "query_block")),
}
_SAMPLE_VALUES: dict[str, Any] = {
    "statements": "1. [2024-01-01] a\n2. [2024-02-01] b",
    "count": 2,
    "query": "q",
    "query_block": QUERY_BLOCK.format(query="q"),
    "older": "a",
    "newer": "b",
    "older_date": "2024-01-01",
    "newer_date": "2024-02-01",
}


@dataclass(frozen=True, slots=True)
class LLMDetectorStats:
    """Counters since the detector was built (a snapshot; see ``LLMConflictDetector.stats``).

    ``calls``: invocations of the callable, failed ones included. ``errors``: invocations that
    raised or returned something other than a str. ``malformed``: answers that held no usable
    verdict (no ``{"conflicts": [...]}`` object in set mode; neither yes/no nor
    ``{"conflict": true|false}`` in pairwise mode). ``pairs_dropped``: pairs inside a usable
    set-mode answer that were ignored: not two integers, a number outside the list, a
    statement paired with itself, or two statements with the same timestamp.
    """

    calls: int = 0
    errors: int = 0
    malformed: int = 0
    pairs_dropped: int = 0


class LLMConflictDetector:
    """Asks an LLM which candidates a newer candidate makes no longer true.

    ``llm`` is any callable taking a prompt and returning the reply's text, or an async one,
    or both (:mod:`shared_core.llm_calls`): :meth:`find_conflicts` calls the sync form,
    :meth:`afind_conflicts` awaits the async form (a sync callable then runs in a worker
    thread); both send the same prompts, one after another, and read them alike. Options
    (keyword only):

    - ``template``: the prompt, a ``str.format`` template with named fields. Defaults to
      :data:`SET_TEMPLATE` or :data:`PAIR_TEMPLATE` according to ``mode``; a custom one is
      checked when the detector is built (an :class:`~shared_core.errors.InvalidInputError`
      names a missing or unknown field).
    - ``mode``: ``"set"`` (one prompt per candidate set) or ``"pairwise"`` (one per pair).
    - ``on_error``: what happens when the callable raises (or returns a non-str). ``"raise"``
      (default): a :class:`~shared_core.errors.DetectorError` naming this detector, with the
      original exception as ``__cause__``; that ``find_conflicts`` call returns nothing.
      ``"skip"``: the failure is counted and logged as a warning, and the prompt that failed
      yields no conflicts (the other prompts of the same call still count). Exceptions that
      are not ``Exception`` subclasses (e.g. KeyboardInterrupt) always propagate.
    - ``max_candidates`` (set mode; default 30, ``None`` for no bound): the most statements one
      prompt may hold. A larger set is split, oldest first, into blocks of
      ``max_candidates // 2`` statements and one prompt is sent per pair of blocks, so every
      pair of candidates is still judged together in some prompt while no prompt exceeds the
      bound: b blocks cost b * (b - 1) / 2 prompts (60 candidates with the default: 4 blocks,
      6 prompts, where pairwise would cost up to 1770). The same pair may then be judged more
      than once; any "yes" counts.
    - ``name``: labels this detector's verdicts (default ``"llm"``).

    Answers are parsed defensively; nothing the LLM says raises. In set mode the first JSON
    object with a ``"conflicts"`` list is used, whether the whole answer, inside a Markdown
    code fence, or embedded in prose; other keys are ignored. Each pair is two statement numbers
    (``[older, newer]`` or ``{"older": o, "newer": n}``); a pair given newer first is reordered
    by timestamp, duplicates are merged, and invalid pairs are dropped and counted. In pairwise
    mode the answer is "yes" or "no" as its first word (optionally after "Answer:"), or a JSON
    ``{"conflict": true|false}``. An answer with no usable verdict counts as no conflict, is
    counted as malformed and logged as a warning on this module's logger.

    Every conflict is reported with ``score=1.0``: an LLM's answer is a verdict, not a
    probability. Counters (:attr:`stats`) are guarded by a lock, so one detector may serve
    concurrent retrievers; the callable itself must then be safe to call concurrently.
    """

    def __init__(
        self,
        llm: TextLLM,
        *,
        template: str | None = None,
        mode: Mode = "set",
        on_error: OnError = "raise",
        max_candidates: int | None = 30,
        name: str = "llm",
    ) -> None:
        check_llm(llm)
        if mode not in _FIELDS:
            raise InvalidInputError("mode", f"{mode!r} is not a mode", "use 'set' or 'pairwise'")
        if on_error not in ("raise", "skip"):
            raise InvalidInputError(
                "on_error", f"{on_error!r} is not an option", "use 'raise' or 'skip'"
            )
        if max_candidates is not None and (
            not isinstance(max_candidates, int) or isinstance(max_candidates, bool)
        ):
            raise InvalidInputError(
                "max_candidates", f"{max_candidates!r} is not an int", "use e.g. 30, or None"
            )
        if max_candidates is not None and max_candidates < 2:
            raise InvalidInputError(
                "max_candidates", f"{max_candidates} is below 2", "use e.g. 30, or None"
            )
        if not isinstance(name, str) or not name:
            raise InvalidInputError("name", "is empty or not a string", "use e.g. 'llm'")
        self.mode: Mode = mode
        self.max_candidates = max_candidates
        self.name = name
        default = SET_TEMPLATE if mode == "set" else PAIR_TEMPLATE
        self.template = default if template is None else _checked_template(template, mode)
        self._calls = DetectorCalls(
            llm,
            LLMDetectorStats(),
            who=f"LLM conflict detector {name!r}",
            on_error=on_error,
            logger=logger,
            skipped="no conflicts from this prompt",
            fix=" (adapt chat models and LLMs to return the reply's text)",
        )

    @property
    def stats(self) -> LLMDetectorStats:
        """A snapshot of the counters (see :class:`LLMDetectorStats`)."""
        return self._calls.stats

    @property
    def llm(self) -> TextLLM:
        """The LLM callable this detector asks."""
        return self._calls.llm

    @property
    def on_error(self) -> OnError:
        """What a failed call does: ``"raise"`` or ``"skip"`` (see the class)."""
        return self._calls.on_error

    def find_conflicts(
        self, candidates: Sequence[Candidate], *, query: str | None = None
    ) -> list[Conflict]:
        pool = _checked(candidates, query)
        found: Pairs = set()
        for prompt, read in self._jobs(pool, query):
            answer = self._calls.ask(prompt)
            if answer is not None:
                found |= read(answer)
        return self._conflicts(found)

    async def afind_conflicts(
        self, candidates: Sequence[Candidate], *, query: str | None = None
    ) -> list[Conflict]:
        """:meth:`find_conflicts` for async callers: the same prompts, the callable awaited."""
        pool = _checked(candidates, query)
        found: Pairs = set()
        for prompt, read in self._jobs(pool, query):
            answer = await self._calls.aask(prompt)
            if answer is not None:
                found |= read(answer)
        return self._conflicts(found)

    def _jobs(self, pool: Sequence[Candidate], query: str | None) -> Iterator[Job]:
        if self.mode == "pairwise":
            yield from self._pair_jobs(pool, query)
        else:
            for window in self._windows(pool):
                yield self._window_job(pool, window, query)

    def _conflicts(self, found: Pairs) -> list[Conflict]:
        return [Conflict(older, newer, self.name, 1.0) for older, newer in sorted(found)]

    # -- set mode ------------------------------------------------------------------------------

    def _windows(self, pool: Sequence[Candidate]) -> Iterator[list[int]]:
        """Index lists, oldest first, one per prompt: per namespace, bounded by max_candidates."""
        groups: dict[str, list[tuple[datetime, int]]] = {}
        for index, candidate in enumerate(pool):
            if candidate.timestamp is not None:
                groups.setdefault(candidate.namespace, []).append((candidate.timestamp, index))
        for dated in groups.values():
            members = [index for _, index in sorted(dated)]
            limit = self.max_candidates
            if limit is None or len(members) <= limit:
                windows = [members]
            else:
                half = limit // 2
                blocks = [members[i : i + half] for i in range(0, len(members), half)]
                windows = [first + second for first, second in combinations(blocks, 2)]
                logger.debug(
                    "LLM conflict detector %r: %d candidates > max_candidates=%d, %d prompts",
                    self.name,
                    len(members),
                    limit,
                    len(windows),
                )
            for window in windows:
                if pool[window[0]].timestamp != pool[window[-1]].timestamp:
                    yield window  # at least two distinct times: something to judge

    def _window_job(self, pool: Sequence[Candidate], window: list[int], query: str | None) -> Job:
        labels = date_labels(pool, window)
        lines = [
            f"{number}. [{labels[index]}] {one_line(pool[index].text)}"
            for number, index in enumerate(window, start=1)
        ]
        prompt = self.template.format(
            statements="\n".join(lines), count=len(window), **query_fields(query)
        )
        return prompt, partial(self._read_window, pool, window)

    def _read_window(self, pool: Sequence[Candidate], window: list[int], answer: str) -> Pairs:
        payload = find_json(answer, has_conflict_list)
        if payload is None:
            self._malformed(answer, 'no JSON object with a "conflicts" list')
            return set()
        found, problems = read_pairs(payload["conflicts"], window, pool)
        if problems:
            self._calls.count(pairs_dropped=len(problems))
            logger.warning(
                "LLM conflict detector %r: dropped %d pair(s): %s",
                self.name,
                len(problems),
                "; ".join(problems),
            )
        return found

    # -- pairwise mode -------------------------------------------------------------------------

    def _pair_jobs(self, pool: Sequence[Candidate], query: str | None) -> Iterator[Job]:
        for older, newer in ordered_pairs(pool):
            labels = date_labels(pool, [older, newer])
            prompt = self.template.format(
                older=one_line(pool[older].text),
                newer=one_line(pool[newer].text),
                older_date=labels[older],
                newer_date=labels[newer],
                **query_fields(query),
            )
            yield prompt, partial(self._read_verdict, older, newer)

    def _read_verdict(self, older: int, newer: int, answer: str) -> Pairs:
        verdict = read_verdict(answer)
        if verdict is None:
            self._malformed(answer, 'neither yes/no nor {"conflict": true|false}')
        return {(older, newer)} if verdict else set()

    # -- counting ------------------------------------------------------------------------------

    def _malformed(self, answer: str, problem: str) -> None:
        self._calls.count(malformed=1)
        logger.warning(
            "LLM conflict detector %r: malformed answer (%s), read as no conflicts: %s",
            self.name,
            problem,
            snippet(answer),
        )


def _checked(candidates: Sequence[Candidate], query: str | None) -> tuple[Candidate, ...]:
    pool = tuple(candidates)
    for index, candidate in enumerate(pool):
        if not isinstance(candidate, Candidate):
            raise InvalidInputError(
                f"candidates[{index}]",
                f"is a {type(candidate).__name__}",
                "pass Candidate objects",
            )
    if query is not None and not isinstance(query, str):
        raise InvalidInputError("query", f"is a {type(query).__name__}", "pass a str or None")
    return pool


def _checked_template(template: object, mode: str) -> str:
    """The template, if it is a str.format template with the mode's required fields, no others."""
    required, optional = _FIELDS[mode]
    known = ", ".join("{" + f + "}" for f in (*required, *optional))
    if not isinstance(template, str):
        raise InvalidInputError(
            "template", f"is a {type(template).__name__}", "pass a str.format template"
        )
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise InvalidInputError(
            "template",
            f"is not a valid str.format template ({exc})",
            "write literal braces as {{ and }}",
        ) from exc
    used = set()
    for _, field, _, _ in parsed:
        if field is None:
            continue
        if field not in required and field not in optional:
            raise InvalidInputError(
                "template",
                f"uses the unknown field {{{field}}}",
                f"use only {known} (mode {mode!r}); write literal braces as {{{{ and }}}}",
            )
        used.add(field)
    for field in required:
        if field not in used:
            raise InvalidInputError(
                "template",
                f"has no {{{field}}} field (mode {mode!r})",
                f"put {{{field}}} where it belongs; the fields are {known}",
            )
    try:
        template.format(**_SAMPLE_VALUES)
    except (KeyError, IndexError, ValueError, AttributeError, TypeError) as exc:
        raise InvalidInputError(
            "template",
            f"cannot be filled ({type(exc).__name__}: {exc})",
            f"use plain fields such as {known}; write literal braces as {{{{ and }}}}",
        ) from exc
    return template


__all__ = ["PAIR_TEMPLATE", "SET_TEMPLATE", "LLMConflictDetector", "LLMDetectorStats"]
