"""Event kappa families: things that happened (or are booked) at a time; another one on another
day is a separate event, a correction of the same one replaces it."""

from __future__ import annotations

from shared_core.eval.kappa_families import Family, val, vals

RUNS = Family(
    name="runs",
    subject="person",
    shape="event",
    when="day",
    conflicts=("fitness", "injury"),
    values=(
        val("3 km|1.9 miles|three kilometres"),
        val("5 km|3.1 miles|five kilometres|a 5k"),
        val("8 km|5 miles|eight kilometres"),
        val("10 km|6.2 miles|ten kilometres|a 10k"),
        val("12 km|7.5 miles|twelve kilometres"),
        val("15 km|9.3 miles|fifteen kilometres"),
        val("a half marathon|21.1 km|13.1 miles"),
        val("a full marathon|42.2 km|26.2 miles"),
    ),
    state=(
        "{S} ran {v} {when}",
        "{S} went for a run {when} and covered {v}",
        "{S} logged {v} {when}",
        "{when}, {S} ran {v}",
        "{P} run {when} was {v}",
        "{S} did {v} along the river {when}",
    ),
    detail=(
        "{S} ran {v} {when}, mostly in the rain",
        "{S} ran {v} {when} with {p} running club",
    ),
    change=(
        "correction: {P} run {when} was {v}, not {old}",
        "actually {S} ran {v} {when}, not {old}",
        "{S} misremembered; the run {when} was {v} rather than {old}",
        "the watch data shows {P} run {when} was {v}, not {old}",
    ),
    retract=(
        "scratch that, {S} didn't run {when} after all",
        "{S} skipped the run {when}; it never happened",
    ),
)

WORKOUTS = Family(
    name="workouts",
    subject="person",
    shape="event",
    when="day",
    conflicts=("fitness", "injury"),
    values=(
        val("a spin class", bare="spin class"),
        val("a yoga class", bare="yoga class"),
        val("a HIIT session|a high-intensity interval session", bare="HIIT session"),
        val("a 45-minute swim", bare="swim"),
        val("a pilates class", bare="pilates class"),
        val("a boxing class", bare="boxing class"),
        val("an hour of rowing", bare="rowing session"),
        val("a climbing session at the wall", bare="climbing session"),
        val("a kettlebell workout", bare="kettlebell workout"),
    ),
    state=(
        "{S} did {v} {when}",
        "{S} fit in {v} {when}",
        "{when} {S} did {v}",
        "{S} squeezed in {v} {when}",
        "{P} workout {when} was {v}",
        "{S} got through {v} {when}",
    ),
    change=(
        "correction: {P} workout {when} was {v}, not {old}",
        "actually it was {v} {when}, not {old}",
        "{S} mixed it up: {when} was {v}, not {old}",
    ),
    retract=(
        "{S} ended up skipping the {vb} {when}",
        "the {vb} {when} was cancelled, so {S} didn't go",
    ),
)

MEALS = Family(
    name="meals",
    subject="person",
    shape="event",
    when="day",
    conflicts=("diet",),
    values=vals(
        "ramen",
        "a burrito",
        "pad thai",
        "a Caesar salad",
        "sushi",
        "a cheeseburger",
        "lentil soup",
        "pho",
        "a margherita pizza",
        "shakshuka",
        "dal and rice",
        "jollof rice",
        "a poke bowl",
    ),
    state=(
        "{S} had {v} for lunch {when}",
        "{S} ate {v} {when}",
        "{S} cooked {v} for dinner {when}",
        "{when} {S} had {v}",
        "{S} grabbed {v} {when}",
        "dinner {when} was {v}",
    ),
    change=(
        "correction: {S} had {v} {when}, not {old}",
        "actually the meal {when} was {v}, not {old}",
    ),
)

MEETINGS = Family(
    name="meetings",
    subject="person",
    shape="event",
    when="day",
    values=vals(
        "the Acme team",
        "a recruiter from Stripe",
        "the accountant",
        "the new investors",
        "a thesis advisor",
        "the landlord",
        "a client from Globex",
        "the design agency",
        "the bank's mortgage adviser",
        "the school principal",
    ),
    state=(
        "{S} [have|has] a meeting with {v} {when}",
        "{Sbe} meeting {v} {when}",
        "{Sbe} scheduled to talk to {v} {when}",
        "{S} [have|has] a call booked with {v} {when}",
        "{when} {S} [meet|meets] {v}",
        "{S} [have|has] {v} in the diary {when}",
    ),
    change=("correction: the meeting {when} is with {v}, not {old}",),
    retract=(
        "the meeting with {v} {when} got cancelled",
        "{S} called off the meeting with {v} {when}",
        "{v} cancelled on {O}, so nothing is happening {when}",
    ),
    move=(
        "the meeting with {v} moved from {oldwhen} to {when}",
        "{S} rescheduled {v} from {oldwhen} to {when}",
        "the {oldwhen} meeting with {v} is now {when}",
    ),
)

STAGING_DEPLOYS = Family(
    name="staging_deploys",
    subject="service",
    shape="event",
    when="day",
    values=vals(
        "v2.3.0",
        "v2.3.1",
        "v2.4.0",
        "build 4512",
        "release 3.1",
        "v1.18.2",
        "v5.0.0-beta",
        "the hotfix branch",
        "commit a1b2c3d",
    ),
    state=(
        "we deployed {v} of {S} to staging {when}",
        "{S} {v} went out to staging {when}",
        "{v} of {S} was pushed to the staging environment {when}",
        "staging got {v} of {S} {when}",
        "{when} we put {v} of {S} on staging",
        "the staging deploy of {S} {when} was {v}",
    ),
    change=(
        "correction: the staging deploy of {S} {when} was {v}, not {old}",
        "actually {when} we put {v} of {S} on staging, not {old}",
    ),
    retract=("the staging deploy of {S} {when} never happened; the pipeline failed first",),
)

