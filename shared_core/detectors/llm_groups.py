"""Phi_T's conflicts from one LLM call per retrieved set (GC-Mem): the LLM groups chunks, the
rule resolves.

:class:`LLMGroupDetector` shows the LLM a query's retrieved chunks once, numbered, oldest first,
each with its valid date (and its speaker), and asks which chunks state the same attribute of
the same subject with different values; the answer is compact JSON, ``{"groups": [[1, 4], ...],
"unsure": [...]}`` (:data:`GROUPS_SCHEMA` constrains a model that supports it, e.g.
``LocalLLM(..., json_schema=GROUPS_SCHEMA)``). The model only proposes groups; what is dropped
is decided deterministically: within a group the newest chunk (``valid_from``) wins and the
strictly older ones are reported as conflicts for Phi_T, which removes them. A group is split by
namespace and speaker first (nothing closes across them), and one with a number out of range or
a single chunk is ignored, as are ``"unsure"`` groups: a stale chunk kept costs less than a
current one dropped. Equal valid times drop nothing (Phi_T's rule).

Groups are expressed as Phi_T's pairs (each older member, the group's newest), so the detector
is a :class:`~shared_core.phi_t.ConflictDetector` and plugs in wherever one does. This module
uses only the standard library.
"""

from __future__ import annotations

import logging
import string
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from shared_core.detectors.llm_answers import find_json, snippet
from shared_core.detectors.llm_caller import DetectorCalls, OnError
from shared_core.detectors.llm_prompts import date_labels, one_line, query_fields
from shared_core.errors import InvalidInputError
from shared_core.llm_calls import PromptCache, TextLLM, check_llm
from shared_core.phi_t import Candidate, Conflict

logger = logging.getLogger(__name__)

#: The prompt. Fields: ``{chunks}`` (required: one line per chunk, oldest first, numbered from
#: 1, ``"3. [2024-05-01] I moved to Lisbon."``, with ``speaker ana`` after the date when the
#: chunk has a speaker), ``{count}`` (how many), ``{query}`` and ``{query_block}`` (the query,
#: or empty; the default prompt leaves the query out, so one retrieved set is one cache entry).
#: Literal braces are written ``{{`` and ``}}``.
GROUP_TEMPLATE = """\
You are checking a memory for chunks that give different values of the same attribute.

The numbered chunks below are listed from oldest to newest, each with its date.

Chunks:
{chunks}

Group the chunks that state the same attribute of the same subject (where someone lives, \
who their manager is, a count, a title holder) with different values, so that only the \
newest of each group is still true. Chunks of different speakers, chunks about different \
things, chunks that only add detail and chunks that can all be true at once are never grouped.
Put a group under "unsure" if you are not sure.

Answer with JSON only, in exactly this form, using the chunk numbers:
{{"groups": [[1, 4], [2, 3]], "unsure": []}}
If no chunks belong together, answer {{"groups": [], "unsure": []}}.
"""

_GROUP_LIST: dict[str, Any] = {
    "type": "array",
    "items": {"type": "array", "items": {"type": "integer", "minimum": 1}, "minItems": 2},
}
GROUPS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"groups": _GROUP_LIST, "unsure": _GROUP_LIST},
    "required": ["groups", "unsure"],
    "additionalProperties": False,
}
"""The answer's JSON schema, for constrained decoding (``LocalLLM(json_schema=...)``)."""

_REQUIRED = ("chunks",)
_OPTIONAL = ("count", "query", "query_block")
_SAMPLE = {"chunks": "1. [2024-01-01] a", "count": 1, "query": "q", "query_block": "q\n"}

Groups = tuple[tuple[int, ...], ...]  # candidate indices, one tuple per usable group


@dataclass(frozen=True, slots=True)
class GroupDetectorStats:
    """Counters since the detector was built (a snapshot; see ``LLMGroupDetector.stats``).

    ``calls``: invocations of the LLM, failed ones included; ``cache_hits``: retrieved sets
    answered from the cache instead; ``errors``: calls that raised or returned a non-str;
    ``malformed``: answers without a ``{"groups": [...]}`` object (nothing dropped);
    ``groups_ignored``: groups inside a usable answer that were not lists of chunk numbers,
    named a number out of range, or held one chunk; ``unsure``: groups the LLM marked unsure;
    ``generated_tokens``: tokens the LLM generated for this detector, when it reports them
    (a ``stats.generated_tokens`` counter, as :class:`~shared_core.llms.LocalLLM` has; else
    ``None``).
    """

    calls: int = 0
    cache_hits: int = 0
    errors: int = 0
    malformed: int = 0
    groups_ignored: int = 0
    unsure: int = 0
    generated_tokens: int | None = None


