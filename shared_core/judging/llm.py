"""The LLM judge: any text-in/text-out LLM turns prose into keys, many statements per call,
shown what the memory already knows; deterministic rules decide what it proposed.

:class:`LLMExtractor` implements the write-time judging port (:meth:`~LLMExtractor.judge`,
:meth:`~LLMExtractor.ajudge`). For each prose statement of a batch it shows the model the
current keyed facts of the statement's namespace nearest to it in meaning, within the
statement's speaker scope (:mod:`shared_core.judging.known_keys`), plus the keys it proposed
earlier in the batch, so a new value of a known attribute reuses its key. The prompt and answer
format is :mod:`shared_core.judging.llm_format`.

The model proposes; these rules decide, in statement order:

- first person (and the speaker's own name) is the speaker
  (:func:`~shared_core.judging.base.scoped_subject`); any other subject is scoped to them;
- a reference to a known key keeps that key, its cardinality the ledger's; a number the prompt
  did not show is dropped, never guessed;
- a new relation is normalised, then mapped to the subject's nearest existing relation
  (:mod:`shared_core.judging.relations`); a relation new to the memory gets the cardinality the
  model proposed, MANY unless it said ``"one"`` (two different proposals: MANY), returned in
  ``Judgement.cardinalities``;
- a new relation whose words say it adds up (``allergic to``, ``speaks``: the
  ``many_relation_words`` of ``cardinality_words.json``) is MANY whatever the model says, and a
  statement that says it adds a value ("also", "too": ``additive_cues``) never gives a
  single-valued key a new value (the fact is dropped, the statement stays prose);
- a subject that is the current value of a known key, with that key's relation, is read as
  that key's subject ("Tom left, Priya is my manager now." proposed as ``Tom | manager |
  Priya`` when the speaker's manager is Tom is the speaker's manager);
- the object must be written in the statement, not only inside a question, else the fact is
  dropped (a small model invents "4" or "true"; what a question asks about is no fact);
- valid time: the caller's (the statement's ``valid_from``, or its ``valid_from`` metadata) is
  the default; a date the model proposes is used only when the statement states it
  (:func:`~shared_core.extractors.stated_dates.states_date`) and the prompt does not show it.

Nothing is ever deleted: every statement the model cannot key stays prose, and what went wrong
is in ``Judgement.extractions`` (``failed``, ``invalid``, ``dropped`` or ``empty``).
This module uses only the standard library.
"""

from __future__ import annotations

import asyncio
import logging
import re
import string
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from types import MappingProxyType
from typing import Any, Literal

from shared_core.errors import ExtractorError, InvalidInputError, NeedsAsyncError
from shared_core.extractors.base import (
    VALID_FROM_SOURCE,
    ExtractedFact,
    Extraction,
    ProblemKind,
)
from shared_core.extractors.metadata import to_datetime
from shared_core.extractors.stated_dates import dates_in, states_date
from shared_core.facts import (
    DEFAULT_NAMESPACE,
    Cardinality,
    Fact,
    ObjectValue,
    key_subject,
    normalize_relation,
    normalize_text,
)
from shared_core.judging.adding import adds_up, says_it_adds
from shared_core.judging.base import (
    FIRST_PERSON,
    Judgement,
    WriteBatch,
    scoped_subject,
    speaker_subject,
)
from shared_core.judging.known_keys import (
    KnownKey,
    nearest_known,
    shown_subject,
    subject_relations,
)
from shared_core.judging.llm_format import (
    ANSWER_SCHEMA,
    DEFAULT_TEMPLATE,
    KnownRow,
    Proposal,
    checked_template,
    find_facts,
    read,
    render,
    snippet,
)
from shared_core.judging.relations import RELATION_THRESHOLD, RelationNames
from shared_core.llm_calls import (
    PromptCache,
    TextLLM,
    aask,
    ask,
    check_llm,
    generated_tokens,
)

logger = logging.getLogger(__name__)

OnError = Literal["raise", "prose"]

_QUESTION = re.compile(r"[^.!?]*\?+")  # a sentence that asks


