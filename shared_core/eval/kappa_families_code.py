"""Kappa families about software: on-call, languages, frameworks, status, branches, licences,
app releases."""

from __future__ import annotations

from shared_core.eval.kappa_families import Family, val, vals
from shared_core.eval.kappa_families_subjects import NAME_VALUES

ONCALL = Family(
    name="oncall",
    subject="service",
    shape="single",
    domain="person_name",
    clusters=("people",),
    values=NAME_VALUES,
    state=(
        "{v} is on call for {S}",
        "the on-call engineer for {S} is {v}",
        "{v} holds the pager for {S}",
        "pages for {S} go to {v}",
        "{v} is covering {S} on call",
        "if {S} breaks, {v} is the person to ping",
    ),
    change=(
        "{v} took over on-call for {S}",
        "the pager for {S} passed from {old} to {v}",
        "{v} is on call for {S} now",
        "the on-call rotation for {S} moved to {v}",
        "{v} swapped in for {old} on the {S} pager",
    ),
    implied=("{v} got paged at 3 am when {S} fell over and handled it",),
    retract=(
        "{v} is no longer on call for {S}",
        "{v} handed back the {S} pager and nobody has picked it up yet",
    ),
    hedge=("{v} wrote most of {S}", "{v} reviewed the last change to {S}"),
)


LANGUAGE = Family(
    name="primary_language",
    subject="service",
    shape="single",
    clusters=("code", "stack"),
    conflicts=("framework",),
    values=vals(
        "Python",
        "Go|Golang",
        "Rust",
        "Java",
        "Kotlin",
        "TypeScript",
        "Ruby",
        "Elixir",
        "C#",
        "Scala",
        "PHP",
    ),
    state=(
        "{S} is written in {v}",
        "{S} is a {v} codebase",
        "{P} code is mostly {v}",
        "{S} is implemented in {v}",
        "{S} is built in {v}",
        "the code behind {S} is all {v}",
    ),
    change=(
        "{S} was rewritten in {v}",
        "we ported {S} from {old} to {v}",
        "{S} is a {v} service now",
        "the {v} rewrite of {S} replaced the old {old} code",
        "{S} is written in {v} now",
    ),
    hedge=("we prototyped a {v} version of {S}", "the client library for {S} is in {v}"),
)


FRAMEWORK = Family(
    name="framework",
    subject="service",
    shape="single",
    clusters=("code", "stack"),
    conflicts=("primary_language", "dependency_pin"),
    values=vals(
        "Django",
        "Flask",
        "FastAPI",
        "Rails|Ruby on Rails",
        "Spring Boot",
        "Express",
        "NestJS",
        "Laravel",
        "Phoenix",
        "ASP.NET Core",
        "Next.js",
        "Gin",
    ),
    state=(
        "{S} is built on {v}",
        "{S} uses {v}",
        "{S} is a {v} app",
        "{P} web layer is {v}",
        "{S} runs on {v}",
        "under the hood {S} is {v}",
    ),
    change=(
        "{S} was migrated from {old} to {v}",
        "{S} moved to {v}",
        "we swapped {old} for {v} in {S}",
        "{S} is on {v} now",
        "{S} was rebuilt on {v}",
    ),
    hedge=("we're evaluating {v} for {S}", "the admin tool next to {S} uses {v}"),
)


STATUS = Family(
    name="service_status",
    subject="service",
    shape="single",
    stateful=True,
    clusters=("infra", "code"),
    values=(
        val(
            "up|operational|healthy",
            state=("all checks for {S} are green",),
            change=(
                "{S} is back up",
                "{S} has recovered",
                "the outage on {S} is resolved",
                "{S} is healthy again",
                "{S} came back online",
            ),
            implied=(
                "{S} handled 2 million requests today without an error",
                "{S} is answering health checks in under 50 ms",
                "customers are placing orders through {S} again",
            ),
        ),
        val(
            "down|offline|unreachable",
            state=("{S} is not responding at all",),
            change=(
                "{S} just went down",
                "{S} crashed",
                "{S} fell over an hour ago",
                "{S} is down now",
                "{S} went offline",
            ),
            implied=(
                "{S} returns 503 for every request",
                "nobody can reach {S}",
                "every call to {S} fails with connection refused",
            ),
        ),
        val(
            "degraded|running slowly|partially down",
            state=("{S} is limping along",),
            change=(
                "{S} has started to slow down badly",
                "{S} is degraded now",
                "{S} started throwing intermittent errors",
                "{S} is running slowly now",
                "{S} became sluggish after the deploy",
            ),
            implied=(
                "{S} answers, but p99 latency is ten times normal",
                "about a third of requests to {S} are erroring",
            ),
        ),
    ),
    state=(
        "{S} is {v}",
        "{S} is {v} right now",
        "status page: {S} is {v}",
        "{S} is currently {v}",
        "{S} has been {v} since this morning",
    ),
)


