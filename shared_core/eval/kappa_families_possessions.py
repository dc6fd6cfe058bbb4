"""Kappa families about what people earn and own, how they commute and how to reach them."""

from __future__ import annotations

from shared_core.eval.kappa_families import Family, val, vals

SALARY = Family(
    name="salary",
    subject="person",
    shape="single",
    ordered=True,
    values=(
        val("£45,000 a year|45 grand a year|45k pounds a year"),
        val("$48,000 a year|48k a year|48,000 dollars a year"),
        val("€52,000 a year|52k euros a year|52,000 euros a year"),
        val("$65,000 a year|65k a year|65,000 dollars a year"),
        val("$72,000 a year|72k a year|72,000 dollars a year"),
        val("$85,000 a year|85k a year|85,000 dollars a year"),
        val("$98,000 a year|98k a year|98,000 dollars a year"),
        val("$110,000 a year|110k a year|110,000 dollars a year", "six figures"),
        val("$125,000 a year|125k a year|125,000 dollars a year", "six figures"),
        val("$140,000 a year|140k a year|140,000 dollars a year", "six figures"),
        val("$160,000 a year|160k a year|160,000 dollars a year", "six figures"),
    ),
    clusters=("job",),
    state=(
        "{S} [earn|earns] {v}",
        "{S} [make|makes] {v}",
        "{P} salary is {v}",
        "{S} [get|gets] paid {v}",
        "{P} base pay is {v}",
        "{P} contract says {v}",
    ),
    change=(
        "+{S} got a raise to {v}",
        "+{P} salary went up to {v}",
        "-{P} pay was cut to {v}",
        "-{S} took a pay cut to {v}",
        "{S} [earn|earns] {v} now",
        "{P} salary changed from {old} to {v}",
        "{P} new salary is {v}",
        "after the negotiation {S} [make|makes] {v}",
    ),
    hedge=(
        "{S} turned down an offer of {v}",
        "+{Sbe} asking for {v} at the next review",
        "the job {S} applied for pays {v}",
    ),
)


COMMUTE = Family(
    name="commute_mode",
    subject="person",
    shape="single",
    plain_contradicts=False,
    clusters=("place", "job"),
    values=(
        val(
            "by bike|by bicycle",
            implied=(
                "{S} [lock|locks] {p} bike outside the office every morning these days",
                "{S} [arrive|arrives] at work in cycling shorts since the switch",
            ),
        ),
        val(
            "by car",
            implied=(
                "{S} [pay|pays] for a parking spot by the office now",
                "{S} [sit|sits] in traffic on the ring road every morning now",
            ),
        ),
        val("by bus", implied=("{S} [catch|catches] the 7:40 bus to the office now",)),
        val("by train", implied=("{S} bought a monthly rail pass for getting to the office",)),
        val(
            "on foot", implied=("{S} [walk|walks] the twenty minutes to the office every day now",)
        ),
        val(
            "by subway|on the metro",
            implied=("{S} [tap|taps] in at the metro station every morning now",),
        ),
        val("by tram"),
        val("by ferry"),
        val("by e-scooter|on an e-scooter"),
        val("by motorbike|on a motorbike"),
    ),
    state=(
        "{S} [commute|commutes] {v}",
        "{S} [get|gets] to work {v}",
        "{S} [go|goes] to the office {v}",
        "{P} commute is {v}",
        "{S} usually [travel|travels] to work {v}",
        "every morning {S} [head|heads] in {v}",
    ),
    change=(
        "{S} [commute|commutes] {v} now",
        "{S} switched from commuting {old} to going {v}",
        "these days {S} [get|gets] to work {v} instead",
        "{S} stopped going in {old} and now [go|goes] {v}",
        "{S} gave up commuting {old}; {s} [go|goes] in {v} now",
    ),
    hedge=("{S} sometimes [go|goes] in {v} when it's sunny", "{S} tried getting to work {v} once"),
)


