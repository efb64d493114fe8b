"""The warm check's rules (``qbank.verify.warm``), shared by the engine and the console script's fast path."""

from __future__ import annotations

import os
from pathlib import Path

from qbank.verify import warm

ENV = [3, "2.13.0+cpu triton 3.9.0", "cpu"]


def test_a_sandboxed_result_serves_both_walls_a_trust_local_one_only_its_own() -> None:
    sandboxed, trusted = [*ENV, "sandbox"], [*ENV, "trust-local"]
    assert warm.serves(sandboxed, sandboxed) and warm.serves(sandboxed, trusted) and warm.serves(trusted, trusted)
    assert not warm.serves(trusted, sandboxed)
    assert not warm.serves(ENV, sandboxed) and not warm.serves(ENV, trusted)  # no wall recorded: run again
    assert not warm.serves([4, *ENV[1:], "sandbox"], sandboxed)
    assert not warm.serves([*ENV[:2], "cuda", "sandbox"], sandboxed)


def test_a_stat_stands_for_its_hash_only_outside_the_racy_window(tmp_path: Path) -> None:
    path = tmp_path / "f.py"
    path.write_text("x = 1\n")
    st = os.stat(path)
    row = [st.st_size, st.st_mtime_ns, "sha", st.st_mtime_ns + warm.RACY_NS + 1]
    assert warm.stat_holds(row, st)
    assert not warm.stat_holds([*row[:3], st.st_mtime_ns + warm.RACY_NS], st)  # hashed within the window
    assert not warm.stat_holds([st.st_size + 1, *row[1:]], st)
    assert not warm.stat_holds([row[0], st.st_mtime_ns - 1, *row[2:]], st)


def test_scripts_are_lowercase_slugs_and_shared_code_is_not(tmp_path: Path) -> None:
    for name in ("a-b.py", "c.py", "_lib.py", "Upper.py", "d_e.py", "notes.md"):
        (tmp_path / name).write_text("")
    assert warm.script_names(str(tmp_path)) == ["a-b.py", "c.py"]
    assert warm.script_names(str(tmp_path / "missing")) == []


def test_the_device_follows_the_request_and_the_runtime() -> None:
    assert warm.pick_device("cpu", None, "2.13.0+cpu") == "cpu"
    assert warm.pick_device("auto", "H100", "2.13.0+cpu") == "cuda"
    assert warm.pick_device("cuda", "H100", "2.13.0+cpu") == "cuda"
    if not os.path.exists("/proc/driver/nvidia/version"):
        assert warm.pick_device("auto", None, "2.13.0") == "cpu"
        assert warm.pick_device("cuda", None, "2.13.0") is None


def test_versions_are_read_from_the_file_without_importing(tmp_path: Path) -> None:
    (tmp_path / "v.py").write_text("x = 1\n__version__ = '1.2.3'\n")
    (tmp_path / "n.py").write_text("VERSION = 1\n")
    assert warm.version_in(str(tmp_path / "v.py")) == "1.2.3"
    assert warm.version_in(str(tmp_path / "n.py")) == "unknown"
    assert warm.version_in(str(tmp_path / "gone.py")) == "unknown"
    assert warm.version_from_path("no_such_package_here", "version.py") is None