class LLMGroupDetector:
    """Asks an LLM, once per retrieved set, which chunks give one attribute different values.

    ``llm`` is a :data:`~shared_core.llm_calls.TextLLM` (sync, async or both):
    :meth:`find_conflicts` calls its sync form, :meth:`afind_conflicts` awaits its async form;
    both send the same prompt and read it alike. Options (keyword only):

    - ``speaker_field`` (default ``"user_id"``): the metadata field naming who said a chunk.
      Chunks whose values differ (a missing value is a value of its own) are never grouped;
      ``None`` treats every chunk as one speaker's.
    - ``template``: the prompt (default :data:`GROUP_TEMPLATE`), checked when the detector is
      built (:class:`~shared_core.errors.InvalidInputError` names a missing or unknown field).
    - ``on_error``: when the LLM raises or returns a non-str, ``"raise"`` (default) raises a
      :class:`~shared_core.errors.DetectorError` from it; ``"skip"`` logs and counts it and
      drops nothing.
    - ``cache_size`` (default 256; 0 disables): an LRU cache from prompt to the groups read from
      a usable answer, so a retrieved set asked again costs no call. Failed calls and
      malformed answers are not cached.
    - ``name``: labels this detector's verdicts (default ``"llm-groups"``).

    Only dated chunks are shown (an undated one can neither be dropped nor drop another), and
    no call is made when no two of them share a namespace and a speaker at different times.
    The answer is read defensively: the first JSON object with a ``"groups"`` list, whole, in a
    code fence or in prose; an answer without one drops nothing, is counted as malformed and
    logged as a warning. Every conflict has ``score=1.0``. Counters and the cache are guarded
    by a lock, so one detector may serve concurrent retrievers (the LLM must then be safe to
    call concurrently, and ``generated_tokens`` may then include a concurrent caller's).
    """

    def __init__(
        self,
        llm: TextLLM,
        *,
        speaker_field: str | None = "user_id",
        template: str | None = None,
        on_error: OnError = "raise",
        cache_size: int = 256,
        name: str = "llm-groups",
    ) -> None:
        check_llm(llm)
        if speaker_field is not None and (not isinstance(speaker_field, str) or not speaker_field):
            raise InvalidInputError(
                "speaker_field", f"is {speaker_field!r}", "name a metadata field, or pass None"
            )
        if on_error not in ("raise", "skip"):
            raise InvalidInputError(
                "on_error", f"{on_error!r} is not an option", "use 'raise' or 'skip'"
            )
        if isinstance(cache_size, bool) or not isinstance(cache_size, int) or cache_size < 0:
            raise InvalidInputError(
                "cache_size", f"is {cache_size!r}", "use an int >= 0 (0 disables the cache)"
            )
        if not isinstance(name, str) or not name:
            raise InvalidInputError("name", "is empty or not a string", "use e.g. 'llm-groups'")
        self.speaker_field = speaker_field
        self.template = GROUP_TEMPLATE if template is None else _checked_template(template)
        self.cache_size = cache_size
        self.name = name
        self._cache: PromptCache[Groups] = PromptCache(cache_size)
        self._calls = DetectorCalls(
            llm,
            GroupDetectorStats(),
            who=f"LLM group detector {name!r}",
            on_error=on_error,
            logger=logger,
            skipped="nothing dropped",
            count_tokens=True,
        )

    @property
    def stats(self) -> GroupDetectorStats:
        """A snapshot of the counters (see :class:`GroupDetectorStats`)."""
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
        pool, shown, prompt, numbered = self._start(candidates, query)
        if numbered is None:
            numbered = self._read(prompt, self._calls.ask(prompt), len(shown))
        return self._conflicts(pool, shown, numbered)

    async def afind_conflicts(
        self, candidates: Sequence[Candidate], *, query: str | None = None
    ) -> list[Conflict]:
        """:meth:`find_conflicts` for async callers: the same prompt, the LLM awaited."""
        pool, shown, prompt, numbered = self._start(candidates, query)
        if numbered is None:
            numbered = self._read(prompt, await self._calls.aask(prompt), len(shown))
        return self._conflicts(pool, shown, numbered)

    def _start(
        self, candidates: Sequence[Candidate], query: str | None
    ) -> tuple[tuple[Candidate, ...], list[int], str, Groups | None]:
        """The pool, the chunks shown, the prompt, and the groups when no call is needed
        (none when nothing could be dropped, or the cached ones); None means ask the LLM."""
        pool = _checked(candidates, query)
        shown = self._shown(pool)
        if not shown:
            return pool, shown, "", ()
        prompt = self._prompt(pool, shown, query)
        numbered = self._cache.get(prompt)
        if numbered is not None:
            self._calls.count(cache_hits=1)
        return pool, shown, prompt, numbered

    # -- the prompt ------------------------------------------------------------------------

    def _speaker(self, candidate: Candidate) -> str | None:
        if self.speaker_field is None:
            return None
        value = candidate.metadata.get(self.speaker_field)
        return None if value is None else str(value)

    def _shown(self, pool: Sequence[Candidate]) -> list[int]:
        """The dated candidates, oldest first; none when no group could drop anything."""
        dated = sorted((c.timestamp, i) for i, c in enumerate(pool) if c.timestamp is not None)
        times: dict[tuple[str, str | None], set[Any]] = {}
        for moment, index in dated:
            times.setdefault((pool[index].namespace, self._speaker(pool[index])), set()).add(moment)
        if all(len(moments) < 2 for moments in times.values()):
            return []  # nothing strictly newer than anything it could be grouped with
        return [index for _, index in dated]

    def _prompt(self, pool: Sequence[Candidate], shown: list[int], query: str | None) -> str:
        labels = date_labels(pool, shown)
        lines = []
        for number, index in enumerate(shown, start=1):
            speaker = self._speaker(pool[index])
            said = "" if speaker is None else f", speaker {one_line(speaker)}"
            lines.append(f"{number}. [{labels[index]}{said}] {one_line(pool[index].text)}")
        return self.template.format(
            chunks="\n".join(lines), count=len(shown), **query_fields(query)
        )

    # -- the answer and the rule ---------------------------------------------------------------

    def _read(self, prompt: str, answer: str | None, count: int) -> Groups:
        """The usable groups as 1-based chunk numbers (cached); none for a failed call (answer
        None) or a malformed answer (neither is cached)."""
        if answer is None:
            return ()
        payload = find_json(answer, _has_groups)
        if payload is None:
            self._calls.count(malformed=1)
            logger.warning(
                'LLM group detector %r: malformed answer (no JSON object with a "groups" '
                "list), nothing dropped: %s",
                self.name,
                snippet(answer),
            )
            return ()
        groups: list[tuple[int, ...]] = []
        problems: list[str] = []
        for item in payload["groups"]:
            group = _numbers(item)
            if group is None:
                problems.append(f"{snippet(item)} is not a list of chunk numbers")
            elif any(not 1 <= n <= count for n in group):
                problems.append(f"{snippet(item)} names a chunk outside 1..{count}")
            elif len(group) < 2:
                problems.append(f"{snippet(item)} holds one chunk")
            else:
                groups.append(group)
        unsure = payload.get("unsure")
        self._calls.count(
            groups_ignored=len(problems), unsure=len(unsure) if isinstance(unsure, list) else 0
        )
        if problems:
            logger.warning(
                "LLM group detector %r: ignored %d group(s): %s",
                self.name,
                len(problems),
                "; ".join(problems),
            )
        numbered = tuple(groups)
        self._cache.put(prompt, numbered)
        return numbered

    def _conflicts(
        self, pool: Sequence[Candidate], shown: list[int], numbered: Groups
    ) -> list[Conflict]:
        found: set[tuple[int, int]] = set()
        for group in numbered:
            parts: dict[tuple[str, str | None], list[int]] = {}
            for number in group:
                index = shown[number - 1]
                key = (pool[index].namespace, self._speaker(pool[index]))
                parts.setdefault(key, []).append(index)
            for members in parts.values():
                found |= newest_wins(pool, members)
        return [Conflict(older, newer, self.name, 1.0) for older, newer in sorted(found)]


