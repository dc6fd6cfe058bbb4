"""Kappa families about people's private lives: relationships, diet, habits, health, home."""

from __future__ import annotations

from shared_core.eval.kappa_families import Family, val
from shared_core.eval.kappa_families_subjects import NAME_VALUES

RELATIONSHIP = Family(
    name="relationship_status",
    subject="person",
    shape="single",
    stateful=True,
    subject_filter="no_partner",
    clusters=("relationship",),
    conflicts=("partner_name",),
    never=(("married", "engaged"),),
    values=(
        val(
            "single",
            own=True,
            state=(
                "{Sbe} single",
                "{Sbe} not seeing anyone",
                "{S} [don't|doesn't] have a partner",
                "{Sbe} unattached at the moment",
                "{Shave} been single for a while",
                "{Sbe} not dating anyone right now",
            ),
            change=(
                "{Sbe} single again",
                "{S} split up with {p} partner",
                "{S} broke up with {p} partner",
                "{S} [have|has] been single since the breakup",
                "{Sbe} back on the market after the breakup",
            ),
            implied=(
                "{S} reinstalled the dating apps after the breakup",
                "{S} moved out of the flat {s} shared with {p} ex",
                "{S} [have|has] been going on a lot of first dates since the divorce",
            ),
        ),
        val(
            "engaged",
            own=True,
            state=(
                "{Sbe} engaged",
                "{Sbe} engaged to be married",
                "{Sbe} engaged to {p} long-time partner",
                "{S} [have|has] a fiancé",
                "{Sbe} planning a wedding for next summer",
                "{Shave} been engaged since {year}",
            ),
            change=(
                "{S} just got engaged",
                "{P} partner proposed and {s} said yes",
                "{Sbe} engaged now",
                "{S} got engaged over the holidays",
                "{S} popped the question last weekend and got a yes",
            ),
            implied=(
                "{S} [have|has] been showing everyone the ring since Saturday",
                "{Sbe} busy touring wedding venues with {p} fiancé",
                "{S} booked a venue for {p} wedding next June",
            ),
        ),
        val(
            "married",
            own=True,
            state=(
                "{Sbe} married",
                "{Shave} been married since {year}",
                "{S} [have|has] a spouse",
                "{Sbe} a married person",
                "{Sbe} happily married",
                "{S} [wear|wears] a wedding ring",
            ),
            change=(
                "{S} got married",
                "{S} tied the knot last month",
                "{Sbe} married now",
                "{S} married {p} partner in a small ceremony in June",
                "{S} just got hitched",
            ),
            implied=(
                "{S} just got back from {p} honeymoon",
                "{S} changed {p} surname after the wedding",
                "{S} [have|has] been writing thank-you notes for the wedding gifts all week",
            ),
        ),
    ),
)

PARTNER = Family(
    name="partner_name",
    unique=True,
    subject="person",
    shape="single",
    values=NAME_VALUES,
    domain="person_name",
    subject_filter="no_partner",
    clusters=("relationship",),
    conflicts=("relationship_status", "living_situation"),
    state=(
        "{P} partner is {v}",
        "{P} partner's name is {v}",
        "{Sbe} with {v}",
        "{Sbe} dating {v}",
        "{v} is {P} other half",
        "{Shave} been with {v} since {year}",
    ),
    change=(
        "{S} [have|has] a new partner, {v}",
        "{Sbe} seeing {v} now",
        "{S} split up with {old} and started dating {v}",
        "{S} [have|has] been with {v} since breaking up with {old}",
        "{P} partner is {v} now",
        "{S} left {old} for {v}",
    ),
    implied=(
        "{S} spent the weekend meeting {v}'s parents for the first time",
        "{S} brought {p} new partner {v} to the party",
    ),
    retract=(
        "{S} broke up with {v}",
        "{Sbe} no longer with {v}",
        "{S} ended things with {v}",
    ),
    past=("{S} used to date {v}",),
    hedge=(
        "{S} [work|works] with {v}",
        "{S} went to school with {v}",
        "{S} [play|plays] tennis with {v}",
    ),
)

