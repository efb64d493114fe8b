"""The compiled seccomp filter, installed in a child process: what it denies, with which error, and what it lets
through; and how compiling it fails. A filter that compiled to "allow everything" would pass every test that only
runs scripts, so this one tries the calls themselves (Linux, run as the suite runs: root or not)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from qbank.verify.sandbox import seccomp

TRY = r"""
import ctypes, errno, json, os, signal, socket, sys
import pyseccomp as sc

bpf = sys.stdin.buffer.read()
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


class Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


if bpf:
    buf = ctypes.create_string_buffer(bpf, len(bpf))
    prog = Prog(len(bpf) // 8, ctypes.cast(buf, ctypes.c_void_p))
    assert libc.prctl(38, 1, 0, 0, 0) == 0  # PR_SET_NO_NEW_PRIVS
    assert libc.prctl(22, 2, ctypes.byref(prog), 0, 0) == 0, ctypes.get_errno()  # PR_SET_SECCOMP, FILTER
out = {}


def outcome(name, call):
    try:
        call()
        out[name] = "allowed"
    except OSError as exc:
        out[name] = errno.errorcode.get(exc.errno, str(exc.errno))


def raw(number, *args):
    ctypes.set_errno(0)
    ret = libc.syscall(ctypes.c_long(number), *[ctypes.c_long(a) for a in args])
    if ret == 0 and number == CLONE:
        os._exit(0)  # the child of a clone that was let through: gone at once
    if ret < 0:
        raise OSError(ctypes.get_errno(), "syscall")
    if number == CLONE:
        os.waitpid(ret, 0)


CLONE = sc.resolve_syscall(sc.Arch.NATIVE, "clone")
for family in ("AF_UNIX", "AF_NETLINK", "AF_INET"):
    kind = socket.SOCK_RAW if family == "AF_NETLINK" else socket.SOCK_STREAM
    outcome("socket " + family, lambda: socket.socket(getattr(socket, family), kind).close())
outcome("socketpair AF_UNIX", lambda: [s.close() for s in socket.socketpair(socket.AF_UNIX)])
for flag in (0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000, 0x00020000):
    outcome(f"clone {flag:#x}", lambda: raw(CLONE, flag | signal.SIGCHLD, 0, 0, 0, 0))
outcome("clone plain", lambda: raw(CLONE, signal.SIGCHLD, 0, 0, 0, 0))
outcome("clone3", lambda: raw(sc.resolve_syscall(sc.Arch.NATIVE, "clone3"), 0, 0))
outcome("unshare", lambda: raw(sc.resolve_syscall(sc.Arch.NATIVE, "unshare"), 0))
outcome("ptrace", lambda: raw(sc.resolve_syscall(sc.Arch.NATIVE, "ptrace"), 0x4206, 0, 0, 0))  # SEIZE pid 0
outcome("setns", lambda: raw(sc.resolve_syscall(sc.Arch.NATIVE, "setns"), -1, 0))
outcome("personality", lambda: raw(sc.resolve_syscall(sc.Arch.NATIVE, "personality"), 0xFFFFFFFF))
print(json.dumps(out))
"""

@pytest.fixture
def uncached() -> Iterator[None]:
    """compile_filter with its per-process cache emptied before and after: the test compiles its own filter."""
    seccomp.compile_filter.cache_clear()
    yield
    seccomp.compile_filter.cache_clear()


DENIED_ALWAYS = {"unshare": "EPERM", "ptrace": "EPERM", "setns": "EPERM", "personality": "EPERM"}


def attempts(bpf: bytes) -> dict[str, str]:
    done = subprocess.run([sys.executable, "-c", TRY], input=bpf, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr.decode()
    result: dict[str, str] = json.loads(done.stdout)
    return result


def test_the_filter_denies_what_it_lists_and_nothing_else() -> None:
    seen = attempts(seccomp.compile_filter())
    clones = {f"clone {flag:#x}": "EPERM" for flag in seccomp.CLONE_NS_FLAGS}
    assert seen == {
        "socket AF_UNIX": "EPERM", "socket AF_NETLINK": "EPERM", "socket AF_INET": "allowed",
        "socketpair AF_UNIX": "EPERM", **clones, "clone plain": "allowed", "clone3": "ENOSYS", **DENIED_ALWAYS,
    }
    assert len(clones) == 7  # cgroup, uts, ipc, user, pid, net, mount


def test_without_the_filter_those_calls_get_other_answers() -> None:
    """The control: the same calls unfiltered do not all fail with EPERM (the test above measures the filter)."""
    seen = attempts(b"")
    assert seen["socket AF_UNIX"] == "allowed" and seen["socket AF_NETLINK"] == "allowed"
    assert seen["clone3"] != "ENOSYS" and seen["personality"] == "allowed"


def test_the_namespace_flags_are_the_kernels() -> None:
    """CLONE_NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET, NEWNS, as linux/sched.h defines them."""
    assert sorted(seccomp.CLONE_NS_FLAGS) == sorted(
        [0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000, 0x00020000])


def test_a_syscall_this_kernel_lacks_is_skipped_and_the_rest_still_denied(
    monkeypatch: pytest.MonkeyPatch, uncached: None
) -> None:
    real = seccomp.rules()
    monkeypatch.setattr(seccomp, "rules", lambda: [("no_such_syscall_qbank", 1, ()), *real])
    seen = attempts(seccomp.compile_filter())
    assert seen["unshare"] == "EPERM" and seen["socket AF_UNIX"] == "EPERM"


def test_the_filter_is_compiled_once_per_process() -> None:
    assert seccomp.compile_filter() is seccomp.compile_filter()


def test_no_compiler_no_filter(monkeypatch: pytest.MonkeyPatch, uncached: None) -> None:
    monkeypatch.setitem(sys.modules, "pyseccomp", None)  # importing it raises ImportError
    with pytest.raises(seccomp.SeccompUnavailable, match="the seccomp compiler cannot load"):
        seccomp.compile_filter()


def test_a_compiler_failure_is_unavailability(monkeypatch: pytest.MonkeyPatch, uncached: None) -> None:
    import pyseccomp

    def broken(*args: Any) -> Any:
        raise RuntimeError("libseccomp refused the filter")

    monkeypatch.setattr(pyseccomp, "SyscallFilter", broken)
    with pytest.raises(seccomp.SeccompUnavailable, match="compiling the seccomp filter failed: libseccomp"):
        seccomp.compile_filter()