DEFAULT_BRANCH = Family(
    name="default_branch",
    subject="service",
    shape="single",
    clusters=("tooling",),
    values=vals(
        "main", "master", "trunk", "develop", "production", "release", "dev", "stable", "default"
    ),
    state=(
        "{P} default branch is {v}",
        "{S} uses {v} as the default branch",
        "PRs against {S} target {v}",
        "{S} develops on {v}",
        "the mainline of {S} is the {v} branch",
        "{P} repo defaults to {v}",
    ),
    change=(
        "we renamed {P} default branch from {old} to {v}",
        "{S} switched its default branch to {v}",
        "{P} default branch is {v} now",
        "PRs against {S} should target {v} from now on",
        "{S} moved off {old}; {v} is the default",
    ),
    retract=("{S} deleted its {v} branch",),
    hedge=("{S} has a long-lived {v} branch too", "someone pushed a {v} branch to {S}"),
)


LICENCE = Family(
    name="licence",
    subject="library",
    shape="single",
    plain_contradicts=False,
    values=vals(
        "MIT|the MIT licence",
        "Apache 2.0|the Apache License 2.0",
        "GPLv3|GPL 3.0",
        "BSD-3-Clause|the 3-clause BSD licence",
        "MPL 2.0|the Mozilla Public License",
        "AGPLv3|AGPL 3.0",
        "LGPL 2.1",
        "the Business Source License|BSL 1.1",
        "a proprietary licence",
        "ISC|the ISC licence",
    ),
    state=(
        "{S} is licensed under {v}",
        "{S} is released under {v}",
        "{P} licence is {v}",
        "{S} ships under {v}",
        "{S} uses {v}",
        "the LICENSE file in {S} says {v}",
    ),
    change=(
        "{S} relicensed from {old} to {v}",
        "{S} moved to {v}",
        "{S} is under {v} now",
        "{S} switched its licence to {v}",
        "from the next release {S} is {v}; the {old} terms are gone",
    ),
    hedge=("one of {P} dependencies uses {v}", "the docs of {S} are under {v}"),
)


MIN_PYTHON = Family(
    name="min_python",
    subject="library",
    shape="single",
    plain_contradicts=False,  # "supports 3.12 and up" still holds once 3.11 is supported
    ordered=True,
    values=vals(
        "Python 3.7",
        "Python 3.8",
        "Python 3.9",
        "Python 3.10",
        "Python 3.11",
        "Python 3.12",
        "Python 3.13",
        "Python 3.14",
    ),
    state=(
        "{S} requires {v} or newer",
        "{S} supports {v} and up",
        "the minimum Python for {S} is {v}",
        "{S} needs at least {v}",
        "{S} works on anything from {v} onwards",
        "{P} python_requires is {v}+",
    ),
    change=(
        "+{S} dropped support for everything before {v}",
        "{S} now requires {v}",
        "+the minimum for {S} was raised to {v}",
        "{S} bumped its minimum from {old} to {v}",
        "-{S} restored support back to {v}",
    ),
    hedge=("+{S} is tested on {v} in CI", "+{S} might require {v} next year"),
)


APP_VERSION = Family(
    name="app_version",
    subject="app",
    shape="single",
    ordered=True,
    monotone=True,
    values=vals(
        "0.12.5|version 0.12.5",
        "1.4.2|version 1.4.2",
        "1.5.0|version 1.5.0",
        "2.0.1|version 2.0.1",
        "2.1.0|version 2.1.0",
        "3.0.0|version 3.0.0",
        "3.2.7|version 3.2.7",
        "4.0.3|version 4.0.3",
    ),
    state=(
        "the latest version of {S} is {v}",
        "{S} is at {v}",
        "the current release of {S} is {v}",
        "{S} {v} is what the download page offers",
        "{v} is the newest build of {S}",
        "{P} latest release is {v}",
    ),
    change=(
        "{S} {v} just came out",
        "we released {S} {v}",
        "{S} is at {v} now",
        "{S} {v} replaced {old} on the download page",
        "the latest version of {S} is now {v}",
    ),
    hedge=("+{S} {v} is in beta", "+{S} {v} was announced for next month"),
)


FAMILIES = (
    ONCALL,
    LANGUAGE,
    FRAMEWORK,
    STATUS,
    DEFAULT_BRANCH,
    LICENCE,
    MIN_PYTHON,
    APP_VERSION,
)
