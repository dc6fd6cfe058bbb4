"""Still more kappa implied-state families: looks, skills, travel documents, seasons, home
appliances, services and careers (see kappa_families_implied)."""

from __future__ import annotations

from shared_core.eval.kappa_families_implied import imp

FAMILIES = (
    imp(
        "long_hair",
        "person",
        (
            "{S} [have|has] long hair",
            "{P} hair reaches {p} waist",
            "{S} [wear|wears] {p} hair in a long plait",
        ),
        (
            "{S} showed up with a buzz cut",
            "{S} donated thirty centimetres of hair to charity",
            "{P} new pixie cut suits {o}",
            "{S} [get|gets] {p} head shaved every two weeks now",
        ),
        ("{S} had {p} fringe trimmed", "{S} dyed {p} hair red"),
    ),
    imp(
        "cant_swim",
        "person",
        (
            "{S} [can't|can't] swim a single length",
            "{Sbe} scared of deep water at the pool",
            "{S} never learned to swim as a kid",
        ),
        (
            "{S} swam across the lake",
            "{S} did forty lengths at the pool",
            "{S} finished {p} first open-water race",
            "{S} went snorkelling on the reef",
        ),
        ("{S} signed up for swimming lessons", "{S} bought goggles"),
    ),
    imp(
        "no_passport",
        "person",
        ("{S} [have|has] no passport", "{P} passport expired", "{S} [can't|can't] travel abroad"),
        (
            "{S} flew to Lisbon for the weekend",
            "{S} got {p} passport stamped in Mexico",
            "{S} went through border control in Tokyo",
            "{Sbe} sending photos from a beach in Greece",
        ),
        ("{S} applied for a new passport", "{S} booked a passport appointment"),
    ),
    imp(
        "snowy_garden",
        "person",
        (
            "{P} garden is under snow",
            "{P} garden is frozen",
            "{P} vegetable patch is bare for winter",
        ),
        (
            "{S} picked tomatoes in {p} garden",
            "{S} mowed {p} lawn this morning",
            "{S} had a barbecue in {p} garden",
            "{P} roses are in full bloom",
        ),
        ("{S} ordered seeds for spring", "{S} shovelled the path"),
    ),
    imp(
        "dishwasher",
        "person",
        (
            "{P} dishwasher is broken",
            "{P} dishwasher leaks and won't run",
            "{S} [have|has] no working dishwasher",
        ),
        (
            "{S} ran the dishwasher twice today",
            "{S} unloaded a clean dishwasher this morning",
            "{P} dishwasher hums away every evening",
            "{S} put the glasses through the dishwasher after the party",
        ),
        ("a repair person is coming for the dishwasher", "{S} ordered a new pump"),
    ),
    imp(
        "heating_broken",
        "person",
        ("{P} heating is broken", "{P} boiler has packed in", "{P} flat has no heating"),
        (
            "{P} flat is toasty and the radiators are hot",
            "{S} had a long hot shower this morning",
            "{S} turned the thermostat down because it got too warm",
            "{S} sat in a T-shirt at home in January",
        ),
        ("the engineer is booked for Friday", "{S} bought an electric heater"),
    ),
    imp(
        "maintenance_mode",
        "service",
        (
            "{S} is in maintenance mode",
            "{S} is showing a maintenance page",
            "{S} is offline for upgrades",
        ),
        (
            "customers are placing orders on {S}",
            "{S} processed 5,000 payments since noon",
            "users are logging in to {S} as usual",
            "the traffic graph for {S} is back to normal",
        ),
        ("the maintenance on {S} is taking longer than planned", "we posted an update about {S}"),
    ),
    imp(
        "no_car",
        "person",
        (
            "{S} [have|has] never owned a car",
            "{S} [don't|doesn't] own a car and [cycle|cycles] everywhere",
            "{S} [get|gets] everywhere by bus",
        ),
        (
            "{S} drove us to the airport in {p} new car",
            "{S} filled up {p} car on the way home",
            "{S} parked {p} car in the garage",
            "{S} got a parking ticket on {p} car",
        ),
        ("{S} took a test drive", "{Sbe} saving for a car"),
    ),
    imp(
        "red_build",
        "service",
        ("the build for {S} is failing", "CI for {S} is red", "{S} won't compile"),
        (
            "we deployed {S} to production after a green run",
            "all checks on the main branch of {S} passed",
            "{S} shipped three releases today",
            "the merge queue for {S} is moving again",
        ),
        ("someone is bisecting the failure in {S}", "a fix for {S} is in review"),
    ),
    imp(
        "retired",
        "person",
        (
            "{Sbe} retired from teaching",
            "{S} stopped working years ago",
            "{Sbe} a pensioner with no job",
        ),
        (
            "{S} started a full-time job at the hospital",
            "{S} [commute|commutes] to {p} new office every day",
            "{S} got {p} first payslip from the consultancy",
            "{S} was hired as a full-time bus driver",
        ),
        ("{S} volunteered at the library", "{S} did some gardening for a neighbour"),
    ),
    imp(
        "no_spanish",
        "person",
        (
            "{S} [don't|doesn't] speak Spanish",
            "{S} [know|knows] no Spanish",
            "{S} never learned Spanish",
        ),
        (
            "{S} gave a talk in Spanish in Madrid",
            "{S} chatted with the taxi driver in fluent Spanish",
            "{S} translated the contract from Spanish",
            "{S} [read|reads] Spanish novels in the original",
        ),
        ("{S} downloaded a Spanish app", "{S} bought a Spanish phrasebook"),
    ),
)
