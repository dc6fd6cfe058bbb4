"""Kappa families about organisations, products, projects, feature flags and meetings."""

from __future__ import annotations

from shared_core.eval.kappa_families import CITIES, Family, val, vals
from shared_core.eval.kappa_families_subjects import NAME_VALUES

FLAG_STATE = Family(
    name="flag_state",
    subject="flag",
    shape="single",
    stateful=True,
    conflicts=("flag_rollout",),
    values=(
        val(
            "on|enabled|switched on",
            change=(
                "we turned {S} on",
                "{S} was flipped on",
                "we enabled {S} in production",
                "we switched {S} on",
                "{S} is enabled now",
            ),
            implied=(
                "every user now gets the code path behind {S}",
                "support is fielding questions about the feature behind {S} since it went live",
            ),
            retract=(
                "we turned off {S}",
                "{S} was switched off after the error spike",
                "we killed {S}",
            ),
        ),
        val(
            "off|disabled|switched off",
            change=(
                "we turned {S} off",
                "{S} was switched off",
                "we disabled {S}",
                "{S} is off now",
                "we flipped {S} off",
            ),
            implied=(
                "nobody sees the feature behind {S} any more",
                "the code behind {S} is dark in every environment",
            ),
        ),
    ),
    state=(
        "{S} is {v}",
        "{S} is {v} in production",
        "{S} is currently {v}",
        "the dashboard shows {S} as {v}",
        "right now {S} is {v} for everyone",
        "{S} shows as {v}",
    ),
)

FLAG_ROLLOUT = Family(
    name="flag_rollout",
    subject="flag",
    shape="single",
    ordered=True,
    conflicts=("flag_state",),
    values=(
        val("1% of users|one percent of users"),
        val("5% of users|one in twenty users"),
        val("10% of users|one in ten users|a tenth of users"),
        val("20% of users|one in five users|a fifth of users"),
        val("25% of users|a quarter of users"),
        val("50% of users|half of users|half of all users"),
        val("75% of users|three quarters of users"),
        val("100% of users|all users|everyone"),
    ),
    state=(
        "{S} is rolled out to {v}",
        "{S} is enabled for {v}",
        "{S} is live for {v}",
        "{S} covers {v}",
        "{S} is at {v}",
        "the rollout of {S} stands at {v}",
    ),
    change=(
        "+we ramped {S} up to {v}",
        "-we dialled {S} back to {v}",
        "{S} is now at {v}",
        "we changed {S} from {old} to {v}",
        "{S} now targets {v}",
        "the rollout of {S} was set to {v}",
    ),
    hedge=("we plan to take {S} to {v} next week", "the experiment doc suggests {v} for {S}"),
)


RELEASE_DATE = Family(
    name="release_date",
    subject="release",
    shape="single",
    values=vals(
        "May 12|12 May|the 12th of May",
        "June 3|3 June|the 3rd of June",
        "July 1|1 July|the 1st of July",
        "August 20|20 August|the 20th of August",
        "September 9|9 September|the 9th of September",
        "October 14|14 October|the 14th of October",
        "November 5|5 November|the 5th of November",
        "December 1|1 December|the 1st of December",
        "January 15|15 January|the 15th of January",
    ),
    state=(
        "{S} ships on {v}",
        "{S} is scheduled for {v}",
        "{S} goes out on {v}",
        "{S} comes out on {v}",
        "the release date for {S} is {v}",
        "{S} lands on {v}",
    ),
    change=(
        "{S} was rescheduled to {v}",
        "{S} moved from {old} to {v}",
        "{S} now ships on {v}",
        "the new date for {S} is {v}",
        "{S} has been moved to {v}",
    ),
    retract=("{S} was cancelled", "{S} is postponed indefinitely", "{S} won't ship at all"),
    hedge=("the press embargo for {S} lifts on {v}", "a hotfix after {S} is pencilled in for {v}"),
)

CODENAME = Family(
    name="release_codename",
    unique=True,
    subject="release",
    shape="single",
    values=vals(
        "Aurora", "Kestrel", "Maple", "Nimbus", "Quartz", "Saffron", "Tundra", "Zephyr", "Juniper"
    ),
    state=(
        "{S} is codenamed {v}",
        "internally {S} is called {v}",
        "the codename for {S} is {v}",
        "{v} is the codename of {S}",
        "the team refers to {S} as {v}",
        "{S} goes by {v} inside the company",
    ),
    change=(
        "{S} was renamed from {old} to {v}",
        "{S} is codenamed {v} now",
        "the codename of {S} changed to {v}",
        "legal made us rename {S} to {v}",
        "we dropped {old} as the codename of {S}; it's {v} now",
    ),
)