@dataclass(frozen=True, slots=True)
class LLMJudgeStats:
    """What an :class:`LLMExtractor` has done since it was built: LLM ``calls``, prompts
    answered from its cache (``cache_hits``), prose ``statements`` judged, and the tokens the
    LLM generated for it when the LLM reports them (its ``stats.generated_tokens``, as
    :class:`~shared_core.llms.LocalLLM` does; None when it does not)."""

    calls: int = 0
    cache_hits: int = 0
    statements: int = 0
    generated_tokens: int | None = None

    @property
    def calls_per_statement(self) -> float:
        """LLM calls per statement judged (0 before any)."""
        return self.calls / self.statements if self.statements else 0.0


@dataclass(frozen=True, slots=True)
class _Statement:
    """One prose statement to key: its place in the batch, text, metadata without the caller's
    valid_from field, the caller's valid time, namespace, speaker and the memory's keys near it."""

    position: int
    text: str
    metadata: Mapping[str, Any]
    caller: datetime | None
    namespace: str
    speaker: str | None
    known: tuple[KnownKey, ...] = ()
    dated_by_metadata: bool = False


@dataclass(frozen=True, slots=True)
class _Chunk:
    statements: tuple[_Statement, ...]
    known: tuple[KnownKey, ...]
    prompt: str


@dataclass(frozen=True, slots=True)
class _Memory:
    """What a judge reads of the memory (None when extracting one text without one)."""

    batch: WriteBatch
    relations: dict[tuple[str, str], tuple[str, ...]]


