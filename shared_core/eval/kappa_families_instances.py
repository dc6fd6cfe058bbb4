"""Kappa instance families: one attribute of two similar but different instances (staging and
production, iOS and Android, the Paris and Milan stores). The same attribute of the other
instance is label 0 whatever its value; a change of the same instance is label 1.

Templates take ``{S}`` (the instance; "I" agrees through ``[pay|pays]``) and ``{v}``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Instances:
    name: str
    pairs: tuple[tuple[str, str], ...]
    values: tuple[str, ...]
    state: tuple[str, ...]
    change: tuple[str, ...]


INSTANCES: tuple[Instances, ...] = (
    Instances(
        "inst_k8s",
        (
            ("the staging cluster", "the production cluster"),
            ("the EU cluster", "the US cluster"),
            ("the dev cluster", "the staging cluster"),
        ),
        ("Kubernetes 1.26", "Kubernetes 1.27", "Kubernetes 1.28", "Kubernetes 1.29", "K8s 1.30"),
        ("{S} is running {v}", "{S} is on {v}", "{S} is still on {v}", "the version on {S} is {v}"),
        ("{S} was upgraded to {v}", "{S} is on {v} now", "we moved {S} to {v} last night"),
    ),
    Instances(
        "inst_app_version",
        (("the iOS app", "the Android app"), ("the web app", "the desktop app")),
        ("version 5.2", "version 5.3", "version 6.0", "version 6.1", "build 7.4.1"),
        ("{S} is at {v}", "{S} is currently on {v}", "the live version of {S} is {v}"),
        ("{S} was updated to {v}", "{S} is at {v} now", "we shipped {v} of {S} today"),
    ),
    Instances(
        "inst_store_manager",
        (
            ("the Paris store", "the Milan store"),
            ("the Leeds branch", "the York branch"),
            ("the downtown shop", "the airport shop"),
        ),
        ("Claire", "Marco", "Aisha", "Tomasz", "Ingrid", "Kwame", "Lucía"),
        ("{S} is managed by {v}", "{v} runs {S}", "the manager of {S} is {v}"),
        (
            "{v} took over as manager of {S}",
            "{S} is managed by {v} now",
            "{S} has a new manager, {v}",
        ),
    ),
    Instances(
        "inst_store_hours",
        (("the Paris store", "the Milan store"), ("the Leeds branch", "the York branch")),
        ("closes at 6 pm", "closes at 8 pm", "closes at 9 pm", "opens on Sundays", "opens at 7 am"),
        ("{S} {v}", "these days {S} {v}", "on weekdays {S} {v}"),
        ("{S} changed its hours and now {v}", "from this month {S} {v}"),
    ),
    Instances(
        "inst_region_db",
        (("the EU region", "the US region"), ("the APAC region", "the EU region")),
        ("Postgres 13", "Postgres 14", "Postgres 15", "Postgres 16", "Aurora MySQL 3"),
        ("the database in {S} is {v}", "{S} runs its database on {v}", "{S} uses {v}"),
        ("the database in {S} was migrated to {v}", "{S} is on {v} now"),
    ),
    Instances(
        "inst_region_latency",
        (("the EU region", "the US region"), ("the Frankfurt region", "the Sydney region")),
        ("p95 latency of 120 ms", "p95 latency of 180 ms", "p95 latency of 240 ms", "p95 of 90 ms"),
        ("{S} has a {v}", "{S} is seeing a {v}", "dashboards show {S} at a {v}"),
        ("after the fix {S} has a {v}", "{S} is at a {v} now"),
    ),
    Instances(
        "inst_team_lead",
        (
            ("the mobile team", "the web team"),
            ("Team A", "Team B"),
            ("the backend team", "the frontend team"),
        ),
        ("Priya", "Jonas", "Mei", "Omar", "Sofia", "Daniel", "Wanjiru"),
        ("{S} is led by {v}", "{v} leads {S}", "the lead of {S} is {v}"),
        ("{v} is the new lead of {S}", "{v} took over {S}", "{S} is led by {v} now"),
    ),
    Instances(
        "inst_team_size",
        (("the mobile team", "the web team"), ("Team A", "Team B")),
        ("four engineers", "five engineers", "six engineers", "eight engineers", "ten engineers"),
        ("{S} has {v}", "{S} is {v} strong", "there are {v} on {S}"),
        ("{S} grew to {v}", "{S} has {v} now", "after the reorg {S} has {v}"),
    ),
    Instances(
        "inst_edition_venue",
        (
            ("the 2023 edition", "the 2024 edition"),
            ("last year's conference", "this year's conference"),
        ),
        ("Lisbon", "Berlin", "Austin", "Toronto", "Singapore", "Amsterdam"),
        ("{S} is held in {v}", "{S} takes place in {v}", "the venue for {S} is in {v}"),
        ("{S} has moved to {v}", "{S} will now be held in {v}"),
    ),
    Instances(
        "inst_home_heating",
        (("the old house", "the new flat"), ("our flat in town", "the cottage")),
        ("gas heating", "a heat pump", "electric radiators", "underfloor heating", "a wood stove"),
        ("{S} has {v}", "{S} is heated by {v}", "the heating in {S} is {v}"),
        ("{S} has {v} now", "we replaced the heating in {S} with {v}"),
    ),
    Instances(
        "inst_home_rooms",
        (("the old house", "the new flat"), ("our place in Leeds", "my parents' house")),
        ("two bedrooms", "three bedrooms", "four bedrooms", "one bedroom", "a box room"),
        ("{S} has {v}", "{S} comes with {v}"),
        ("after the extension {S} has {v}", "{S} has {v} now"),
    ),
    Instances(
        "inst_rent_share",
        (("my flatmate", "I"), ("I", "my flatmate"), ("my housemate", "I")),
        ("$600", "$650", "$700", "$750", "$820"),
        ("{S} [pay|pays] {v} a month in rent", "{P} share of the rent is {v}"),
        ("{P} share of the rent went up to {v}", "{S} [pay|pays] {v} a month now"),
    ),
    Instances(
        "inst_commute",
        (("my flatmate", "I"), ("I", "my partner")),
        ("by bike", "by train", "by bus", "on foot", "by car"),
        ("{S} [commute|commutes] {v}", "{S} [get|gets] to work {v}"),
        ("{S} [commute|commutes] {v} now", "{S} switched to commuting {v}"),
    ),
    Instances(
        "inst_printer",
        (
            ("the kitchen printer", "the office printer"),
            ("the printer on the second floor", "the printer in reception"),
        ),
        ("out of paper", "jammed", "low on toner", "offline", "working fine"),
        ("{S} is {v}", "{S} is {v} again", "heads up, {S} is {v}"),
        ("{S} is {v} now", "{S} has been {v} since lunch"),
    ),
    Instances(
        "inst_service_owner",
        (
            ("the staging database", "the production database"),
            ("the internal API", "the public API"),
        ),
        ("the platform team", "the data team", "the payments team", "the SRE team"),
        ("{S} is owned by {v}", "{v} own {S}", "{S} belongs to {v}"),
        ("{S} was handed over to {v}", "{v} took ownership of {S}", "{S} is owned by {v} now"),
    ),
    Instances(
        "inst_plan",
        (
            ("the staging account", "the production account"),
            ("the marketing workspace", "the engineering workspace"),
        ),
        ("the free tier", "the Pro plan", "the Business plan", "the Enterprise plan"),
        ("{S} is on {v}", "{S} is billed on {v}"),
        ("{S} was upgraded to {v}", "{S} moved to {v}", "{S} is on {v} now"),
    ),
    Instances(
        "inst_region_status",
        (("the EU region", "the US region"), ("the mobile API", "the web API")),
        ("fully operational", "degraded", "down for maintenance", "running normally"),
        ("{S} is {v}", "status page: {S} is {v}"),
        ("{S} is {v} now", "{S} just became {v}"),
    ),
    Instances(
        "inst_school",
        (("my son", "my daughter"), ("my niece", "my nephew")),
        ("Year 3", "Year 4", "Year 6", "Year 8", "Year 10"),
        ("{Sbe} in {v}", "{S} started {v} in September"),
        ("{Sbe} in {v} now", "{S} moved up to {v}"),
    ),
    Instances(
        "inst_car_insurer",
        (("my car", "my wife's car"), ("the van", "the company car")),
        ("Aviva", "Direct Line", "Admiral", "Allianz", "AXA"),
        ("{S} is insured with {v}", "{v} insures {S}"),
        ("{S} is insured with {v} now", "we switched {S} to {v}"),
    ),
    Instances(
        "inst_office_wifi",
        (("the London office", "the Berlin office"), ("the ground floor", "the third floor")),
        ("fibre at 1 Gbps", "a 500 Mbps line", "a 100 Mbps line", "a 4G backup link"),
        ("{S} has {v}", "the internet in {S} is {v}"),
        ("{S} was upgraded to {v}", "{S} is on {v} now"),
    ),
)