TRIPS = Family(
    name="trips",
    subject="person",
    shape="event",
    when="date",
    values=vals(
        "Lisbon",
        "Tokyo",
        "Nairobi",
        "Chicago",
        "Reykjavik",
        "Hanoi",
        "Marrakesh",
        "Vancouver",
        "Rome",
        "Lima",
    ),
    state=(
        "{S} [have|has] a flight to {v} {when}",
        "{Sbe} flying to {v} {when}",
        "{Sbe} off to {v} {when}",
        "{S} booked a trip to {v} leaving {when}",
        "{S} [leave|leaves] for {v} {when}",
        "{Sbe} heading to {v} {when}",
    ),
    change=("correction: {Sbe} flying to {v} {when}, not {old}",),
    retract=(
        "{S} cancelled the trip to {v}",
        "the {v} trip {when} is off",
        "{S} won't be going to {v} {when} after all",
    ),
    move=(
        "{S} pushed the {v} trip from {oldwhen} to {when}",
        "the flight to {v} moved from {oldwhen} to {when}",
        "{S} now [leave|leaves] for {v} {when} instead of {oldwhen}",
    ),
)

INCIDENTS = Family(
    name="incidents",
    subject="service",
    shape="event",
    when="day",
    values=vals(
        "a 20-minute outage",
        "a partial outage",
        "elevated error rates",
        "a spike in latency",
        "a database failover",
        "an expired TLS certificate",
        "a memory leak that needed restarts",
        "an hour-long outage",
        "a bad deploy that had to be rolled back",
    ),
    state=(
        "{S} had {v} {when}",
        "{S} suffered {v} {when}",
        "there was {v} on {S} {when}",
        "{when} {S} had {v}",
        "the incident log for {S} shows {v} {when}",
        "{S} went through {v} {when}",
    ),
    change=("correction: the incident on {S} {when} was {v}, not {old}",),
    retract=("post-mortem note: {S} had no incident {when}; the alert was a false positive",),
)

PURCHASES = Family(
    name="purchases",
    subject="person",
    shape="event",
    when="day",
    values=vals(
        "a new mattress",
        "a road bike",
        "a standing desk",
        "noise-cancelling headphones",
        "a coffee grinder",
        "a winter coat",
        "a drone",
        "a sewing machine",
        "hiking boots",
        "an air fryer",
    ),
    state=(
        "{S} bought {v} {when}",
        "{S} ordered {v} online {when}",
        "{S} picked up {v} {when}",
        "{when} {S} treated {r} to {v}",
        "{S} splurged on {v} {when}",
        "{S} finally bought {v} {when}",
    ),
    change=("correction: what {S} bought {when} was {v}, not {old}",),
)

DOCTOR_VISITS = Family(
    name="doctor_visits",
    subject="person",
    shape="event",
    when="date",
    values=vals(
        "the dentist",
        "a dermatologist",
        "the GP|the family doctor",
        "a physiotherapist|a physio",
        "the eye doctor|an optometrist",
        "a cardiologist",
        "an allergist",
        "the orthodontist",
    ),
    state=(
        "{S} [have|has] an appointment with {v} {when}",
        "{Sbe} seeing {v} {when}",
        "{Sbe} booked in with {v} {when}",
        "{S} [have|has] to see {v} {when}",
        "{P} appointment with {v} is {when}",
        "{S} [go|goes] to {v} {when}",
    ),
    change=("correction: the appointment {when} is with {v}, not {old}",),
    retract=(
        "{S} cancelled the appointment with {v} {when}",
        "{v} cancelled {P} appointment {when}",
    ),
    move=(
        "the appointment with {v} moved from {oldwhen} to {when}",
        "{S} rebooked {v} from {oldwhen} to {when}",
        "{P} {oldwhen} appointment with {v} is now {when}",
    ),
)

CONCERTS = Family(
    name="concerts",
    subject="person",
    shape="event",
    when="date",
    values=(
        val("Radiohead"),
        val("the Berlin Philharmonic", bare="Berlin Philharmonic"),
        val("Burna Boy"),
        val("BTS"),
        val("Coldplay"),
        val("a jazz trio at the Blue Note", bare="Blue Note"),
        val("Arctic Monkeys|the Arctic Monkeys", bare="Arctic Monkeys"),
        val("Rosalía"),
        val("the London Symphony Orchestra|the LSO", bare="LSO"),
        val("a Fleetwood Mac tribute band", bare="tribute band"),
    ),
    state=(
        "{S} [have|has] tickets for {v} {when}",
        "{Sbe} going to see {v} {when}",
        "{Sbe} seeing {v} live {when}",
        "{S} got tickets to see {v} {when}",
        "{when} {Sbe} going to the {vb} concert",
        "{S} [have|has] a concert {when}: {v}",
    ),
    change=("correction: the concert {when} is {v}, not {old}",),
    retract=(
        "the {vb} show {when} was cancelled",
        "{S} sold {p} tickets for {v} and won't be going",
    ),
    move=("the {vb} concert moved from {oldwhen} to {when}",),
)

FAMILIES = (
    RUNS,
    WORKOUTS,
    MEALS,
    MEETINGS,
    STAGING_DEPLOYS,
    TRIPS,
    INCIDENTS,
    PURCHASES,
    DOCTOR_VISITS,
    CONCERTS,
)