class LLMExtractor:
    """Keys prose with an LLM: a batched, key-aware write-time judge (see the module doc).

    ``llm`` is any callable taking a prompt and returning the reply's text, or an async one, or
    both: :meth:`judge` and :meth:`extract` call the sync form, :meth:`ajudge` and
    :meth:`aextract` await the async form (a sync callable then runs in a worker thread).
    Options (keyword only):

    - ``batch_size`` (default 8): statements per LLM call (statements of one namespace and
      speaker share a call).
    - ``max_concurrency`` (default 4): calls asked together; each such wave of calls is shown
      the keys the earlier waves proposed. :meth:`judge` asks a wave's calls one after the
      other, :meth:`ajudge` at once, with the same prompts, so both decide the same.
    - ``known_keys`` (default 5): known keys shown per statement.
    - ``cache_size`` (default 256; 0: none): answers kept per prompt (LRU); a prompt asked
      again is answered from the cache, without a call.
    - ``relation_threshold`` (default :data:`~shared_core.judging.relations.RELATION_THRESHOLD`,
      chosen for the default embedder): the cosine at which a reworded relation joins the
      subject's existing one.
    - ``template``: the prompt, a ``str.format`` template with ``{statements}`` and optionally
      ``{known}`` and ``{max_facts}``
      (see :data:`~shared_core.judging.llm_format.DEFAULT_TEMPLATE`).
    - ``max_facts`` (default 20): facts per statement; a statement given more is invalid.
    - ``on_error``: when the callable raises (or returns a non-str), ``"raise"`` (default)
      raises :class:`~shared_core.errors.ExtractorError` with the original as ``__cause__``;
      ``"prose"`` keeps the statements as prose, each with the failure as its ``problem``.
    - ``max_answer_chars`` (default 100,000): a longer answer is rejected unread.
    - ``valid_from_field`` (default ``"valid_from"``, ``None`` for none): the metadata field
      holding the caller's valid time of a text (an aware datetime, an ISO-8601 string with an
      offset, or epoch seconds). It dates the text's facts and its prose, and is removed from
      their metadata.

    :data:`~shared_core.judging.llm_format.ANSWER_SCHEMA` constrains a model's decoding to the
    answer format (``LocalLLM(json_schema=ANSWER_SCHEMA)``).
    """

    def __init__(
        self,
        llm: TextLLM,
        *,
        batch_size: int = 8,
        max_concurrency: int = 4,
        known_keys: int = 5,
        cache_size: int = 256,
        relation_threshold: float = RELATION_THRESHOLD,
        template: str = DEFAULT_TEMPLATE,
        max_facts: int = 20,
        on_error: OnError = "raise",
        max_answer_chars: int = 100_000,
        valid_from_field: str | None = "valid_from",
    ) -> None:
        check_llm(llm)
        for field, value in (
            ("batch_size", batch_size),
            ("max_concurrency", max_concurrency),
            ("known_keys", known_keys),
            ("max_facts", max_facts),
            ("max_answer_chars", max_answer_chars),
        ):
            _require_int(field, value, minimum=1)
        _require_int("cache_size", cache_size, minimum=0)
        if (
            isinstance(relation_threshold, bool)
            or not isinstance(relation_threshold, int | float)
            or not -1.0 <= relation_threshold <= 1.0
        ):
            raise InvalidInputError(
                "relation_threshold", f"is {relation_threshold!r}", "pass a cosine in [-1, 1]"
            )
        if on_error not in ("raise", "prose"):
            raise InvalidInputError(
                "on_error", f"{on_error!r} is not an option", "use 'raise' or 'prose'"
            )
        if valid_from_field is not None and (
            not isinstance(valid_from_field, str) or not valid_from_field
        ):
            raise InvalidInputError(
                "valid_from_field", f"is {valid_from_field!r}", "name a metadata field, or None"
            )
        self.llm = llm
        self.batch_size = batch_size
        self.max_concurrency = max_concurrency
        self.known_keys = known_keys
        self.cache_size = cache_size
        self.relation_threshold = float(relation_threshold)
        self.template = checked_template(template)
        self.max_facts = max_facts
        self.on_error: OnError = on_error
        self.max_answer_chars = max_answer_chars
        self.valid_from_field = valid_from_field
        literal = "".join(part for part, _, _, _ in string.Formatter().parse(self.template))
        self._prompt_dates = dates_in(literal)  # never taken as a statement's date
        self._cache: PromptCache[str] = PromptCache(cache_size)
        self._lock = threading.Lock()
        self._stats = LLMJudgeStats()

    @property
    def stats(self) -> LLMJudgeStats:
        """A snapshot of what this judge has done (see :class:`LLMJudgeStats`)."""
        return self._stats

    # ------------------------------------------------------------------ the judging port

    def judge(self, batch: WriteBatch) -> Judgement:
        """Keys the batch's prose statements (see the class and module docs)."""
        statements, memory = self._statements(batch)
        tokens = generated_tokens(self.llm)
        outcomes: dict[int, Extraction] = {}
        proposed: dict[tuple[str, str | None], list[KnownKey]] = {}
        cards: dict[str, Cardinality] = {}
        for wave in self._waves(statements):
            chunks = [self._chunk(group, proposed) for group in wave]
            answers = [self._ask(chunk.prompt) for chunk in chunks]
            for chunk, answer in zip(chunks, answers, strict=True):
                outcomes.update(self._resolve(chunk, answer, memory, proposed, cards))
        self._count(len(statements), tokens)
        return _judgement(batch, statements, outcomes, cards)

    async def ajudge(self, batch: WriteBatch) -> Judgement:
        """:meth:`judge` for async callers: the calls of a wave awaited together."""
        statements, memory = self._statements(batch)
        tokens = generated_tokens(self.llm)
        outcomes: dict[int, Extraction] = {}
        proposed: dict[tuple[str, str | None], list[KnownKey]] = {}
        cards: dict[str, Cardinality] = {}
        for wave in self._waves(statements):
            chunks = [self._chunk(group, proposed) for group in wave]
            answers = await asyncio.gather(*(self._aask(chunk.prompt) for chunk in chunks))
            for chunk, answer in zip(chunks, answers, strict=True):
                outcomes.update(self._resolve(chunk, answer, memory, proposed, cards))
        self._count(len(statements), tokens)
        return _judgement(batch, statements, outcomes, cards)

    # ------------------------------------------------------------------ one text, no memory

    def extract(self, text: str, metadata: Mapping[str, Any]) -> Extraction:
        """One text without a memory: :meth:`judge` of a one-statement batch that knows no keys
        (speaker none, the default namespace); facts carry the caller's valid time."""
        statement = self._one(text, metadata)
        if statement is None:
            return Extraction()
        tokens = generated_tokens(self.llm)
        chunk = self._chunk([statement], {})
        answer = self._ask(chunk.prompt, instead="aextract")
        outcome = self._resolve(chunk, answer, None, {}, {})[0]
        self._count(1, tokens)
        return _dated(outcome, statement)

    async def aextract(self, text: str, metadata: Mapping[str, Any]) -> Extraction:
        """:meth:`extract` for async callers: the same prompt, the callable awaited."""
        statement = self._one(text, metadata)
        if statement is None:
            return Extraction()
        tokens = generated_tokens(self.llm)
        chunk = self._chunk([statement], {})
        outcome = self._resolve(chunk, await self._aask(chunk.prompt), None, {}, {})[0]
        self._count(1, tokens)
        return _dated(outcome, statement)

    # ------------------------------------------------------------------ planning

    def _statements(self, batch: WriteBatch) -> tuple[list[_Statement], _Memory]:
        """The batch's prose statements to key, each with the memory's keys near it."""
        out = []
        for position in batch.prose:
            fact = batch.statements[position]
            if not fact.text.strip():
                continue
            speaker = batch.speakers[position]
            caller, metadata = self._caller_time(fact.metadata)
            vector = batch.vectors.get(fact.text)
            if vector is None:
                vector = batch.embed([fact.text])[0]
            known = nearest_known(
                batch, vector, namespace=fact.namespace, speaker=speaker, limit=self.known_keys
            )
            out.append(
                _Statement(
                    position=position,
                    text=fact.text,
                    metadata=metadata,
                    caller=caller if caller is not None else fact.valid_from,
                    namespace=fact.namespace,
                    speaker=speaker,
                    known=tuple(known),
                    dated_by_metadata=caller is not None,
                )
            )
        return out, _Memory(batch, {})

    def _one(self, text: str, metadata: Mapping[str, Any]) -> _Statement | None:
        if not isinstance(text, str):
            raise InvalidInputError("text", f"is a {type(text).__name__}", "pass a str")
        if not isinstance(metadata, Mapping):
            raise InvalidInputError(
                "metadata", f"expected a mapping, got {type(metadata).__name__}", "pass a dict"
            )
        caller, rest = self._caller_time(metadata)
        if not text.strip():
            return None
        return _Statement(0, text, rest, caller, DEFAULT_NAMESPACE, None)

    def _caller_time(
        self, metadata: Mapping[str, Any]
    ) -> tuple[datetime | None, Mapping[str, Any]]:
        """The caller's valid_from in ``metadata`` (or None) and the metadata without it."""
        field = self.valid_from_field
        if field is None or metadata.get(field) is None:
            return None, MappingProxyType(dict(metadata))
        when = to_datetime(metadata[field], f"metadata[{field!r}]")
        rest = MappingProxyType({key: value for key, value in metadata.items() if key != field})
        return when, rest

    def _waves(self, statements: Sequence[_Statement]) -> list[list[list[_Statement]]]:
        """The statements in prompts (one namespace and speaker each, ``batch_size`` at most),
        the prompts in waves of ``max_concurrency``."""
        groups: dict[tuple[str, str | None], list[_Statement]] = {}
        for statement in statements:
            groups.setdefault((statement.namespace, statement.speaker), []).append(statement)
        chunks = [
            group[start : start + self.batch_size]
            for group in groups.values()
            for start in range(0, len(group), self.batch_size)
        ]
        step = self.max_concurrency
        return [chunks[start : start + step] for start in range(0, len(chunks), step)]

    def _chunk(
        self,
        statements: Sequence[_Statement],
        proposed: Mapping[tuple[str, str | None], list[KnownKey]],
    ) -> _Chunk:
        """A prompt's statements, the keys it shows (the memory's near them, then the batch's
        earlier proposals of the same scope, at most ``2 * batch_size`` of them), its text."""
        first = statements[0]
        earlier = proposed.get((first.namespace, first.speaker), [])[-2 * self.batch_size :]
        known: dict[tuple[str, str], KnownKey] = {}
        for key in [k for s in statements for k in s.known] + earlier:
            found = known.get((key.subject, key.relation))
            if found is None:
                known[(key.subject, key.relation)] = key
            else:
                objects = tuple(dict.fromkeys(found.objects + key.objects))
                known[(key.subject, key.relation)] = replace(found, objects=objects)
        keys = tuple(known.values())
        rows = [
            KnownRow(
                shown_subject(k.subject, first.speaker),
                k.relation,
                k.cardinality is Cardinality.MANY,
            )
            for k in keys
        ]
        prompt = render(self.template, [s.text for s in statements], rows, self.max_facts)
        return _Chunk(tuple(statements), keys, prompt)

    # ------------------------------------------------------------------ asking

    def _ask(self, prompt: str, *, instead: str = "ajudge") -> object:
        cached = self._cached(prompt)
        if cached is not None:
            return cached
        try:
            answer = ask(self.llm, prompt, who="LLM extractor", instead=instead)
        except NeedsAsyncError:
            raise  # a misuse of the sync path, not a failed call: never kept as prose
        except Exception as exc:
            return self._failure(exc)
        return self._answered(prompt, answer)

    async def _aask(self, prompt: str) -> object:
        cached = self._cached(prompt)
        if cached is not None:
            return cached
        try:
            answer = await aask(self.llm, prompt)
        except Exception as exc:
            return self._failure(exc)
        return self._answered(prompt, answer)

    def _cached(self, prompt: str) -> str | None:
        answer = self._cache.get(prompt)
        if answer is not None:
            with self._lock:
                self._stats = replace(self._stats, cache_hits=self._stats.cache_hits + 1)
        return answer

    def _answered(self, prompt: str, answer: object) -> object:
        with self._lock:
            self._stats = replace(self._stats, calls=self._stats.calls + 1)
        if isinstance(answer, str):
            self._cache.put(prompt, answer)
        return answer

    def _failure(self, exc: Exception) -> _Failure:
        with self._lock:
            self._stats = replace(self._stats, calls=self._stats.calls + 1)
        return _Failure(f"raised {type(exc).__name__}: {exc}", exc)

    def _count(self, statements: int, before: int | None) -> None:
        after = generated_tokens(self.llm)
        with self._lock:
            tokens = self._stats.generated_tokens
            if before is not None and after is not None:
                tokens = (tokens or 0) + after - before
            self._stats = replace(
                self._stats, statements=self._stats.statements + statements, generated_tokens=tokens
            )

    # ------------------------------------------------------------------ deciding

    def _resolve(
        self,
        chunk: _Chunk,
        answer: object,
        memory: _Memory | None,
        proposed: dict[tuple[str, str | None], list[KnownKey]],
        cards: dict[str, Cardinality],
    ) -> dict[int, Extraction]:
        """Per statement of ``chunk``, what the rules keep of ``answer`` (module doc)."""
        problem = self._unreadable(answer)
        if problem is not None:
            return {s.position: problem for s in chunk.statements}
        assert isinstance(answer, str)  # _unreadable checked it
        texts = [s.text for s in chunk.statements]
        found = read(answer, texts)
        if found.problem is not None:
            logger.debug("LLM extractor: %s", found.problem)
            invalid = Extraction(problem=found.problem, problem_kind="invalid")
            return {s.position: invalid for s in chunk.statements}
        names = RelationNames(
            memory.batch.embed if memory is not None else None, threshold=self.relation_threshold
        )
        placed = _placed_by_object(found.proposals, [normalize_text(t) for t in texts])
        out = {}
        for statement, proposals, shape in zip(
            chunk.statements, placed, found.problems, strict=True
        ):
            if len(proposals) > self.max_facts:
                out[statement.position] = Extraction(
                    problem=f"the answer gives {len(proposals)} facts for one statement, "
                    f"over max_facts={self.max_facts}",
                    problem_kind="invalid",
                )
                continue
            decided = _Decider(self, chunk, statement, memory, names, proposed, cards)
            out[statement.position] = decided.extraction(proposals, shape)
        return out

    def _unreadable(self, answer: object) -> Extraction | None:
        """Why ``answer`` cannot be read at all (a failed call, a non-str, too long), or None."""
        if isinstance(answer, _Failure):
            message = f"LLM extractor: the llm callable {answer.problem}"
            if self.on_error == "raise":
                raise ExtractorError(message) from answer.cause
            logger.debug("%s; the text is kept as prose (on_error='prose')", message)
            return Extraction(problem=message, problem_kind="failed")
        if not isinstance(answer, str):
            message = (
                f"LLM extractor: the llm callable returned a {type(answer).__name__}, not a str "
                "(adapt chat models and LLMs to return the reply's text)"
            )
            if self.on_error == "raise":
                raise ExtractorError(message)
            return Extraction(problem=message, problem_kind="failed")
        if len(answer) > self.max_answer_chars:
            return Extraction(
                problem=f"the answer is {len(answer):,} characters long, over "
                f"max_answer_chars={self.max_answer_chars:,}",
                problem_kind="invalid",
            )
        return None

    def stated_date(self, when: datetime, sentence: str) -> bool:
        """Whether a proposed date may date a fact: its sentence states it, the prompt does not."""
        return when.date() not in self._prompt_dates and states_date(when, sentence)