DIET = Family(
    name="diet",
    subject="person",
    shape="single",
    stateful=True,
    clusters=("food",),
    conflicts=("favourite_food", "meals"),
    never=(("vegetarian", "vegan"), ("vegan", "vegetarian")),
    values=(
        val(
            "vegan",
            own=True,
            state=(
                "{Sbe} vegan",
                "{S} [eat|eats] a fully plant-based diet",
                "{S} [don't|doesn't] eat any animal products",
                "{S} [follow|follows] a vegan diet",
                "{Shave} been vegan since {year}",
                "{S} [avoid|avoids] meat, fish, eggs and dairy",
            ),
            change=(
                "{S} went vegan",
                "{Sbe} vegan now",
                "{S} cut out all animal products last month",
                "{S} switched to a plant-based diet",
                "{S} gave up meat and dairy for good",
            ),
        ),
        val(
            "vegetarian",
            own=True,
            state=(
                "{Sbe} vegetarian",
                "{Sbe} a vegetarian",
                "{S} [don't|doesn't] eat meat or fish",
                "{S} [follow|follows] a vegetarian diet",
                "{Shave} been meat-free since {year}",
                "{S} never [eat|eats] meat",
            ),
            change=(
                "{S} went vegetarian",
                "{S} stopped eating meat",
                "{S} gave up meat and fish",
                "{Sbe} vegetarian now",
                "{S} cut meat out of {p} diet in January",
            ),
            implied=("{S} [skip|skips] the meat aisle entirely since January",),
        ),
        val(
            "pescatarian",
            own=True,
            state=(
                "{Sbe} pescatarian",
                "{S} [eat|eats] fish but no other meat",
                "{S} [follow|follows] a pescatarian diet",
                "the only meat {S} [eat|eats] is fish",
                "{Sbe} a pescatarian",
                "{S} [eat|eats] seafood but never meat",
            ),
            change=(
                "{S} went pescatarian",
                "{S} cut out meat but [eat|eats] fish now",
                "{Sbe} pescatarian now",
                "{S} started eating fish again, but still no meat",
                "{S} gave up meat but kept fish",
            ),
        ),
        val(
            "omnivore",
            own=True,
            state=(
                "{S} [eat|eats] meat",
                "{S} [eat|eats] pretty much everything",
                "{S} [have|has] no dietary restrictions",
                "{Sbe} a big meat eater",
                "{S} [love|loves] a good steak",
                "{S} [have|has] meat with most meals",
            ),
            change=(
                "{S} started eating meat again",
                "{Sbe} back to eating meat",
                "{S} dropped the plant-based diet and [eat|eats] meat again",
                "{S} gave up being vegetarian",
                "{Sbe} eating meat again after years without it",
            ),
            implied=(
                "{S} had a steak for dinner last night and loved it",
                "{S} ordered the pork ribs at the barbecue",
                "{S} made chicken wings for the game and ate half of them",
            ),
        ),
    ),
)


LIVING = Family(
    name="living_situation",
    subject="person",
    shape="single",
    stateful=True,
    clusters=("place", "relationship"),
    conflicts=("partner_name",),
    values=(
        val(
            "renting",
            own=True,
            state=(
                "{S} [rent|rents] {p} flat",
                "{Sbe} renting",
                "{S} [pay|pays] rent to a landlord",
                "{Sbe} a tenant",
                "{S} [live|lives] in a rented apartment",
                "{S} [live|lives] in a rental",
            ),
            change=(
                "{S} sold {p} place and [rent|rents] now",
                "{S} signed a rental lease",
                "{Sbe} renting now",
                "{S} moved into a rented flat",
                "{S} [have|has] a landlord again",
            ),
            implied=("{S} just paid a deposit and the first month's rent on a flat",),
        ),
        val(
            "owner",
            own=True,
            state=(
                "{S} [own|owns] {p} home",
                "{Sbe} a homeowner",
                "{S} [have|has] a mortgage on {p} place",
                "{S} [own|owns] the flat {s} [live|lives] in",
                "{S} [live|lives] in a house {s} [own|owns]",
                "{S} bought {p} flat back in {year}",
            ),
            change=(
                "{S} bought a house",
                "{S} finally bought a place",
                "{Sbe} a homeowner now",
                "{S} closed on a flat last week",
                "{S} got on the property ladder",
            ),
            implied=(
                "{S} just got the keys to the house {s} bought",
                "{S} [spend|spends] every weekend renovating the house {s} bought",
                "{P} first mortgage payment went out this month",
            ),
        ),
        val(
            "with parents",
            own=True,
            state=(
                "{S} [live|lives] with {p} parents",
                "{Sbe} living at {p} parents' place",
                "{S} [share|shares] a house with {p} mum and dad",
                "{S} still [live|lives] at home with {p} parents",
                "{S} [haven't|hasn't] moved out of {p} parents' house",
                "{S} [live|lives] under {p} parents' roof",
            ),
            change=(
                "{S} moved back in with {p} parents",
                "{Sbe} living with {p} parents again",
                "{S} gave up {p} flat and moved home to {p} parents",
                "{S} [live|lives] with {p} parents now",
                "{S} had to move back home with {p} parents",
            ),
        ),
    ),
)

