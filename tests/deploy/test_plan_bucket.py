"""The deploy plan against what the bucket's listing shows: the manifest object itself is never unreferenced,
and every change to what the manifest must remember is written, even when nothing is uploaded or deleted."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from qbank.deploy import MANIFEST_NAME, LocalFile, Manifest, make_plan
from qbank.deploy.headers import headers_for

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)
WEEK = timedelta(days=7)


def lf(path: str, content: str = "x") -> LocalFile:
    return LocalFile(path, content, len(content), headers_for(path))


SITE = [lf("index.html"), lf("questions/a/index.html")]


def listing(*extra: str) -> dict[str, int]:
    """The bucket's listing as a client returns it: keys are strings read off the wire, not this module's constants."""
    return {"".join(list(p)): 1 for p in [*(f.path for f in SITE), *extra]}


def test_the_manifest_object_is_never_unreferenced_or_deleted() -> None:
    remote = listing(MANIFEST_NAME)
    assert next(k for k in remote if k == MANIFEST_NAME) is not MANIFEST_NAME  # equal text, another object
    first = make_plan(SITE, None, remote, NOW)
    assert first.retained == {} and first.manifest.unreferenced == {}
    later = make_plan(SITE, first.manifest, remote, NOW + 2 * WEEK)
    assert later.actions == [] and later.retained == {}


def test_an_unknown_object_is_remembered_so_its_grace_can_end() -> None:
    deployed = make_plan(SITE, None, listing(), NOW).manifest
    remote = listing("assets/stylesheets/main.99999999.min.css")
    seen = make_plan(SITE, deployed, remote, NOW)
    # nothing to upload or delete, but the manifest must record when the object was first seen unreferenced
    assert [a.kind for a in seen.actions] == ["manifest"]
    assert seen.manifest.unreferenced == {"assets/stylesheets/main.99999999.min.css": "2026-03-01T12:00:00+00:00"}
    due = make_plan(SITE, seen.manifest, remote, NOW + WEEK)
    assert [a.path for a in due.deletes] == ["assets/stylesheets/main.99999999.min.css"]


def test_a_file_already_gone_from_the_bucket_leaves_the_manifest() -> None:
    deployed = make_plan(SITE, None, listing(), NOW).manifest
    site = SITE[:1]  # questions/a/index.html leaves the site, and someone already removed it from the bucket
    remote = {"index.html": 1}
    plan = make_plan(site, deployed, remote, NOW + timedelta(hours=1))
    assert [a.kind for a in plan.actions] == ["manifest"] and plan.deletes == [] and plan.retained == {}
    assert set(plan.manifest.files) == {"index.html"} and plan.manifest.unreferenced == {}


def test_an_unreferenced_object_removed_by_hand_leaves_the_manifest() -> None:
    old = Manifest(make_plan(SITE, None, listing(), NOW).manifest.files, {"old.html": "2026-03-01T00:00:00+00:00"})
    plan = make_plan(SITE, old, listing(), NOW + timedelta(hours=1))  # old.html is no longer in the listing
    assert [a.kind for a in plan.actions] == ["manifest"] and plan.manifest.unreferenced == {}


def test_an_unchanged_large_file_is_not_uploaded_again() -> None:
    """Sizes compare by value: the listing's size of a 1 MiB file is another int object than the local one's."""
    big = LocalFile("assets/images/diagram.png", "h", 1 << 20, headers_for("assets/images/diagram.png"))
    deployed = make_plan([big], None, {}, NOW).manifest
    remote = {big.path: int(str(1 << 20))}  # as parsed from a listing
    assert remote[big.path] is not big.size
    plan = make_plan([big], deployed, remote, NOW)
    assert plan.actions == [] and plan.unchanged == 1
    # and a size that differs, smaller or larger, is a missing (half-written, overwritten) object, uploaded again,
    # and the manifest is written after it, as after every action
    for size in (1000, (1 << 20) + 1):
        plan = make_plan([big], deployed, {big.path: size}, NOW)
        assert [(a.path, a.reason) for a in plan.uploads] == [(big.path, "missing")]
        assert [a.kind for a in plan.actions] == ["upload", "manifest"]


def test_an_object_gone_by_hand_does_not_stop_the_others_grace() -> None:
    files = make_plan(SITE, None, listing(), NOW).manifest.files
    old = Manifest(files, {"a-gone.html": "2026-02-01T00:00:00+00:00", "b-due.html": "2026-02-01T00:00:00+00:00"})
    plan = make_plan(SITE, old, listing("b-due.html"), NOW)  # a-gone.html (sorted first) is no longer listed
    assert [a.path for a in plan.deletes] == ["b-due.html"] and plan.manifest.unreferenced == {}


def test_a_dry_run_without_a_listing_starts_the_grace_of_a_dropped_file_from_the_manifest() -> None:
    deployed = make_plan(SITE, None, None, NOW).manifest
    plan = make_plan(SITE[:1], deployed, None, NOW)  # no listing: the manifest alone says what the bucket holds
    assert plan.retained == {"questions/a/index.html": NOW + WEEK}
    assert plan.manifest.unreferenced == {"questions/a/index.html": "2026-03-01T12:00:00+00:00"}


def test_grace_times_without_a_zone_are_utc_and_others_keep_their_instant() -> None:
    files = make_plan(SITE, None, listing(), NOW).manifest.files
    old = Manifest(
        files,
        {
            "naive.html": "2026-02-22T12:00:00",  # written without a zone (by hand): UTC, so due at NOW
            "paris.html": "2026-02-22T13:00:00+01:00",  # 12:00 UTC: due at NOW
            "tokyo.html": "2026-02-22T22:00:00+09:00",  # 13:00 UTC: due an hour after NOW
        },
    )
    plan = make_plan(SITE, old, listing("naive.html", "paris.html", "tokyo.html"), NOW)
    assert [a.path for a in plan.deletes] == ["naive.html", "paris.html"]
    assert plan.retained == {"tokyo.html": NOW + timedelta(hours=1)}


def test_the_scan_leaves_out_exactly_the_host_files_and_the_manifest(tmp_path: Path) -> None:
    """Names on either side of the manifest's in sort order (".htaccess" before it, "a.txt" after) are site files."""
    from qbank.deploy.plan import scan_site

    for name in ("_headers", "_redirects", MANIFEST_NAME, ".htaccess", "-x.txt", "a.txt", ".well-known/security.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x")
    assert [f.path for f in scan_site(tmp_path)] == ["-x.txt", ".htaccess", ".well-known/security.txt", "a.txt"]


def test_unknown_objects_sorting_before_the_manifest_start_their_grace_too() -> None:
    deployed = make_plan(SITE, None, listing(), NOW).manifest
    remote = listing("-stray.html", ".htaccess", "zz.html")
    plan = make_plan(SITE, deployed, remote, NOW)
    assert list(plan.retained) == ["-stray.html", ".htaccess", "zz.html"]
