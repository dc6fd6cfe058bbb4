"""Whom a prose statement is about: a deterministic rule, so two statements can only end one
another when they name the same subject (``Caroline``, ``I``, ``my sister``, ``the billing
service``), whatever a model says.

The rule reads the words before the statement's first verb (at most :data:`HEAD_WORDS`),
after dropping a short lead-in ("Per the CRM,", "Reminder:", "btw"; a speaker's "Ana:" is
kept, so "Ana: I moved" is about Ana, and so is a label naming whose attribute follows, "Job
title of Dana Reyes:"):

- the speaker: a head starting with "I"/"my"/"me" is ``i``, unless "my" introduces a relation
  ("my sister", "my line manager"), which is ``my sister``; "we"/"our" likewise;
- a name: the first run of capitalised words that are not sentence words (``Dana Reyes`` in
  "Dana Reyes's employer is Globex", ``Omar Haddad`` in "The city where Omar Haddad lives");
- a thing: a head starting with a determiner and holding no wh-word or preposition before its
  name is that whole phrase ("the payments api"), so two services are never one subject (a
  present-tense verb the word list lacks ends the head: "the dashboard persists ...");
- a report: when the first verb is a reporting verb and what reports is a thing ("The shared
  spreadsheet says Dana Reyes ...") or a clause follows ("Maria said that Omar Haddad ..."),
  the statement is about whom the report names, so the rule reads the words after the verb
  (a thing whose report names no one gives no subject; "Caroline said she moved" stays
  Caroline's; "Someone mentioned at lunch that Omar ..." is Omar's, and so is "Someone
  mentioned that the paperwork lists Omar as ...": a source inside a report is read on);
- a thing's attribute named before it ("the database for the billing service", "the team
  behind the billing service") is about that thing, and so is a common noun's ("Relationship
  status for Dana Reyes: ...", "Production traffic for the Raven service ...");
- a request to contact someone is about the one contacted ("Call Hana Lombardi on ...", "You
  can reach Sakura Ortega at ..."), unless it names the writer ("Call me on ...");
- a head starting with "it"/"there" names no one ("It's over with Robin."), whoever follows;
- otherwise (a pronoun, a head that is too long): no subject, and the statement stays plain
  prose. Missing a subject only ever misses a change.

With a writer (a chat message's speaker), a statement is the writer's when it names them
(above) and also when it names no one else (:func:`statement_subject`): a verb first ("Said
goodbye to Berlin"), a value first ("+44 7700 900 481 no longer works, try ..."), a request
about a value ("Replace X with Y"), a lead-in and then only a value ("New relationship: Sam."),
an old value's short first clause and then the writer ("Tom left, Priya is my manager now.",
"No more Cobalt Robotics for me, ..."), or a head with no name, determiner or pronoun
("Officially a staff engineer as of today.").

The word lists are data (``subject_words.json`` beside this module), read once.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path

WORDS_FILE = Path(__file__).with_name("subject_words.json")
HEAD_WORDS = 9
"""At most this many words before the first verb are read for the subject."""
REPORT_GAP = 4
"""A reporting verb's "that" may come this many words after it ("mentioned at lunch that")."""
LEAD_IN_WORDS = 5
"""A leading clause ending in ":" or "," of at most this many words may be a lead-in."""
SPEAKER = "i"
GONE_WORDS = 3
"""A first clause of at most this many words may only say an old value went ("Tom left")."""
VALUE_GAP = 3
"""A value named first is the writer's when first person follows its copula within this many
words ("Lisbon is where I live")."""
_CLAUSE = re.compile(r"[,;\u2014]\s*|\s+so\s+")
_EMOTICONS = re.compile(
    r"(?:\s+(?:[:;=]-?[()DPpO/\\|*]+|<3|xd|XD|(?i:(?:ha){2,}h?|lol|lmao|hehe)))+\s*$"
)
"""A chat message's trailing emoticons and laughter (":)", ":D", " lol"): no words of its
statement."""
_ASIDE = re.compile(r"\([^()]*\)")
_ADDRESS = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_COPULAS = frozenset({"is", "was", "are", "'s", "\u2019s"})
_WORD = re.compile(r"[A-Za-zÀ-ÖØ-öø-ÿ0-9][\w'\u2019.-]*")
_STAMP = re.compile(r"^\s*(\[[^\]]*\]|\(?\d{4}-\d{2}-\d{2}[^)]*\)?:?)\s*")
_POSSESSIVE = re.compile(r"(['\u2019]s|['\u2019])$")
_DUMMIES = frozenset({"it", "it's", "it\u2019s", "there", "there's", "there\u2019s"})
"""A head starting with these names no one ("It's over with Robin", "There's a new manager")."""
_BREAKS = frozenset({"where", "who", "whom", "which", "for", "of", "at", "with", "about", "behind"})
_OWNED_BY = frozenset({"for", "of"})
"""Words after which an attribute's owner is named: "status for Dana", "the roots of Omar"."""
_MODALS = frozenset({"can", "could", "may", "might", "should", "will"})
"""After "you", a request's modal: "You can reach Sakura at ..."."""
_OF_A_THING = _OWNED_BY | {"behind"}
"""A thing's attribute named before it: "the database for the billing service" is about the
billing service."""