def newest_wins(pool: Sequence[Candidate], members: Sequence[int]) -> set[tuple[int, int]]:
    """(older, newest) index pairs of one group of one namespace and speaker: every member
    strictly older than the group's newest valid time, paired with the first newest member.
    Members at the newest time, and undated members, are never dropped."""
    dated = [i for i in dict.fromkeys(members) if pool[i].timestamp is not None]
    if len(dated) < 2:
        return set()
    newest = max(dated, key=lambda i: (pool[i].timestamp, -i))
    return {(i, newest) for i in dated if pool[newest].is_newer_than(pool[i])}


def _has_groups(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("groups"), list)


def _numbers(item: Any) -> tuple[int, ...] | None:
    """A group's distinct chunk numbers in order, or None unless it is a list of ints."""
    if not isinstance(item, list):
        return None
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in item):
        return None
    return tuple(dict.fromkeys(item))


def _checked(candidates: Sequence[Candidate], query: str | None) -> tuple[Candidate, ...]:
    pool = tuple(candidates)
    for index, candidate in enumerate(pool):
        if not isinstance(candidate, Candidate):
            raise InvalidInputError(
                f"candidates[{index}]", f"is a {type(candidate).__name__}", "pass Candidate objects"
            )
    if query is not None and not isinstance(query, str):
        raise InvalidInputError("query", f"is a {type(query).__name__}", "pass a str or None")
    return pool


def _checked_template(template: object) -> str:
    """The template, if it is a str.format template with {chunks} and only known fields."""
    known = ", ".join("{" + f + "}" for f in (*_REQUIRED, *_OPTIONAL))
    if not isinstance(template, str):
        raise InvalidInputError(
            "template", f"is a {type(template).__name__}", "pass a str.format template"
        )
    try:
        used = {f for _, f, _, _ in string.Formatter().parse(template) if f is not None}
        template.format(**_SAMPLE)
    except (KeyError, IndexError, ValueError, AttributeError, TypeError) as exc:
        raise InvalidInputError(
            "template",
            f"cannot be filled ({type(exc).__name__}: {exc})",
            f"use only the fields {known}; write literal braces as {{{{ and }}}}",
        ) from exc
    if "chunks" not in used:
        raise InvalidInputError(
            "template", "has no {chunks} field", f"put {{chunks}} where the chunks go ({known})"
        )
    return template


__all__ = [
    "GROUPS_SCHEMA",
    "GROUP_TEMPLATE",
    "GroupDetectorStats",
    "LLMGroupDetector",
    "newest_wins",
]
