"""Kappa families about projects and recurring meetings."""

from __future__ import annotations

from shared_core.eval.kappa_families import Family, val, vals
from shared_core.eval.kappa_families_subjects import NAME_VALUES

_CANCELLED = ("{S} was cancelled", "leadership killed {S}", "{S} was scrapped last week")

DEADLINE = Family(
    name="project_deadline",
    subject="project",
    shape="single",
    ordered=True,
    clusters=("plan",),
    values=vals(
        "January 20|20 January",
        "March 31|31 March|the end of March",
        "April 15|15 April",
        "May 30|30 May",
        "June 30|30 June|the end of June",
        "September 1|1 September",
        "October 15|15 October",
        "November 30|30 November|the end of November",
        "December 12|12 December",
    ),
    state=(
        "{P} deadline is {v}",
        "{S} is due by {v}",
        "{S} has to ship by {v}",
        "we need {S} done by {v}",
        "the target date for {S} is {v}",
        "{S} wraps up by {v}",
    ),
    change=(
        "the deadline for {S} moved to {v}",
        "+{S} was pushed back to {v}",
        "-{S} got pulled in to {v}",
        "the deadline for {S} changed from {old} to {v}",
        "{S} is now due by {v}",
        "{P} new deadline is {v}",
    ),
    retract=_CANCELLED,
    hedge=("the first milestone of {S} is {v}", "someone suggested {v} for {S} but nobody agreed"),
)

BUDGET = Family(
    name="project_budget",
    subject="project",
    shape="single",
    ordered=True,
    clusters=("plan",),
    values=vals(
        "$30,000|30k dollars|thirty thousand dollars",
        "$50,000|50k dollars|fifty thousand dollars",
        "$75,000|75k dollars|seventy-five thousand dollars",
        "$120,000|120k dollars|a hundred and twenty thousand dollars",
        "$250,000|250k dollars|a quarter of a million dollars",
        "$500,000|500k dollars|half a million dollars",
        "$1.2 million|1.2 million dollars|$1,200,000",
        "$2 million|two million dollars|$2,000,000",
    ),
    state=(
        "{P} budget is {v}",
        "{S} has a budget of {v}",
        "{S} is funded at {v}",
        "finance approved {v} for {S}",
        "{S} can spend up to {v}",
        "the budget line for {S} says {v}",
    ),
    change=(
        "-{P} budget was cut to {v}",
        "+{P} budget was raised to {v}",
        "{P} budget was revised to {v}",
        "{S} now has {v} to spend",
        "the budget for {S} changed from {old} to {v}",
        "finance reset {P} budget to {v}",
    ),
    retract=_CANCELLED,
    hedge=("a similar project last year cost {v}", "the vendor quoted {v} for part of {S}"),
)

PROJECT_LEAD = Family(
    name="project_lead",
    unique=True,
    subject="project",
    shape="single",
    domain="person_name",
    clusters=("plan",),
    values=NAME_VALUES,
    state=(
        "{v} leads {S}",
        "{v} is the project lead for {S}",
        "{v} owns {S}",
        "{S} is {v}'s project",
        "{v} is in charge of {S}",
        "{S} is being run by {v}",
    ),
    change=(
        "{v} took over {S}",
        "{S} was handed to {v}",
        "{v} replaced {old} as lead on {S}",
        "{v} is running {S} now",
        "{v} leads {S} now that {old} has moved on",
    ),
    retract=("{v} stepped off {S}", "{v} is no longer the lead on {S}"),
    hedge=("{v} reviews the designs for {S}", "{v} is a stakeholder in {S}"),
)

PROJECT_STATUS = Family(
    name="project_status",
    subject="project",
    shape="single",
    stateful=True,
    clusters=("plan",),
    never=(("done", "on track"), ("done", "delayed"), ("done", "on hold")),
    values=(
        val(
            "on track",
            own=True,
            state=(
                "{S} is on track",
                "{S} is on schedule",
                "{S} is going to plan",
                "{S} is hitting all its milestones",
                "everything on {S} is green",
                "{S} is moving along nicely on schedule",
            ),
            change=(
                "{S} is back on track",
                "{S} caught up and is on schedule again",
                "{S} is on schedule again",
                "{S} made up the lost time",
                "we got {S} back on schedule",
            ),
            implied=("{S} hit its last two milestones early and the burndown looks fine",),
        ),
        val(
            "delayed",
            own=True,
            state=(
                "{S} is delayed",
                "{S} is behind schedule",
                "{S} is running late",
                "{S} is going to miss its date",
                "{S} is running behind",
                "{S} won't make its deadline",
            ),
            change=(
                "{S} slipped behind schedule",
                "{S} fell behind",
                "{S} is delayed now",
                "{S} has slipped",
                "{S} is now running late",
            ),
            implied=("{S} missed its last two milestones",),
        ),
        val(
            "on hold",
            own=True,
            state=(
                "{S} is on hold",
                "{S} is paused",
                "work on {S} is frozen",
                "{S} is on ice",
                "{S} is parked for now",
                "nobody is working on {S} at the moment",
            ),
            change=(
                "{S} was put on hold",
                "{S} got paused",
                "we froze {S}",
                "{S} has been paused",
                "{S} is on hold now",
            ),
            implied=("nobody has touched {S} since the hiring freeze and the team was reassigned",),
        ),
        val(
            "done",
            own=True,
            state=(
                "{S} is done",
                "{S} is finished",
                "{S} is complete",
                "{S} is wrapped up",
                "{S} has shipped",
                "{S} is delivered",
            ),
            change=(
                "{S} shipped",
                "we wrapped up {S}",
                "{S} is finished now",
                "{S} is complete now",
                "we delivered {S}",
            ),
            implied=(
                "we celebrated shipping {S} on Friday",
                "the retrospective for {S} closed out the project",
            ),
        ),
    ),
)


