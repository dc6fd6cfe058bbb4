"""Kappa families about people's studies, devices, working hours and availability."""

from __future__ import annotations

from shared_core.eval.kappa_families import Family, val, vals

UNIVERSITY = Family(
    name="university",
    subject="person",
    shape="single",
    clusters=("education", "job"),
    conflicts=("degree_stage",),
    values=vals(
        "MIT",
        "the University of Toronto|U of T",
        "Stanford",
        "Oxford|the University of Oxford",
        "the University of Lagos",
        "IIT Bombay",
        "Seoul National University",
        "the University of Melbourne",
        "Sciences Po",
        "ETH Zurich",
        "the University of Cape Town",
        "UNAM",
        "Tsinghua",
    ),
    state=(
        "{S} [study|studies] at {v}",
        "{Sbe} a student at {v}",
        "{Sbe} enrolled at {v}",
        "{S} [go|goes] to {v}",
        "{Sbe} at {v} doing {p} degree",
        "{S} [attend|attends] {v}",
    ),
    change=(
        "{S} transferred to {v}",
        "{S} transferred from {old} to {v}",
        "{S} [study|studies] at {v} now",
        "{S} switched universities; {s} [go|goes] to {v} now",
        "{S} started at {v} this term after leaving {old}",
    ),
    implied=("{S} moved into the halls at {v} last week and started lectures",),
    retract=(
        "{S} dropped out of {v}",
        "{S} graduated from {v}",
        "{Sbe} no longer at {v}",
    ),
    past=("{S} used to study at {v}",),
    hedge=("{S} applied to {v}", "{S} visited {v} on an open day", "{P} brother goes to {v}"),
)


MAJOR = Family(
    name="major",
    subject="person",
    shape="single",
    plain_contradicts=False,
    clusters=("education", "job"),
    values=vals(
        "computer science",
        "economics",
        "biology",
        "history",
        "mechanical engineering",
        "psychology",
        "philosophy",
        "nursing",
        "architecture",
        "political science",
        "mathematics|maths",
        "music",
    ),
    state=(
        "{Sbe} majoring in {v}",
        "{S} [study|studies] {v}",
        "{P} major is {v}",
        "{Sbe} doing a degree in {v}",
        "{Sbe} a {v} student",
        "{Sbe} reading {v} at university",
    ),
    change=(
        "{S} switched {p} major to {v}",
        "{S} changed from {old} to {v}",
        "{Sbe} a {v} major now",
        "{S} dropped {old} and [study|studies] {v} now",
        "{S} transferred into the {v} programme",
    ),
    hedge=("{Sbe} minoring in {v}", "{S} took an intro {v} class", "{S} almost picked {v}"),
)


DEGREE = Family(
    name="degree_stage",
    subject="person",
    shape="single",
    stateful=True,
    ordered=True,
    monotone=True,
    clusters=("education", "job"),
    conflicts=("university",),
    values=(
        val(
            "first year",
            own=True,
            state=(
                "{Sbe} a first-year student",
                "{Sbe} a freshman",
                "{Sbe} in {p} first year at university",
                "{Sbe} in the first year of {p} bachelor's",
                "{Sbe} in {p} first year of college",
                "{S} just started {p} bachelor's this autumn",
            ),
        ),
        val(
            "final year",
            own=True,
            state=(
                "{Sbe} in {p} final year of {p} bachelor's",
                "{Sbe} a senior in college",
                "{Sbe} finishing {p} undergraduate degree this year",
                "{Sbe} in {p} last year of undergrad",
                "{S} [graduate|graduates] from {p} bachelor's next summer",
                "{Sbe} writing {p} undergraduate dissertation",
            ),
            change=(
                "{Sbe} in {p} final year now",
                "{S} made it to the last year of {p} bachelor's",
                "{S} [have|has] reached the final year of {p} degree",
                "{Sbe} a final-year student now",
                "{S} moved up into {p} final year",
            ),
        ),
        val(
            "master's",
            own=True,
            state=(
                "{Sbe} doing a master's",
                "{Sbe} a master's student",
                "{Sbe} in a master's programme",
                "{Sbe} studying for a master's degree",
                "{Sbe} in grad school doing a master's",
                "{Sbe} a postgraduate student on a master's course",
            ),
            change=(
                "{S} started a master's",
                "{S} went on to do a master's",
                "{S} enrolled in a master's programme",
                "{Sbe} doing a master's now",
                "{S} began a master's degree this autumn",
            ),
        ),
        val(
            "PhD",
            own=True,
            state=(
                "{Sbe} doing a PhD",
                "{Sbe} a PhD student",
                "{Sbe} working on {p} doctorate",
                "{Sbe} a doctoral candidate",
                "{Sbe} a PhD candidate",
                "{Sbe} in the middle of {p} PhD",
            ),
            change=(
                "{S} started {p} PhD",
                "{S} got into a PhD programme and started this fall",
                "{Sbe} doing a PhD now",
                "{S} enrolled in a doctoral programme",
                "{S} began {p} doctorate this year",
            ),
            implied=("{S} passed {p} PhD qualifying exams",),
        ),
        val(
            "done",
            own=True,
            state=(
                "{Sbe} done with university",
                "{S} finished {p} studies",
                "{Sbe} no longer a student",
                "{Sbe} a university graduate",
                "{S} [have|has] completed {p} degree",
                "{S} [have|has] left university with {p} degree",
            ),
            change=(
                "{S} graduated",
                "{S} finished {p} degree and left university",
                "{S} just graduated",
                "{S} got {p} degree",
                "{Sbe} officially a graduate",
            ),
            implied=(
                "{S} walked at {p} graduation ceremony last weekend",
                "{S} framed {p} diploma and hung it in the hallway",
            ),
        ),
    ),
)


