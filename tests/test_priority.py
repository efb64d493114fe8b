"""The build's helpers run ``NICE`` below the build: checked on real processes with the kernel's own figure."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys

from qbank import priority


def niceness(pid: int = 0) -> int:
    return os.getpriority(os.PRIO_PROCESS, pid)


def test_a_worker_lowers_itself_and_a_service_is_lowered_by_its_parent() -> None:
    assert priority.NICE > 0
    ours = niceness()
    context = multiprocessing.get_context("fork")
    queue = context.SimpleQueue()

    def child() -> None:
        priority.lower_this_process()
        queue.put(niceness())

    process = context.Process(target=child)
    process.start()
    process.join()
    assert queue.get() == min(ours + priority.NICE, 19)
    assert niceness() == ours  # the build itself is not lowered
    service = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        priority.lower(service.pid)
        assert niceness(service.pid) == min(ours + priority.NICE, 19)
    finally:
        service.communicate(b"")