@dataclass(frozen=True, slots=True)
class _Failure:
    problem: str
    cause: Exception


class _Decider:
    """Applies the rules to one statement's proposals (one use)."""

    def __init__(
        self,
        judge: LLMExtractor,
        chunk: _Chunk,
        statement: _Statement,
        memory: _Memory | None,
        names: RelationNames,
        proposed: dict[tuple[str, str | None], list[KnownKey]],
        cards: dict[str, Cardinality],
    ) -> None:
        self.judge = judge
        self.chunk = chunk
        self.statement = statement
        self.memory = memory
        self.names = names
        self.proposed = proposed.setdefault((statement.namespace, statement.speaker), [])
        self.cards = cards
        self.stated_text = normalize_text(statement.text)

    def extraction(self, proposals: Sequence[Proposal], shape: Sequence[str]) -> Extraction:
        facts: dict[tuple[Any, ...], ExtractedFact] = {}
        dropped: list[str] = []
        refused = 0
        for number, proposal in enumerate(proposals, start=1):
            decided = self._fact(proposal)
            if isinstance(decided, str):
                dropped.append(f"fact {number}: {decided}")
                continue
            fact, was_refused = decided
            refused += was_refused
            facts.setdefault(_identity(fact), fact)
        problems = [*shape, *dropped]
        kind: ProblemKind | None
        if facts:
            kind = "dropped" if problems else None
        elif dropped:
            kind = "dropped"
        elif shape:
            kind = "invalid"
        else:
            kind = "empty"
        problem = None
        if problems:
            given = len(proposals) + len(shape)
            problem = f"dropped {len(problems)} of {given} facts: {'; '.join(problems)}"
            if kind == "invalid":
                problem = f"no valid fact in the answer: {'; '.join(problems)}"
            logger.debug("LLM extractor: %s", problem)
        return Extraction(
            facts=tuple(facts.values()), problem=problem, problem_kind=kind, refused_dates=refused
        )

    def _fact(self, proposal: Proposal) -> tuple[ExtractedFact, bool] | str:
        statement = self.statement
        if not _object_stated(proposal.object, self.stated_text):
            return f"object {snippet(proposal.object)} is not written in the statement"
        if proposal.known is not None:
            if not 0 <= proposal.known < len(self.chunk.known):
                number = proposal.known + 1
                return f"known key number {number} is not in the prompt (not guessed)"
            key = self.chunk.known[proposal.known]
            subject, relation, cardinality = key.subject, key.relation, key.cardinality
        else:
            assert proposal.subject is not None
            assert proposal.relation is not None
            held = self._value_of_known(proposal.subject, proposal.relation)
            if held is not None:
                subject, relation, cardinality = held.subject, held.relation, held.cardinality
            else:
                subject = self._subject(proposal.subject)
                relation, cardinality = self._relation(subject, proposal.relation, proposal.card)
        if cardinality is Cardinality.ONE and self._adds_to(subject, relation, proposal.object):
            return (
                f"{snippet(proposal.object)} is added to single-valued "
                f"{subject} | {relation}, not a new value (the statement says it adds one)"
            )
        self._propose(subject, relation, proposal.object, cardinality)
        subject, relation = _displayed(proposal, subject, relation)
        text = _sentence(proposal.sentence, statement.text) or statement.text
        valid_from, refused = proposal.valid_from, False
        if valid_from is not None and not self.judge.stated_date(valid_from, text):
            valid_from, refused = None, True
        fact = ExtractedFact(
            text=text,
            subject=subject,
            relation=relation,
            object=proposal.object,
            valid_from=valid_from,
            metadata=statement.metadata,
            valid_from_source="statement" if valid_from is not None else "caller",
        )
        return fact, refused

    def _subject(self, proposed: str) -> str:
        """The keyed, speaker-scoped subject: first person, or the speaker's own name, is the
        speaker; any other subject is scoped to them."""
        speaker = self.statement.speaker
        if proposed in FIRST_PERSON or (speaker is not None and proposed == key_subject(speaker)):
            return speaker_subject(speaker)
        return scoped_subject(proposed, speaker)

    def _relation(self, subject: str, relation: str, card: str | None) -> tuple[str, Cardinality]:
        """The canonical relation and its cardinality (module doc)."""
        batch_relations = tuple(k.relation for k in self.proposed if k.subject == subject) + tuple(
            k.relation for k in self.chunk.known if k.subject == subject
        )
        stored = self._stored_relations(subject)
        canonical = self.names.canonical(relation, tuple(dict.fromkeys(stored + batch_relations)))
        if canonical in stored and self.memory is not None:
            return canonical, self.memory.batch.ledger.cardinality(canonical)
        for key in self.chunk.known:
            if key.relation == canonical:
                return canonical, key.cardinality
        cardinality = Cardinality.ONE if card == "one" else Cardinality.MANY
        if adds_up(canonical):
            cardinality = Cardinality.MANY
        if self.cards.get(canonical, cardinality) is not cardinality:
            cardinality = Cardinality.MANY  # two proposals disagree: unsure
        self.cards[canonical] = cardinality
        return canonical, cardinality

    def _known(self) -> list[KnownKey]:
        """The keys this statement's prompt showed and the batch proposed so far."""
        return [*self.chunk.known, *self.proposed]

    def _value_of_known(self, proposed: str, relation: str) -> KnownKey | None:
        """The known key of the speaker's scope whose current value ``proposed`` names, with
        the same relation (after canonicalisation), if exactly one is."""
        named = normalize_text(proposed)
        found = {
            (key.subject, key.relation): key
            for key in self._known()
            if any(normalize_text(str(o)) == named for o in key.objects)
            and self.names.canonical(relation, (key.relation,)) == key.relation
        }
        return next(iter(found.values())) if len(found) == 1 else None

    def _adds_to(self, subject: str, relation: str, value: ObjectValue) -> bool:
        """Whether the statement says it adds ``value`` to a key holding another value."""
        if not says_it_adds(self.statement.text):
            return False
        shown = normalize_text(str(value))
        return any(
            key.subject == subject
            and key.relation == relation
            and any(normalize_text(str(o)) != shown for o in key.objects)
            for key in self._known()
        )

    def _stored_relations(self, subject: str) -> tuple[str, ...]:
        if self.memory is None:
            return ()
        cache = self.memory.relations
        key = (self.statement.namespace, subject)
        if key not in cache:
            cache[key] = subject_relations(self.memory.batch, self.statement.namespace, subject)
        return cache[key]

    def _propose(
        self, subject: str, relation: str, value: ObjectValue, cardinality: Cardinality
    ) -> None:
        for i, key in enumerate(self.proposed):
            if key.subject == subject and key.relation == relation:
                objects = tuple(dict.fromkeys((*key.objects, value)))
                self.proposed[i] = replace(key, objects=objects)
                return
        namespace = self.statement.namespace
        self.proposed.append(KnownKey(namespace, subject, relation, (value,), cardinality))