@dataclass(frozen=True, slots=True)
class _Words:
    not_names: frozenset[str]
    connectors: frozenset[str]
    first_person: frozenset[str]
    relations: frozenset[str]
    determiners: frozenset[str]
    verbs: frozenset[str]
    reporting_verbs: frozenset[str]
    writer_verbs: frozenset[str]
    writer_requests: frozenset[str]
    contact_requests: frozenset[str]
    third_person: frozenset[str]
    verb_forms: frozenset[str]  # verbs and writer_verbs
    sentence_words: frozenset[str]
    """Capitalised words that name no value ("Got", "Reach", not "Lisbon"): not_names, first
    person, verb_forms, writer_requests and contact_requests."""


@functools.cache
def _words() -> _Words:
    raw = json.loads(WORDS_FILE.read_text(encoding="utf-8"))
    fields = (
        "not_names",
        "connectors",
        "first_person",
        "relations",
        "determiners",
        "verbs",
        "reporting_verbs",
        "writer_verbs",
        "writer_requests",
        "contact_requests",
        "third_person",
    )
    lists = {name: frozenset(str(w).lower() for w in raw[name]) for name in fields}
    verb_forms = lists["verbs"] | lists["writer_verbs"]
    sentence_words = (
        lists["not_names"]
        | lists["first_person"]
        | verb_forms
        | lists["writer_requests"]
        | lists["contact_requests"]
    )
    return _Words(**lists, verb_forms=verb_forms, sentence_words=sentence_words)


def statement_subject(text: str, *, writer: bool = False) -> str | None:
    """The subject of a statement, lower-cased, or None when the rule cannot tell.

    ``writer``: the write names who wrote the statement (a speaker), so a statement that is
    the writer's without naming them (:func:`names_its_writer`: "Just moved to Lisbon!",
    "Priya is my manager now.") is about :data:`SPEAKER`, and so is a role the writer names
    the holder of ("My manager is Tom."), and a statement whose head names no one else (the
    module doc). Without a writer such a statement has no subject
    the rule can trust (its value is no subject: not ``lisbon``, not ``tom``) and stays prose.
    A question states nothing: it has no subject."""
    if text.rstrip().endswith("?"):
        return None
    words = _words()
    stripped = _without_lead_in(text, words)
    if names_its_writer(stripped):
        return SPEAKER if writer else None
    tokens = _WORD.findall(stripped)
    if stripped != text.strip() and _only_a_value(tokens, words):
        return SPEAKER if writer else None  # "New relationship: Sam.": Sam is no subject
    if writer and (
        _names_a_role_holder(tokens, words)
        or _writers_head(tokens, words)
        or _value_like(stripped.split()[:1])
        or _requests_a_value(stripped, words)
    ):
        return SPEAKER
    if tokens and tokens[0].lower() in _DUMMIES and not _reports(tokens, words):
        # "It's over with Robin. I'm with Sam.": no one named, whoever comes after "with"
        return SPEAKER if writer and _says_i(tokens, words) else None
    subject = _subject(tokens, reported=True)
    if subject is None and writer and _names_no_one(tokens, words):
        return SPEAKER  # "Officially a staff engineer as of today.", "No longer in Berlin; ..."
    return subject


