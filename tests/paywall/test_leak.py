"""The leak scan finds premium text however it is encoded in a built file."""

from __future__ import annotations

import gzip
import json
import urllib.parse
from pathlib import Path

import pytest

from qbank.paywall.encrypt import PremiumFragment
from qbank.paywall.leak import scan_site

SECRET = "The attention kernel spills its partial sums to shared memory before the final rescale step"
FRAG = PremiumFragment("/questions/a/", "0", "How the kernel spills", "<p>…</p>", SECRET)
SHORT = PremiumFragment("/questions/b/", "0", "Short one", "<p>…</p>", "Use 42 pages.")


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("page.html", f"<p>{SECRET}</p>"),
        ("page.html", "<p>" + SECRET.replace(" ", "\n   ").replace("the", "<em>the</em>") + "</p>"),
        ("page.html", f'<meta name="description" content="{SECRET[30:100]}">'),
        ("page.html", f'<meta property="og:description" content="{SECRET[:60].replace("a", "&#97;")}">'),
        (
            "page.html",
            '<script type="application/ld+json">'
            + json.dumps({"text": SECRET}, ensure_ascii=True).replace(" ", "\\u0020")
            + "</script>",
        ),
        ("search/search_index.json", json.dumps({"docs": [{"text": f"<p>{SECRET.upper()}</p>"}]})),
        ("feed.xml", f"<description>&lt;p&gt;{SECRET}&lt;/p&gt;</description>"),
        ("share.html", f'<a href="https://x.example/?text={urllib.parse.quote_plus(SECRET)}">share</a>'),
        ("short.html", "<p>use   42 pages.</p>"),
    ],
)
def test_leaks_are_found(tmp_path: Path, name: str, content: str) -> None:
    (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / name).write_text(content)
    leaks = scan_site(tmp_path, [FRAG, SHORT])
    assert [leak.file for leak in leaks] == [name]


def test_gzip_sitemap_is_read(tmp_path: Path) -> None:
    (tmp_path / "sitemap.xml.gz").write_bytes(gzip.compress(f"<loc>{SECRET}</loc>".encode()))
    assert [leak.file for leak in scan_site(tmp_path, [FRAG])] == ["sitemap.xml.gz"]


def test_public_parts_are_not_leaks(tmp_path: Path) -> None:
    # the heading is on the placeholder; a few shared words are not a shingle of six
    (tmp_path / "page.html").write_text("<h2>How the kernel spills</h2><p>partial sums to shared memory</p>")
    assert scan_site(tmp_path, [FRAG, SHORT]) == []


def test_runs_the_free_sources_also_say_are_not_leaks_but_the_rest_is(tmp_path: Path) -> None:
    free = "We serve Llama 3.1 70B on an 8-GPU H100 node{=node} in every example."
    premium = PremiumFragment(
        "/questions/c/",
        "0",
        "The hidden cost",
        "",
        "The hidden cost Llama 3.1 70B on an 8-GPU H100 node pays a toll nobody budgets for at all",
    )
    (tmp_path / "page.html").write_text(
        "<h2>The hidden cost</h2><p>Llama 3.1 70B on an 8-GPU H100 node</p>"  # public run, and heading + body
    )
    assert scan_site(tmp_path, [premium], [free]) == []
    (tmp_path / "page.html").write_text("<p>node pays a toll nobody budgets for</p>")
    assert [leak.file for leak in scan_site(tmp_path, [premium], [free])] == ["page.html"]


def test_runs_of_digits_alone_are_not_distinctive(tmp_path: Path) -> None:
    # a derivation's printed table, and a minified stylesheet that happens to hold the same digits
    table = PremiumFragment("/questions/d/", "2", "Executed derivation", "", "mask 1 1 1 1 0 0 0 0 1 1 rows kept")
    (tmp_path / "main.min.css").write_text(".a{flex:1 1 1 1 0 0 0 0 1 1}")
    assert scan_site(tmp_path, [table]) == []
    (tmp_path / "page.html").write_text("<p>mask 1 1 1 1 0</p>")  # a run with a word in it still counts
    assert [leak.file for leak in scan_site(tmp_path, [table])] == ["page.html"]


def test_premium_headings_and_fence_info_strings_are_public(tmp_path: Path) -> None:
    # another page's locked placeholder shows its heading; a free derivation's fence says `python`,
    # which no reader sees, so the run across it is the one the premium derivation has
    heading = "The numbers per step (FP8 weights, 1 byte per parameter)"
    free_derivation = "## Counts in the units the answer states (billions)\n\n```python\nclaim('params', 70)\n```"
    premium = PremiumFragment(
        "/questions/e/",
        "2",
        "Executed derivation",
        "",
        "Model with FP8 weights 1 byte per parameter, we said."
        " Counts in the units the answer states billions claim params",
    )
    (tmp_path / "page.html").write_text(
        f"<h2>{heading}</h2><h2>Counts in the units the answer states (billions)</h2><pre>claim('params', 70)</pre>"
    )
    assert scan_site(tmp_path, [premium], [heading, free_derivation]) == []
    assert len(scan_site(tmp_path, [premium], [])) == 1
