"""Kappa families about people's health and habits: smoking, drinking, fitness, illness,
injury, medication, sleep, weight."""

from __future__ import annotations

from shared_core.eval.kappa_families import Family, val

SMOKING = Family(
    name="smoking",
    subject="person",
    shape="single",
    stateful=True,
    values=(
        val(
            "smoker",
            own=True,
            state=(
                "{Sbe} a smoker",
                "{S} [smoke|smokes]",
                "{S} [smoke|smokes] about a pack a day",
                "{S} [go|goes] out for a cigarette every couple of hours",
                "{Sbe} a heavy smoker",
                "{S} [enjoy|enjoys] a cigarette with {p} morning coffee",
            ),
            change=(
                "{S} started smoking again",
                "{Sbe} back on the cigarettes",
                "{S} relapsed and [smoke|smokes] again",
                "{S} took up smoking",
                "{S} picked up smoking at {p} new job",
            ),
            implied=(
                "{S} bought a pack of cigarettes at the petrol station",
                "{S} stepped out for a smoke during the break",
                "{S} [keep|keeps] a lighter and a half-empty pack in {p} jacket",
            ),
            retract=(
                "{S} quit smoking",
                "{Sbe} no longer a smoker",
                "{S} stubbed out {p} last cigarette on New Year's Eve",
            ),
        ),
        val(
            "non-smoker",
            own=True,
            state=(
                "{S} [don't|doesn't] smoke",
                "{Sbe} a non-smoker",
                "{Sbe} smoke-free",
                "{S} [stay|stays] away from cigarettes",
                "{S} [don't|doesn't] touch cigarettes",
                "{S} [haven't|hasn't] touched a cigarette in years",
            ),
            change=(
                "{S} quit smoking",
                "{S} gave up cigarettes",
                "{S} stopped smoking last month",
                "{Sbe} an ex-smoker now",
                "{S} kicked the habit and [don't|doesn't] smoke anymore",
            ),
            implied=(
                "{Shave} been nicotine-free for six weeks",
                "{S} threw away {p} last pack and [chew|chews] gum instead",
                "{S} celebrated three months without a cigarette",
            ),
        ),
    ),
)


DRINKING = Family(
    name="drinking",
    subject="person",
    shape="single",
    stateful=True,
    values=(
        val(
            "drinks",
            own=True,
            state=(
                "{S} [drink|drinks] socially",
                "{S} [enjoy|enjoys] a glass of wine with dinner",
                "{S} [have|has] a beer most evenings",
                "{S} [like|likes] a drink at the weekend",
                "{S} [drink|drinks] alcohol",
                "{S} [have|has] a glass of wine now and then",
            ),
            change=(
                "{S} started drinking again",
                "{S} [drink|drinks] again, just socially",
                "{Sbe} drinking again after two dry years",
                "{S} [have|has] gone back to having the odd beer",
                "{S} [allow|allows] {r} the odd drink again",
            ),
            implied=(
                "{S} had a couple of beers at the pub quiz last night",
                "{S} shared a bottle of red with friends on Friday",
            ),
        ),
        val(
            "sober",
            own=True,
            state=(
                "{Sbe} sober",
                "{S} [don't|doesn't] drink",
                "{Sbe} teetotal",
                "{S} [avoid|avoids] alcohol completely",
                "{Shave} been sober for two years",
                "{S} [haven't|hasn't] had a drink in years",
            ),
            change=(
                "{S} quit drinking",
                "{S} gave up alcohol",
                "{Sbe} sober now",
                "{S} stopped drinking after New Year",
                "{S} [have|has] gone teetotal",
            ),
            implied=(
                "{S} celebrated six months without a drink",
                "{S} only [order|orders] sparkling water at the pub since {p} last drink in March",
            ),
        ),
    ),
)


