"""The deploy plan's two texts: the manifest stored in the bucket and the plan printed for a person, each
compared with text written out here by hand rather than produced by the code under test."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from qbank.deploy import MANIFEST_NAME, LocalFile, Manifest, make_plan
from qbank.deploy.headers import ObjectHeaders
from qbank.deploy.plan import Action, format_plan

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)
PAGE = LocalFile("index.html", "h1", 12, ObjectHeaders("text/html; charset=utf-8", "no-cache"))
SITEMAP = LocalFile("sitemap.xml.gz", "h2", 30, ObjectHeaders("application/xml", "max-age=60", "gzip"))

# a manifest of format version 1, as a deploy stored it (keys in this order, one space of indent)
STORED_V1 = """{
 "version": 1,
 "deployed_at": "2026-02-01T12:00:00+00:00",
 "files": {
  "index.html": {
   "sha256": "h0",
   "size": 12,
   "content_type": "text/html; charset=utf-8",
   "content_encoding": null,
   "cache_control": "no-cache"
  }
 },
 "unreferenced": {
  "gone.html": "2026-02-25T12:00:00+00:00",
  "old.html": "2026-02-01T12:00:00+00:00"
 }
}
"""


def test_a_stored_version_1_manifest_is_read() -> None:
    m = Manifest.from_json(STORED_V1)
    assert m.deployed_at == "2026-02-01T12:00:00+00:00"
    assert m.files == {
        "index.html": {
            "sha256": "h0",
            "size": 12,
            "content_type": "text/html; charset=utf-8",
            "content_encoding": None,
            "cache_control": "no-cache",
        }
    }
    assert m.unreferenced == {"gone.html": "2026-02-25T12:00:00+00:00", "old.html": "2026-02-01T12:00:00+00:00"}


def test_the_manifest_is_written_as_stored() -> None:
    m = Manifest.from_json(STORED_V1)
    m.unreferenced = {"old.html": "2026-02-01T12:00:00+00:00", "gone.html": "2026-02-25T12:00:00+00:00"}
    assert m.to_json() == STORED_V1  # paths sorted, whatever order they were added in


@pytest.mark.parametrize(
    ("text", "version"),
    [
        (STORED_V1.replace('"version": 1', '"version": 2'), "2"),
        (STORED_V1.replace(' "version": 1,\n', ""), "None"),
        ("[1]", "?"),
        ('"a manifest"', "?"),
    ],
)
def test_an_unknown_manifest_version_or_shape_is_refused(text: str, version: str) -> None:
    with pytest.raises(ValueError, match=rf"^unsupported deploy manifest \(version {re_escape(version)}\)$"):
        Manifest.from_json(text)
    json.loads(text)  # each is valid JSON: the refusal is of the shape, not of the syntax


def re_escape(text: str) -> str:
    return text.replace("?", r"\?")


@pytest.mark.parametrize(
    ("phase", "kind"),
    [
        ("immutable", "upload"),
        ("keyslots", "upload"),
        ("static", "upload"),
        ("pages", "upload"),
        ("sitemaps", "upload"),
        ("delete", "delete"),
        ("manifest", "manifest"),
    ],
)
def test_each_phase_has_its_kind_of_action(phase: str, kind: str) -> None:
    assert Action(phase, "x", "new").kind == kind  # type: ignore[arg-type]


def _plan_with_every_line() -> tuple[str, str]:
    old = Manifest(
        {"index.html": {**PAGE.record(), "sha256": "h0"}},
        {"old.html": (NOW - timedelta(days=8)).isoformat(), "gone.html": (NOW - timedelta(days=1)).isoformat()},
    )
    remote = {"index.html": 12, "old.html": 5, "gone.html": 5}
    plan = make_plan([PAGE, SITEMAP], old, remote, NOW)
    return format_plan(plan), format_plan(plan, verbose=False)


def test_the_printed_plan_line_by_line() -> None:
    verbose, quiet = _plan_with_every_line()
    assert verbose == (
        "upload   pages     index.html  (changed, 12 B, text/html; charset=utf-8; no-cache)\n"
        "upload   sitemaps  sitemap.xml.gz  (new, 30 B, application/xml, gzip; max-age=60)\n"
        "delete   delete    old.html  (expired)\n"
        f"manifest manifest  {MANIFEST_NAME}  (manifest)\n"
        "retain   grace     gone.html  (unreferenced; deletable from 2026-03-07T12:00:00+00:00)\n"
        "plan: 2 to upload (42 B), 0 unchanged, 1 to delete, 1 kept in grace\n"
    )
    assert quiet == "plan: 2 to upload (42 B), 0 unchanged, 1 to delete, 1 kept in grace\n"


@pytest.mark.parametrize(
    ("path", "urls"),
    [
        ("index.html", ["/", "/index.html"]),
        ("q/a/index.html", ["/q/a/", "/q/a/index.html"]),
        ("404.html", ["/404.html"]),  # sorts before index.html: only a file named index.html is a folder's page
        ("assets/app.js", ["/assets/app.js"]),
        ("a/myindex.html", ["/a/myindex.html"]),
        ("sitemap.xml", ["/sitemap.xml"]),
    ],
)
def test_the_urls_a_cdn_may_have_cached_a_file_under(path: str, urls: list[str]) -> None:
    from qbank.deploy.plan import url_paths

    assert url_paths(path) == urls