def _requests_a_value(text: str, words: _Words) -> bool:
    """A request about a value: "Replace +44 7700 900 481 with ...", "Use X from now on"
    (a request about a person names the writer: "Ring me at ...", not "Call Esther ...")."""
    raw = text.split()
    return (
        len(raw) > 1
        and raw[0].lower().strip(",") in words.writer_requests
        and _value_like([t for t in raw[1:3] if t.lower() not in ("to", "at", "on")][:1])
    )


def _only_a_value(tokens: list[str], words: _Words) -> bool:
    """What is left after a lead-in is only a value ("New relationship: Sam.", "New
    assignment: Atlas."): at most three words, each capitalised or value-like, none a verb
    ("Note: Dana moved." is Dana's)."""
    return (
        0 < len(tokens) <= 3
        and all(t[:1].isupper() or _value_like([t]) for t in tokens)
        and not any(t.lower() in words.verb_forms for t in tokens)
    )


def _reports(tokens: list[str], words: _Words) -> bool:
    return any(t.lower() in words.reporting_verbs for t in tokens[:HEAD_WORDS])


def _says_i(tokens: list[str], words: _Words) -> bool:
    return any(t.lower() in words.first_person for t in tokens)


def _names_no_one(tokens: list[str], words: _Words) -> bool:
    """Whether a statement's head names no one: no name, no determiner ("the weather"), and
    no word that points at someone or something else ("she", "they", "it")."""
    for token in tokens[:HEAD_WORDS]:
        lower = _bare(token).lower()
        if lower in words.third_person or lower in words.determiners:
            return False
        if (
            _bare(token)[:1].isupper()
            and lower not in words.not_names
            and lower not in words.first_person
        ):
            return False
    return True


def _writers_head(tokens: list[str], words: _Words) -> bool:
    """A head (the words before the first verb) that names no one before the writer's "I" or
    "my": "On paper I'm a team lead.", "The title on my badge is ...", "The city I live in
    is ..." (an attribute of the writer's, named by a phrase)."""
    for token in tokens[:HEAD_WORDS]:
        lower = token.lower()
        if lower in words.first_person and (token[:1].isupper() or lower in ("my", "me")):
            rest = tokens[tokens.index(token) :]
            return lower != "my" or _relation("my", rest, words) is None  # not "my sister"
        if lower in words.verbs:
            return False
        if _bare(token)[:1].isupper() and _bare(token).lower() not in words.not_names:
            return False  # a name comes first: the statement is about them
    return False


def names_its_writer(text: str) -> bool:
    """Whether a (chat) statement is its writer's though it names no one as its subject:

    - it starts with a verb (after a lead-in): "Just moved to Lisbon!", "Got hired by Globex",
      or with a request that names the writer: "Ring me at ..." (not "Call Esther on ...");
    - it names its value first and the writer right after the copula: "Priya is my manager",
      "Lisbon is where I live", "Sam and I are a couple";
    - a short first clause says an old value went ("Tom left", "With Tom gone", "Bye Tom") and
      a later clause is the writer's: "Tom left, Priya is my manager now.",
      "Tom quit, so I report to Priya now."
    """
    words = _words()
    clauses = [_without_lead_in(c, words) for c in _CLAUSE.split(text) if c.strip()]
    if not clauses:
        return False
    first = _WORD.findall(clauses[0])
    if _writers_clause(first, words):
        return True
    if not _gone(first, words):
        return False
    return any(
        _writers_clause(tokens, words) or _speaker(tokens, words) == SPEAKER
        for tokens in (_WORD.findall(c) for c in clauses[1:])
        if tokens
    )


