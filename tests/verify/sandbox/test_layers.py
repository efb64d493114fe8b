"""The launcher's in-process layers (``verify/sandbox/layers.py``) driven directly: the audit hook called by hand
with each event, and the rlimits, namespaces and mounts against recorders standing in for ``resource`` and libc.
(The layers at work in a real launched script: ``tests/verify/test_bad_inputs.py``.)"""

from __future__ import annotations

import ctypes
import errno
import os
import resource
import sys
from pathlib import Path
from typing import Any

import pytest

from qbank.verify.sandbox import layers
from qbank.verify.sandbox.layers import (
    AuditHook,
    SandboxError,
    SandboxExecError,
    SandboxNetworkError,
    SandboxReadError,
    SandboxWriteError,
)


def test_the_constants_and_event_lists_named_in_full() -> None:
    assert (layers.CLONE_NEWUSER, layers.CLONE_NEWNS, layers.CLONE_NEWNET) == (0x10000000, 0x20000, 0x40000000)
    assert (layers.MS_RDONLY, layers.MS_REMOUNT, layers.MS_BIND, layers.MS_REC, layers.MS_PRIVATE) == (
        1,
        32,
        4096,
        16384,
        262144,
    )
    assert layers.WRITE_FLAGS == os.O_WRONLY + os.O_RDWR + os.O_CREAT + os.O_TRUNC + os.O_APPEND
    assert {
        "os.remove",
        "os.rmdir",
        "os.mkdir",
        "os.rename",
        "os.symlink",
        "os.link",
        "os.truncate",
        "os.chmod",
        "os.chown",
        "os.utime",
        "shutil.rmtree",
        "shutil.copyfile",
        "shutil.move",
    } == layers.WRITE_EVENTS
    assert {"os.exec", "os.posix_spawn", "os.spawn", "os.system", "subprocess.Popen", "pty.spawn"} == layers.EXEC_EVENTS
    assert {
        "socket.__new__",
        "socket.connect",
        "socket.bind",
        "socket.sendto",
        "socket.getaddrinfo",
    } == layers.SOCKET_EVENTS
    for cls in (SandboxNetworkError, SandboxWriteError, SandboxReadError, SandboxExecError):
        assert issubclass(cls, SandboxError) and issubclass(cls, PermissionError)


# --- rlimits


@pytest.fixture
def rlimits(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, tuple[int, int]]]:
    calls: list[tuple[int, tuple[int, int]]] = []
    monkeypatch.setattr(resource, "setrlimit", lambda which, limits: calls.append((which, limits)))
    return calls


def test_set_limits_sets_each_limit_given(rlimits: list[tuple[int, tuple[int, int]]]) -> None:
    layers.set_limits(1 << 30, 7, 1 << 20)
    assert rlimits == [
        (resource.RLIMIT_CORE, (0, 0)),
        (resource.RLIMIT_AS, (1 << 30, 1 << 30)),
        (resource.RLIMIT_CPU, (7, 12)),  # soft sends SIGXCPU, hard kills five seconds later
        (resource.RLIMIT_FSIZE, (1 << 20, 1 << 20)),
    ]


@pytest.mark.parametrize("absent", [None, 0])
def test_set_limits_without_limits_still_forbids_core_dumps(
    rlimits: list[tuple[int, tuple[int, int]]], absent: int | None
) -> None:
    layers.set_limits(absent, absent, absent)
    assert rlimits == [(resource.RLIMIT_CORE, (0, 0))]


def test_set_limits_one_at_a_time(rlimits: list[tuple[int, tuple[int, int]]]) -> None:
    layers.set_limits(None, 1, None)
    assert rlimits[1:] == [(resource.RLIMIT_CPU, (1, 6))]
    rlimits.clear()
    layers.set_limits(None, None, 1)
    assert rlimits[1:] == [(resource.RLIMIT_FSIZE, (1, 1))]
    rlimits.clear()
    layers.set_limits(1, None, None)
    assert rlimits[1:] == [(resource.RLIMIT_AS, (1, 1))]


# --- namespaces and mounts, against a recording libc


class FakeLibc:
    """Answers ``unshare``/``mount`` from a list (0 = success, else -1 with that errno), recording each call."""

    def __init__(self, answers: list[int]) -> None:
        self.answers = answers
        self.calls: list[tuple[Any, ...]] = []
        fake = self

        def unshare(flags: ctypes.c_int) -> int:
            fake.calls.append(("unshare", flags.value))
            return fake._answer()

        def mount(src: bytes, dst: bytes, fstype: bytes | None, flags: ctypes.c_ulong, data: None) -> int:
            fake.calls.append(("mount", src, dst, fstype, flags.value, data))
            return fake._answer()

        self.unshare = unshare
        self.mount = mount

    def _answer(self) -> int:
        code = self.answers.pop(0)
        if code == 0:
            return 0
        ctypes.set_errno(code)
        return -1


