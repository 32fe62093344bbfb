"""Start, watch and restart the companion Node server.

The child runs as ``<node> <server_main> --socket <sock> --workspace <root_dir>`` with
cwd = ``root_dir`` and Jupyter's environment, in its own session (so a Ctrl-C in
Jupyter's terminal reaches Jupyter, which then stops the child in order). On Linux it
also gets ``PR_SET_PDEATHSIG`` so it dies with a Jupyter that is killed outright.

It prints exactly one line ``CELLMATE_READY <socketpath>`` on stdout once its socket
listens; other stdout lines and all stderr lines go to Jupyter's log as ``[cellmate] …``.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import datetime as dt
import logging
import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

READY_PREFIX = "CELLMATE_READY "
SOCKET_NAME = "server.sock"
MAX_UNIX_PATH = 103
"""AF_UNIX paths must fit 104 bytes (macOS; Linux allows 108) with the final NUL."""

MAX_LOG_LINE = 64 * 1024


class BridgedClient(Protocol):
    """What the supervisor needs of a bridged WebSocket: a way to close it."""

    def close(self, code: int | None = None, reason: str | None = None) -> None: ...


@dataclass
class CompanionConfig:
    """Where the companion is and how to run it (filled from the app's traitlets)."""

    node: str
    server_main: str
    workspace: str
    env: dict[str, str] = field(default_factory=dict)
    """Extra environment on top of Jupyter's own."""
    startup_timeout: float = 60.0
    stop_timeout: float = 3.0
    backoff_initial: float = 0.5
    backoff_max: float = 10.0
    healthy_after: float = 60.0


class _ChildProtocol(asyncio.SubprocessProtocol):
    """Splits the child's stdout/stderr into lines and notices its exit.

    The low-level protocol is used instead of ``Process.wait()`` because that waits
    for every pipe to close too, which a grandchild (a language server) may delay.
    """

    def __init__(self, on_line: Callable[[int, str], None]) -> None:
        self._on_line = on_line
        self._buffers: dict[int, bytearray] = {1: bytearray(), 2: bytearray()}
        self.exited: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        buf = self._buffers[fd]
        buf.extend(data)
        while True:
            end = buf.find(b"\n")
            if end < 0:
                if len(buf) > MAX_LOG_LINE:  # a runaway line: emit it in pieces
                    self._emit(fd, bytes(buf))
                    buf.clear()
                return
            self._emit(fd, bytes(buf[:end]))
            del buf[: end + 1]

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        buf = self._buffers.get(fd)
        if buf:
            self._emit(fd, bytes(buf))
            buf.clear()

    def process_exited(self) -> None:
        if not self.exited.done():
            self.exited.set_result(None)

    def _emit(self, fd: int, raw: bytes) -> None:
        self._on_line(fd, raw.decode("utf-8", "replace").rstrip("\r"))


class _Child:
    """One run of the companion: its transport, pid and exit."""

    def __init__(self, transport: asyncio.SubprocessTransport, protocol: _ChildProtocol) -> None:
        self.transport = transport
        self.protocol = protocol
        self.pid: int = transport.get_pid()
        self.started = time.monotonic()
        self.started_at = dt.datetime.now(dt.timezone.utc)

    @property
    def exited(self) -> asyncio.Future[None]:
        return self.protocol.exited

    @property
    def returncode(self) -> int | None:
        return self.transport.get_returncode()

    def signal_group(self, sig: int) -> None:
        """Signal the child's process group (it leads its own session)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, sig)


def _set_parent_death_signal() -> None:  # runs in the forked child before exec
    if sys.platform.startswith("linux"):
        with contextlib.suppress(Exception):
            pr_set_pdeathsig = 1
            ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, int(signal.SIGTERM))


def make_socket_dir() -> str:
    """Create a fresh user-only (0700) directory for the socket, short enough for AF_UNIX."""
    path = tempfile.mkdtemp(prefix="cellmate-")
    if len(os.path.join(path, SOCKET_NAME).encode()) > MAX_UNIX_PATH:
        os.rmdir(path)  # e.g. macOS's long $TMPDIR: fall back to /tmp, still 0700
        path = tempfile.mkdtemp(prefix="cellmate-", dir="/tmp")
    return path


class CompanionSupervisor:
    """Keeps one companion server running for the life of the Jupyter server.

    ``start()`` returns at once; ``wait_ready()`` waits for the socket; an unexpected
    exit closes every bridged WebSocket with 1012 and restarts the child with
    exponential backoff (reset once a child has run ``healthy_after`` seconds).
    """

    def __init__(self, config: CompanionConfig, log: logging.Logger | logging.LoggerAdapter[Any]) -> None:
        self.config = config
        self.log = log
        self.socket_dir: str | None = None
        self.socket_path: str | None = None
        """Set while the current child is ready (the path it reported)."""
        self.error: str | None = None
        """A reason the companion cannot run at all (missing node or server build)."""
        self.restarts = 0
        self.last_exit: int | None = None
        self._child: _Child | None = None
        self._ready = asyncio.Event()
        self._stopping = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._clients: set[BridgedClient] = set()

    # -- lifecycle -----------------------------------------------------------------

    def start(self) -> None:
        """Start supervising in the background (needs a running event loop)."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="cellmate-supervisor")

    async def stop(self) -> None:
        """Stop the child (SIGTERM, then SIGKILL after ``stop_timeout``) and clean up."""
        self._stopping.set()
        self._ready.set()  # wake waiters; they find no socket
        self._close_clients(1001, "Jupyter server is shutting down")
        child = self._child
        if child is not None and not child.exited.done():
            child.signal_group(signal.SIGTERM)
            try:
                await asyncio.wait_for(asyncio.shield(child.exited), self.config.stop_timeout)
            except asyncio.TimeoutError:
                self.log.warning("[cellmate] companion did not stop in %.1fs; killing it", self.config.stop_timeout)
                child.signal_group(signal.SIGKILL)
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(asyncio.shield(child.exited), 2.0)
        if self._task is not None:
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(self._task, 1.0)
        if self.socket_dir:
            shutil.rmtree(self.socket_dir, ignore_errors=True)
            self.socket_dir = None

    async def _run(self) -> None:
        delay = self.config.backoff_initial
        while not self._stopping.is_set():
            child = await self._spawn()
            if child is None:
                return  # a configuration error; logged, shown in /cellmate/status
            if self._stopping.is_set():  # Jupyter began stopping while we spawned it
                child.signal_group(signal.SIGTERM)
            await self._watch(child)
            # Right after the exit (before its pid can be reused): its orphans, e.g.
            # language servers, share its process group.
            child.signal_group(signal.SIGKILL)
            child.transport.close()
            if self._stopping.is_set():
                return
            code = child.returncode
            self.last_exit = code
            self.restarts += 1
            ran = time.monotonic() - child.started
            if ran >= self.config.healthy_after:
                delay = self.config.backoff_initial
            self.log.warning(
                "[cellmate] companion server (pid %s) exited unexpectedly with %s after %.1fs; "
                "restarting in %.1fs",
                child.pid,
                _describe_exit(code),
                ran,
                delay,
            )
            self._close_clients(1012, "Cellmate server restarting")
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), delay)
            delay = min(delay * 2, self.config.backoff_max)

    async def _spawn(self) -> _Child | None:
        cfg = self.config
        problem = _check_config(cfg)
        if problem:
            self.error = problem
            self.log.error("[cellmate] %s", problem)
            self._ready.set()  # waiters find no socket and give up at once
            return None
        if self.socket_dir is None or not os.path.isdir(self.socket_dir):
            self.socket_dir = make_socket_dir()
        sock = os.path.join(self.socket_dir, SOCKET_NAME)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(sock)  # a stale socket from a crashed child
        argv = [cfg.node, cfg.server_main, "--socket", sock, "--workspace", cfg.workspace]
        loop = asyncio.get_running_loop()
        holder: list[_Child] = []

        def on_line(fd: int, line: str) -> None:
            if fd == 1 and line.startswith(READY_PREFIX) and holder and not holder[0].exited.done():
                self.socket_path = line[len(READY_PREFIX) :].strip() or sock
                self.log.info("[cellmate] companion server ready (pid %s) on %s", holder[0].pid, self.socket_path)
                self._ready.set()
            elif line:
                self.log.info("[cellmate] %s", line)

        transport, protocol = await loop.subprocess_exec(
            lambda: _ChildProtocol(on_line),
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=cfg.workspace,
            env={**os.environ, **cfg.env},
            start_new_session=True,
            preexec_fn=_set_parent_death_signal,
        )
        child = _Child(transport, protocol)
        holder.append(child)
        self._child = child
        self.log.info("[cellmate] started companion server (pid %s): %s", child.pid, " ".join(argv))
        return child

    async def _watch(self, child: _Child) -> None:
        """Wait for the child to exit; kill it if it never reports ready."""
        ready = asyncio.ensure_future(self._ready.wait())
        waiters: list[asyncio.Future[Any]] = [ready, child.exited]
        try:
            await asyncio.wait(waiters, timeout=self.config.startup_timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            ready.cancel()
        if not child.exited.done() and self.socket_path is None and not self._stopping.is_set():
            self.log.error(
                "[cellmate] companion server (pid %s) did not report ready in %.0fs; killing it",
                child.pid,
                self.config.startup_timeout,
            )
            child.signal_group(signal.SIGKILL)
        await child.exited
        self.socket_path = None
        if not self._stopping.is_set():
            self._ready.clear()

    # -- what the handlers use -------------------------------------------------------

    async def wait_ready(self, timeout: float) -> str | None:
        """Return the socket path once the companion listens, or ``None`` after ``timeout``."""
        deadline = time.monotonic() + timeout
        while not self._stopping.is_set() and self.error is None:
            if self.socket_path is not None:
                return self.socket_path
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._ready.wait(), remaining)
            if self.socket_path is None and self._ready.is_set() and self.error is None:
                await asyncio.sleep(0.05)  # set for a child that already died; let _watch clear it
        return None

    @property
    def stopping(self) -> bool:
        """True once Jupyter is shutting the companion down."""
        return self._stopping.is_set()

    def current_exit(self) -> asyncio.Future[None] | None:
        """The exit future of the running child, for telling a crash from a closed socket."""
        return self._child.exited if self._child is not None else None

    def add_client(self, client: BridgedClient) -> None:
        self._clients.add(client)

    def remove_client(self, client: BridgedClient) -> None:
        self._clients.discard(client)

    def _close_clients(self, code: int, reason: str) -> None:
        clients, self._clients = self._clients, set()
        for client in clients:
            with contextlib.suppress(Exception):
                client.close(code, reason)

    def status(self) -> dict[str, Any]:
        """The JSON body of ``GET /cellmate/status`` (without ``version``)."""
        child = self._child
        running = child is not None and not child.exited.done()
        return {
            "running": running,
            "ready": running and self.socket_path is not None,
            "pid": child.pid if running and child is not None else None,
            "restarts": self.restarts,
            "lastExit": self.last_exit,
            "startedAt": child.started_at.isoformat() if running and child is not None else None,
            "uptimeSeconds": round(time.monotonic() - child.started, 3) if running and child is not None else None,
            "socketDir": self.socket_dir,
            "error": self.error,
        }


def _check_config(cfg: CompanionConfig) -> str | None:
    if not cfg.node or not os.access(cfg.node, os.X_OK):
        return (
            f"cannot run the companion server: Node.js not found ({cfg.node or 'no `node` on PATH'}); "
            "install Node >= 20.19 or set CELLMATE_NODE"
        )
    if not os.path.isfile(cfg.server_main):
        return (
            f"cannot run the companion server: {cfg.server_main} does not exist; "
            "run scripts/setup (or set CELLMATE_SERVER_MAIN)"
        )
    if not os.path.isdir(cfg.workspace):
        return f"cannot run the companion server: workspace {cfg.workspace} is not a directory"
    return None


def _describe_exit(code: int | None) -> str:
    if code is None:
        return "an unknown status"
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"signal {signal.Signals(-code).name}"
        return f"signal {-code}"
    return f"code {code}"
