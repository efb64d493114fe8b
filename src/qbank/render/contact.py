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
        fragment("brand-disclaimer.html.j2", brand=BRAND),
    ]
    meta = PageMeta(
        path=CONTACT,
        title=f"Contact {BRAND}",
        description="How to reach the editors about a purchase, a refund, a wrong number or a broken page, and "
        "what to include so one reply settles it.",
        crumbs=(("Home", HOME), ("Contact", CONTACT)),
        kind="page",
        indexable=False,  # a utility page: linked from every footer, nothing to rank for
        sources=(SHOP_FILE,),
    )
    return make_page(meta, "\n".join(body))
