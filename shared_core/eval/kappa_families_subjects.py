"""Who or what the kappa training statements are about: people and systems.

People are the speaker ("I"), named people (given and family names from many cultures, with
he/she/they pronouns) and relations ("my sister", "our landlord"). Systems are services, orgs,
teams, projects, products, feature flags, meetings and the like, each pool with its own names.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace

from shared_core.eval.kappa_families import Value, val


@dataclass(frozen=True, slots=True)
class Pronoun:
    nom: str
    poss: str
    obj: str
    refl: str
    plural: bool  # takes the base verb form ("they live")
    be: str
    was: str
    be_c: str  # "she's"
    have_c: str  # "she's" (as in "she's lived")


PRONOUNS: dict[str, Pronoun] = {
    "i": Pronoun("I", "my", "me", "myself", True, "am", "was", "I'm", "I've"),
    "he": Pronoun("he", "his", "him", "himself", False, "is", "was", "he's", "he's"),
    "she": Pronoun("she", "her", "her", "herself", False, "is", "was", "she's", "she's"),
    "they": Pronoun(
        "they", "their", "them", "themselves", True, "are", "were", "they're", "they've"
    ),
    "it": Pronoun("it", "its", "it", "itself", False, "is", "was", "it's", "it has"),
    "we": Pronoun("we", "our", "us", "ourselves", True, "are", "were", "we're", "we've"),
}


@dataclass(frozen=True, slots=True)
class Subject:
    """One way of naming a subject; ``key`` is the same for every way of naming it."""

    key: str
    nom: str  # "Priya Sharma", "my sister", "I", "the billing service"
    pron: str  # a key of PRONOUNS for later mentions ({s}, {p}, ...)
    kind: str  # first, we, name, relation, pronoun, thing
    nocap: bool = False  # never capitalised at the start of a sentence ("checkout-api")
    given: str = ""  # a person's given name (no statement gives them themselves as a value)
    short: str = ""  # a shorter way to name them later ("Priya")
    group: str = ""  # relations: other_person pairs only join relations of different groups
    distinct: bool = False  # relations that can never be the same person as another group's

    @property
    def pronoun(self) -> Pronoun:
        return PRONOUNS[self.pron]

    @property
    def plural(self) -> bool:
        return self.kind in ("first", "we", "pronoun") and self.pronoun.plural

    def as_pronoun(self) -> Subject:
        return replace(self, nom=self.pronoun.nom, kind="pronoun", nocap=False, short="")

    def as_short(self) -> Subject:
        return replace(self, nom=self.short, short="") if self.short else self


# culture: (female given names, male given names, family names)
_CULTURES: tuple[tuple[str, str, str], ...] = (
    ("Emily Sarah Hannah Olivia Grace", "James Oliver Thomas Daniel Ben", "Walker Bennett Hughes"),
    ("Aoife Siobhan Niamh", "Cian Declan Padraig", "O'Brien Murphy Byrne Kavanagh"),
    ("Lucía Camila Valentina Sofía", "Mateo Diego Javier Alejandro", "García Morales Rojas"),
    ("Beatriz Mariana Luana", "João Thiago Rafael", "Silva Oliveira Costa Pereira"),
    ("Camille Chloé Manon", "Julien Antoine Hugo", "Dubois Lefèvre Moreau Laurent"),
    ("Lena Katharina Anja", "Jonas Lukas Felix", "Schneider Becker Wagner Hoffmann"),
    ("Giulia Chiara Francesca", "Luca Marco Matteo", "Rossi Bianchi Romano Esposito"),
    ("Zofia Agnieszka", "Piotr Tomasz", "Nowak Mazur Wójcik"),
    ("Olena Natalia Iryna", "Dmytro Andriy Sergei", "Kovalenko Shevchenko Bondarenko"),
    ("Elif Zeynep", "Emre Mehmet Burak", "Y\u0131lmaz Demir Kaya Şahin"),
    ("Layla Fatima Nour", "Omar Youssef Karim", "Haddad Mansour Khalil Nasser"),
    ("Shirin Parisa", "Dariush Reza", "Karimi Hosseini Tehrani"),
    ("Priya Ananya Kavya Deepa", "Arjun Rohan Vikram Rahul", "Sharma Patel Iyer Reddy Nair Menon"),
    ("Riya Moumita", "Sourav Arnab", "Chatterjee Banerjee Das"),
    ("Ayesha Hira", "Bilal Imran", "Qureshi Malik Chaudhry"),
    ("Mei Xiaoling Yan", "Wei Jun Hao", "Chen Wang Liu Zhang Huang"),
    ("Aiko Haruka Yui", "Kenji Takeshi Hiroshi", "Tanaka Sato Suzuki Watanabe"),
    ("Ji-woo Seo-yeon Min-ji", "Min-jun Hyun-woo", "Kim Park Lee Choi"),
    ("Linh Hoa", "Minh Tuan", "Nguyen Tran Pham"),
    ("Maricel Joy", "Paolo Miguel", "Santos Reyes Dela-Cruz"),
    ("Dewi Putri", "Budi Agus", "Wijaya Santoso Pratama"),
    ("Chiamaka Ngozi Funmilayo", "Chinedu Tunde Emeka", "Okafor Adeyemi Eze Balogun"),
    ("Wanjiru Achieng", "Kamau Otieno", "Mwangi Odhiambo Kariuki"),
    ("Selam Meron", "Dawit Abebe", "Tesfaye Bekele Girma"),
    ("Ama Akosua", "Kwame Kofi", "Mensah Asante Boateng"),
    ("Astrid Ingrid Freja", "Lars Erik Magnus", "Lindqvist Andersen Johansson"),
    ("Sanne Femke", "Daan Joris", "Jansen Bakker Visser"),
    ("Eleni Sofia", "Nikos Giorgos", "Papadopoulos Georgiou"),
    ("Noa Tamar", "Yonatan Eitan", "Cohen Levi Mizrahi"),
)
_NEUTRAL_GIVEN = ("Alex", "Sam", "Jordan", "Robin", "Charlie", "Kai", "Riley", "Avery", "Quinn")
_NEUTRAL_FAMILY = ("Morgan", "Ellis", "Hayes", "Brooks", "Reid", "Sutton", "Parker")


def _family_name(name: str) -> str:
    return name.replace("Dela-Cruz", "Dela Cruz")


def _people() -> tuple[tuple[str, str, str], ...]:
    """(given, family, pronoun) for every combination within a culture."""
    out: list[tuple[str, str, str]] = []
    for female, male, family in _CULTURES:
        for pron, given_names in (("she", female), ("he", male)):
            for given in given_names.split():
                for fam in family.split():
                    out.append((given, _family_name(fam), pron))
    for given in _NEUTRAL_GIVEN:
        for fam in _NEUTRAL_FAMILY:
            out.append((given, fam, "they"))
    return tuple(out)


PEOPLE = _people()


def _name_values() -> tuple[Value, ...]:
    """Full names with distinct given names, for managers, partners, on-call engineers."""
    seen: set[str] = set()
    out: list[Value] = []
    for index, (given, family, _pron) in enumerate(PEOPLE):
        if given in seen or index % 2:
            continue
        seen.add(given)
        out.append(val(f"{given} {family}", given))
    return tuple(out)


NAME_VALUES = _name_values()

# (name, pronoun or "*" for any, group, distinct): distinct relations are never the same person
# as a relation of another distinct group, so they may serve as two "other people".
_RELATIONS: tuple[tuple[str, str, str, bool], ...] = (
    ("my sister", "she", "sister", True),
    ("my brother", "he", "brother", True),
    ("my mom", "she", "mother", True),
    ("my mum", "she", "mother", True),
    ("my dad", "he", "father", True),
    ("my aunt", "she", "aunt", True),
    ("my uncle", "he", "uncle", True),
    ("my grandmother", "she", "grandmother", True),
    ("my grandfather", "he", "grandfather", True),
    ("my sister-in-law", "she", "sister-in-law", True),
    ("my brother-in-law", "he", "brother-in-law", True),
    ("my wife", "she", "partner", True),
    ("my husband", "he", "partner", True),
    ("my partner", "*", "partner", True),
    ("my boyfriend", "he", "partner", True),
    ("my girlfriend", "she", "partner", True),
    ("my cousin", "*", "cousin", False),
    ("my boss", "*", "work", False),
    ("my coworker", "*", "work", False),
    ("my teammate", "*", "work", False),
    ("my mentor", "*", "work", False),
    ("our landlord", "*", "home", False),
    ("my roommate", "*", "home", False),
    ("my flatmate", "*", "home", False),
    ("my neighbour", "*", "home", False),
    ("my best friend", "*", "friend", False),
    ("my old college roommate", "*", "friend", False),
)

_ANY_PRONOUN = ("he", "she", "they")


def first_person() -> Subject:
    return Subject(key="i", nom="I", pron="i", kind="first")


def named_person(rng: random.Random) -> Subject:
    given, family, pron = rng.choice(PEOPLE)
    if pron != "they" and rng.random() < 0.06:
        pron = "they"
    full = f"{given} {family}"
    nom = full if rng.random() < 0.6 else given
    return Subject(
        key=f"name:{given}",
        nom=nom,
        pron=pron,
        kind="name",
        given=given,
        short=given if nom == full else "",
    )


def relation(rng: random.Random, *, no_partner: bool = False) -> Subject:
    while True:
        name, pron, group, distinct = rng.choice(_RELATIONS)
        if not (no_partner and group == "partner"):
            break
    if pron == "*":
        pron = rng.choice(_ANY_PRONOUN)
    return Subject(
        key=f"rel:{group}:{name}",
        nom=name,
        pron=pron,
        kind="relation",
        group=group,
        distinct=distinct,
    )


def person(rng: random.Random, *, no_partner: bool = False) -> Subject:
    roll = rng.random()
    if roll < 0.36:
        return first_person()
    if roll < 0.74:
        return named_person(rng)
    return relation(rng, no_partner=no_partner)


def distinct_people(a: Subject, b: Subject) -> bool:
    """Whether a careful reader would take ``a`` and ``b`` for two different people."""
    if a.key == b.key:
        return False
    if "first" in (a.kind, b.kind):
        return True
    if a.kind == b.kind == "name":
        return a.given != b.given
    if a.kind == b.kind == "relation":
        return a.distinct and b.distinct and a.group != b.group
    return False


# Systems by pool. A leading "!" marks a name that is never capitalised; a leading "?" one that
# may name the same thing as another name of its pool ("our team"), never used for other_person.
_SYSTEMS: dict[str, tuple[str, ...]] = {
    "service": (
        "the billing service",
        "the payments API",
        "!checkout-api",
        "!auth-service",
        "the search cluster",
        "the mobile backend",
        "the data pipeline",
        "the notification service",
        "the recommendation engine",
        "!inventory-svc",
        "the admin dashboard",
        "the customer portal",
        "the ingestion worker",
        "!ledger-core",
        "the GraphQL gateway",
        "the reporting service",
        "!user-profile-service",
        "the image resizer",
        "!order-service",
        "the fraud-scoring service",
        "!shipping-api",
        "the internal wiki",
        "the CRM sync job",
        "the public website",
        "the booking engine",
        "!geo-lookup",
        "the chat backend",
        "!pricing-engine",
    ),
    "app": (
        "the desktop client",
        "our mobile app",
        "the CLI",
        "the VPN client",
        "the printer driver",
        "the SDK",
        "the game launcher",
        "the password manager app",
        "the editor plugin",
        "the scanner app",
        "the sync client",
        "the kiosk software",
    ),
    "library": (
        "?our SDK",
        "the parser library",
        "!tinyjson",
        "!pyledger",
        "the charting library",
        "our UI kit",
        "!fastqueue",
        "?the open-source client",
        "!geomesh",
        "the logging library",
        "!quickcsv",
        "the date-parsing package",
    ),
    "org": (
        "Acme",
        "Acme Corp",
        "Globex",
        "Initech",
        "Northwind Traders",
        "Blue Harbor Labs",
        "Brightline Foods",
        "Kestrel Analytics",
        "Orbital Freight",
        "Tandem Bank",
        "Greenfield Energy",
        "Luma Health",
        "Northstar Robotics",
        "Cobalt Studios",
        "Meridian Insurance",
        "?our company",
        "?the startup",
        "?my company",
        "Sunfield Pharma",
    ),
    "team": (
        "the design team",
        "the data team",
        "?our team",
        "the support team",
        "the platform team",
        "the sales team",
        "the legal team",
        "the mobile team",
        "the finance team",
        "the security team",
        "the marketing team",
        "the QA team",
        "the research group",
    ),
    "project": (
        "Project Atlas",
        "the data migration",
        "the website redesign",
        "the onboarding revamp",
        "Project Nightingale",
        "the mobile app rewrite",
        "the Q3 launch",
        "the office move",
        "the SOC 2 audit",
        "the pricing overhaul",
        "the warehouse expansion",
        "Project Falcon",
        "the API v2 rollout",
        "the CRM replacement",
    ),
    "product": (
        "the Pro plan",
        "the basic tier",
        "the annual membership",
        "?the premium subscription",
        "the team plan",
        "the family pass",
        "the cloud backup add-on",
        "the streaming bundle",
        "the gym membership",
        "the meal-kit subscription",
        "the VPN service",
        "the starter tier",
    ),
    "goods": (
        "our flagship headset",
        "the smart thermostat",
        "the standing desk",
        "the espresso machine",
        "the starter kit",
        "the trail shoes",
        "the limited-edition hoodie",
        "the 4K monitor",
        "the e-bike",
        "the travel backpack",
        "the cast-iron skillet",
        "the robot vacuum",
    ),
    "release": (
        "version 4.0 of the app",
        "?the next release",
        "the 2.5 update",
        "the new dashboard",
        "the iOS app update",
        "the v3 launch",
        "our next firmware release",
        "?the public beta",
        "the redesigned checkout",
        "the Android release",
    ),
    "subscription": (
        "our Slack workspace",
        "the GitHub organisation",
        "our Figma team",
        "the Notion workspace",
        "our Zoom account",
        "the Jira site",
        "our Datadog account",
        "our Dropbox account",
        "the Salesforce org",
        "our Linear workspace",
        "the 1Password account",
        "our Miro team",
    ),
    "flag": (
        "the dark_mode flag",
        "!new_checkout_flow",
        "the beta-search flag",
        "!enable_sso",
        "the holiday banner flag",
        "!use_new_pricing",
        "the recommendations_v2 flag",
        "!fast_refunds",
        "the maintenance-mode flag",
        "!show_onboarding_tour",
        "the one-click-reorder flag",
        "!async_invoices",
    ),
    "meeting": (
        "the weekly standup",
        "?our team sync",
        "the design review",
        "the all-hands",
        "sprint planning",
        "the retro",
        "the book club",
        "the board meeting",
        "the product demo",
        "the architecture review",
        "office hours",
        "the hiring sync",
    ),
}
_ALIASES = {"Acme Corp": "Acme"}  # two names of one subject


def thing(pool: str, rng: random.Random) -> Subject:
    raw = rng.choice(_SYSTEMS[pool])
    name = raw.lstrip("!?")
    pron = "it"
    key = f"{pool}:{_ALIASES.get(name, name)}"
    return Subject(
        key=key, nom=name, pron=pron, kind="thing", nocap=raw[0] == "!", distinct=raw[0] != "?"
    )


def subject(pool: str, rng: random.Random, *, no_partner: bool = False) -> Subject:
    """A random subject from ``pool``."""
    if pool == "person":
        return person(rng, no_partner=no_partner)
    return thing(pool, rng)


def other_subject(
    pool: str, first: Subject, rng: random.Random, *, no_partner: bool = False
) -> Subject | None:
    """A subject of ``pool`` that is clearly not ``first``, or None after a few tries."""
    for _ in range(12):
        candidate = subject(pool, rng, no_partner=no_partner)
        if pool == "person":
            if distinct_people(first, candidate):
                return candidate
        elif candidate.key != first.key and candidate.distinct and first.distinct:
            return candidate
    return None


def pools() -> tuple[str, ...]:
    return ("person", *_SYSTEMS)