FITNESS = Family(
    name="fitness",
    subject="person",
    shape="single",
    stateful=True,
    clusters=("health",),
    conflicts=("injury", "runs", "workouts"),
    values=(
        val(
            "fit",
            own=True,
            state=(
                "{Sbe} in great shape",
                "{Sbe} very fit",
                "{S} [work|works] out five days a week",
                "{S} [run|runs] most mornings",
                "{Sbe} in the best shape of {p} life",
                "{Sbe} really athletic",
            ),
            change=(
                "{S} got back into shape",
                "{Sbe} fit again after months of training",
                "{S} [have|has] gotten really fit this year",
                "{Sbe} in great shape now",
                "{S} turned {p} fitness around completely",
            ),
            implied=(
                "{S} jogged three miles before breakfast",
                "{S} finished a half marathon last weekend",
                "{S} cycled up the mountain pass without stopping",
                "{S} did fifty push-ups without breaking a sweat",
            ),
        ),
        val(
            "unfit",
            own=True,
            state=(
                "{Sbe} out of shape",
                "{Sbe} pretty unfit",
                "{S} [don't|doesn't] exercise at all",
                "{S} [haven't|hasn't] worked out in years",
                "{Sbe} completely sedentary",
                "{S} [have|has] zero stamina",
            ),
            change=(
                "{S} fell out of shape over the winter",
                "{S} stopped exercising and lost all {p} fitness",
                "{Sbe} out of shape now",
                "{S} [have|has] let {p} fitness slide completely",
                "{Sbe} nowhere near as fit as {s} used to be",
            ),
            implied=(
                "{S} [get|gets] winded climbing one flight of stairs",
                "{S} [haven't|hasn't] exercised in years",
                "{S} had to stop and catch {p} breath after running for the bus",
                "{S} [struggle|struggles] to walk up the hill to the station",
            ),
        ),
    ),
)


HEALTH = Family(
    name="health_state",
    subject="person",
    shape="single",
    stateful=True,
    clusters=("health",),
    conflicts=("availability",),
    values=(
        val(
            "ill",
            own=True,
            state=(
                "{Sbe} sick",
                "{Sbe} ill",
                "{Sbe} down with the flu",
                "{Sbe} feeling terrible",
                "{Sbe} in bed with a fever",
                "{Sbe} unwell",
            ),
            change=(
                "{S} came down with the flu",
                "{S} caught a nasty cold",
                "{S} got sick",
                "{Sbe} ill now",
                "{S} picked up a stomach bug",
            ),
            implied=(
                "{S} called in sick today",
                "{S} [have|has] been coughing all night and can't get out of bed",
                "{S} had a temperature of 39 °C this morning",
            ),
        ),
        val(
            "well",
            own=True,
            state=(
                "{Sbe} healthy",
                "{Sbe} feeling great",
                "{Sbe} fit and well",
                "{Sbe} in good health",
                "{Sbe} feeling fine",
                "{Sbe} perfectly healthy",
            ),
            change=(
                "{Sbe} over the flu",
                "{Sbe} feeling better",
                "{S} recovered",
                "{Sbe} back on {p} feet",
                "{Sbe} well again",
            ),
            implied=(
                "{S} went back to the gym now that the fever has broken",
                "{S} [have|has] no symptoms left and went back to work",
            ),
        ),
    ),
)


INJURY = Family(
    name="injury",
    subject="person",
    shape="single",
    stateful=True,
    clusters=("health",),
    conflicts=("fitness", "runs", "workouts"),
    never=tuple(
        (a, b)
        for a in (
            "a broken arm",
            "a sprained ankle",
            "a torn ACL",
            "a slipped disc",
            "a concussion",
        )
        for b in (
            "a broken arm",
            "a sprained ankle",
            "a torn ACL",
            "a slipped disc",
            "a concussion",
        )
    ),
    values=(
        val("a broken arm|a fractured arm", bare="broken arm"),
        val("a sprained ankle", bare="sprained ankle"),
        val("a torn ACL|a torn knee ligament", bare="knee injury"),
        val("a slipped disc|a herniated disc", bare="back injury"),
        val("a concussion", bare="concussion"),
        val(
            "healed",
            own=True,
            state=(
                "{Sbe} injury-free",
                "{Sbe} fully healed",
                "{S} [have|has] no injuries",
                "{Sbe} fit and injury-free",
                "{Sbe} completely healthy with no injuries",
                "{S} [have|has] a clean bill of health from the physio",
            ),
            change=(
                "{S} [have|has] fully recovered",
                "{Sbe} healed up and back to normal",
                "the physio signed {O} off as fully recovered",
                "{Sbe} completely over the injury",
                "{S} got the all-clear from {p} doctor",
            ),
            implied=(
                "{S} played a full football match on Sunday with no pain",
                "{S} went climbing again for the first time since the injury",
            ),
        ),
    ),
    state=(
        "{S} [have|has] {v}",
        "{Sbe} dealing with {v}",
        "{Sbe} laid up with {v}",
        "{Sbe} recovering from {v}",
        "{S} [have|has] been out of action with {v}",
        "{P} doctor says {s} [have|has] {v}",
    ),
    change=(
        "{S} ended up with {v} after a fall",
        "{S} got {v} playing football",
        "{S} suffered {v} on the ski trip",
        "{S} [have|has] {v} now after the accident",
        "{S} came back from the match with {v}",
    ),
    retract=(
        "{P} {vb} has healed",
        "{S} [have|has] recovered from {p} {vb}",
        "{Sbe} over {p} {vb} now",
    ),
)


