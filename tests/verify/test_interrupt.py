"""An interrupted run leaves no script running, even one a worker was starting at the moment of the interrupt."""

from __future__ import annotations

from concurrent.futures import Future
from pathlib import Path

from qbank.verify import engine, runner


def test_the_kill_is_repeated_until_no_worker_runs_a_script() -> None:
    """The first kill misses the script a worker starts just then; the worker ends only once a later kill hits it."""
    running: Future[None] = Future()
    running.set_running_or_notify_cancel()
    queued: Future[None] = Future()
    queued.cancel()
    kills: list[int] = []

    def kill_all() -> None:
        kills.append(1)
        if len(kills) == 3:
            running.set_result(None)

    engine._kill_until_done([running, queued], kill_all, limit_s=10)
    assert len(kills) == 3 and running.done()


def test_the_kill_gives_up_at_its_limit() -> None:
    stuck: Future[None] = Future()
    stuck.set_running_or_notify_cancel()
    kills: list[int] = []
    engine._kill_until_done([stuck], lambda: kills.append(1), limit_s=0.2)
    assert 2 <= len(kills) and not stuck.done()


def test_a_started_script_is_registered_before_the_runner_waits(tmp_path: Path) -> None:
    """Registered by the spawn itself: there is no moment when the process exists and kill_all cannot see it."""
    proc = runner._spawn(["sleep", "30"], {"PATH": "/usr/bin:/bin"}, "/", tmp_path, [])
    try:
        assert proc.pid in runner.LIVE
        runner.kill_all()
        assert proc.wait(timeout=10) != 0
    finally:
        if proc.poll() is None:
            proc.kill()
        runner.LIVE.discard(proc.pid)