def _gone(first: list[str], words: _Words) -> bool:
    """Whether a first clause may only say an old value went: "No more ..." / "No longer ...",
    or a name (or none) and at most :data:`GONE_WORDS` words besides it ("Tom left", "Cobalt
    Robotics is history")."""
    if [t.lower() for t in first[:2]] in (["no", "more"], ["no", "longer"]):
        return True
    name = _subject(first, reported=False)
    if name not in _names(first, words):
        return False
    return len(first) - (len(name.split()) - 1 if name else 0) <= GONE_WORDS


def _writers_clause(tokens: list[str], words: _Words) -> bool:
    """A clause that starts with a writer's verb, or whose head is a name (or a value) that
    the writer follows within :data:`VALUE_GAP` words of a copula."""
    if not tokens:
        return False
    if tokens[0].lower() in words.writer_verbs:
        return True
    if tokens[0].lower() in words.writer_requests:  # "Ring me at ...", not "Call Esther on ..."
        return any(t.lower() in words.first_person for t in tokens[1:])
    if start := _after_you(tokens):  # "You can find me in ...", "You'll reach me at ..."
        return any(t.lower() in ("me", "i") for t in tokens[start : start + 2])
    if len(tokens) >= 3 and [t.lower() for t in tokens[1:3]] == ["and", "i"]:
        return True  # "Sam and I are a couple"
    copula = next((i for i, t in enumerate(tokens[:HEAD_WORDS]) if t.lower() in _COPULAS), None)
    if copula is None or copula == 0:
        return False
    head = tokens[:copula]
    if _subject(head, reported=False) not in _names(head, words) and not _value_like(head):
        return False
    after = [t.lower() for t in tokens[copula + 1 : copula + 1 + VALUE_GAP]]
    return any(t in words.first_person for t in after)


def named_values(text: str) -> frozenset[str]:
    """The values a statement names, lower-cased: e-mail addresses, words holding a digit and
    capitalised words that are not listed sentence words or verbs ("Lisbon", "Globex",
    "Priya"; not "I", not "Got"). Two statements of one attribute that name the same values
    restate it; naming other values, they may change it."""
    words = _words()
    text = _without_lead_in(_ASIDE.sub(" ", text), words)  # "(per the CRM)" names no value
    found = {address.lower() for address in _ADDRESS.findall(text)}
    sentence = words.sentence_words
    for token in _WORD.findall(_ADDRESS.sub(" ", text)):
        bare = _bare(token).lower()
        if any(ch.isdigit() for ch in token) or (token[:1].isupper() and bare not in sentence):
            found.add(bare)
    return frozenset(found)


def _names_a_role_holder(tokens: list[str], words: _Words) -> bool:
    """ "My manager is Tom.", "My partner's name is Sam.": the writer names who holds a
    role of theirs (a name or a value right after the copula), not news of that person."""
    if len(tokens) < 4 or tokens[0].lower() != "my":
        return False
    copula = next((i for i, t in enumerate(tokens[:5]) if t.lower() in _COPULAS), None)
    if copula is None or copula + 1 >= len(tokens):
        return False
    role = [_bare(t).lower() for t in tokens[1:copula]]
    if not role or not set(role) & words.relations or role[-1] not in (*words.relations, "name"):
        return False
    value = tokens[copula + 1]
    return (value[:1].isupper() and value.lower() not in words.not_names) or _value_like([value])


def _names(head: list[str], words: _Words) -> tuple[str | None, ...]:
    """What the rule reads as a bare name in ``head`` (or nothing): the readings a value
    named first gives."""
    return (None, _name(head, words))


def _value_like(tokens: list[str]) -> bool:
    return any(any(ch.isdigit() for ch in t) or "@" in t for t in tokens)