PHONE_MODEL = Family(
    name="phone_model",
    subject="person",
    shape="single",
    plain_contradicts=False,
    values=(
        val("an iPhone 15", "an iPhone", bare="iPhone 15"),
        val("an iPhone 12 mini", "an iPhone", bare="iPhone 12 mini"),
        val("a Samsung Galaxy S24|a Galaxy S24", "a Samsung|an Android phone", bare="Galaxy S24"),
        val("a Google Pixel 8|a Pixel 8", "a Pixel|an Android phone", bare="Pixel 8"),
        val("a OnePlus 12", "a OnePlus|an Android phone", bare="OnePlus 12"),
        val("a Xiaomi 14", "a Xiaomi", bare="Xiaomi 14"),
        val("a Fairphone 5", "a Fairphone", bare="Fairphone 5"),
        val("a Galaxy Z Flip 5", "a flip phone|a Samsung", bare="Z Flip 5"),
        val("a Motorola Edge", "a Motorola", bare="Motorola Edge"),
        val("a Sony Xperia 1 V", "a Sony|an Xperia", bare="Xperia"),
    ),
    state=(
        "{S} [use|uses] {v}",
        "{P} phone is {v}",
        "{S} [have|has] {v}",
        "{P} daily driver is {v}",
        "{S} [carry|carries] {v}",
        "{Sbe} on {v}",
    ),
    change=(
        "{S} upgraded to {v}",
        "{S} switched from {old} to {v}",
        "{S} got {v} to replace {p} old {oldb}",
        "{S} [use|uses] {v} now",
        "{P} new phone is {v}",
        "{S} finally ditched {p} {oldb} for {v}",
    ),
    implied=(
        "{S} spent the evening moving {p} photos onto {p} new {vb}",
        "{S} [have|has] been setting up {p} new {vb} all morning",
    ),
    retract=("{S} lost {p} {vb} and [have|has] no phone right now", "{P} {vb} got stolen"),
    hedge=("{S} [want|wants] {v} for {p} birthday", "{P} sister uses {v}"),
)


LAPTOP = Family(
    name="laptop_model",
    subject="person",
    shape="single",
    plain_contradicts=False,
    values=(
        val("a MacBook Air", "a MacBook|a Mac", bare="MacBook Air"),
        val("a 16-inch MacBook Pro|a MacBook Pro", "a MacBook|a Mac", bare="MacBook Pro"),
        val("a ThinkPad X1 Carbon", "a ThinkPad|a Lenovo", bare="ThinkPad"),
        val("a Dell XPS 13", "a Dell", bare="XPS 13"),
        val("a Framework 13", "a Framework laptop", bare="Framework"),
        val("a Surface Laptop", "a Surface|a Microsoft laptop", bare="Surface Laptop"),
        val("an HP Spectre", "an HP laptop", bare="Spectre"),
        val("an ASUS ZenBook", "an ASUS laptop", bare="ZenBook"),
        val("a Chromebook", bare="Chromebook"),
        val("a Razer Blade", "a gaming laptop", bare="Razer Blade"),
    ),
    state=(
        "{P} laptop is {v}",
        "{S} [work|works] on {v}",
        "{S} [code|codes] on {v}",
        "{S} [use|uses] {v} for work",
        "{S} [have|has] {v}",
        "{P} work machine is {v}",
    ),
    change=(
        "{S} switched to {v}",
        "{S} replaced {p} {oldb} with {v}",
        "{P} new laptop is {v}",
        "{S} [work|works] on {v} now",
        "IT swapped {P} {oldb} for {v}",
    ),
    implied=("{S} spent the day migrating {p} files to {p} new {vb}",),
    retract=("{P} {vb} died and {s} [haven't|hasn't] replaced it", "{S} sold {p} {vb}"),
)