CHILDREN = Family(
    name="children_count",
    subject="person",
    shape="single",
    stateful=True,
    ordered=True,
    monotone=True,
    adjacent=True,
    conflicts=("children",),
    values=(
        val(
            "no children|no kids",
            own=True,
            state=(
                "{S} [don't|doesn't] have kids",
                "{S} [have|has] no children",
                "{Sbe} child-free",
                "{S} [have|has] no kids yet",
                "{Sbe} not a parent",
                "{S} never had children",
            ),
        ),
        val(
            "one child|one kid|a single child",
            implied=("{S} just had {p} first baby", "{Sbe} a first-time parent as of last week"),
            change=("{Sbe} a parent now", "{S} welcomed {p} first child"),
        ),
        val(
            "two children|two kids",
            implied=("{S} just had {p} second baby", "{P} second child was born on Tuesday"),
        ),
        val(
            "three children|three kids",
            implied=("{S} just had {p} third baby", "{P} third child arrived last week"),
        ),
        val(
            "four children|four kids",
            implied=("{S} just welcomed {p} fourth baby",),
        ),
    ),
    state=(
        "{S} [have|has] {v}",
        "{S} [have|has] {v} at home",
        "{Sbe} raising {v}",
        "{S} [have|has] got {v}",
        "{Sbe} a parent of {v}",
        "{P} family has {v}",
    ),
    change=(
        "{S} just had a baby, so {s} [have|has] {v} now",
        "{S} [have|has] {v} now",
        "{S} welcomed another baby and now [have|has] {v}",
        "with the new baby {S} [have|has] {v}",
        "{P} family grew to {v}",
    ),
)

PET_NAME = Family(
    name="pet_name",
    subject="person",
    shape="single",
    values=(
        val("Biscuit"),
        val("Luna"),
        val("Max"),
        val("Pepper"),
        val("Mochi"),
        val("Rocky"),
        val("Daisy"),
        val("Ziggy"),
        val("Nala"),
        val("Bruno"),
        val("Olive"),
    ),
    state=(
        "{P} dog is called {v}",
        "{P} dog's name is {v}",
        "{S} [have|has] a dog named {v}",
        "{v} is {P} dog",
        "{S} [walk|walks] {p} dog {v} every morning",
        "{P} dog, {v}, sleeps on {p} bed every night",
    ),
    change=(
        "after {old} passed away, {S} adopted a new dog called {v}",
        "{S} rehomed {old} and now [have|has] a dog called {v}",
        "{S} renamed the dog from {old} to {v}",
        "{P} dog is called {v} now; the shelter's name for her didn't stick",
        "{S} replaced {old}, who died in spring, with a rescue dog named {v}",
    ),
    retract=(
        "{P} dog {v} died last week",
        "{S} had to rehome {v}",
        "{S} no longer [have|has] a dog; {v} went to live with {p} parents",
    ),
    past=("{S} used to have a dog called {v}",),
    hedge=("{P} neighbour's dog is called {v}", "{S} dog-sat a beagle called {v} last weekend"),
)

FAMILIES = (
    RELATIONSHIP,
    PARTNER,
    DIET,
    LIVING,
    CHILDREN,
    PET_NAME,
)
