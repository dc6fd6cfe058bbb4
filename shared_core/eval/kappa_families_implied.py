"""Kappa implied-state families: a state, then later evidence from world knowledge that the state
is over (label 1, little word overlap), retractions that end it (label 1), and "plans" with the
same vocabulary that do not end it (label 0: booking the test is not passing it).

``subjects`` is "person", a subject pool of kappa_families_subjects, or "|"-separated thing
names. Templates use the slots of kappa_families ({S}, {Sbe}, {Shave}, {P}, {p}, {s}, [a|b]).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Implied:
    name: str
    subjects: str
    state: tuple[str, ...]
    evidence: tuple[str, ...]
    plans: tuple[str, ...] = ()
    retract: tuple[str, ...] = ()


def imp(
    name: str,
    subjects: str,
    state: tuple[str, ...],
    evidence: tuple[str, ...],
    plans: tuple[str, ...] = (),
    retract: tuple[str, ...] = (),
) -> Implied:
    return Implied(f"implied_{name}", subjects, state, evidence, plans, retract)


FAMILIES: tuple[Implied, ...] = (
    imp(
        "unemployed",
        "person",
        ("{Sbe} unemployed since the spring", "{Sbe} out of work", "{Sbe} between jobs right now"),
        (
            "{S} had {p} first day at the new job today",
            "{S} got {p} first paycheck",
            "{S} signed an employment contract with a logistics firm and starts Monday",
            "{P} new manager gave {o} a laptop and a badge this morning",
        ),
        ("{S} had a second interview at a bank", "{S} sent out ten applications this week"),
    ),
    imp(
        "single",
        "person",
        ("{Sbe} single and not looking", "{Sbe} not seeing anyone", "{Sbe} not married"),
        (
            "{S} posted {p} wedding photos",
            "{P} wife made dinner for the whole family",
            "{S} and {p} husband just got back from the honeymoon",
            "{S} introduced everyone to {p} new spouse at the party",
        ),
        ("{S} went on a first date on Friday", "{S} signed up for a dating app"),
    ),
    imp(
        "no_kids",
        "person",
        ("{S} [have|has] no kids yet", "{S} [don't|doesn't] have children", "{Sbe} child-free"),
        (
            "{S} filmed {p} daughter's first steps",
            "{S} dropped {p} son off at nursery this morning",
            "{P} twins turned one last week",
            "{S} spent the night up with {p} teething baby",
        ),
        ("{S} babysat {p} nephew on Saturday", "{S} [think|thinks] about having kids one day"),
    ),
    imp(
        "pregnant",
        "person",
        (
            "{Sbe} pregnant with {p} first",
            "{Sbe} expecting a baby in spring",
            "{Sbe} seven months pregnant",
        ),
        (
            "{S} brought the newborn to the office to meet everyone",
            "the baby arrived on Tuesday, 3.4 kg",
            "{S} sent round photos from the maternity ward with the baby",
            "{S} pushed the pram round the park with the baby asleep in it",
        ),
        ("{S} had {p} 30-week scan today", "{S} bought a cot and a pram"),
    ),
    imp(
        "never_japan",
        "person",
        (
            "{Shave} never been to Japan",
            "{S} [have|has] never visited Japan",
            "{Shave} not been to Asia",
        ),
        (
            "{Sbe} posting photos from the temples in Kyoto",
            "{S} got back from two weeks in Tokyo",
            "{S} brought back matcha from a market in Osaka",
            "{S} climbed Mount Fuji last summer",
        ),
        ("{Sbe} saving up for a trip to Japan", "{S} watched a documentary about Kyoto"),
    ),
    imp(
        "learning_to_drive",
        "person",
        (
            "{Sbe} learning to drive with an instructor",
            "{S} [have|has] a provisional licence",
            "{S} [can't|can't] drive yet",
        ),
        (
            "{S} passed {p} driving test on the second attempt",
            "{S} drove {p} own car to work today",
            "{S} got {p} full licence in the post",
            "{S} drove us to the coast on Sunday, no instructor needed",
        ),
        ("{S} booked {p} driving test for next month", "{S} had another driving lesson today"),
    ),
    imp(
        "printer_toner",
        "the office printer|the kitchen printer|the printer in reception",
        (
            "{S} is out of toner again",
            "{S} won't print, the toner is empty",
            "{S} has no toner left",
        ),
        (
            "{S} churned out 200 handouts before the workshop",
            "I printed the whole contract on {S} an hour ago",
            "the pages coming out of {S} are crisp and dark",
            "the sales team printed their brochures on {S} this afternoon",
        ),
        ("someone ordered toner for {S}", "IT logged a ticket about {S}"),
    ),
    imp(
        "server_down",
        "service",
        ("{S} is down", "{S} is unreachable", "{S} crashed and won't come back up"),
        (
            "we ran the full test suite against {S} without problems",
            "customers have been checking out through {S} all afternoon",
            "the health dashboard for {S} has been green for an hour",
            "{S} served 40k requests in the last hour",
        ),
        (
            "the on-call engineer is looking into {S}",
            "we opened an incident for {S}",
            "a fix for {S} is being deployed",
        ),
    ),
    imp(
        "private_beta",
        "app|release",
        ("{S} is in private beta", "{S} is invite-only", "only beta testers can use {S}"),
        (
            "{S} had its public launch day: 30k signups",
            "anyone can download {S} from the store now",
            "{S} is featured on the App Store front page",
            "the press reviewed {S} after the launch event",
        ),
        ("we invited 200 more testers to {S}", "the launch of {S} is planned for June"),
    ),
    imp(
        "on_leave",
        "person",
        ("{Sbe} on parental leave", "{Sbe} on sick leave", "{Sbe} on a sabbatical"),
        (
            "{S} led the planning meeting in the office today",
            "{Sbe} back at {p} desk answering emails",
            "{S} presented the quarterly numbers to the board this morning",
            "{S} reviewed six pull requests today",
        ),
        ("{S} checked {p} email once from home", "{S} [plan|plans] to return in March"),
    ),
    imp(
        "car_in_shop",
        "person",
        (
            "{P} car is in the shop with a gearbox fault",
            "{P} car is at the garage for brake repairs",
            "{P} car broke down on the ring road",
        ),
        (
            "{S} drove {p} car to the lake this weekend",
            "{S} picked the kids up from school in {p} car",
            "{S} did a 300-mile road trip in {p} car",
            "{S} parked {p} car outside the office this morning",
        ),
        ("the garage called {O} about the parts", "the mechanic quoted {O} $900"),
    ),
    imp(
        "no_customers_region",
        "org",
        (
            "{S} has no customers in Latin America",
            "{S} doesn't sell anywhere in Latin America yet",
            "{S} has no clients south of the Mexican border",
        ),
        (
            "{S} signed its first client in São Paulo",
            "{S} opened a support line for its customers in Buenos Aires",
            "a bank in Bogotá renewed its contract with {S}",
            "{S} invoiced its biggest customer in Lima",
        ),
        ("{S} is researching the market in Brazil", "{S} hired a consultant to look at Chile"),
    ),
    imp(
        "fully_remote",
        "org",
        ("{S} is fully remote", "{S} has no office", "everyone at {S} works from home"),
        (
            "everyone at {S} must be in the office three days a week",
            "{S} staff badge into the new headquarters every morning",
            "{S} assigned desks on the fourth floor to every team",
            "{S} staff now commute to the office on Tuesdays and Thursdays",
        ),
        ("{S} rented a room for the offsite", "{S} held a meetup in a co-working space"),
    ),
    imp(
        "shop_open",
        "the corner bookshop|the bakery on Elm Street|the old record shop|the hardware store",
        ("{S} is still open", "{S} is trading as usual", "{S} is open every day"),
        (
            "they're building flats where {S} used to be",
            "the windows of {S} are boarded up and the sign is gone",
            "{S} is a phone repair shop now",
            "the site of {S} was demolished last month",
        ),
        ("{S} shortened its hours in January", "{S} had a closing-down rumour on Facebook"),
        ("{S} closed for good", "{S} shut its doors last week"),
    ),
    imp(
        "no_tests",
        "service",
        ("{S} has no tests", "{S} has zero test coverage", "nobody wrote tests for {S}"),
        (
            "CI now blocks merges to {S} below 80% coverage",
            "the test suite for {S} runs 1,400 cases on every PR",
            "a failing unit test in {S} caught the bug before release",
            "coverage for {S} is at 92%",
        ),
        ("there's a ticket to add tests to {S}", "we plan to write tests for {S} next sprint"),
    ),
    imp(
        "broken_leg",
        "person",
        ("{S} broke {p} leg", "{Sbe} on crutches", "{P} leg is in a cast"),
        (
            "{S} ran a 10k on Sunday",
            "{S} played the full football match",
            "{S} hiked up the mountain with us",
            "{S} was dancing all night at the wedding",
        ),
        ("{S} had the cast checked at the clinic", "{S} started physio for the leg"),
    ),
    imp(
        "vegetarian",
        "person",
        (
            "{S} [keep|keeps] to a vegetarian diet, at home and out",
            "{S} never [touch|touches] meat or fish",
            "{Sbe} vegan these days",
        ),
        (
            "{S} ordered the rare ribeye at dinner",
            "{S} had a bacon sandwich for breakfast",
            "{S} grilled chicken wings at the barbecue and ate half of them",
            "{P} favourite dinner these days is lamb chops",
        ),
        ("{S} cooked a steak for {p} guests", "{S} bought sausages for the dog"),
    ),
    imp(
        "lives_with_parents",
        "person",
        (
            "{S} [live|lives] with {p} parents",
            "{S} still [live|lives] at home",
            "{S} [live|lives] in {p} childhood bedroom",
        ),
        (
            "{S} got the keys to {p} own flat",
            "{S} had a housewarming party at {p} new place",
            "{S} hung pictures in {p} first apartment",
            "{S} signed the lease on a studio and moved in",
        ),
        ("{Sbe} looking at flats", "{S} saved up a deposit"),
    ),
    imp(
        "student",
        "person",
        (
            "{Sbe} a second-year student",
            "{Sbe} at university",
            "{Sbe} doing {p} undergraduate degree",
        ),
        (
            "{S} had {p} first day as a full-time engineer",
            "{S} framed {p} graduation certificate",
            "{S} threw {p} mortarboard in the air at the ceremony",
            "{S} started paying back {p} student loan from {p} salary",
        ),
        ("{S} handed in {p} dissertation draft", "{S} applied for graduate jobs"),
    ),
    imp(
        "renting",
        "person",
        ("{S} [rent|rents] {p} place", "{Sbe} renting a flat", "{S} [pay|pays] rent to a landlord"),
        (
            "{S} closed on {p} house",
            "{S} got the deeds to {p} new house",
            "{S} made the first mortgage payment on {p} home",
            "{S} knocked down a wall in the house {s} bought",
        ),
        ("{S} got a mortgage in principle", "{S} viewed a house on Saturday"),
    ),
    imp(
        "no_pets",
        "person",
        (
            "{S} [have|has] no pets at all",
            "{S} [don't|doesn't] have a dog",
            "{S} [live|lives] without any animals",
        ),
        (
            "{S} walked the new puppy in the park",
            "{P} cat knocked a glass off the table",
            "{S} took {p} dog to the vet for its jabs",
            "{S} bought a litter tray for the kitten",
        ),
        ("{S} fed the neighbours' cat", "{S} [want|wants] a dog one day"),
    ),
    imp(
        "endpoint_available",
        "the /v1/orders endpoint|the legacy export API|the /search endpoint|the old webhook URL",
        ("{S} is available", "{S} is live", "clients can call {S}"),
        (
            "{S} now returns 410 Gone",
            "every request to {S} returns 404",
            "the docs list {S} under removed APIs",
            "traffic to {S} dropped to zero after the cutoff",
        ),
        ("{S} is marked deprecated in the docs", "we emailed clients about {S}"),
        ("{S} has been removed", "{S} was shut down"),
    ),
    imp(
        "flag_off",
        "flag",
        ("{S} is off", "{S} is disabled for everyone", "{S} is turned off in production"),
        (
            "users are already using the feature behind {S}",
            "support got 30 tickets about the feature behind {S} today",
            "half of all customers see the new flow from {S}",
            "analytics show heavy use of the feature gated by {S}",
        ),
        ("we plan to turn on {S} next week", "QA is testing {S} in staging"),
    ),
    imp(
        "hiring_freeze",
        "org|team",
        ("{S} has a hiring freeze", "{S} isn't hiring", "{S} froze all new headcount"),
        (
            "{S} onboarded five new engineers",
            "{S} welcomed three new hires on Monday",
            "{S} posted twelve open roles",
            "recruiters from {S} were at the career fair making offers",
        ),
        ("{S} interviewed a candidate for a future role", "{S} drafted next year's hiring plan"),
    ),
    imp(
        "repo_private",
        "library",
        ("the repo for {S} is private", "{S} is closed source", "{S} is internal-only"),
        (
            "the repo for {S} got 2k stars after it went public on HN",
            "outside contributors sent ten pull requests to {S}",
            "{S} is on GitHub for anyone to fork",
            "a stranger filed a bug against {S} on GitHub",
        ),
        ("we're cleaning up {S} before open-sourcing it", "legal is reviewing the licence for {S}"),
    ),
    imp(
        "cron_running",
        "the nightly backup cron|the cleanup job|the hourly sync cron|the report mailer",
        ("{S} runs every night", "{S} is scheduled and running", "{S} fires on schedule"),
        (
            "there have been no new backups since March",
            "the logs show {S} hasn't fired in two weeks",
            "nobody has received the output of {S} since the migration",
            "{S} was deleted from the crontab",
        ),
        ("{S} ran a bit slower last night", "we added an alert to {S}"),
        ("{S} has been turned off", "{S} was disabled"),
    ),
)
