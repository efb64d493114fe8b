"""Render settings: the knobs that live in ``mkdocs.yml`` under ``extra.qbank``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..offer.model import Shop
from ..seal.regions import new_token

BRAND = "Prefill"
"""The site's name (qbank is the pipeline that builds it); mkdocs.yml's ``site_name`` says the same."""


@dataclass(frozen=True)
class Settings:
    """What rendering needs besides the corpus."""

    site_url: str = "https://qbank.example/"
    paywall: bool = False
    """True once the paywall encrypts premium sections; until then only locked placeholders are emitted."""
    ct_min_tagged: int = 2
    """A company×topic page needs at least this many questions tagged to both the company and the topic."""
    ct_min_note_chars: int = 40
    """... and a round note (company-specific text) at least this long."""
    home_top: int = 10
    """How many editors' picks (by editorial rank) the home page lists."""
    related_max: int = 5
    """How many related questions a question page lists."""
    thin_min_words: int = 150
    """An indexable page needs this many words of its own (``qbank.sitecheck.thin``)."""
    thin_max_overlap: float = 0.5
    """... and shares at most this share of its own text's 5-word shingles with any other indexable page."""
    preview: bool = False
    """`qbank serve` only: premium sections shown in full, marked as preview (the hooks refuse it in a build)."""
    shop: Shop | None = field(default=None, compare=False)
    """The Premium offer from ``site_src/shop.yaml`` (price, checkout link, refund terms); the hooks load it."""
    seal_token: str = field(default_factory=new_token, repr=False, compare=False)
    """This build's region-marker token (see ``qbank.seal.regions``): drawn per build, never written out."""

    @property
    def base(self) -> str:
        """The site URL with exactly one trailing slash."""
        return self.site_url.rstrip("/") + "/"


def settings_from(site_url: str | None, extra: dict[str, Any] | None, shop: Shop | None = None) -> Settings:
    """Settings from mkdocs' ``site_url`` and the ``extra.qbank`` mapping.

    Keys this module does not know are left alone: ``extra.qbank`` is shared with the paywall's settings.
    """
    raw = dict((extra or {}).get("qbank") or {})
    known = set(Settings.__dataclass_fields__) - {"site_url", "seal_token", "shop"}
    return Settings(site_url=site_url or Settings.site_url, shop=shop, **{k: v for k, v in raw.items() if k in known})
