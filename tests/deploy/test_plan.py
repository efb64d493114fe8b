"""The deploy plan as a pure function: order, incrementality and the grace period, with a fake clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from qbank.deploy import MANIFEST_NAME, LocalFile, Manifest, make_plan
from qbank.deploy.headers import headers_for
from qbank.deploy.plan import PHASES, phase_of, url_paths

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)


def lf(path: str, content: str = "x") -> LocalFile:
    """A local file whose hash is its content (the plan only compares hashes)."""
    return LocalFile(path, content, len(content), headers_for(path))


SITE = [
    lf("index.html"),
    lf("questions/a/index.html"),
    lf("assets/stylesheets/main.0123abcd.min.css"),
    lf("assets/premium/feedbeef01.bin"),
    lf("assets/keyslots/ab.json"),
    lf("search/search_index.json"),
    lf("sitemap.xml"),
    lf("sitemap.xml.gz"),
    lf("assets/images/favicon.png"),
    lf("404.html"),
]


def deployed(files: list[LocalFile]) -> Manifest:
    """The manifest a completed deploy of ``files`` leaves."""
    return make_plan(files, None, None, NOW).manifest


def test_first_plan_orders_assets_then_pages_then_sitemaps_then_manifest() -> None:
    plan = make_plan(SITE, None, {}, NOW)
    order = [(a.phase, a.path) for a in plan.actions]
    assert order == [
        ("immutable", "assets/premium/feedbeef01.bin"),
        ("immutable", "assets/stylesheets/main.0123abcd.min.css"),
        ("keyslots", "assets/keyslots/ab.json"),
        ("static", "assets/images/favicon.png"),
        ("static", "search/search_index.json"),
        ("pages", "404.html"),
        ("pages", "index.html"),
        ("pages", "questions/a/index.html"),
        ("sitemaps", "sitemap.xml"),
        ("sitemaps", "sitemap.xml.gz"),
        ("manifest", MANIFEST_NAME),
    ]
    assert plan.unchanged == 0 and plan.upload_bytes == len(SITE)


def test_nothing_changed_plans_nothing() -> None:
    remote = {f.path: f.size for f in SITE}
    plan = make_plan(SITE, deployed(SITE), remote, NOW + timedelta(hours=1))
    assert plan.actions == [] and plan.unchanged == len(SITE) and plan.invalidate == []
    # a file leaving the site changes only the manifest (its grace starts now)
    plan = make_plan(SITE[1:], deployed(SITE), remote, NOW + timedelta(hours=1))
    assert [a.kind for a in plan.actions] == ["manifest"] and list(plan.retained) == [SITE[0].path]


def test_changed_metadata_alone_is_an_upload() -> None:
    old = deployed(SITE)
    old.files["index.html"] = {**old.files["index.html"], "cache_control": "no-cache"}
    plan = make_plan(SITE, old, {f.path: f.size for f in SITE}, NOW)
    assert [(a.path, a.reason) for a in plan.uploads] == [("index.html", "changed")]


def test_new_pages_go_before_rewritten_ones() -> None:
    v2 = [*SITE, lf("questions/b/index.html")]
    v2[0] = lf("index.html", "links to b")
    plan = make_plan(v2, deployed(SITE), {f.path: f.size for f in SITE}, NOW)
    assert [(a.path, a.reason) for a in plan.uploads] == [
        ("questions/b/index.html", "new"),
        ("index.html", "changed"),
    ]
    assert plan.invalidate == ["/", "/index.html", "/questions/b/", "/questions/b/index.html"]


def test_grace_period_with_a_fake_clock() -> None:
    v2 = [f for f in SITE if f.path != "questions/a/index.html"]
    remote = {f.path: f.size for f in SITE}
    plan = make_plan(v2, deployed(SITE), remote, NOW)
    assert plan.deletes == [] and plan.manifest.unreferenced == {"questions/a/index.html": NOW.isoformat()}
    later = make_plan(v2, plan.manifest, remote, NOW + timedelta(days=7) - timedelta(seconds=1))
    assert later.deletes == [] and later.manifest.unreferenced == plan.manifest.unreferenced
    due = make_plan(v2, plan.manifest, remote, NOW + timedelta(days=7))
    assert [a.path for a in due.deletes] == ["questions/a/index.html"] and due.manifest.unreferenced == {}
    assert [a.phase for a in due.actions][-2:] == ["delete", "manifest"]
    short = make_plan(v2, plan.manifest, remote, NOW + timedelta(hours=2), grace=timedelta(hours=1))
    assert len(short.deletes) == 1


def test_unknown_objects_in_the_bucket_start_their_grace_now() -> None:
    remote = {**{f.path: f.size for f in SITE}, "assets/stylesheets/main.99999999.min.css": 5}
    plan = make_plan(SITE, deployed(SITE), remote, NOW)
    assert plan.deletes == [] and list(plan.retained) == ["assets/stylesheets/main.99999999.min.css"]


def test_url_paths() -> None:
    assert url_paths("index.html") == ["/", "/index.html"]
    assert url_paths("q/a/index.html") == ["/q/a/", "/q/a/index.html"]
    assert url_paths("sitemap.xml") == ["/sitemap.xml"]


def test_manifest_round_trip() -> None:
    m = deployed(SITE)
    m.unreferenced["old.html"] = NOW.isoformat()
    again = Manifest.from_json(m.to_json())
    assert (again.files, again.unreferenced, again.deployed_at) == (m.files, m.unreferenced, m.deployed_at)


_paths = st.sampled_from([f.path for f in SITE] + ["questions/b/index.html", "assets/premium/0badc0de99.bin"])


@given(
    old=st.dictionaries(_paths, st.sampled_from("abc"), max_size=12),
    new=st.dictionaries(_paths, st.sampled_from("abc"), max_size=12),
    hours=st.integers(0, 400),
)
def test_plan_invariants(old: dict[str, str], new: dict[str, str], hours: int) -> None:
    before = [lf(p, c) for p, c in old.items()]
    after = [lf(p, c) for p, c in new.items()]
    first = make_plan(before, None, {}, NOW)
    remote = {f.path: f.size for f in before}
    plan = make_plan(after, first.manifest, remote, NOW + timedelta(hours=hours))
    phases = [PHASES.index(a.phase) for a in plan.actions]
    assert phases == sorted(phases) and (plan.actions == [] or plan.actions[-1].kind == "manifest")
    assert plan.actions or (old == new and plan.unchanged == len(new))
    uploaded = {a.path for a in plan.uploads}
    assert uploaded == {p for p, c in new.items() if old.get(p) != c}
    assert all(phase_of(p) == a.phase for a in plan.uploads for p in [a.path])
    assert plan.deletes == []  # the grace of what the new site dropped starts now, whatever the clock says
    assert set(plan.manifest.files) == set(new)
    remote = {**remote, **{f.path: f.size for f in after}}
    again = make_plan(after, plan.manifest, remote, NOW + timedelta(hours=hours + 24 * 7))
    # once the grace is over: exactly what the new site no longer refers to, and nothing it does
    assert {a.path for a in again.deletes} == set(old) - set(new)
    assert again.uploads == [] and again.manifest.unreferenced == {}


# each kind of site path and the phase the module docstring gives it, written out rather than asked of phase_of
PHASE_TABLE = [
    ("assets/premium/feedbeef01.bin", "immutable"),  # ciphertext
    ("assets/stylesheets/main.0123abcd.min.css", "immutable"),  # content-hashed name
    ("assets/javascripts/bundle.89abcdef.min.js", "immutable"),
    ("assets/keyslots/ab.json", "keyslots"),  # rewritten in place each release
    ("assets/keyslots/manifest.json", "keyslots"),
    ("assets/images/favicon.png", "static"),
    ("search/search_index.json", "static"),
    ("pagefind/pagefind.js", "static"),
    ("index.html", "pages"),
    ("404.html", "pages"),
    ("questions/a/index.html", "pages"),
    ("sitemap.xml", "sitemaps"),
    ("sitemap.xml.gz", "sitemaps"),
    ("sitemap-questions.xml", "sitemaps"),
    ("robots.txt", "sitemaps"),  # names the sitemap: after it
]


def test_each_kind_of_path_has_its_phase() -> None:
    assert [(p, phase_of(p)) for p, _ in PHASE_TABLE] == PHASE_TABLE
    assert {phase for _, phase in PHASE_TABLE} | {"delete", "manifest"} == set(PHASES)


def test_scan_site_hashes_match_sha256sum(tmp_path: Path) -> None:
    """Hashes from coreutils' sha256sum, for a file across the 1 MiB read boundary, an empty one and a page;
    host files and the manifest are not site objects."""
    import subprocess

    from qbank.deploy.plan import scan_site

    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "big.bin").write_bytes(bytes(range(256)) * 4097 + b"tail")  # 1 MiB + 260 bytes
    (tmp_path / "empty.txt").write_bytes(b"")
    (tmp_path / "index.html").write_text("<p>hi</p>")
    for host in ("_headers", "_redirects", MANIFEST_NAME):
        (tmp_path / host).write_text("x")
    out = subprocess.run(
        ["sha256sum", "a/big.bin", "empty.txt", "index.html"], cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout
    want = {name: digest for digest, name in (line.split() for line in out.splitlines())}
    files = scan_site(tmp_path)
    assert {f.path: f.sha256 for f in files} == want
    assert {f.path: f.size for f in files} == {"a/big.bin": 256 * 4097 + 4, "empty.txt": 0, "index.html": 9}