def _subject(tokens: list[str], *, reported: bool, sources_only: bool = False) -> str | None:
    """The subject of a statement's words; ``reported``: a reporting verb may hand the
    subject on to the words after it (once: a report of a report is not read further, but a
    source inside a report is: "Someone mentioned that the paperwork lists Dana as ..." is
    Dana's); ``sources_only``: only a source ("the wiki says ...") hands it on."""
    words = _words()
    tokens = _after_request(tokens, words)
    head: list[str] = []
    verb: int | None = None  # the position of the verb that ends the head
    for position, token in enumerate(tokens[:HEAD_WORDS]):
        if head and token.lower() in words.verbs:
            verb = position
            break
        head.append(token)
    if not head:
        return None
    if head[0].lower() in words.determiners and (unlisted := _unlisted_verb(head, words)):
        verb, head = unlisted, head[:unlisted]
    if reported and verb is not None and tokens[verb].lower() in words.reporting_verbs:
        report = tokens[verb + 1 :]
        if head[0].lower() in words.determiners:  # a source: "the wiki says ..."
            return _reported(report)
        that = None if sources_only else _that(report)
        if that is not None:  # "Maria said that Omar ...", "Someone mentioned at lunch that ..."
            clause = report[that:]
            return _reported(clause) or _speaker(head, words) or _name(head, words)
    speaker = _speaker(head, words)
    if speaker is not None:
        return speaker
    if head[0].lower() in words.determiners:
        return _thing(head, words) if verb is not None else _name(head, words, people_only=True)
    return _owner(head, words) or _name(head, words)


def _after_request(tokens: list[str], words: _Words) -> list[str]:
    """The words after a request to contact someone, when a name or a thing follows it:
    "Call Hana Lombardi on ...", "You can reach Sakura Ortega at ..." and "Email the front
    desk at ..." are about the one contacted (not "call hana lombardi", not no one). A
    request about the writer ("Call me on ...") is read by the writer rules before this."""
    start = _after_you(tokens)
    if start + 1 >= len(tokens) or tokens[start].lower() not in words.contact_requests:
        return tokens
    named = tokens[start + 1]
    if named.lower() in words.determiners or (
        named[:1].isupper() and named.lower() not in words.sentence_words
    ):
        return tokens[start + 1 :]
    return tokens


def _after_you(tokens: list[str]) -> int:
    """Where a request's verb is after "You can ..." (2) or "You'll ..." (1); 0 without them."""
    first = tokens[0].lower() if tokens else ""
    if first == "you" and len(tokens) > 2 and tokens[1].lower() in _MODALS:
        return 2
    return 1 if first in ("you'll", "you\u2019ll") else 0


def _owner(head: list[str], words: _Words) -> str | None:
    """Whose attribute a head without a determiner names after "for" or "of", when it opens
    with a common noun (a capital, or a lower-case word after a lead-in, then a lower-case
    word): "Relationship status for Dana Reyes: ..." is Dana Reyes's and "Per the HR system,
    production traffic for the Raven service ..." the Raven service's; not "relationship", a
    subject every person's statement said so would share.
    Not "Bank of America ...", "Head of Engineering ...", "Most of my hours ...": "of" or
    "for" right after the first word may belong to a name or a quantity."""
    if len(head) < 4 or not (head[0][:1].isupper() or (head[0].isalpha() and head[0].islower())):
        return None
    second = head[1]
    if not (second.isalpha() and second.islower()) or second in _OWNED_BY:
        return None
    for position, token in enumerate(head[2:-1], start=2):
        if token.lower() in _OWNED_BY:
            rest = head[position + 1 :]
            if rest[0].lower() in words.determiners:
                return _thing(rest, words)
            return _name(rest, words)
    return None


def _that(report: list[str]) -> int | None:
    """Where a report's "that" clause starts, if it does within :data:`REPORT_GAP` words."""
    for position, token in enumerate(report[: REPORT_GAP + 1]):
        if token.lower() == "that":
            return position
    return None


def _unlisted_verb(head: list[str], words: _Words) -> int | None:
    """The position of a present-tense verb the word list lacks in a thing's head: the first
    lower-case word ending in a single "s" that follows a noun ("the Yarrow dashboard
    *persists* ...", "the search API *listens* ..."; not "the claims service", "the Yarrow
    analytics service")."""
    for position in range(2, len(head)):
        token, before = head[position], head[position - 1]
        if (
            token.isalpha()
            and token.islower()
            and token.endswith("s")
            and not token.endswith(("ss", "us", "is"))
            and token not in words.determiners
            and token not in words.not_names
            and before.isalpha()
            and before.lower() not in words.determiners
            and (before.islower() or position >= 3)  # "the Acme analytics service"
        ):
            return position
    return None


