"""The data model of the kappa training pairs' attribute families, and value pools they share.

A :class:`Family` is one attribute (a person's home city, a service's database, the languages
someone speaks, the runs someone logged) with a pool of :class:`Value` objects and sentence
templates. The tables live in the ``kappa_families_*`` modules; :mod:`kappa_pairs` combines them.

Template slots (filled by ``kappa_pairs``):

``{S}`` the subject ("I", "Priya Sharma", "my sister", "the billing service"), ``{P}`` its
possessive ("my", "Priya Sharma's"), ``{O}`` its object form ("me", "Priya Sharma"); ``{s}``,
``{p}``, ``{o}``, ``{r}`` the pronoun forms ("she", "her", "her", "herself") for later mentions;
``{be}``, ``{was}``, ``{have}``, ``{do}`` agreeing verbs; ``{Sbe}``/``{Shave}`` subject plus verb,
contracted for pronouns ("I'm", "she's", "Priya is"); ``[live|lives]`` picks the plural/first
person form or the third person singular form, agreeing with the nearest subject slot before it.
``{v}``/``{vb}`` the value and its bare form ("a Honda Civic"/"Honda Civic"), ``{old}``/``{oldb}``
the value it replaced, ``{when}``/``{oldwhen}`` an event's time ("on Tuesday"), ``{year}`` a year.

A change template starting with ``+`` is only used when the new value ranks above the old one
(ordered families: "got a raise"), one starting with ``-`` only when it ranks below.
"""

from __future__ import annotations

from dataclasses import dataclass

SHAPES = ("single", "multi", "event", "static")


@dataclass(frozen=True, slots=True)
class Value:
    """One value of a family: interchangeable display forms and its own templates."""

    forms: tuple[str, ...]
    broader: tuple[str, ...] = ()  # entailed but less specific ("Colorado" for "Denver")
    bare: str = ""  # without article, for "my {vb}" ("Honda Civic")
    state: tuple[str, ...] = ()  # value-specific plain statements (full sentences)
    change: tuple[str, ...] = ()  # value-specific "it became this" statements
    implied: tuple[str, ...] = ()  # sentences implying this value without naming the attribute
    retract: tuple[str, ...] = ()  # sentences ending this value without a replacement
    own: bool = False  # use only the value's own templates, not the family's {v} templates

    @property
    def key(self) -> str:
        return self.forms[0]

    @property
    def bare_form(self) -> str:
        return self.bare or self.forms[0]


@dataclass(frozen=True, slots=True)
class Family:
    """One attribute family and its templates (see the module docstring for the slots)."""

    name: str
    subject: str  # the subject pool: person, service, org, team, project, ...
    shape: str  # one of SHAPES
    values: tuple[Value, ...]
    state: tuple[str, ...] = ()
    change: tuple[str, ...] = ()  # explicit change to {v} (maybe naming {old}); events: correction
    implied: tuple[str, ...] = ()
    retract: tuple[str, ...] = ()  # events: cancellation
    past: tuple[str, ...] = ()  # "used to ..." ({v}): retraction for the same value
    hedge: tuple[str, ...] = ()  # label-0 near misses about another value: plans, visits
    add: tuple[str, ...] = ()  # multi-valued: one more value
    detail: tuple[str, ...] = ()  # a plain statement with consistent added detail
    move: tuple[str, ...] = ()  # events: moved from {oldwhen} to {when}
    when: str = ""  # events: the time pool
    conflicts: tuple[str, ...] = ()  # families never paired with this one as "compatible"
    clusters: tuple[str, ...] = ()  # a change in one may change the others: never compatible
    domain: str = ""  # shared value vocabulary ("city") for word-sharing compatible pairs
    stateful: bool = False  # a few exclusive states rather than a pool of >= 8 values
    ordered: bool = False  # values are listed from lowest to highest
    monotone: bool = False  # changes only go up (number of children)
    adjacent: bool = False  # changes only go to the next value
    plain_contradicts: bool = True  # two plain statements with different values contradict
    never: tuple[tuple[str, str], ...] = ()  # (old key, new key) changes left out as ambiguous
    subject_filter: str = ""  # "no_partner": not about the speaker's partner
    unique: bool = False  # a value belongs to one subject only (a phone number, a CEO)


def val(
    forms: str,
    broader: str = "",
    *,
    bare: str = "",
    state: tuple[str, ...] = (),
    change: tuple[str, ...] = (),
    implied: tuple[str, ...] = (),
    retract: tuple[str, ...] = (),
    own: bool = False,
) -> Value:
    """A value from ``"form|other form"`` and ``"broader|broader"`` strings."""
    return Value(
        forms=tuple(forms.split("|")),
        broader=tuple(broader.split("|")) if broader else (),
        bare=bare,
        state=state,
        change=change,
        implied=implied,
        retract=retract,
        own=own,
    )


def vals(*forms: str) -> tuple[Value, ...]:
    """Simple values, each from a ``"form|other form"`` string."""
    return tuple(val(f) for f in forms)


CITIES: tuple[Value, ...] = (
    val("Denver", "Colorado"),
    val("Boston", "Massachusetts"),
    val("Chicago", "Illinois"),
    val("Austin", "Texas"),
    val("Seattle", "Washington State"),
    val("Toronto", "Canada|Ontario"),
    val("Vancouver", "Canada|British Columbia"),
    val("Mexico City", "Mexico"),
    val("São Paulo|Sao Paulo", "Brazil"),
    val("Buenos Aires", "Argentina"),
    val("Lisbon", "Portugal"),
    val("Madrid", "Spain"),
    val("Berlin", "Germany"),
    val("Munich", "Bavaria|Germany"),
    val("Amsterdam", "the Netherlands"),
    val("Lyon", "France"),
    val("Paris", "France"),
    val("Manchester", "England|the UK"),
    val("London", "England|the UK"),
    val("Dublin", "Ireland"),
    val("Edinburgh", "Scotland"),
    val("Stockholm", "Sweden"),
    val("Warsaw", "Poland"),
    val("Vienna", "Austria"),
    val("Istanbul", "Turkey|Türkiye"),
    val("Cairo", "Egypt"),
    val("Lagos", "Nigeria"),
    val("Nairobi", "Kenya"),
    val("Cape Town", "South Africa"),
    val("Dubai", "the UAE"),
    val("Mumbai|Bombay", "India|Maharashtra"),
    val("Bangalore|Bengaluru", "India|Karnataka"),
    val("Karachi", "Pakistan"),
    val("Dhaka", "Bangladesh"),
    val("Kuala Lumpur", "Malaysia"),
    val("Jakarta", "Indonesia"),
    val("Manila", "the Philippines"),
    val("Bangkok", "Thailand"),
    val("Ho Chi Minh City|Saigon", "Vietnam"),
    val("Seoul", "South Korea"),
    val("Tokyo", "Japan"),
    val("Osaka", "Japan"),
    val("Taipei", "Taiwan"),
    val("Sydney", "Australia|New South Wales"),
    val("Melbourne", "Australia|Victoria"),
    val("Auckland", "New Zealand"),
)

LANGUAGES: tuple[Value, ...] = vals(
    "Spanish",
    "French",
    "German",
    "Mandarin|Mandarin Chinese",
    "Japanese",
    "Portuguese",
    "Arabic",
    "Hindi",
    "Swahili",
    "Korean",
    "Italian",
    "Russian",
    "Turkish",
    "Dutch",
    "Tagalog",
    "Polish",
    "Yoruba",
    "Vietnamese",
    "Greek",
)