def _judgement(
    batch: WriteBatch,
    statements: Sequence[_Statement],
    outcomes: Mapping[int, Extraction],
    cards: Mapping[str, Cardinality],
) -> Judgement:
    groups: list[tuple[Fact, ...]] = [(fact,) for fact in batch.statements]
    for statement in statements:
        fact = batch.statements[statement.position]
        extraction = outcomes[statement.position]
        groups[statement.position] = _written(fact, statement, extraction)
    return Judgement(
        statements=tuple(groups),
        cardinalities=tuple(cards.items()),
        extractions=MappingProxyType({s.position: outcomes[s.position] for s in statements}),
    )


def _written(fact: Fact, statement: _Statement, extraction: Extraction) -> tuple[Fact, ...]:
    """What to write for one prose statement: its keyed facts, or itself (dated by the caller's
    valid_from metadata when it has no valid_from of its own)."""
    if not extraction.facts:
        if not statement.dated_by_metadata:
            return (fact,)
        return (replace(fact, valid_from=statement.caller, metadata=statement.metadata),)
    out = []
    for found in extraction.facts:
        valid_from = found.valid_from or statement.caller
        source = "statement" if found.valid_from is not None else "caller"
        if valid_from is None:
            source = "record_time"
        out.append(
            Fact(
                text=found.text,
                subject=found.subject,
                relation=found.relation,
                object=found.object,
                valid_from=valid_from,
                valid_to=fact.valid_to,
                namespace=fact.namespace,
                metadata={**found.metadata, VALID_FROM_SOURCE: source},
            )
        )
    return tuple(out)


