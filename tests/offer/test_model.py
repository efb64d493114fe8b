"""site_src/shop.yaml: the repository's offer loads, and a broken one gets positioned problems."""

from __future__ import annotations

from pathlib import Path

from qbank.offer.model import SHOP_FILE, load_shop, offer_line, price_text

from ..conftest import REPO


def test_repository_offer_loads() -> None:
    shop, problems = load_shop(REPO)
    assert problems == [] and shop is not None
    assert shop.checkout_url.startswith("https://")
    assert price_text(shop) == f"{shop.currency} {shop.price}"
    assert f"{shop.access_months} months" in offer_line(shop)


def test_bad_offer_is_positioned(tmp_path: Path) -> None:
    text = (REPO / SHOP_FILE).read_text()
    text = text.replace("checkout_url: https://", "checkout_url: http://").replace("price: ", "price: -")
    (tmp_path / "site_src").mkdir()
    (tmp_path / SHOP_FILE).write_text(text)
    shop, problems = load_shop(tmp_path)
    assert shop is None
    lines = text.splitlines()
    found = {(p.code, p.line) for p in problems}
    assert ("shop-url", next(i for i, ln in enumerate(lines, 1) if ln.startswith("checkout_url:"))) in found
    assert ("field-range", next(i for i, ln in enumerate(lines, 1) if ln.startswith("price:"))) in found
    assert all(p.path == SHOP_FILE and p.col > 0 for p in problems)


def test_missing_offer_is_a_problem(tmp_path: Path) -> None:
    shop, problems = load_shop(tmp_path)
    assert shop is None and problems and problems[0].path == SHOP_FILE
