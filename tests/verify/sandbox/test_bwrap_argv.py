"""The two bubblewrap command lines written out in full, option by option (pure; nothing started)."""

from __future__ import annotations

import dataclasses

import pytest

from qbank.verify.sandbox import bwrap

COMMAND = ("/venv/bin/python", "-m", "qbank.verify.launch", "{}")


def plan(**kw: object) -> bwrap.Plan:
    base: dict[str, object] = {
        "command": COMMAND, "run_dir": "/qbank/run", "work_dir": "/qbank/run/work", "tmpfs_bytes": 4096,
        "seccomp_fd": 9,
        "binds": (bwrap.Bind(dest="/venv", src="/host/venv"), bwrap.Bind(dest="/repo/verify", fd=5)),
        "symlinks": (("usr/lib", "/lib"), ("usr/bin", "/bin")),
        "env": (("HOME", "/qbank/run/work"), ("PYTHONPATH", "/qbank/src")),
    }
    base.update(kw)
    return bwrap.Plan(**base)  # type: ignore[arg-type]


HEAD = ["/usr/bin/bwrap", "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session",
        "--cap-drop", "ALL", "--hostname", "qbank-verify", "--clearenv"]


def test_the_whole_command_line() -> None:
    assert bwrap.argv(plan()) == [
        *HEAD, "--setenv", "HOME", "/qbank/run/work", "--setenv", "PYTHONPATH", "/qbank/src",
        "--proc", "/proc", "--dev", "/dev",
        "--ro-bind", "/host/venv", "/venv", "--ro-bind-fd", "5", "/repo/verify",
        "--symlink", "usr/lib", "/lib", "--symlink", "usr/bin", "/bin",
        "--size", "4096", "--tmpfs", "/qbank/run", "--dir", "/qbank/run/work", "--dir", "/qbank/run/work/tmp",
        "--symlink", "/qbank/run/work/tmp", "/tmp",
        "--remount-ro", "/", "--seccomp", "9", "--chdir", "/qbank/run/work", "--", *COMMAND,
    ]


def test_a_bind_under_tmp_keeps_tmp_a_read_only_folder() -> None:
    argv = bwrap.argv(plan(binds=(bwrap.Bind(dest="/tmp/pkg", src="/tmp/pkg"),), symlinks=(), env=()))
    assert argv == [
        *HEAD, "--proc", "/proc", "--dev", "/dev", "--ro-bind", "/tmp/pkg", "/tmp/pkg",
        "--size", "4096", "--tmpfs", "/qbank/run", "--dir", "/qbank/run/work", "--dir", "/qbank/run/work/tmp",
        "--remount-ro", "/", "--seccomp", "9", "--chdir", "/qbank/run/work", "--", *COMMAND,
    ]


def test_a_bind_with_neither_path_nor_descriptor_is_refused() -> None:
    with pytest.raises(ValueError, match="neither a path nor a descriptor"):
        bwrap.argv(plan(binds=(bwrap.Bind(dest="/x"),)))


STAGE = ["/usr/bin/bwrap", "--die-with-parent", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID",
         "--bind", "/proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--ro-bind", "/usr", "/usr"]


def test_the_staging_command_line() -> None:
    """/usr and what is under it come with the /usr bind; each folder above another bind is made once (none that
    is itself a bind's destination); a bind without a source path shows its destination."""
    binds = (
        bwrap.Bind(dest="/usr", src="/usr"),
        bwrap.Bind(dest="/usr/lib/python3", src="/usr/lib/python3"),
        bwrap.Bind(dest="/work/repo", src="/srv/repo"),
        bwrap.Bind(dest="/work/repo/verify", src="/srv/repo/verify"),
        bwrap.Bind(dest="/work/venv/lib", fd=4),
        bwrap.Bind(dest="/a/b/c", src="/a/b/c"),
    )
    assert bwrap.staging_argv(binds, (("usr/lib", "/lib"),)) == [
        *STAGE,
        "--perms", "0755", "--dir", "/work", "--ro-bind", "/srv/repo", "/work/repo",
        "--ro-bind", "/srv/repo/verify", "/work/repo/verify",
        "--perms", "0755", "--dir", "/work/venv", "--ro-bind", "/work/venv/lib", "/work/venv/lib",
        "--perms", "0755", "--dir", "/a", "--perms", "0755", "--dir", "/a/b", "--ro-bind", "/a/b/c", "/a/b/c",
        "--symlink", "usr/lib", "/lib", "--",
    ]


def test_plans_and_binds_are_values() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan().run_dir = "/"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        bwrap.Bind(dest="/x", src="/x").src = "/"  # type: ignore[misc]