def _reported(report: list[str]) -> str | None:
    """Whom a report's words name ("that" dropped): the subject of its statement, read on
    through a source it cites ("... that the insurance paperwork lists Dana as engaged")."""
    if report and report[0].lower() == "that":
        report = report[1:]
    return _subject(report, reported=True, sources_only=True)


def _without_lead_in(text: str, words: _Words) -> str:
    text = _EMOTICONS.sub("", _STAMP.sub("", text)).strip()
    for mark in (":", ","):
        clause, found, rest = text.partition(mark)
        clause_words = clause.split()
        if not found or not rest.strip() or not 0 < len(clause_words) <= LEAD_IN_WORDS:
            continue
        said = {w.lower().strip(".,;:!?") for w in clause_words}
        if said & (words.first_person | _COPULAS):
            continue  # "My new address is X, update your contacts." says something itself
        first = clause_words[0].lower()
        if (
            first in words.not_names
            and first not in _DUMMIES  # "Note:", not "Ana:", "It's"
            and _owner(_WORD.findall(clause), words) is None  # not "Job title of Dana Reyes:"
        ):
            text = rest.strip()
    tokens = text.split()
    while len(tokens) > 2 and tokens[0].lower().strip(",") in _LEAD_IN_TOKENS:
        tokens = tokens[1:]
    return " ".join(tokens)


_LEAD_IN_TOKENS = frozenset(
    {"btw", "fyi", "oh", "and", "so", "also", "well", "hey", "ps", "anyway", "ok", "okay"}
    | {"heads", "up", "actually", "correction", "just", "quick", "update", "note", "reminder"}
    | {"finally", "officially", "don't", "please"}
)


def _speaker(head: list[str], words: _Words) -> str | None:
    first = head[0].lower()
    if first in ("we", "our", "us"):
        return _relation("our", head, words) or "we"
    if first not in words.first_person:
        return None
    if first == "my":
        return _relation("my", head, words) or SPEAKER
    return SPEAKER


def _relation(owner: str, head: list[str], words: _Words) -> str | None:
    """ "my older sister" -> "my older sister" (a relation noun within the next two words)."""
    for end in range(1, min(3, len(head))):
        if _bare(head[end]).lower() in words.relations:
            return " ".join([owner, *(_bare(t).lower() for t in head[1 : end + 1])])
    return None


def _thing(head: list[str], words: _Words) -> str | None:
    """ "the payments API" -> "the payments api"; "the car Umar Vasquez" and "the city where
    Omar Haddad" -> the person named inside."""
    person = _name(head, words, people_only=True)
    if person is not None:
        return person
    for position, token in enumerate(head[1:-1], start=1):
        if _bare(token) != token.rstrip(".,;:!?"):  # "the billing service's goal" -> its owner
            head = [*head[:position], _bare(token)]
            break
    for position, token in enumerate(head[1:-1], start=1):
        if token.lower() in _OF_A_THING and head[position + 1].lower() in words.determiners:
            return _thing(head[position + 1 :], words)
    if _BREAKS & {t.lower() for t in head}:
        return None
    return " ".join(_bare(t).lower() for t in head)


def _name(head: list[str], words: _Words, *, people_only: bool = False) -> str | None:
    """The first run of capitalised words that are not sentence words; ``people_only``: only
    a run of two words or more (a person's full name), not a lone "API"."""
    runs: list[list[str]] = [[]]
    for token in head:
        bare = _bare(token)
        is_name = bare[:1].isupper() and bare.lower() not in words.not_names
        if is_name or (runs[-1] and token.lower() in words.connectors):
            runs[-1].append(bare)
            if bare != token:  # a possessive ends the name
                runs.append([])
        elif runs[-1]:
            runs.append([])
    for run in runs:
        while run and run[-1].lower() in words.connectors:
            run.pop()
        if run and (len(run) >= 2 or not people_only):
            return " ".join(run).lower()
    return None


def _bare(token: str) -> str:
    return _POSSESSIVE.sub("", token.rstrip(".,;:!?"))
