"""The built-site checks on small hand-made sites: each problem they exist to catch, caught."""

from __future__ import annotations

import json
from pathlib import Path

from qbank.sitecheck import check_reach, check_structure
from qbank.sitecheck.links import parse_csv

BASE = "https://qbank.example/"


def page(url: str, title: str, links: list[str], jsonld: list[dict[str, object]] | None = None,
         h1: str | None = None, crumbs: list[str] | None = None) -> str:
    names = crumbs or ["Home"]
    items = [
        {"@type": "ListItem", "position": i + 1, "name": n, "item": BASE + (url if i == len(names) - 1 else "")}
        for i, n in enumerate(names)
    ]
    blocks = jsonld if jsonld is not None else [{"@type": "BreadcrumbList", "itemListElement": items}]
    scripts = "".join(f'<script type="application/ld+json">{json.dumps(b)}</script>' for b in blocks)
    crumb_html = " › ".join(f'<a href="/">{n}</a>' for n in names[:-1])
    crumb_html += f'<span aria-current="page">{names[-1]}</span>'
    anchors = "".join(f'<a href="{href}">{href}</a>' for href in links)
    return (
        f'<html><head><title>{title}</title><meta name="description" content="about {title}">'
        f'<link rel="canonical" href="{BASE}{url}">{scripts}</head><body><article>'
        f'<nav class="qb-crumbs"><p>{crumb_html}</p></nav><h1>{h1 or title}</h1>{anchors}</article></body></html>'
    )


def write(site: Path, url: str, html: str) -> None:
    path = site / url / "index.html"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(html)


def test_reach_counts_clicks_and_finds_orphans(tmp_path: Path) -> None:
    site = tmp_path / "site"
    chain = ["", "a/", "b/", "c/", "d/"]
    for here, nxt in zip(chain, [*chain[1:], None], strict=True):
        write(site, here, page(here, f"T{here}", [f"/{nxt}"] if nxt else []))
    write(site, "alone/", page("alone/", "Alone", ["/"]))
    problems = {(p.path, p.code) for p in check_reach(site)}
    assert problems == {("site/d/index.html", "page-deep"), ("site/alone/index.html", "page-orphan")}


def test_structure_catches_each_metadata_fault(tmp_path: Path) -> None:
    site = tmp_path / "site"
    write(site, "", page("", "Home", ["/x/"]))
    write(site, "x/", page("x/", "Same", [], crumbs=["Home", "X"]))
    write(site, "y/", page("y/", "Same", [], crumbs=["Home", "Y"], h1="Other"))
    # y: a TechArticle that disagrees with the visible h1, a QAPage, an ItemList naming an unlinked page
    bad = page("y/", "Y2", [], crumbs=["Home", "Y"], h1="Shown")
    extra = [
        {"@type": "TechArticle", "headline": "Not shown", "description": "about Y2", "isAccessibleForFree": False},
        {"@type": "QAPage"},
        {"@type": "ItemList", "itemListElement": [{"url": BASE + "nowhere/"}]},
    ]
    bad = bad.replace("</head>", "".join(f'<script type="application/ld+json">{json.dumps(b)}</script>'
                                         for b in extra) + '<script type="application/ld+json">{oops</script></head>')
    write(site, "z/", bad.replace(f"{BASE}y/", f"{BASE}z/").replace("<title>Y2", "<title>Z"))
    problems = check_structure(site, BASE)
    codes = sorted((p.path, p.code) for p in problems)
    assert ("site/x/index.html", "title-duplicate") in codes
    assert ("site/y/index.html", "title-duplicate") in codes
    assert ("site/x/index.html", "description-duplicate") in codes
    z = sorted(p.message.split(" ")[0] + " " + p.code for p in problems if p.path == "site/z/index.html")
    assert z == [
        "ItemList jsonld-mismatch",
        "JSON-LD jsonld-invalid",
        "QAPage jsonld-qapage",
        "TechArticle jsonld-mismatch",
        "a jsonld-mismatch",
        "the description-length",  # this fixture's descriptions are a few words: shorter than a snippet
    ], z


def test_linkchecker_csv_rows_become_problems() -> None:
    out = (
        "# created by LinkChecker\n"
        "urlname;parentname;base;result;warningstring;infostring;valid;url;line;column;name;dltime;size;"
        "checktime;cached;level;modified\n"
        "../nope/;http://127.0.0.1:9/questions/a/;;404 File not found;;;False;http://127.0.0.1:9/questions/nope/;"
        "12;7;x;0;0;0;0;1;\n"
        "../ok/;http://127.0.0.1:9/;;200 OK;;;True;http://127.0.0.1:9/ok/;3;1;x;0;0;0;0;1;\n"
    )
    (p,) = parse_csv(out, "http://127.0.0.1:9/", "site")
    assert (p.path, p.line, p.col, p.code) == ("site/questions/a/index.html", 12, 7, "link-broken")
    assert "questions/nope/" in p.message