def _dated(extraction: Extraction, statement: _Statement) -> Extraction:
    """``extraction`` of one text with the caller's time as the valid_from of what has none."""
    when = statement.caller
    if when is None:
        return extraction
    facts = tuple(
        fact
        if fact.valid_from is not None
        else replace(fact, valid_from=when, valid_from_source="caller")
        for fact in extraction.facts
    )
    return replace(extraction, facts=facts, valid_from=when, metadata=statement.metadata)


def _displayed(proposal: Proposal, subject: str, relation: str) -> tuple[str, str]:
    """The subject and relation to store: as the model wrote them where the rules kept them
    (they key the same), else their keyed forms (a speaker-scoped subject, a relation mapped to
    an existing one)."""
    if proposal.written is None:
        return subject, relation
    written_subject, written_relation = proposal.written
    if key_subject(written_subject) == subject:
        subject = written_subject
    if normalize_relation(written_relation) == relation:
        relation = written_relation
    return subject, relation


def _placed_by_object(
    proposals: Sequence[Sequence[Proposal]], texts: Sequence[str]
) -> list[list[Proposal]]:
    """The proposals per statement, each one whose object is not written in its statement but
    in exactly one other statement of the prompt moved there (a small model numbers the facts
    of a batch off by one or more: the Qwen2.5-Coder 1.5B did on a third of SituatedQA's).
    ``texts`` are the statements, normalised. A fact written nowhere stays, to be dropped."""
    placed: list[list[Proposal]] = [[] for _ in texts]
    for position, given in enumerate(proposals):
        for proposal in given:
            target = position
            if not _object_stated(proposal.object, texts[position]):
                holding = [i for i, t in enumerate(texts) if _object_stated(proposal.object, t)]
                if len(holding) == 1:
                    target = holding[0]
                    proposal = replace(proposal, statement=target)
            placed[target].append(proposal)
    return placed