def _with_libc(monkeypatch: pytest.MonkeyPatch, answers: list[int]) -> FakeLibc:
    libc = FakeLibc(answers)
    monkeypatch.setattr(layers, "_libc", lambda: libc)
    return libc


def test_unshare_directly(monkeypatch: pytest.MonkeyPatch) -> None:
    libc = _with_libc(monkeypatch, [0])
    assert layers.unshare(layers.CLONE_NEWNET | layers.CLONE_NEWNS) is None
    assert libc.calls == [("unshare", 0x40020000)]


def test_unshare_through_a_user_namespace_when_not_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    libc = _with_libc(monkeypatch, [errno.EPERM, 0])
    assert layers.unshare(layers.CLONE_NEWNET) is None
    assert libc.calls == [("unshare", 0x40000000), ("unshare", 0x50000000)]


def test_unshare_refused_twice_says_the_first_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    libc = _with_libc(monkeypatch, [errno.EPERM, errno.EINVAL])
    assert layers.unshare(layers.CLONE_NEWNS) == os.strerror(errno.EPERM)
    assert len(libc.calls) == 2


def test_root_refused_does_not_try_a_user_namespace(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    libc = _with_libc(monkeypatch, [errno.ENOSPC, 0])
    assert layers.unshare(layers.CLONE_NEWNS) == os.strerror(errno.ENOSPC)
    assert libc.calls == [("unshare", 0x20000)]


def test_unshare_off_linux(monkeypatch: pytest.MonkeyPatch) -> None:
    libc = _with_libc(monkeypatch, [0])
    monkeypatch.setattr(sys, "platform", "darwin")
    assert layers.unshare(layers.CLONE_NEWNET) == "not Linux"
    assert libc.calls == []


def test_readonly_bind_makes_three_mounts(monkeypatch: pytest.MonkeyPatch) -> None:
    libc = _with_libc(monkeypatch, [0, 0, 0])
    assert layers.readonly_bind("/repo") is None
    assert libc.calls == [
        ("mount", b"none", b"/", None, 16384 + 262144, None),
        ("mount", b"/repo", b"/repo", None, 4096 + 16384, None),
        ("mount", b"/repo", b"/repo", None, 4096 + 32 + 1, None),
    ]
    assert libc.mount.argtypes == [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_void_p]  # type: ignore[attr-defined]


@pytest.mark.parametrize("failing", [0, 1, 2])
def test_readonly_bind_stops_at_the_first_failed_mount(monkeypatch: pytest.MonkeyPatch, failing: int) -> None:
    libc = _with_libc(monkeypatch, [0] * failing + [errno.EACCES, 0, 0])
    assert layers.readonly_bind("/repo") == os.strerror(errno.EACCES)
    assert len(libc.calls) == failing + 1


def test_hide_covers_folders_with_tmpfs_and_files_with_dev_null(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder, file = tmp_path / ".aws", tmp_path / ".netrc"
    folder.mkdir()
    file.write_text("")
    libc = _with_libc(monkeypatch, [0, 0])
    assert layers.hide([str(folder), str(file)]) == []
    assert libc.calls == [
        ("mount", b"tmpfs", str(folder).encode(), b"tmpfs", 1, None),
        ("mount", b"/dev/null", str(file).encode(), None, 4096, None),
    ]
    assert libc.mount.argtypes == [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_void_p]  # type: ignore[attr-defined]


def test_hide_reports_each_failure_and_goes_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "ssh"
    folder.mkdir()
    missing = tmp_path / "missing"
    libc = _with_libc(monkeypatch, [errno.EPERM, 0, errno.ENOENT])
    assert layers.hide([str(folder), str(tmp_path), str(missing)]) == [
        f"{folder}: {os.strerror(errno.EPERM)}",
        f"{missing}: {os.strerror(errno.ENOENT)}",
    ]
    assert len(libc.calls) == 3


# --- the audit hook, called by hand


def _hook(tmp_path: Path, **kw: Any) -> AuditHook:
    repo, run = tmp_path / "repo", tmp_path / "run"
    (repo / "excluded").mkdir(parents=True)
    run.mkdir()
    base: dict[str, Any] = {
        "repo": str(repo),
        "run_dir": str(run),
        "excluded": (str(repo / "excluded"),),
        "refuse_sockets": True,
        "refuse_writes": True,
        "hidden": (str(tmp_path / "secrets"),),
        "armed": True,
    }
    base.update(kw)
    return AuditHook(**base)


def test_defaults_and_the_writable_places(tmp_path: Path) -> None:
    hook = AuditHook(repo="/r", run_dir="/run", excluded=(), refuse_sockets=False, refuse_writes=False)
    assert hook.hidden == () and hook.armed is False and hook.reads == set()
    assert hook.writable == ("/run", "/dev")
    assert (
        AuditHook(repo="/r", run_dir="/run", excluded=(), refuse_sockets=False, refuse_writes=False).reads
        is not hook.reads
    )


def test_unarmed_hook_lets_everything_through(tmp_path: Path) -> None:
    hook = _hook(tmp_path, armed=False)
    hook("socket.__new__", ())
    hook("subprocess.Popen", ("/bin/sh",))
    hook("open", (str(tmp_path / "secrets" / "key"), "r", 0))
    hook("open", (str(tmp_path / "elsewhere"), "w", 0))
    hook("os.remove", (str(tmp_path / "elsewhere"),))
    hook("open", (str(tmp_path / "repo" / "a.py"), "r", 0))
    assert hook.reads == set()


def test_reads_inside_the_repository_are_recorded_resolved(tmp_path: Path) -> None:
    hook = _hook(tmp_path)
    repo = tmp_path / "repo"
    (tmp_path / "link").symlink_to(repo / "data")
    hook("open", (str(repo / "a.py"), "r", 0))
    hook("open", (os.fsencode(repo / "b.py"), "rb", os.O_RDONLY))
    hook("open", (str(repo / "c.py"),))  # no mode, no flags: a read
    hook("open", (str(tmp_path / "link" / "d.csv"), None))
    hook("open", (str(repo),))  # the repository folder itself
    hook("open", (str(repo / "excluded" / "e.py"), "r", 0))
    hook("open", (str(repo / "excluded"), "r", 0))
    hook("open", (str(tmp_path / "repository-sibling" / "f.py"), "r", 0))
    hook("open", (str(tmp_path / "outside.py"), "r", 0))
    hook("open", (5, "r", 0))  # an open descriptor: nothing to record
    assert hook.reads == {
        str(repo / "a.py"),
        str(repo / "b.py"),
        str(repo / "c.py"),
        str(repo / "data" / "d.csv"),
        str(repo),
    }


@pytest.mark.parametrize("mode", ["w", "a", "x", "r+", "wb", "ab"])
def test_a_write_mode_outside_is_refused(tmp_path: Path, mode: str) -> None:
    hook = _hook(tmp_path)
    target = tmp_path / "repo" / "a.py"
    with pytest.raises(SandboxWriteError) as info:
        hook("open", (str(target), mode, 0))
    assert info.value.errno == errno.EACCES
    assert info.value.strerror == f"writing outside the working directory is refused: {target}"
    assert hook.reads == set()


@pytest.mark.parametrize(
    "flags",
    [os.O_WRONLY, os.O_RDWR, os.O_CREAT, os.O_TRUNC, os.O_APPEND, os.O_WRONLY | os.O_CREAT | os.O_TRUNC],
)
def test_write_flags_outside_are_refused(tmp_path: Path, flags: int) -> None:
    hook = _hook(tmp_path)
    with pytest.raises(SandboxWriteError):
        hook("open", (str(tmp_path / "elsewhere"), None, flags))
    with pytest.raises(SandboxWriteError):
        hook("open", (str(tmp_path / "elsewhere"), "r", flags))


def test_a_read_mode_with_read_flags_is_a_read(tmp_path: Path) -> None:
    hook = _hook(tmp_path)
    hook("open", (str(tmp_path / "elsewhere"), "r", os.O_RDONLY | os.O_CLOEXEC))
    hook("open", (str(tmp_path / "elsewhere"), "rb", "not-a-number"))
    hook("open", (str(tmp_path / "elsewhere"), 0o644, 0))  # a mode that is no text: read by its flags


def test_writes_inside_the_run_folder_and_dev_are_allowed(tmp_path: Path) -> None:
    hook = _hook(tmp_path)
    hook("open", (str(tmp_path / "run" / "out.txt"), "w", 0))
    hook("open", (str(tmp_path / "run"), None, os.O_WRONLY))
    hook("open", ("/dev/null", "w", 0))
    hook("os.remove", (str(tmp_path / "run" / "x"),))
    hook("os.rename", (str(tmp_path / "run" / "a"), str(tmp_path / "run" / "b")))
    with pytest.raises(SandboxWriteError):
        hook("open", (str(tmp_path / "run-sibling" / "x"), "w", 0))
    with pytest.raises(SandboxWriteError):
        hook("open", ("/device", "w", 0))


def test_writes_anywhere_when_writes_are_not_refused(tmp_path: Path) -> None:
    hook = _hook(tmp_path, refuse_writes=False)
    hook("open", (str(tmp_path / "repo" / "a.py"), "w", 0))
    hook("os.remove", (str(tmp_path / "repo" / "a.py"),))
    assert hook.reads == set()


def test_hidden_files_are_refused_even_to_read(tmp_path: Path) -> None:
    hook = _hook(tmp_path, refuse_writes=False, refuse_sockets=False)
    secret = tmp_path / "secrets" / "key"
    for args in ((str(secret), "r", 0), (str(secret), "w", 0), (str(tmp_path / "secrets"),)):
        with pytest.raises(SandboxReadError) as info:
            hook("open", args)
        assert info.value.errno == errno.EACCES
        assert info.value.strerror == f"credential files are not readable by scripts: {args[0]}"
    hook("open", (str(tmp_path / "secrets-not"), "r", 0))


@pytest.mark.parametrize(
    "event",
    [
        "os.remove",
        "os.rmdir",
        "os.mkdir",
        "os.truncate",
        "os.chmod",
        "os.chown",
        "os.utime",
        "shutil.rmtree",
        "shutil.copyfile",
    ],
)
def test_one_path_write_events_check_their_first_argument(tmp_path: Path, event: str) -> None:
    hook = _hook(tmp_path)
    outside, inside = str(tmp_path / "repo" / "x"), str(tmp_path / "run" / "x")
    with pytest.raises(SandboxWriteError):
        hook(event, (outside, inside))
    hook(event, (inside, outside))  # the second argument of these is no path written
    hook(event, (3, outside))  # a descriptor
    with pytest.raises(SandboxWriteError):
        hook(event, (os.fsencode(outside),))


@pytest.mark.parametrize("event", ["os.rename", "os.symlink", "os.link", "shutil.move"])
def test_two_path_write_events_check_both(tmp_path: Path, event: str) -> None:
    hook = _hook(tmp_path)
    outside, inside = str(tmp_path / "repo" / "x"), str(tmp_path / "run" / "x")
    with pytest.raises(SandboxWriteError):
        hook(event, (outside, inside))
    with pytest.raises(SandboxWriteError):
        hook(event, (inside, outside, inside))
    hook(event, (inside, inside, outside))  # a third argument is no path


@pytest.mark.parametrize("event", sorted(layers.SOCKET_EVENTS))
def test_socket_events_refused_when_sockets_are(tmp_path: Path, event: str) -> None:
    with pytest.raises(SandboxNetworkError) as info:
        _hook(tmp_path)(event, ())
    assert info.value.errno == errno.EACCES
    assert info.value.strerror == "network access is disabled for verification scripts"
    _hook(tmp_path / "allowed", refuse_sockets=False)(event, ())


@pytest.mark.parametrize("event", sorted(layers.EXEC_EVENTS))
def test_exec_events_refused_when_sockets_are(tmp_path: Path, event: str) -> None:
    with pytest.raises(SandboxExecError) as info:
        _hook(tmp_path)(event, ("/bin/true",))
    assert info.value.errno == errno.EACCES
    assert info.value.strerror == "starting programs is refused when no network namespace is available"
    _hook(tmp_path / "allowed", refuse_sockets=False)(event, ("/bin/true",))


def test_other_events_pass(tmp_path: Path) -> None:
    hook = _hook(tmp_path)
    for event in ("import", "exec", "compile", "os.listdir", "socket.gethostname", "os.execvx"):
        hook(event, (str(tmp_path / "repo" / "x"), "w"))
    assert hook.reads == set()


def test_install_adds_the_hook(monkeypatch: pytest.MonkeyPatch) -> None:
    added: list[object] = []
    monkeypatch.setattr(sys, "addaudithook", added.append)
    hook = AuditHook(repo="/r", run_dir="/run", excluded=(), refuse_sockets=False, refuse_writes=False)
    layers.install(hook)
    assert added == [hook]


def test_the_real_libc_reports_its_errno() -> None:
    """The libc handle keeps errno (``use_errno``): a flag unshare(2) does not know is refused with its reason,
    never with the "Success" of a stale errno. The kernel checks the flags first (EINVAL); a container whose
    seccomp profile refuses unshare outright answers EPERM."""
    ctypes.set_errno(0)
    why = layers.unshare(0x1)  # 0x1 is no namespace
    assert why in {os.strerror(errno.EINVAL), os.strerror(errno.EPERM)}
    assert why != os.strerror(0)


def test_flags_that_hold_a_user_namespace_already_are_retried_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    libc = _with_libc(monkeypatch, [errno.EPERM, 0])
    assert layers.unshare(layers.CLONE_NEWUSER | layers.CLONE_NEWNET) is None
    assert libc.calls == [("unshare", 0x50000000), ("unshare", 0x50000000)]


def test_an_open_event_with_a_mode_and_no_flags(tmp_path: Path) -> None:
    hook = _hook(tmp_path)
    with pytest.raises(SandboxWriteError):
        hook("open", (str(tmp_path / "repo" / "a.py"), "w"))
    hook("open", (str(tmp_path / "repo" / "b.py"), "r"))
    assert hook.reads == {str(tmp_path / "repo" / "b.py")}