TIMEZONE = Family(
    name="timezone",
    subject="person",
    shape="single",
    clusters=("place",),
    values=vals(
        "Pacific Time|PT",
        "Eastern Time|ET",
        "Central European Time|CET",
        "GMT|UK time",
        "India Standard Time|IST|UTC+5:30",
        "Japan Standard Time|JST|UTC+9",
        "Singapore time|SGT",
        "Australian Eastern Time|AEST",
        "Brasília time|Brazil time",
        "East Africa Time|UTC+3",
        "Mountain Time|MT",
    ),
    state=(
        "{Sbe} on {v}",
        "{Sbe} in {v}",
        "{P} timezone is {v}",
        "{S} [work|works] on {v}",
        "{P} calendar is set to {v}",
        "{S} [keep|keeps] {v} hours",
    ),
    change=(
        "{S} switched to {v}",
        "{Sbe} on {v} now",
        "{S} moved from {old} to {v}",
        "{P} calendar is on {v} now",
        "{S} [have|has] changed {p} working hours to {v}",
    ),
)


SHIFT = Family(
    name="shift",
    subject="person",
    shape="single",
    stateful=True,
    clusters=("job",),
    conflicts=("sleep_schedule",),
    values=(
        val("the day shift|days"),
        val(
            "the night shift|nights|the graveyard shift",
            implied=(
                "{S} [sleep|sleeps] through the day and [clock|clocks] in at 10 pm now",
                "{S} [get|gets] home from work at dawn these days",
            ),
        ),
        val("the early shift|the morning shift"),
        val("the late shift|the evening shift"),
    ),
    state=(
        "{S} [work|works] {v}",
        "{Sbe} on {v}",
        "{Sbe} on {v} this quarter",
        "the rota has {O} on {v}",
        "{S} [have|has] been working {v} since {year}",
        "{S} always [get|gets] put on {v}",
    ),
    change=(
        "{S} switched to {v}",
        "{S} moved from {old} to {v}",
        "{Sbe} on {v} now",
        "{S} got put on {v}",
        "{S} swapped onto {v} starting this month",
    ),
)


_LEAVE_STATE = (
    "{Sbe} {v}",
    "{Sbe} currently {v}",
    "{Sbe} {v} until next month",
    "{Sbe} out of the office {v}",
    "{P} status says {v}",
    "{S} [have|has] been {v} since last week",
)


_LEAVES = ("on parental leave", "on vacation", "on sick leave", "on sabbatical")


AVAILABILITY = Family(
    name="availability",
    subject="person",
    shape="single",
    stateful=True,
    clusters=("job",),
    conflicts=("health_state",),
    never=tuple((a, b) for a in _LEAVES for b in _LEAVES),
    values=(
        val(
            "working",
            own=True,
            state=(
                "{Sbe} at work this week",
                "{Sbe} working normally",
                "{Sbe} in the office as usual",
                "{Sbe} available for meetings all week",
                "{Sbe} working as normal this month",
                "{Sbe} around and at {p} desk every day",
            ),
            change=(
                "{Sbe} back at work",
                "{S} returned to work on Monday",
                "{S} [have|has] come back from leave",
                "{Sbe} back in the office",
                "{Sbe} back from leave",
            ),
            implied=("{S} ran the Monday standup again and cleared {p} backlog of emails",),
        ),
        val(
            "on parental leave|on maternity leave",
            bare="parental leave",
            implied=("{S} [have|has] a newborn at home and won't be checking email for months",),
        ),
        val("on vacation|on holiday", bare="vacation"),
        val("on sick leave", bare="sick leave"),
        val(
            "on sabbatical",
            bare="sabbatical",
            implied=("{Sbe} spending six months away from work to write a book",),
        ),
    ),
    state=_LEAVE_STATE,
    change=(
        "{S} went {v}",
        "{S} started {p} {vb} today",
        "{Sbe} {v} now",
        "{S} just went {v} for three months",
        "from today {Sbe} {v}",
    ),
)


FAMILIES = (
    UNIVERSITY,
    MAJOR,
    DEGREE,
    PHONE_MODEL,
    LAPTOP,
    TIMEZONE,
    SHIFT,
    AVAILABILITY,
)
