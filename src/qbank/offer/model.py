"""``site_src/shop.yaml``: what Premium costs, where to buy it and the refund terms (strict, positioned problems)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, Field
from pydantic_core import PydanticCustomError

from ..model import Strict, Text
from ..problems import Problem
from ..sources import load_model

SHOP_FILE = "site_src/shop.yaml"


def check_https(value: str) -> str:
    """A checkout link readers can follow: an absolute https URL."""
    if not value.startswith("https://") or len(value) <= len("https://") or any(c.isspace() for c in value):
        raise PydanticCustomError("shop-url", "the checkout URL must be an absolute https:// URL", {})
    return value


def check_email(value: str) -> str:
    """A contact address (shown on the contact page and in the refund terms)."""
    local, _, domain = value.partition("@")
    if not local or "." not in domain or any(c.isspace() for c in value):
        raise PydanticCustomError("shop-email", "'{value}' is not an email address", {"value": value})
    return value


HttpsUrl = Annotated[str, AfterValidator(check_https)]
Email = Annotated[str, AfterValidator(check_email)]


class Shop(Strict):
    """The Premium offer as configured by the operator; the pricing page and every call to action read it."""

    product: Text = Field(description="Product name as the shop shows it")
    price: int = Field(gt=0, description="Price in whole currency units, e.g. 49")
    currency: str = Field(pattern=r"^[A-Z]{3}$", description="ISO 4217 code, e.g. USD")
    checkout_url: HttpsUrl = Field(description="The shop's checkout page for the product")
    access_months: int = Field(ge=1, le=36, description="How long a license unlocks new releases")
    refund_days: int = Field(ge=0, le=365, description="Days after the sale in which a refund is granted on request")
    refund_terms: Text = Field(description="The refund terms in one paragraph, as the shop applies them")
    contact_email: Email = Field(description="Where readers write about purchases, refunds and errata")


def load_shop(root: Path) -> tuple[Shop | None, list[Problem]]:
    """``site_src/shop.yaml`` under ``root``, validated; problems are positioned like any content file's."""
    shop, _, problems = load_model(root / SHOP_FILE, SHOP_FILE, Shop)
    return shop, problems


def price_text(shop: Shop) -> str:
    """``USD 49`` (no symbol guessing: the code is what the shop charges in)."""
    return f"{shop.currency} {shop.price}"


def offer_line(shop: Shop) -> str:
    """The one-line offer next to every call to action, e.g. ``USD 49 · 6 months · no auto-renewal``."""
    return f"{price_text(shop)} · {shop.access_months} months · one payment, no auto-renewal"
