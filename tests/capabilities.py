"""One way for a test to need something of the machine: under ``CI=true`` a missing capability fails the test,
elsewhere it skips with the reason. Assertions never branch on the environment; they run, or the test does not.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"  # Debian's, as `make browser` installs it
AXE = Path(__file__).resolve().parents[1] / "node_modules" / "axe-core" / "axe.min.js"


def under_ci() -> bool:
    """Whether this run is CI's (``CI=true``), where nothing the suite needs may be missing."""
    return os.environ.get("CI", "").lower() == "true"


@functools.cache
def netns() -> bool:
    """Whether this machine lets a process make network and mount namespaces (root, or user namespaces)."""
    if shutil.which("unshare") is None:
        return False
    return subprocess.run(["unshare", "-n", "-m", "true"], capture_output=True).returncode == 0


def root() -> bool:
    """Whether the tests run as root (needed to switch to an unprivileged user and back)."""
    return os.geteuid() == 0


def setpriv() -> bool:
    """Whether util-linux ``setpriv`` is on PATH."""
    return shutil.which("setpriv") is not None


def bwrap() -> bool:
    """Whether bubblewrap is installed where the sandbox looks for it."""
    return os.access("/usr/bin/bwrap", os.X_OK)


def chromium() -> bool:
    """Whether Debian's Chromium is installed (`make browser`)."""
    return os.access(CHROMIUM, os.X_OK)


def playwright() -> bool:
    """Whether Playwright's Python package is importable (the dev extra: `make venv`)."""
    return importlib.util.find_spec("playwright") is not None


def axe() -> bool:
    """Whether axe-core is where `make node` puts it."""
    return AXE.is_file()


CHECKS: dict[str, Callable[[], bool]] = {
    "netns": netns, "root": root, "setpriv": setpriv, "bwrap": bwrap, "chromium": chromium,
    "playwright": playwright, "axe": axe,
}
WHY = {
    "netns": "network and mount namespaces (unshare -n -m)",
    "root": "root, to switch to an unprivileged user",
    "setpriv": "util-linux setpriv",
    "bwrap": "bubblewrap at /usr/bin/bwrap",
    "chromium": f"Debian's chromium at {CHROMIUM} (make browser)",
    "playwright": "Playwright's Python package (make venv)",
    "axe": "axe-core in node_modules (make node)",
}


def missing(*names: str) -> list[str]:
    """The named capabilities this machine lacks (an unknown name is a programming error)."""
    return [WHY[n] for n in names if not CHECKS[n]()]


def require(*names: str) -> None:
    """Fail (under CI) or skip (elsewhere) unless the machine has every named capability; at a module's top level
    it fails or skips the whole module."""
    lacking = missing(*names)
    if not lacking:
        return
    reason = "needs " + ", ".join(lacking)
    if under_ci():
        pytest.fail(f"{reason} (CI=true: a missing capability is a failure, not a skip)")
    pytest.skip(reason, allow_module_level=True)