MEDICATION = Family(
    name="medication",
    subject="person",
    shape="single",
    plain_contradicts=False,
    clusters=("health",),
    values=(
        val("lisinopril"),
        val("amlodipine"),
        val("losartan"),
        val("ramipril"),
        val("hydrochlorothiazide"),
        val("bisoprolol"),
        val("valsartan"),
        val("nifedipine"),
        val("candesartan"),
    ),
    state=(
        "{S} [take|takes] {v} for {p} blood pressure",
        "{P} blood pressure medication is {v}",
        "{Sbe} on {v} for high blood pressure",
        "{P} doctor has {o} on {v} for {p} blood pressure",
        "{S} [manage|manages] {p} blood pressure with {v}",
        "{v} is what {S} [take|takes] for {p} blood pressure",
    ),
    change=(
        "{P} doctor switched {o} from {old} to {v}",
        "{Sbe} on {v} now instead of {old}",
        "{S} [have|has] been moved off {old} and onto {v}",
        "{P} blood pressure medication was changed to {v}",
        "{S} stopped the {old} and started {v} in its place",
    ),
    retract=(
        "{S} came off {v}",
        "{S} no longer [take|takes] {v}",
        "{P} doctor took {o} off {v}",
        "{S} [don't|doesn't] need {v} anymore; {p} blood pressure is normal",
    ),
    past=("{S} used to take {v}",),
)


SLEEP = Family(
    name="sleep_schedule",
    subject="person",
    shape="single",
    ordered=True,
    conflicts=("shift",),
    clusters=("health",),
    values=(
        val("9:30 pm|21:30|half past nine"),
        val("10 pm|22:00|ten at night"),
        val("10:30 pm|22:30|half past ten"),
        val("11 pm|23:00|eleven at night"),
        val("11:30 pm|23:30|half past eleven"),
        val("midnight|00:00|12 am"),
        val("1 am|01:00|one in the morning"),
        val("2 am|02:00|two in the morning"),
        val("3 am|03:00|three in the morning"),
    ),
    state=(
        "{S} [go|goes] to bed at {v}",
        "{P} bedtime is {v}",
        "{S} usually [fall|falls] asleep around {v}",
        "{S} [turn|turns] in at {v} most nights",
        "lights out for {O} is {v}",
        "{S} [hit|hits] the hay at {v}",
    ),
    change=(
        "{S} [go|goes] to bed at {v} now",
        "{S} moved {p} bedtime from {old} to {v}",
        "these days {S} [turn|turns] in at {v}",
        "+{S} [have|has] started staying up until {v}",
        "-{S} [have|has] been going to bed earlier, around {v}",
        "{P} new bedtime is {v}",
    ),
    hedge=("{S} stayed up until {v} once last week", "{S} would like to be asleep by {v}"),
)


WEIGHT = Family(
    name="body_weight",
    subject="person",
    shape="single",
    ordered=True,
    clusters=("health",),
    values=(
        val("58 kg|128 lb|about 128 pounds"),
        val("62 kg|137 lb|about 137 pounds"),
        val("65 kg|143 lb|about 143 pounds"),
        val("70 kg|154 lb|about 154 pounds"),
        val("75 kg|165 lb|about 165 pounds"),
        val("80 kg|176 lb|about 176 pounds"),
        val("85 kg|187 lb|about 187 pounds"),
        val("90 kg|198 lb|about 198 pounds"),
        val("95 kg|209 lb|about 209 pounds"),
        val("100 kg|220 lb|about 220 pounds"),
    ),
    state=(
        "{S} [weigh|weighs] {v}",
        "{P} weight is {v}",
        "{Sbe} at {v}",
        "{P} last weigh-in was {v}",
        "{S} [tip|tips] the scales at {v}",
        "the scale says {v} for {O}",
    ),
    change=(
        "+{S} [have|has] put on weight and [weigh|weighs] {v} now",
        "-{S} [have|has] slimmed down to {v}",
        "{S} [weigh|weighs] {v} now",
        "{P} weight went from {old} to {v}",
        "-{S} dropped to {v}",
        "+{S} bulked up to {v}",
    ),
    hedge=("-{S} [want|wants] to get down to {v}", "{S} [aim|aims] to reach {v} by summer"),
)


FAMILIES = (
    SMOKING,
    DRINKING,
    FITNESS,
    HEALTH,
    INJURY,
    MEDICATION,
    SLEEP,
    WEIGHT,
)
