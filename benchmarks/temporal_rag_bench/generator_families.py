"""The synthetic generator's tables: attribute families, names, framings and distractor words.

Every value is distinct within and across families, and no value's normalised form appears as
whole words inside another's (scoring matches whole words). Phrasings never start with
``{value}``, end with a full stop and carry no word that reveals recency ("now", "moved", ...):
old and new statements share them, so they differ only in the value. Pure: standard library.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from shared_core.facts import Cardinality


class Subject(StrEnum):
    PERSON = "person"
    PROJECT = "project"


class Role(StrEnum):
    CHANGING = "changing"  # cardinality ONE, changes over time (chains)
    STATIC = "static"  # cardinality ONE, never changes
    MANY = "many"  # values accumulate


@dataclass(frozen=True, slots=True)
class Family:
    """One attribute: its relation name, whom it describes, phrasings and question template."""

    relation: str
    subject: Subject
    role: Role
    question: str  # uses {name}
    phrasings: tuple[str, ...]  # use {name} and {value}
    values: tuple[str, ...]

    @property
    def cardinality(self) -> Cardinality:
        return Cardinality.MANY if self.role is Role.MANY else Cardinality.ONE


_P, _J = Subject.PERSON, Subject.PROJECT
_C, _S, _M = Role.CHANGING, Role.STATIC, Role.MANY

_PHONES = tuple(
    f"{area}-555-01{n:02d}" for area in ("206", "312", "415", "512") for n in range(100)
)
_VERSIONS = tuple(f"{a}.{b}.{c}" for a in range(1, 5) for b in range(10) for c in range(10))

FAMILIES: tuple[Family, ...] = (
    Family(
        "residence", _P, _C, "Where does {name} live?",
        ("{name} lives in {value}.", "{name}'s home is in {value}.", "{name} resides in {value}.",
         "Home for {name} is {value}.", "{name} is based in {value}.",
         "The city where {name} lives is {value}."),
        ("Lisbon", "Denver", "Osaka", "Montreal", "Edinburgh", "Valencia", "Auckland", "Krakow",
         "Tallinn", "Seoul", "Bogota", "Helsinki", "Marseille", "Hanoi", "Nairobi", "Calgary"),
    ),
    Family(
        "employer", _P, _C, "Which company does {name} work for?",
        ("{name} works for {value}.", "{name} is employed by {value}.",
         "{name}'s employer is {value}.", "{name} draws a salary from {value}.",
         "The company {name} works at is {value}.", "{name} is on the payroll at {value}."),
        ("Brightline Analytics", "Cobalt Robotics", "Harborview Logistics", "Meridian Health",
         "Northwind Foods", "Quillon Media", "Tessera Bank", "Veridian Energy",
         "Pinecrest Insurance", "Lumen Games", "Sablewood Studios", "Kestrel Aerospace"),
    ),
    Family(
        "role", _P, _C, "What is {name}'s job title?",
        ("{name} works as a {value}.", "{name}'s job title is {value}.",
         "{name} holds the position of {value}.", "The role {name} holds is {value}.",
         "{name} is employed as a {value}.", "On the org chart, {name} is listed as {value}."),
        ("staff engineer", "product manager", "data scientist", "delivery manager",
         "site reliability engineer", "UX researcher", "technical writer", "solutions architect",
         "security analyst", "QA lead", "developer advocate", "release manager"),
    ),
    Family(
        "diet", _P, _C, "What diet does {name} follow?",
        ("{name} follows a {value} diet.", "{name}'s diet is {value}.",
         "{name} keeps to a {value} diet.", "For team lunches, {name} orders {value} food.",
         "{name} sticks to {value} meals.", "The diet {name} follows is {value}."),
        ("vegan", "vegetarian", "pescatarian", "keto", "paleo", "gluten-free", "dairy-free",
         "low-FODMAP", "flexitarian", "Mediterranean", "halal", "kosher"),
    ),
    Family(
        "phone", _P, _C, "What is {name}'s phone number?",
        ("{name}'s phone number is {value}.", "You can reach {name} at {value}.",
         "Call {name} on {value}.", "{name} can be reached by phone at {value}.",
         "The number for {name} is {value}.", "{name} picks up calls at {value}."),
        _PHONES,
    ),
    Family(
        "preferred_tool", _P, _C, "Which code editor does {name} use?",
        ("{name} writes code in {value}.", "{name}'s editor of choice is {value}.",
         "{name} prefers {value} for editing code.", "The editor {name} uses is {value}.",
         "{name} does all programming in {value}.", "{name} codes with {value}."),
        ("Neovim", "Emacs", "VS Code", "IntelliJ IDEA", "Sublime Text", "Zed", "Kakoune",
         "PyCharm", "Xcode", "BBEdit", "Notepad++", "Eclipse"),
    ),
    Family(
        "relationship_status", _P, _C, "What is {name}'s relationship status?",
        ("{name} is {value}.", "{name}'s relationship status is {value}.",
         "On the benefits form, {name} is listed as {value}.",
         "{name} describes their relationship status as {value}.",
         "Relationship status for {name}: {value}.",
         "The insurance paperwork lists {name} as {value}."),
        ("single", "married", "engaged", "divorced", "widowed", "separated",
         "in a relationship", "in a civil partnership"),
    ),
    Family(
        "vehicle", _P, _C, "What car does {name} drive?",
        ("{name} drives a {value}.", "{name}'s car is a {value}.",
         "{name} gets around in a {value}.", "{name} commutes in a {value}.",
         "The car {name} drives is a {value}.", "{name}'s vehicle is a {value}."),
        ("Toyota Corolla", "Honda Civic", "Subaru Outback", "Volvo XC40", "Tesla Model 3",
         "Ford Mustang", "Mazda MX-5", "Kia Niro", "Hyundai Ioniq", "Volkswagen Golf",
         "Nissan Leaf", "BMW i3"),
    ),
    Family(
        "project_goal", _J, _C, "What is the goal of {name}?",
        ("The goal of {name} is to {value}.", "{name} aims to {value}.",
         "The team behind {name} is working to {value}.", "{name}'s main objective is to {value}.",
         "The top priority for {name} is to {value}.", "{name} exists to {value}."),
        ("reduce checkout latency", "cut cloud spend", "support offline mode",
         "migrate to Kubernetes", "improve search relevance", "reach SOC 2 compliance",
         "launch in Japan", "halve page load time", "add multi-currency support",
         "replace the cron scheduler", "raise test coverage", "ship a public API"),
    ),
    Family(
        "api_endpoint", _J, _C, "Which API endpoint does {name} serve?",
        ("{name} serves requests at {value}.", "Clients call {name} through the {value} endpoint.",
         "The endpoint for {name} is {value}.", "{name} exposes its API at {value}.",
         "Send requests for {name} to {value}.", "{name} listens on the {value} route."),
        ("/v1/orders", "/v2/orders", "/v3/orders", "/api/cart", "/api/v1/cart",
         "/internal/sync", "/graphql", "/rpc/invoke", "/public/v2/items", "/edge/lookup",
         "/svc/quote", "/gateway/submit"),
    ),
    Family(
        "library_version", _J, _C, "Which version of the shared client library does {name} use?",
        ("{name} depends on version {value} of the shared client library.",
         "{name} pins the shared client library at {value}.",
         "The shared client library in {name} is at version {value}.",
         "{name} builds against shared client library {value}.",
         "The lockfile of {name} resolves the shared client library to {value}.",
         "{name} ships with shared client library version {value}."),
        _VERSIONS,
    ),
    Family(
        "region", _J, _C, "Which cloud region hosts {name}?",
        ("{name} runs in {value}.", "{name} is deployed to the {value} region.",
         "The region hosting {name} is {value}.", "{name}'s servers live in {value}.",
         "Production traffic for {name} is served from {value}.", "{name} is hosted in {value}."),
        ("eu-west-1", "us-east-2", "ap-southeast-1", "ca-central-1", "sa-east-1", "eu-north-1",
         "us-west-2", "ap-northeast-3", "me-south-1", "af-south-1"),
    ),
    Family(
        "datastore", _J, _C, "Which database does {name} use?",
        ("{name} stores its data in {value}.", "{name} persists records to {value}.",
         "The datastore behind {name} is {value}.", "{name} keeps its state in {value}.",
         "The database for {name} is {value}.", "{name} reads and writes {value}."),
        ("PostgreSQL", "MySQL", "MongoDB", "Cassandra", "DynamoDB", "CockroachDB", "SQLite",
         "Redis", "Elasticsearch", "ClickHouse", "Neo4j", "MariaDB"),
    ),
    Family(
        "birthplace", _P, _S, "In which country was {name} born?",
        ("{name} was born in {value}.", "{name}'s birthplace is {value}.",
         "{name} is a native of {value}.", "The country where {name} was born is {value}.",
         "{name} came into the world in {value}."),
        ("Portugal", "Kenya", "Chile", "Vietnam", "Norway", "Ghana", "Peru", "Ireland",
         "Malaysia", "Morocco", "Uruguay", "Estonia"),
    ),
    Family(
        "alma_mater", _P, _S, "Which university did {name} attend?",
        ("{name} studied at {value}.", "{name} graduated from {value}.",
         "{name} holds a degree from {value}.", "{name} is a graduate of {value}.",
         "The university {name} attended is {value}."),
        ("Carnegie Mellon University", "Stanford University", "Rice University",
         "Duke University", "Cornell University", "Purdue University", "Tufts University",
         "McGill University", "KU Leuven", "Sciences Po", "Georgia Tech", "Caltech"),
    ),
    Family(
        "license", _J, _S, "Under which license is {name} released?",
        ("{name} is released under the {value} license.", "The license of {name} is {value}.",
         "{name} ships under the {value} license.", "{name} is licensed as {value}.",
         "Code in {name} is covered by the {value} license."),
        ("MIT", "Apache-2.0", "BSD-3-Clause", "GPL-3.0", "MPL-2.0", "LGPL-2.1", "ISC",
         "Unlicense", "EUPL-1.2", "AGPL-3.0"),
    ),
    Family(
        "implementation_language", _J, _S, "Which programming language is {name} written in?",
        ("{name} is written in {value}.", "{name}'s codebase is in {value}.",
         "The source of {name} is {value} code.", "{name} is implemented in {value}.",
         "Engineers build {name} in {value}."),
        ("Rust", "Kotlin", "Elixir", "TypeScript", "Scala", "Haskell", "Clojure", "OCaml",
         "Erlang", "Dart", "Swift", "Fortran"),
    ),
    Family(
        "speaks", _P, _M, "Which languages does {name} speak?",
        ("{name} speaks {value}.", "{name} is fluent in {value}.",
         "{name} can hold a conversation in {value}.", "{name} knows {value} well.",
         "Among the languages {name} speaks is {value}."),
        ("Spanish", "Japanese", "Swahili", "Portuguese", "Korean", "Hindi", "Arabic", "Dutch",
         "Polish", "Turkish", "Greek", "Finnish", "Tagalog", "Hebrew"),
    ),
    Family(
        "has_pet", _P, _M, "Which pets does {name} have?",
        ("{name} has a {value}.", "{name} owns a {value}.", "{name} takes care of a {value}.",
         "There is a {value} in {name}'s home.", "{name} shares the house with a {value}."),
        ("beagle", "tabby cat", "cockatiel", "bearded dragon", "corgi", "goldfish", "rabbit",
         "hamster", "greyhound", "tortoise", "ferret", "parakeet"),
    ),
    Family(
        "integrates_with", _J, _M, "Which services does {name} integrate with?",
        ("{name} integrates with {value}.", "{name} connects to {value}.",
         "{name} has an integration for {value}.", "{name} talks to {value}.",
         "{name} sends events to {value}."),
        ("Slack", "Stripe", "Twilio", "Salesforce", "Zendesk", "PagerDuty", "Okta", "Datadog",
         "Jira", "GitHub", "Snowflake", "Segment"),
    ),
)  # fmt: skip

# Framings around a statement: the same pool for every version, so they carry no recency.
PREFIXES = (
    "",
    "According to the team wiki, ",
    "Per the HR system, ",
    "From the onboarding notes: ",
    "The shared spreadsheet says ",
    "As listed in the directory, ",
    "For the record, ",
    "Quick note: ",
    "From an email thread: ",
    "Someone mentioned at lunch that ",
)
SUFFIXES = (
    "",
    " (source: team wiki)",
    " (per the CRM)",
    " (from a support ticket)",
    " (noted at the offsite)",
    " (from the quarterly survey)",
)

FIRST_NAMES = (
    "Amara", "Bruno", "Chiara", "Dmitri", "Elena", "Farid", "Greta", "Hiroshi", "Ingrid",
    "Jonas", "Keiko", "Luca", "Mariana", "Nikhil", "Olga", "Pablo", "Quentin", "Rosa", "Soren",
    "Tamsin", "Umar", "Valeria", "Wendell", "Ximena", "Yusuf", "Zofia", "Anika", "Bastian",
    "Camille", "Desmond", "Esther", "Felix", "Gideon", "Hana", "Idris", "Jovana", "Kenji",
    "Leila", "Mateo", "Nadia", "Oscar", "Priya", "Rafael", "Sakura", "Tobias", "Ulla", "Vikram",
    "Wanjiru", "Yara", "Zane",
)  # fmt: skip
LAST_NAMES = (
    "Okafor", "Lindqvist", "Moreau", "Takahashi", "Novak", "Alvarez", "Brennan", "Castellano",
    "Dubois", "Eriksen", "Fitzgerald", "Gallagher", "Haddad", "Iwasaki", "Jablonski",
    "Kowalczyk", "Larsen", "Mbeki", "Nakamura", "Oyelaran", "Petrov", "Quintero", "Rasmussen",
    "Sandoval", "Thornton", "Ueda", "Vasquez", "Whitaker", "Yilmaz", "Zielinski", "Abernathy",
    "Bianchi", "Chowdhury", "Delacroix", "Esposito", "Ferreira", "Gutierrez", "Halvorsen",
    "Ibarra", "Jansen", "Kaminski", "Lombardi", "Mendoza", "Nieminen", "Ortega", "Pellegrini",
    "Rinaldi", "Sorensen", "Tanaka", "Volkov",
)  # fmt: skip
CODENAMES = (
    "Halcyon", "Bluefin", "Marigold", "Sextant", "Tamarack", "Juniper", "Kingfisher", "Aurora",
    "Basalt", "Cinder", "Driftwood", "Falcon", "Granite", "Harrier", "Ibis", "Jasper", "Lantern",
    "Mosaic", "Nimbus", "Obsidian", "Pelican", "Quartz", "Raven", "Saffron", "Thistle", "Umber",
    "Vesper", "Willow", "Yarrow", "Zephyr",
)  # fmt: skip
PROJECT_KINDS = (
    "billing service", "search API", "checkout service", "recommendation engine",
    "notification service", "auth gateway", "analytics pipeline", "mobile app",
    "inventory service", "reporting dashboard",
)  # fmt: skip

# Distractors: neutral office chatter that states no value of any family.
DISTRACTOR_TEMPLATES = (
    "{person} shared slides about {topic} at the {event}.",
    "{person} asked a question about {topic} during the {event}.",
    "Reminder: the {event} on {topic} is in the {room} room.",
    "{person} left a comment on the {topic} document.",
    "The {event} ran long because of the {topic} discussion.",
    "{person} bought coffee for everyone at the {event}.",
    "Notes from the {event}: {topic} needs an owner.",
    "{project} had a quiet week with no incidents.",
    "{person} and {person2} paired on {topic}.",
    "The {room} room is booked for the {event} about {topic}.",
    "{person} will present {topic} findings at the {event}.",
    "A question about {project} came up at the {event}.",
)
TOPICS = (
    "quarterly planning", "accessibility audit", "incident review", "hiring pipeline",
    "design tokens", "observability", "budget forecast", "onboarding docs", "load testing",
    "dependency cleanup", "error budgets", "customer interviews", "naming conventions",
    "holiday rota", "office seating",
)  # fmt: skip
EVENTS = (
    "all-hands", "design review", "sprint demo", "town hall", "architecture forum",
    "lunch and learn", "planning session", "retrospective",
)  # fmt: skip
ROOMS = ("Maple", "Cedar", "Birch", "Aspen", "Redwood", "Elm")


def families(role: Role | None = None, subject: Subject | None = None) -> tuple[Family, ...]:
    """The families with this role and subject (either may be None: any)."""
    return tuple(
        family
        for family in FAMILIES
        if (role is None or family.role is role) and (subject is None or family.subject is subject)
    )