MEETING_DAY = Family(
    name="meeting_day",
    subject="meeting",
    shape="single",
    values=(
        val("Mondays", bare="Monday"),
        val("Tuesdays", bare="Tuesday"),
        val("Wednesdays", bare="Wednesday"),
        val("Thursdays", bare="Thursday"),
        val("Fridays", bare="Friday"),
        val("the first Monday of the month", bare="first Monday"),
        val("alternate Tuesdays|every other Tuesday", bare="alternate Tuesday"),
        val("Saturday mornings", bare="Saturday morning"),
    ),
    state=(
        "{S} is on {v}",
        "{S} happens on {v}",
        "we hold {S} on {v}",
        "{S} takes place on {v}",
        "{S} is always on {v}",
        "{S} meets on {v}",
    ),
    change=(
        "{S} moved to {v}",
        "{S} was rescheduled to {v}",
        "{S} is on {v} now",
        "{S} shifted from {old} to {v}",
        "starting next week, {S} is on {v}",
    ),
    retract=("{S} was cancelled for good", "we scrapped {S}", "{S} no longer happens"),
    hedge=("there's a prep session for {S} on {v}", "the follow-up to {S} is on {v}"),
)

MEETING_TIME = Family(
    name="meeting_time",
    subject="meeting",
    shape="single",
    ordered=True,
    values=vals(
        "8:45 am|08:45|quarter to nine",
        "9:30 am|09:30|half past nine",
        "10 am|10:00|ten o'clock",
        "11:15 am|11:15|quarter past eleven",
        "1 pm|13:00|one o'clock",
        "2 pm|14:00|two in the afternoon",
        "3 pm|15:00|three o'clock",
        "4:30 pm|16:30|half past four",
        "5 pm|17:00|five o'clock",
    ),
    state=(
        "{S} is at {v}",
        "{S} starts at {v}",
        "we do {S} at {v}",
        "{S} kicks off at {v}",
        "{S} is scheduled for {v}",
        "{S} begins at {v} sharp",
    ),
    change=(
        "{S} moved to {v}",
        "{S} now starts at {v}",
        "+{S} was pushed back to {v}",
        "-{S} was moved earlier, to {v}",
        "{S} got rescheduled from {old} to {v}",
        "from next week, {S} starts at {v}",
    ),
    retract=("{S} was cancelled indefinitely", "we dropped {S} from the calendar"),
    hedge=("{S} sometimes runs until {v}", "there's a dry run for {S} at {v}"),
)

MEETING_ROOM = Family(
    name="meeting_room",
    subject="meeting",
    shape="single",
    values=vals(
        "room 4B",
        "the large conference room|the big conference room",
        "the fishbowl",
        "the 5th-floor lounge",
        "room 12A",
        "the library",
        "the boardroom",
        "the corner meeting room",
        "the café downstairs",
    ),
    state=(
        "{S} is in {v}",
        "{S} takes place in {v}",
        "we hold {S} in {v}",
        "{S} meets in {v}",
        "{S} is held in {v}",
        "{S} happens in {v}",
    ),
    change=(
        "{S} moved to {v}",
        "{S} was moved from {old} to {v}",
        "{S} is in {v} now",
        "{S} got relocated to {v}",
        "we switched {S} over to {v}",
    ),
    hedge=("{S} used {v} once when the usual room was booked", "the snacks for {S} are in {v}"),
)

FAMILIES = (
    DEADLINE,
    BUDGET,
    PROJECT_LEAD,
    PROJECT_STATUS,
    MEETING_DAY,
    MEETING_TIME,
    MEETING_ROOM,
)