CAR = Family(
    name="car",
    subject="person",
    shape="single",
    plain_contradicts=False,
    values=(
        val("a Honda Civic", "a Honda", bare="Honda Civic"),
        val("a Toyota Corolla", "a Toyota", bare="Toyota Corolla"),
        val("a Tesla Model 3", "a Tesla|an electric car", bare="Tesla Model 3"),
        val("a Ford F-150", "a Ford|a pickup truck", bare="Ford F-150"),
        val("a VW Golf|a Volkswagen Golf", "a Volkswagen|a VW", bare="Golf"),
        val("a Subaru Outback", "a Subaru", bare="Subaru Outback"),
        val("a Kia Niro", "a Kia", bare="Kia Niro"),
        val("a BMW 3 Series", "a BMW", bare="BMW 3 Series"),
        val("a Mazda MX-5|a Mazda Miata", "a Mazda|a convertible", bare="Mazda MX-5"),
        val("a Volvo XC60", "a Volvo|an SUV", bare="Volvo XC60"),
        val("a Fiat 500", "a Fiat", bare="Fiat 500"),
        val("a Hyundai Ioniq 5", "a Hyundai|an electric car", bare="Ioniq 5"),
    ),
    state=(
        "{S} [drive|drives] {v}",
        "{P} car is {v}",
        "{S} [own|owns] {v}",
        "{S} [get|gets] around in {v}",
        "{P} car is {v} from {year}",
        "{S} [have|has] {v} parked outside",
    ),
    change=(
        "{S} traded in {p} {oldb} for {v}",
        "{S} [drive|drives] {v} now",
        "{S} sold the {oldb} and bought {v}",
        "{S} replaced {p} car with {v}",
        "{S} just bought {v} to replace the {oldb}",
        "{P} new car is {v}",
    ),
    retract=(
        "{S} sold {p} car",
        "{S} sold the {vb}",
        "{S} [don't|doesn't] have a car anymore",
        "{P} {vb} was written off in a crash and {s} didn't replace it",
        "{S} gave {p} {vb} away and [walk|walks] everywhere now",
    ),
    past=("{S} used to drive {v}",),
    hedge=(
        "{S} test-drove {v}",
        "{Sbe} saving up for {v}",
        "{S} rented {v} for the holiday",
        "{P} neighbour drives {v}",
    ),
)


PHONE_NUMBER = Family(
    name="phone_number",
    unique=True,
    plain_contradicts=False,
    subject="person",
    shape="single",
    values=(
        val("+1 415 555 0132|(415) 555-0132|415-555-0132"),
        val("+44 20 7946 0958|020 7946 0958"),
        val("+49 30 901820|030 901820"),
        val("+91 98765 43210|098765 43210"),
        val("+1 212 555 0187|(212) 555-0187|212-555-0187"),
        val("+61 2 9876 5432|(02) 9876 5432"),
        val("+33 1 42 68 53 00|01 42 68 53 00"),
        val("+81 3-1234-5678|03-1234-5678"),
        val("+234 803 555 0199|0803 555 0199"),
        val("+1 312 555 0145|(312) 555-0145"),
    ),
    state=(
        "{P} phone number is {v}",
        "{S} can be reached on {v}",
        "{P} mobile is {v}",
        "call {O} on {v}",
        "{P} number is {v}",
        "the best number for {O} is {v}",
    ),
    change=(
        "{P} new number is {v}",
        "{S} changed {p} number to {v}",
        "{S} got a new phone number: {v}",
        "{P} number is now {v}",
        "{S} no longer [use|uses] {old}; call {v} instead",
        "{S} switched carriers and {p} number changed to {v}",
    ),
    retract=(
        "{S} cancelled {p} phone line, so {v} no longer works",
        "{v} has been disconnected",
        "{P} old number {v} is out of service",
    ),
    detail=("{P} phone number is {v}; texts are better than calls",),
)


EMAIL = Family(
    name="email",
    unique=True,
    plain_contradicts=False,
    subject="person",
    shape="single",
    values=vals(
        "river.stone42@gmail.com",
        "the.blue.heron@outlook.com",
        "quietfox@proton.me",
        "k.harbour@fastmail.com",
        "mapleleaf77@yahoo.com",
        "orbit.cafe@icloud.com",
        "paper.lantern@gmail.com",
        "coastal.runner@hotmail.com",
        "jazz.and.tea@gmx.de",
        "north.window@pm.me",
    ),
    state=(
        "{P} email is {v}",
        "{P} email address is {v}",
        "{S} can be reached at {v}",
        "{S} [use|uses] {v} for email",
        "write to {O} at {v}",
        "the address {S} [check|checks] is {v}",
    ),
    change=(
        "{P} new email is {v}",
        "{S} switched to {v}",
        "{S} changed {p} email to {v}",
        "{S} [use|uses] {v} now; {old} is dead",
        "please use {v} for {O} from now on",
    ),
    retract=(
        "{S} deleted the {v} account",
        "{v} no longer works",
        "{S} [have|has] stopped checking {v} for good",
    ),
)


FAMILIES = (
    SALARY,
    COMMUTE,
    CAR,
    PHONE_NUMBER,
    EMAIL,
)
