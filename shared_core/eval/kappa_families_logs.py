"""Kappa log families: dated or numbered records (bills, sales, sprints, builds, tickets, jobs)
where a newer entry for another period is a new record, not a replacement (label 0); and the
"current/latest X" state statements with the same vocabulary, which do change (label 1).

Log entry templates take ``{when}`` (the period marker) and ``{n}`` (the number or outcome);
state templates take ``{n}`` (and ``{old}`` in changes). A change template starting with ``+``
needs the new number above the old, ``-`` below.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Log:
    name: str
    period: str  # a key of the period pools in kappa_families_extra
    value: str  # a key of VALUES
    entries: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class State:
    name: str
    value: str
    state: tuple[str, ...]
    change: tuple[str, ...]


# key: (low, high, step, format) numbers, or a tuple of words
VALUES: dict[str, tuple[int, int, int, str] | tuple[str, ...]] = {
    "bill": (38, 260, 1, "${:,}"),
    "rent": (900, 2400, 25, "${:,}"),
    "units": (40, 900, 5, "{:,}"),
    "signups": (60, 4800, 10, "{:,}"),
    "revenue": (20, 900, 5, "${:,}k"),
    "steps": (3200, 18500, 1, "{:,}"),
    "kg": (600, 950, 1, "{}"),  # tenths of a kilogram
    "score": (48, 99, 1, "{}%"),
    "minutes": (12, 95, 1, "{} minutes"),
    "few": (2, 14, 1, "{}"),
    "status": ("passed", "failed", "timed out", "passed with two flaky tests", "was green"),
    "grade": ("a B+", "a B", "a C+", "a 2:1", "a distinction", "a merit", "a pass"),
    "dentist": ("a check-up", "a cleaning", "a filling", "a scale and polish"),
}

LOGS: tuple[Log, ...] = (
    Log(
        "log_bill",
        "month",
        "bill",
        (
            "Paid the {when} electricity bill: {n}",
            "The {when} gas bill came to {n}",
            "{when} phone bill paid, {n}",
            "Water bill for {when}: {n}, paid by card",
            "Settled the {when} internet invoice ({n})",
        ),
    ),
    Log(
        "log_invoice",
        "month",
        "revenue",
        (
            "Sent the {when} invoice to the client for {n}",
            "Invoice for {when} consulting work: {n}, issued today",
            "The {when} invoice from the hosting provider was {n}",
        ),
    ),
    Log(
        "log_rent_paid",
        "month",
        "rent",
        (
            "Paid {when} rent: {n}",
            "Transferred {n} to the landlord for {when} rent",
            "{when} rent of {n} went out today",
        ),
    ),
    Log(
        "log_quarter_sales",
        "quarter",
        "units",
        (
            "We sold {n} units in {when}",
            "{when} sales: {n} units",
            "The shop shipped {n} orders in {when}",
            "The team closed {n} deals in {when}",
        ),
    ),
    Log(
        "log_quarter_revenue",
        "quarter",
        "revenue",
        (
            "Revenue for {when} came in at {n}",
            "{when} revenue: {n}",
            "We booked {n} in {when}",
        ),
    ),
    Log(
        "log_week_signups",
        "week",
        "signups",
        (
            "{n} signups in {when}",
            "We got {n} new signups during {when}",
            "Signups for {when}: {n}",
            "{when} brought in {n} new trial accounts",
        ),
    ),
    Log(
        "log_month_metrics",
        "month",
        "signups",
        (
            "Monthly active users for {when}: {n}",
            "The newsletter gained {n} subscribers in {when}",
            "The app was downloaded {n} times in {when}",
        ),
    ),
    Log(
        "log_sprint",
        "sprint",
        "few",
        (
            "Held the retro for {when}; {n} action items came out of it",
            "{when} closed with {n} stories done",
            "The {when} demo showed {n} finished features",
            "{when} ended with {n} tickets carried over",
        ),
    ),
    Log(
        "log_build",
        "build",
        "minutes",
        (
            "Pushed {when} to QA; the pipeline took {n}",
            "{when} went to the staging testers after {n} of CI",
            "QA picked up {when} (compiled in {n})",
        ),
    ),
    Log(
        "log_ticket",
        "ticket",
        "minutes",
        (
            "Incident ticket {when} opened for checkout errors; resolved in {n}",
            "Opened incident {when}: login latency spike, mitigated in {n}",
            "Support escalated ticket {when}; it took {n} to resolve",
        ),
    ),
    Log(
        "log_nightly",
        "date",
        "status",
        (
            "The nightly build on {when} {n}",
            "Nightly integration job, {when}: {n}",
            "The backup verification job on {when} {n}",
            "The {when} nightly regression run {n}",
        ),
    ),
    Log(
        "log_dentist",
        "month",
        "dentist",
        (
            "Saw my dentist in {when} for {n}",
            "Went to the dentist in {when}: {n}",
            "Had {n} at the dental clinic in {when}",
        ),
    ),
    Log(
        "log_release",
        "version",
        "date",
        (
            "Published {when} to PyPI {n}",
            "Release log: {when} tagged and pushed to npm {n}",
            "{when} went out to the registry {n}",
            "Cut the {when} release {n}",
        ),
    ),
    Log(
        "log_steps",
        "weekday",
        "steps",
        (
            "Walked {n} steps on {when}",
            "Step count for {when}: {n}",
            "My watch logged {n} steps on {when}",
        ),
    ),
    Log(
        "log_weighin",
        "week",
        "kg",
        (
            "Weigh-in, {when}: {n} kg",
            "Weighed {n} kg at the {when} check-in",
            "{when} weigh-in came out at {n} kg",
        ),
    ),
    Log(
        "log_exam",
        "term",
        "grade",
        (
            "Got {n} in the maths exam in {when}",
            "Exam results for {when}: {n} in chemistry",
            "Scored {n} on the {when} history paper",
        ),
    ),
    Log(
        "log_exam_score",
        "term",
        "score",
        (
            "Scored {n} on the physics final in {when}",
            "The {when} statistics exam went well: {n}",
        ),
    ),
    Log(
        "log_standup",
        "weekday",
        "few",
        (
            "Standup notes for {when}: {n} tickets in review",
            "At {when} standup we had {n} blockers",
            "{when} standup: {n} PRs waiting for review",
        ),
    ),
    Log(
        "log_daily_orders",
        "date",
        "units",
        (
            "The bakery sold {n} loaves on {when}",
            "{n} orders came in on {when}",
            "The warehouse dispatched {n} parcels on {when}",
        ),
    ),
    Log(
        "log_run_times",
        "weekday",
        "minutes",
        (
            "The 5k on {when} took me {n}",
            "Swim session on {when}: {n} in the pool",
            "Meditated for {n} on {when}",
        ),
    ),
    Log(
        "log_year_edition",
        "year",
        "signups",
        (
            "The {when} conference had {n} attendees",
            "The {when} charity run raised {n} pounds",
            "{n} people came to the {when} summer fair",
        ),
    ),
    Log(
        "log_oncall_pages",
        "week",
        "few",
        (
            "On-call got paged {n} times in {when}",
            "{when} on-call summary: {n} pages",
            "There were {n} production incidents in {when}",
        ),
    ),
)

STATES: tuple[State, ...] = (
    State(
        "current_rent",
        "rent",
        (
            "Our monthly rent is {n}",
            "The rent on the flat is {n} a month",
            "We pay {n} a month in rent",
        ),
        (
            "+Rent went up to {n}",
            "+The landlord raised the rent from {old} to {n}",
            "-The rent was lowered to {n}",
            "Our monthly rent is now {n}",
        ),
    ),
    State(
        "current_price",
        "bill",
        (
            "The annual plan costs {n} a year",
            "The annual plan is priced at {n}",
            "We pay {n} a year for the annual plan",
        ),
        (
            "+The annual plan went up to {n} a year",
            "-The annual plan dropped to {n}",
            "The annual plan costs {n} now",
            "They repriced the annual plan from {old} to {n}",
        ),
    ),
    State(
        "current_weight",
        "kg",
        ("I currently weigh {n} kg", "My weight is {n} kg", "I'm at {n} kg at the moment"),
        ("-I'm down to {n} kg now", "+I've gone up to {n} kg", "I weigh {n} kg these days"),
    ),
    State(
        "current_headcount",
        "few",
        (
            "The support team has {n} people",
            "There are {n} people on the support team",
            "The support team is {n} people",
        ),
        (
            "+The support team has grown to {n} people",
            "-After the layoffs the support team is down to {n} people",
            "The support team is {n} people now",
        ),
    ),
    State(
        "current_build_time",
        "minutes",
        (
            "A full CI run takes {n}",
            "Our CI pipeline currently runs in {n}",
            "CI takes about {n} end to end",
        ),
        (
            "-We got the CI run down to {n}",
            "+A full CI run now takes {n}, up from {old}",
            "CI takes about {n} now",
        ),
    ),
    State(
        "current_subscribers",
        "signups",
        (
            "The newsletter has {n} subscribers",
            "Our newsletter is read by {n} subscribers",
            "The newsletter's subscriber count is {n}",
        ),
        (
            "+The newsletter just passed {n} subscribers",
            "The newsletter is at {n} subscribers now",
            "-After the cleanup the newsletter has {n} subscribers",
        ),
    ),
)

# "the latest version" states (states, changes), each about one thing; the version pair comes
# from the "version" period pool
VERSIONS: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (
        (
            "The latest release on PyPI is {n}",
            "PyPI shows {n} as the newest version",
            "The current release of the package is {n}",
        ),
        (
            "The latest release on PyPI is now {n}",
            "{n} replaced {old} as the newest version on PyPI",
            "PyPI shows {n} as the latest version now",
        ),
    ),
    (
        ("The production version is {n}", "Prod is running {n}", "Production is on {n}"),
        (
            "The production version is now {n}",
            "Prod was upgraded from {old} to {n}",
            "We rolled production forward to {n}",
        ),
    ),
    (
        ("npm shows {n} as the latest version", "The latest tag on npm is {n}"),
        ("npm now shows {n} as the latest version", "The latest tag on npm moved to {n}"),
    ),
)