CEO = Family(
    name="ceo",
    unique=True,
    subject="org",
    shape="single",
    domain="person_name",
    values=NAME_VALUES,
    state=(
        "{P} CEO is {v}",
        "{v} is the CEO of {S}",
        "{v} runs {S}",
        "{S} is led by {v}",
        "{v} heads {S}",
        "the chief executive of {S} is {v}",
    ),
    change=(
        "{v} took over as CEO of {S}",
        "{S} appointed {v} as CEO",
        "{v} replaced {old} as CEO",
        "{S} has a new CEO, {v}",
        "{v} is CEO of {S} now",
    ),
    retract=("{v} stepped down as CEO of {S}", "{v} was ousted from {S}"),
    hedge=("{v} sits on the board of {S}", "{v} founded {S}"),
)

HQ = Family(
    name="hq_city",
    subject="org",
    shape="single",
    values=CITIES,
    domain="city",
    state=(
        "{S} is headquartered in {v}",
        "{P} HQ is in {v}",
        "{S} is based in {v}",
        "{P} head office is in {v}",
        "{P} headquarters are in {v}",
        "{S} runs everything from its {v} head office",
    ),
    change=(
        "{S} moved its HQ to {v}",
        "{S} relocated its headquarters from {old} to {v}",
        "{P} headquarters are in {v} now",
        "{S} is headquartered in {v} after the move",
        "{S} left {old} and set up its new head office in {v}",
    ),
    hedge=("{S} opened a sales office in {v}", "{S} has a warehouse in {v}"),
)

TEAM_LEAD = Family(
    name="team_lead",
    unique=True,
    subject="team",
    shape="single",
    domain="person_name",
    values=NAME_VALUES,
    state=(
        "{v} leads {S}",
        "{S} is run by {v}",
        "{P} lead is {v}",
        "{S} reports to {v}",
        "{v} is head of {S}",
        "{v} manages {S}",
    ),
    change=(
        "{v} took over {S}",
        "{v} replaced {old} as head of {S}",
        "{S} has a new lead: {v}",
        "{v} is running {S} now",
        "{S} now reports to {v}",
    ),
    retract=("{v} stepped down as head of {S}", "{v} no longer leads {S}"),
    hedge=("{v} used to be on {S}", "{v} often pairs with {S}"),
)

FLOOR = Family(
    name="office_floor",
    subject="team",
    shape="single",
    ordered=True,
    values=vals(
        "the ground floor",
        "the 2nd floor|the second floor|floor 2",
        "the 3rd floor|the third floor|floor 3",
        "the 4th floor|the fourth floor|floor 4",
        "the 5th floor|the fifth floor|floor 5",
        "the 7th floor|the seventh floor|floor 7",
        "the 8th floor|the eighth floor|floor 8",
        "the 10th floor|the tenth floor|floor 10",
        "the 12th floor|the twelfth floor|floor 12",
    ),
    state=(
        "{S} sits on {v}",
        "{S} is on {v}",
        "you'll find {S} on {v}",
        "{P} desks are on {v}",
        "{S} works out of {v}",
        "{S} has the east wing of {v}",
    ),
    change=(
        "+{S} moved up to {v}",
        "-{S} moved down to {v}",
        "{S} relocated from {old} to {v}",
        "{S} is on {v} now",
        "{S} now sits on {v}",
    ),
    implied=("{S} spent Friday carrying monitors to {p} new desks on {v}",),
    hedge=("{S} has meetings on {v}", "{S} uses the kitchen on {v}"),
)

HEADCOUNT = Family(
    name="headcount",
    subject="team",
    shape="single",
    ordered=True,
    values=vals(
        "6 people|six people",
        "8 people|eight people",
        "12 people|twelve people|a dozen people",
        "15 people|fifteen people",
        "20 people|twenty people",
        "25 people|twenty-five people",
        "30 people|thirty people",
        "40 people|forty people",
        "50 people|fifty people",
    ),
    state=(
        "{S} has {v}",
        "{S} is {v} strong",
        "there are {v} on {S}",
        "{S} is made up of {v}",
        "{P} headcount is {v}",
        "{S} counts {v}",
    ),
    change=(
        "+{S} grew to {v}",
        "-{S} shrank to {v}",
        "{S} now has {v}",
        "after the reorg, {S} has {v}",
        "{P} headcount changed from {old} to {v}",
        "{S} is at {v} now",
    ),
    hedge=("+{S} wants to hire up to {v}", "{S} was {v} back in {year}"),
)

FAMILIES = (
    FLAG_STATE,
    FLAG_ROLLOUT,
    RELEASE_DATE,
    CODENAME,
    CEO,
    HQ,
    TEAM_LEAD,
    FLOOR,
    HEADCOUNT,
)
