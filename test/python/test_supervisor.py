"""The companion supervisor (jupyterlab_cellmate/supervisor.py) with real child processes
(test/python/fake_companion.py in place of the Node server): the ready line, restart with
exponential backoff (and its reset once a child ran long enough), and the ready timeout.
Delays are asserted from what the supervisor decided (its log), never from a clock."""

from __future__ import annotations

import asyncio
import logging
import os
import re
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from jupyterlab_cellmate.supervisor import CompanionConfig, CompanionSupervisor

FAKE = str(Path(__file__).with_name("fake_companion.py"))


class Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def make(tmp_path: Path, mode: str, **overrides: float) -> tuple[CompanionSupervisor, Records, Path]:
    log = logging.getLogger(f"cellmate-test-{mode}-{id(tmp_path)}")
    log.setLevel(logging.INFO)
    records = Records()
    log.addHandler(records)
    starts = tmp_path / "starts.txt"
    config = CompanionConfig(
        node=sys.executable,
        server_main=FAKE,
        workspace=str(tmp_path),
        env={"FAKE_MODE": mode, "FAKE_STARTS": str(starts)},
        **overrides,
    )
    return CompanionSupervisor(config, log), records, starts


async def until(predicate: Callable[[], bool], what: str, timeout: float = 20.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


def run(body: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(body())


def restart_delays(lines: list[str]) -> list[float]:
    return [float(m.group(1)) for line in lines if (m := re.search(r"restarting in ([\d.]+)s", line))]


def test_ready_line_gives_the_socket_and_stop_ends_the_child(tmp_path: Path) -> None:
    async def body() -> None:
        sup, records, starts = make(tmp_path, "ready")
        sup.start()
        path = await sup.wait_ready(20)
        assert path is not None and path.endswith("/server.sock")
        status = sup.status()
        assert status["running"] and status["ready"] and status["restarts"] == 0
        pid = status["pid"]
        assert starts.read_text().split() == [str(pid)]
        assert "[cellmate] a log line before ready" in records.lines
        await sup.stop()
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
        assert not sup.status()["running"]
        assert sup.socket_dir is None

    run(body)


def test_a_child_that_keeps_dying_restarts_with_doubling_backoff_up_to_the_cap(tmp_path: Path) -> None:
    async def body() -> None:
        sup, records, starts = make(tmp_path, "exit", backoff_initial=0.1, backoff_max=0.4, healthy_after=60.0)
        sup.start()
        await until(lambda: sup.restarts >= 5, "five restarts")
        await sup.stop()
        assert restart_delays(records.lines)[:5] == [0.1, 0.2, 0.4, 0.4, 0.4]
        assert sup.last_exit == 3
        assert any("exited unexpectedly with code 3" in line for line in records.lines)
        assert len(starts.read_text().split()) >= 5
        # A dead companion never reports a socket.
        assert await sup.wait_ready(0.1) is None

    run(body)


def test_backoff_resets_after_a_child_ran_healthy_long_enough(tmp_path: Path) -> None:
    async def body() -> None:
        # healthy_after=0: every child counts as healthy, so the delay never grows.
        sup, records, _ = make(tmp_path, "exit", backoff_initial=0.1, backoff_max=0.4, healthy_after=0.0)
        sup.start()
        await until(lambda: sup.restarts >= 4, "four restarts")
        await sup.stop()
        assert restart_delays(records.lines)[:4] == [0.1, 0.1, 0.1, 0.1]

    run(body)


def test_a_child_that_never_reports_ready_is_killed_after_the_startup_timeout_and_restarted(tmp_path: Path) -> None:
    async def body() -> None:
        sup, records, starts = make(tmp_path, "silent", startup_timeout=0.5, backoff_initial=0.05, backoff_max=0.05)
        sup.start()
        assert await sup.wait_ready(0.2) is None  # waiters give up after their own timeout
        await until(lambda: sup.restarts >= 2, "two restarts")
        first = int(starts.read_text().split()[0])
        await sup.stop()
        assert sum("did not report ready in 0s; killing it" in line or "did not report ready in 1s; killing it" in line for line in records.lines) >= 2
        assert sup.last_exit == -9  # SIGKILL
        with pytest.raises(ProcessLookupError):
            os.kill(first, 0)

    run(body)


def test_a_missing_server_build_is_an_error_not_a_restart_loop(tmp_path: Path) -> None:
    async def body() -> None:
        sup, _, starts = make(tmp_path, "ready")
        sup.config.server_main = str(tmp_path / "missing" / "main.js")
        sup.start()
        assert await sup.wait_ready(5) is None
        assert sup.error is not None and "does not exist; run scripts/setup" in sup.error
        assert sup.restarts == 0 and not starts.exists()
        await sup.stop()

    run(body)
