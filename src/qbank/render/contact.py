"""The contact page: the address from ``site_src/shop.yaml``, for purchases, refunds and errata."""

from __future__ import annotations

from ..offer.model import SHOP_FILE, Shop
from .common import HOME, PRICING, Page, make_page
from .seo import PageMeta
from .settings import BRAND
from .templating import fragment
from .text import plural, rel

CONTACT = "contact.md"


def contact_page(shop: Shop) -> Page:
    """Where to write, and what to include so one reply settles it."""
    mail = f"[{shop.contact_email}](mailto:{shop.contact_email})"
    body = [
        "# Contact",
        "",
        f"Write to {mail}. One address serves everything; a person reads it.",
        "",
        "## Purchases and refunds",
        "",
        "Write from the address you bought with and include the order date. Refunds are granted within "
        f"{plural(shop.refund_days, 'day')} of the sale ([refund terms]({rel(CONTACT, PRICING)}#refunds)).",
        "",
        "## A wrong number or a broken page",
        "",
        "Name the page and the number or sentence. Every number on the site is re-derived by a verification "
        "script from a cited source, so a report that names the source you trust instead is the fastest to act on.",
        "",
        "## A key that is refused",
        "",
        "The unlock dialog says why it refuses a key. If it refuses one you bought, write from the address you "
        "bought with and quote its message; never send the key itself, since anyone who holds it can read what it "
        "opens.",
        "",
        "## Writing for the bank",
        "",
        "If you have served models in production and want to write a question, say which topic or company loop "
        "you know and one number you would ask a candidate to derive at the whiteboard.",
        "",
        "## Security",
        "",
        "A way to read a premium section without a key, or to make a verification script do more than compute its "
        "numbers, is a security report: put the word security in the subject and keep the details for the reply.",
        "",
        fragment("brand-disclaimer.html.j2", brand=BRAND),
    ]
    meta = PageMeta(
        path=CONTACT,
        title=f"Contact {BRAND}",
        description="How to reach the editors about a purchase, a refund, a wrong number or a broken page, and "
        "what to include so one reply settles it.",
        crumbs=(("Home", HOME), ("Contact", CONTACT)),
        kind="page",
        # indexable, with text of its own (the build's thin-page check holds it to the threshold)
        sources=(SHOP_FILE,),
    )
    return make_page(meta, "\n".join(body))
