"""The seccomp filter bubblewrap installs before the launcher starts: syscalls a script never needs.

Compiled with ``pyseccomp`` (ctypes over ``libseccomp.so.2``) into classic BPF, once per process. A
denied call fails with EPERM (``clone3`` with ENOSYS, so the C library falls back to ``clone``, whose
flags the filter can see). Other architectures' system-call tables are refused by libseccomp's
default (bad architecture kills the process).
"""

from __future__ import annotations

import errno
import functools
import os
import socket

# namespaces and mounts: the wall bubblewrap built must stay as it is
WALL = (
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "setns",
    "unshare",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
)
# other processes, the kernel and its keyrings
KERNEL = (
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kcmp",
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "open_by_handle_at",
    "name_to_handle_at",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "iopl",
    "ioperm",
    "swapon",
    "swapoff",
    "syslog",
    "reboot",
    "acct",
    "quotactl",
    "lookup_dcookie",
    "personality",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
)
DENIED = WALL + KERNEL
# every CLONE_NEW* flag (cgroup, uts, ipc, user, pid, net, mount): no namespace of any kind from inside
CLONE_NS_FLAGS = (0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000, 0x00020000)
EQ, MASKED_EQ = "eq", "masked_eq"
UNKNOWN_SYSCALL = -1
"""What libseccomp answers for a name it does not know (``__NR_SCMP_ERROR``); it does not raise. Other negative
numbers are its pseudo-syscalls (a call another architecture has, or one multiplexed through ``socketcall``),
which a rule may name."""
Cond = tuple[int, str, int, int]


class SeccompUnavailable(RuntimeError):
    """libseccomp (or pyseccomp) is missing: there is no filter, so nothing may run."""


def rules() -> list[tuple[str, int, tuple[Cond, ...]]]:
    """(syscall, errno, conditions) to deny; a condition is (argument, op, a, b) as libseccomp takes it."""
    out: list[tuple[str, int, tuple[Cond, ...]]] = [(n, errno.EPERM, ()) for n in DENIED]
    for family in (socket.AF_UNIX, socket.AF_NETLINK):  # filesystem and abstract unix sockets, netlink
        out.append(("socket", errno.EPERM, ((0, EQ, family, 0),)))
        out.append(("socketpair", errno.EPERM, ((0, EQ, family, 0),)))
    out.append(("clone3", errno.ENOSYS, ()))  # its flags sit behind a pointer; ENOSYS makes libc use clone
    out += [("clone", errno.EPERM, ((0, MASKED_EQ, flag, flag),)) for flag in CLONE_NS_FLAGS]
    return out


@functools.lru_cache(maxsize=1)
def compile_filter() -> bytes:
    """The filter as BPF bytes (what ``bwrap --seccomp FD`` reads); raises SeccompUnavailable."""
    try:
        import pyseccomp as sc
    except (ImportError, OSError) as exc:  # the module loads libseccomp.so.2 at import
        raise SeccompUnavailable(f"the seccomp compiler cannot load: {exc}") from exc
    try:
        flt = sc.SyscallFilter(sc.ALLOW)
        ops = {EQ: sc.EQ, MASKED_EQ: sc.MASKED_EQ}
        for name, err, conds in rules():
            if sc.resolve_syscall(sc.Arch.NATIVE, name) == UNKNOWN_SYSCALL:  # not in this table: nothing to deny
                continue
            flt.add_rule(sc.ERRNO(err), name, *(sc.Arg(i, ops[op], a, b) for i, op, a, b in conds))
        fd = os.memfd_create("qbank-seccomp", 0)
        with os.fdopen(fd, "w+b") as fh:
            flt.export_bpf(fh)
            fh.seek(0)
            return fh.read()
    except SeccompUnavailable:
        raise
    except Exception as exc:
        raise SeccompUnavailable(f"compiling the seccomp filter failed: {exc}") from exc
