"""Kappa families about products and subscriptions: plans, seats, prices, stock."""

from __future__ import annotations

from shared_core.eval.kappa_families import Family, val, vals

PLAN = Family(
    name="pricing_plan",
    subject="subscription",
    shape="single",
    values=vals(
        "the Free plan|the free tier",
        "the Pro plan|Pro",
        "the Business plan|Business",
        "the Enterprise plan|Enterprise",
        "the Team plan|Team",
        "the Starter plan|Starter",
        "the Plus plan|Plus",
        "the Premium plan|Premium",
        "the Standard plan|Standard",
    ),
    state=(
        "{S} is on {v}",
        "{S} is billed on {v}",
        "we pay for {v} on {S}",
        "{S} is subscribed to {v}",
        "{P} plan is {v}",
        "{S} has been on {v} since {year}",
    ),
    change=(
        "{S} moved to {v}",
        "{S} switched to {v}",
        "we changed {S} from {old} to {v}",
        "{S} is on {v} now",
        "as of this billing cycle, {S} is on {v}",
    ),
    retract=(
        "we cancelled the subscription for {S}",
        "we stopped paying for {v} on {S} and closed it",
    ),
    hedge=("we're trialling {v} on {S} for two weeks", "sales keeps pitching {v} for {S}"),
)


SEATS = Family(
    name="seat_count",
    subject="subscription",
    shape="single",
    ordered=True,
    values=vals(
        "5 seats|five seats",
        "10 seats|ten seats",
        "15 seats|fifteen seats",
        "25 seats|twenty-five seats",
        "40 seats|forty seats",
        "50 seats|fifty seats",
        "100 seats|a hundred seats",
        "200 seats|two hundred seats",
    ),
    state=(
        "{S} has {v}",
        "we pay for {v} on {S}",
        "{S} is licensed for {v}",
        "{S} comes with {v}",
        "the seat count on {S} is {v}",
        "{S} is capped at {v}",
    ),
    change=(
        "+we added seats; {S} has {v} now",
        "-we trimmed {S} down to {v}",
        "{S} now has {v}",
        "{S} was resized to {v}",
        "the seat count on {S} changed from {old} to {v}",
    ),
    hedge=("we might need {v} on {S} next year", "the quote for {S} was for {v}"),
)


PRICE = Family(
    name="product_price",
    subject="product",
    shape="single",
    ordered=True,
    values=vals(
        "$9.99 a month|9.99 dollars a month|$9.99/month",
        "$12 a month|12 dollars a month|$12/month",
        "$15 a month|15 dollars a month|$15/month",
        "$20 a month|20 dollars a month|$20/month",
        "$29 a month|29 dollars a month|$29/month",
        "$49 a month|49 dollars a month|$49/month",
        "$99 a month|99 dollars a month|$99/month",
        "$149 a month|149 dollars a month|$149/month",
        "$1,200 a month|1200 dollars a month|$1.2k a month",
    ),
    state=(
        "{S} costs {v}",
        "{S} is priced at {v}",
        "the price of {S} is {v}",
        "{S} goes for {v}",
        "{S} sells for {v}",
        "you pay {v} for {S}",
    ),
    change=(
        "+{S} went up to {v}",
        "-{S} dropped to {v}",
        "the price of {S} changed to {v}",
        "{S} now costs {v}",
        "{S} was repriced from {old} to {v}",
        "{S} costs {v} as of this month",
    ),
    implied=("customers on {S} are being charged {v} from this cycle",),
    retract=("{S} was discontinued and is no longer sold",),
    hedge=("a competitor sells something like {S} for {v}", "finance floated {v} for {S}"),
)


STOCK = Family(
    name="stock_status",
    subject="goods",
    shape="single",
    stateful=True,
    values=(
        val(
            "in stock|available",
            change=(
                "{S} is back in stock",
                "{S} was restocked this morning",
                "{S} is available again",
                "a new shipment of {S} arrived and it's in stock",
                "we can sell {S} again after the restock",
            ),
            implied=("{S} ships same-day from the warehouse again",),
        ),
        val(
            "sold out|out of stock",
            change=(
                "{S} just sold out",
                "{S} ran out of stock",
                "{S} is out of stock now",
                "the last unit of {S} sold this morning",
                "{S} sold out overnight",
            ),
            implied=(
                "the add-to-cart button for {S} is greyed out",
                "the warehouse has zero units of {S} left",
            ),
        ),
        val(
            "on backorder|backordered",
            change=(
                "{S} went on backorder",
                "{S} is backordered now",
                "{S} can only be backordered from today",
                "{S} moved to backorder status",
                "new orders for {S} go on backorder as of today",
            ),
            implied=("new orders for {S} won't ship for six weeks",),
        ),
    ),
    state=(
        "{S} is {v}",
        "{S} is {v} right now",
        "the shop lists {S} as {v}",
        "{S} is currently {v}",
        "{S} shows as {v} on the website",
        "{S} is listed as {v}",
    ),
)


GOODS_PRICE = Family(
    name="goods_price",
    subject="goods",
    shape="single",
    ordered=True,
    values=vals(
        "$39|39 dollars|USD 39",
        "$59|59 dollars|USD 59",
        "$89|89 dollars|USD 89",
        "$129|129 dollars|USD 129",
        "$199|199 dollars|USD 199",
        "$249|249 dollars|USD 249",
        "$399|399 dollars|USD 399",
        "$649|649 dollars|USD 649",
        "$1,200|1200 dollars|USD 1,200",
    ),
    state=(
        "{S} costs {v}",
        "{S} retails at {v}",
        "the price tag on {S} says {v}",
        "{S} sells for {v}",
        "we list {S} at {v}",
        "{S} is {v} in the shop",
    ),
    change=(
        "+{S} went up to {v}",
        "-{S} was marked down to {v}",
        "{S} now costs {v}",
        "we repriced {S} from {old} to {v}",
        "the new price of {S} is {v}",
    ),
    implied=("-{S} is in the clearance section at {v}",),
    hedge=("a reseller offers {S} for {v}", "{S} cost {v} at launch"),
)


FAMILIES = (
    PLAN,
    SEATS,
    PRICE,
    STOCK,
    GOODS_PRICE,
)