def _object_stated(value: ObjectValue, text: str) -> bool:
    """Whether ``value`` is written, as whole words, in the statement (``text``, normalised)
    other than inside a question; a true/false object never is (a model invents them)."""
    if isinstance(value, bool):
        return False
    forms = {normalize_text(value)} if isinstance(value, str) else {str(value)}
    if isinstance(value, float) and value.is_integer():
        forms.add(str(int(value)))
    questions = [(m.start(), m.end()) for m in _QUESTION.finditer(text)]
    return any(
        not any(start <= found.start() and found.end() <= end for start, end in questions)
        for form in forms
        if form
        for found in re.finditer(rf"(?<!\w){re.escape(form)}(?!\w)", text)
    )


def _sentence(sentence: str | None, text: str) -> str | None:
    """The sentence, whitespace-collapsed, if it occurs in ``text``; else None."""
    if sentence is None:
        return None
    collapsed, source = " ".join(sentence.split()), " ".join(text.split())
    return collapsed if collapsed and collapsed in source else None


def _identity(fact: ExtractedFact) -> tuple[Any, ...]:
    return (fact.text, fact.subject, fact.relation, type(fact.object), fact.object, fact.valid_from)


def _require_int(field: str, value: object, *, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise InvalidInputError(field, f"is {value!r}", f"pass an integer >= {minimum}")


__all__ = [
    "ANSWER_SCHEMA",
    "DEFAULT_TEMPLATE",
    "LLMExtractor",
    "LLMJudgeStats",
    "find_facts",
]
