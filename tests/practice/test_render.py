"""Practice pages as Markdown: the hub and its links from hubs, sealed regions, the data a test page carries."""

from __future__ import annotations

import json
import re
from pathlib import Path

from qbank.corpus import load_corpus
from qbank.practice.model import OrderItem
from qbank.render.pages import Page, render_pages
from qbank.render.practice import bank_for, practice_test_data
from qbank.render.settings import Settings

CANARY = "QBPRACTICEPREMIUMCANARY"


def _pages(root: Path, settings: Settings) -> dict[str, Page]:
    corpus, _ = load_corpus(root)
    return {p.path: p for p in render_pages(corpus, settings)}


def test_hub_test_and_drill_pages_and_the_hubs_that_link_them(practice_repo: Path) -> None:
    pages = _pages(practice_repo, Settings())
    assert {"practice/index.md", "practice/kv-free-sample.md", "practice/kv-loop-premium.md",
            "practice/drills/token-bucket-admission.md"} <= set(pages)
    assert "](practice/index.md)" in pages["index.md"].markdown
    topic = pages["topics/kv-cache.md"].markdown
    assert "](../practice/kv-free-sample.md)" in topic and "](../practice/drills/token-bucket-admission.md)" in topic
    assert "kv-loop-premium" not in topic, "a company loop test belongs to the company's page"
    assert "](../../practice/kv-loop-premium.md)" in pages["companies/xai/index.md"].markdown
    hub = pages["practice/index.md"].markdown
    assert "2 timed tests (1 free) and 1 code drill" in hub
    assert "](kv-free-sample.md) · 8 items · 10 min · free" in hub
    assert pages["practice/kv-free-sample.md"].meta.kind == "practice-test"


def test_premium_items_sit_only_inside_the_sealed_region(practice_repo: Path) -> None:
    settings = Settings(paywall=True)
    pages = _pages(practice_repo, settings)
    md = pages["practice/kv-loop-premium.md"].markdown
    token = settings.seal_token
    opened = md.index(f"<!--qbseal {token} open premium")
    closed = md.index(f"<!--qbseal {token} close premium")
    assert opened < md.index(CANARY) < closed and md.count(CANARY) == 1
    assert "data-qbp-sealed" in md and "data-qbp-data" not in md
    drill = pages["practice/drills/token-bucket-admission.md"].markdown
    edge = drill.index("def test_idle_never_banks_more_than_burst")
    assert drill.index(f"<!--qbseal {token} open premium") < edge < drill.index(f"<!--qbseal {token} close premium")
    assert "def test_starts_full" in drill[: drill.index(f"<!--qbseal {token} open premium")]
    locked = _pages(practice_repo, Settings(paywall=False))
    assert CANARY not in locked["practice/kv-loop-premium.md"].markdown
    assert "test_idle_never_banks_more_than_burst" not in locked["practice/drills/token-bucket-admission.md"].markdown


def test_a_free_test_page_carries_its_items_and_keys(practice_repo: Path) -> None:
    md = _pages(practice_repo, Settings())["practice/kv-free-sample.md"].markdown
    raw = re.search(r'data-qbp-data="([^"]*)"', md)
    assert raw
    data = json.loads(raw.group(1).replace("&#34;", '"').replace("&quot;", '"').replace("&#39;", "'")
                      .replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&"))
    assert [i["kind"] for i in data["items"]] == ["numeric"] * 4 + ["choice", "regime", "order", "choice"]
    assert data["items"][0]["key"] == 128.0 and data["items"][0]["unit"] == "KiB"
    assert data["items"][4]["see"] == "../../questions/what-is-a-kv-cache/"


def test_order_items_are_shown_shuffled_and_keyed_back(practice_repo: Path) -> None:
    corpus, _ = load_corpus(practice_repo)
    bank = bank_for(corpus)
    for slug, test in bank.tests.items():
        data = practice_test_data(bank, slug)
        for item, shown in zip(test.items, data["items"], strict=True):
            if isinstance(item, OrderItem):
                assert shown["entries"] != item.order
                assert [shown["entries"][j] for j in shown["key"]] == item.order


def test_a_free_test_is_indexable_with_its_prompts_folded_and_a_premium_one_is_not(practice_repo: Path) -> None:
    corpus, _ = load_corpus(practice_repo)
    bank = bank_for(corpus)
    pages = _pages(practice_repo, Settings())
    free, premium = pages["practice/kv-free-sample.md"], pages["practice/kv-loop-premium.md"]
    assert free.meta.indexable and not premium.meta.indexable
    md = free.markdown
    fold = md.index('<details class="qbp-items" markdown="1">')
    items = bank.tests["kv-free-sample"].items
    assert f"<summary>The {len(items)} items," in md[fold:]
    # every prompt, numbered in the test's order, inside the fold (read before the timer only by choice)
    listed = [line for line in md[fold : md.index("</details>", fold)].splitlines() if re.match(r"\d+\. ", line)]
    assert [int(line.split(".", 1)[0]) for line in listed] == list(range(1, len(items) + 1))
    for line, item in zip(listed, items, strict=True):
        assert " ".join(item.prompt.split())[:25].replace("*", "\\*") in line.replace("\\_", "_"), (line, item.prompt)
    # a premium test's prompts are sealed: none of them is listed outside its region
    assert 'class="qbp-items"' not in premium.markdown
