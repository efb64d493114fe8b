"""The ``qbank`` console script: a warm no-op ``qbank verify`` is answered before the command line loads.

``qbank verify`` with nothing stale is what an author runs after every edit and CI runs on every push, and its
cost was mostly the interpreter's start-up and the imports of the full command line (argparse with every
subcommand's parser, pathlib, dataclasses, the engine). So the console script starts here: a plain
``qbank verify`` (no script named; only ``--root``, ``--format text|github``, ``--strict``, ``-v``, ``--jobs``
and ``--device``) whose every script has a cached result that still holds under the engine's own rules
(``qbank.verify.warm``: same environment with the sandbox as the wall, every file's stat as recorded, no
problem to report, nothing to re-hash or write) prints what ``qbank.cli`` prints for it and exits 0.
Anything else (another command or flag, ``--trust-local``, ``--force``, ``--shard``, a stale or new script, a
result with problems, a GitHub step summary to write) goes to :func:`qbank.cli.main`, which does the full work.
Nothing here imports more than ``os``, ``sys``, ``re`` and ``json``.
"""

from __future__ import annotations

import os
import sys

from .verify import warm
from .verify.version import API_VERSION

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

VALUED = {"--root": "root", "--format": "format", "--device": "device", "--jobs": "jobs", "-j": "jobs"}
FLAGS = ("--strict", "-v", "--verbose")
WARM_FORMATS = ("text", "github")
DEVICES = ("auto", "cpu", "cuda")


def warm_request(argv: Sequence[str], environ: Mapping[str, str]) -> tuple[str, str] | None:
    """``(root, device)`` of a command line the fast path may answer, or None (then ``qbank.cli`` parses it).

    Only exact option spellings are taken (``--root X`` or ``--root=X``; no abbreviations, no bundled short
    flags): whatever argparse might read differently goes to argparse."""
    if not argv or argv[0] != "verify" or environ.get("GITHUB_STEP_SUMMARY"):
        return None
    root, device = ".", "auto"
    i = 1
    while i < len(argv):
        arg = argv[i]
        i += 1
        if arg in FLAGS:
            continue
        name, eq, value = arg.partition("=")
        if name not in VALUED or (eq and name == "-j"):
            return None  # a script named, another flag, an abbreviation: argparse's business
        if not eq:
            if i == len(argv):
                return None
            value, i = argv[i], i + 1
        if value.startswith("-") or not _valid(VALUED[name], value):
            return None  # argparse checks every occurrence, not only the last
        if name == "--root":
            root = value
        elif name == "--device":
            device = value
    return root, device


def _valid(option: str, value: str) -> bool:
    """Whether argparse would take this value (``--format json`` it takes, but the fast path leaves to it)."""
    if option == "format":
        return value in WARM_FORMATS
    if option == "device":
        return value in DEVICES
    if option == "jobs":
        try:
            int(value)
        except ValueError:
            return False
    return True


def no_op_report(root_arg: str, device_want: str, environ: Mapping[str, str]) -> str | None:
    """What ``qbank verify`` prints when it has nothing to run, write or report; None when the engine must look."""
    root = os.path.realpath(root_arg)
    if not os.path.isdir(os.path.join(root, "questions")):
        return None
    index = warm.read_index(root)
    if index is None:
        return None
    torch = warm.version_from_path("torch", "version.py")
    triton = warm.version_from_path("triton", "__init__.py")
    if torch is None or triton is None:  # not found by a stat: the engine asks the import system
        return None
    device = warm.pick_device(device_want, environ.get("QBANK_FAKE_CUDA") or None, torch)
    if device is None:
        return None
    env = [API_VERSION, warm.runtime_label(torch, triton), device, warm.SANDBOX]
    try:
        counts = warm.no_op_outcomes(root, env, index)
    except (LookupError, TypeError, ValueError, AttributeError):  # a corrupt row: the engine says what it is
        return None
    if counts is None:
        return None
    n = sum(counts.values())
    outcomes = ", ".join(f"{c} {k}" for k, c in sorted(counts.items())) or "nothing to verify"
    return f"{n} scripts: 0 ran, {n} cached ({outcomes})\n0 errors, 0 warnings in {n} file{'' if n == 1 else 's'}\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``qbank`` console script."""
    args = list(sys.argv[1:] if argv is None else argv)
    request = warm_request(args, os.environ)
    if request is not None:
        try:
            out = no_op_report(*request, os.environ)
        except KeyboardInterrupt:
            sys.stderr.write("qbank: interrupted\n")
            return 130
        if out is not None:
            sys.stdout.write(out)
            sys.stdout.flush()
            return 0
    from .cli import main as full

    return full(args)
