"""The leak scan finds premium text however it is encoded in a built file, whatever the file's type."""

from __future__ import annotations

import gzip
import json
import urllib.parse
from pathlib import Path

import pytest

from qbank.paywall.leak import scan_site
from qbank.seal.premium_text import PremiumPrints, Source

SECRET = "The attention kernel spills its partial sums to shared memory before the final rescale step"
SRC = Source("answers/a.md", 4, "a", "premium section 1", "How the kernel spills", SECRET)
SHORT = Source("answers/b.md", 4, "b", "premium section 1", "Short one", "Use 42 pages.")
PRINTS = PremiumPrints.of([SRC, SHORT])


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("page.html", f"<p>{SECRET}</p>"),
        ("page.html", "<p>" + SECRET.replace(" ", "\n   ").replace("the", "<em>the</em>") + "</p>"),
        ("page.html", f'<meta name="description" content="{SECRET[10:100]}">'),
        ("page.html", f'<meta property="og:description" content="{SECRET[:80].replace("a", "&#97;")}">'),
        (
            "page.html",
            '<script type="application/ld+json">'
            + json.dumps({"text": SECRET}, ensure_ascii=True).replace(" ", "\\u0020")
            + "</script>",
        ),
        ("search/search_index.json", json.dumps({"docs": [{"text": f"<p>{SECRET.upper()}</p>"}]})),
        ("feed.xml", f"<description>&lt;p&gt;{SECRET}&lt;/p&gt;</description>"),
        ("assets/app.js", f'var t="{SECRET}";'),
        ("assets/site.css", f'.x::after{{content:"{SECRET}"}}'),
        ("robots.txt", f"# {SECRET}\nUser-agent: *"),
        ("share.html", f'<a href="https://x.example/?text={urllib.parse.quote_plus(SECRET)}">share</a>'),
        ("short.html", "<p>use   42 pages.</p>"),
    ],
)
def test_leaks_are_found(tmp_path: Path, name: str, content: str) -> None:
    (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / name).write_text(content)
    leaks = scan_site(tmp_path, PRINTS)
    assert [leak.file for leak in leaks] == [name]


def test_gzip_files_are_read(tmp_path: Path) -> None:
    (tmp_path / "sitemap.xml.gz").write_bytes(gzip.compress(f"<loc>{SECRET}</loc>".encode()))
    (tmp_path / "pagefind").mkdir()
    (tmp_path / "pagefind" / "fragment.pf_fragment").write_bytes(gzip.compress(SECRET.encode()))
    assert sorted(leak.file for leak in scan_site(tmp_path, PRINTS)) == ["pagefind/fragment.pf_fragment",
                                                                         "sitemap.xml.gz"]


def test_the_heading_and_short_runs_are_not_leaks(tmp_path: Path) -> None:
    # the heading is on the placeholder; a run shorter than a repeat is technical prose anyone writes
    (tmp_path / "page.html").write_text("<h2>How the kernel spills</h2><p>partial sums to shared memory</p>")
    assert scan_site(tmp_path, PRINTS) == []


def test_no_free_text_exempts_premium_text(tmp_path: Path) -> None:
    # the old scan dropped runs a free source also said; now nothing is given as public
    (tmp_path / "page.html").write_text(f"<p>free answer: {SECRET}</p>")
    assert len(scan_site(tmp_path, PremiumPrints.of([SRC]))) == 1


def test_runs_of_digits_alone_are_not_distinctive(tmp_path: Path) -> None:
    table = Source(".qbank/derivations/d.md", 1, "d", "premium derivation", "Executed derivation",
                   "mask 1 1 1 1 0 0 0 0 1 1 1 1 0 0 0 0 1 1 rows kept in the final table of the run")
    prints = PremiumPrints.of([table])
    (tmp_path / "main.min.css").write_text(".a{flex:1 1 1 1 0 0 0 0 1 1 1 1 0 0 0 0 1 1}")
    assert scan_site(tmp_path, prints) == []
    (tmp_path / "page.html").write_text("<p>0 0 1 1 rows kept in the final table of the run</p>")  # with words: counts
    assert [leak.file for leak in scan_site(tmp_path, prints)] == ["page.html"]


# every type the scan's docstring promises to read, and types it does not name (it reads every file)
SCANNED = [".html", ".json", ".js", ".css", ".txt", ".xml", ".svg", ".map", ".webmanifest", ".md", ""]


def test_the_docstring_lists_only_types_tested_here() -> None:
    import re

    from qbank.paywall import leak

    named = re.findall(r"(?<![\w/])\.[a-z]+\b", (leak.__doc__ or "").split("whatever its type", 1)[1])
    assert named and set(named) <= set(SCANNED), named


@pytest.mark.parametrize("suffix", SCANNED, ids=lambda s: s or "no-suffix")
def test_each_file_type_is_read(tmp_path: Path, suffix: str) -> None:
    """The same plain leak in a file of each type (nested one folder down): found, once, in that file."""
    (tmp_path / "assets").mkdir()
    (tmp_path / "assets" / f"leaked{suffix}").write_text(f"{SECRET}\n")
    (tmp_path / f"clean{suffix}").write_text("nothing premium here\n")
    leaks = scan_site(tmp_path, PRINTS)
    assert [(leak.file, leak.source, leak.heading) for leak in leaks] == [
        (f"assets/leaked{suffix}", SRC.path, SRC.heading)
    ]


@pytest.mark.parametrize(
    ("name", "content"),
    [
        # JSON escapes a tab between words as \t: only the decoded JSON strings read "partial sums"
        ("search/index.json", json.dumps({"docs": [{"t": SECRET.replace(" ", "\t")}]})),
        ("data.txt", "  " + json.dumps([SECRET.replace(" ", "\t")])),  # JSON by its content, not its name
        ("search/keys.json", json.dumps({SECRET.replace(" ", "\t"): 1})),  # a key is a string too
        ("search/text.json", json.dumps(SECRET.replace(" ", "\t"))),  # a JSON file that is one bare string
        # percent-encoding with %20 for spaces (quote, not quote_plus): only the decoded URL reads the words
        ("share.html", f'<a href="https://x.example/?t={urllib.parse.quote(SECRET)}">share</a>'),
        # a JavaScript string with every "a" escaped: only the decoded escapes spell the words
        ("assets/app.js", 'var t="' + SECRET.replace("a", "\\u0061") + '";'),
    ],
    ids=["json-tab", "json-by-content", "json-key", "json-bare-string", "percent-20", "js-unicode-letters"],
)
def test_leaks_only_a_decoded_view_shows(tmp_path: Path, name: str, content: str) -> None:
    (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / name).write_text(content)
    assert [leak.file for leak in scan_site(tmp_path, PRINTS)] == [name]


def test_tiny_and_binary_files_are_read_as_they_are(tmp_path: Path) -> None:
    """One-byte files and binaries that are not gzip are scanned as bytes (no crash, no false leak)."""
    (tmp_path / "a.txt").write_bytes(b"\n")
    (tmp_path / "b.txt").write_bytes(b"~")
    (tmp_path / "c.bin").write_bytes(b"\x1f\x8b not gzip after all")
    (tmp_path / "d.jpg").write_bytes(b"\xff\xd8\xff" + SECRET.encode())
    assert [leak.file for leak in scan_site(tmp_path, PRINTS)] == ["d.jpg"]
