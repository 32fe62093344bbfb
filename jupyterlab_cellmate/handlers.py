"""The two routes: the WebSocket relay to the companion server (`RelayHandler`), and its status."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from typing import Any, TypeVar, cast

from jupyter_core.utils import ensure_async
from jupyter_server.base.handlers import APIHandler, JupyterHandler
from jupyter_server.base.websocket import WebSocketMixin
from tornado import web
from tornado.websocket import WebSocketClosedError, WebSocketHandler

from .framing import FramingError, encode_frame, read_frame
from .settings import SETTINGS_KEY, RelaySettings

F = TypeVar("F", bound=Callable[..., Any])

try:  # jupyter_server >= 2.13
    from jupyter_server.auth.decorator import ws_authenticated
except ImportError:  # pragma: no cover - older 2.x: the same check, by hand

    def ws_authenticated(method: F) -> F:
        def wrapper(self: JupyterHandler, *args: Any, **kwargs: Any) -> Any:
            if self.current_user is None:
                self.log.warning("Couldn't authenticate WebSocket connection")
                raise web.HTTPError(403)
            return method(self, *args, **kwargs)

        return cast(F, wrapper)


# Close codes (RFC 6455 §7.4.1 and the IANA registry).
CLOSE_GOING_AWAY = 1001
"""Jupyter is shutting down."""
CLOSE_TOO_BIG = 1009
"""The companion sent a frame over the size limit."""
CLOSE_INTERNAL_ERROR = 1011
"""The companion connection closed or failed while the companion kept running."""
CLOSE_SERVICE_RESTART = 1012
"""The companion exited; it is being restarted: reconnect."""
CLOSE_TRY_AGAIN_LATER = 1013
"""The companion was not ready within the wait, or cannot run (see /cellmate/status)."""

"""Key of :class:`RelaySettings` in the Tornado application settings."""


class RelayHandler(WebSocketMixin, WebSocketHandler, JupyterHandler):
    """``<base_url>cellmate/ws``: one JSON-RPC message per text message, both ways.

    Each WebSocket gets its own connection to the companion's Unix socket. Auth is
    the kernel WebSocket's: an authenticated user (token or cookie), authorised to
    execute in kernels (the agent runs code there); otherwise HTTP 403.
    """

    _writer: asyncio.StreamWriter | None = None
    _pump: asyncio.Task[None] | None = None

    @property
    def bridge(self) -> RelaySettings:
        return cast(RelaySettings, self.settings[SETTINGS_KEY])

    @property
    def max_message_size(self) -> int:
        return self.bridge.max_message_size

    def set_default_headers(self) -> None:
        """JupyterHandler's defaults (CSP etc.) make no sense for a WebSocket."""

    def get_compression_options(self) -> dict[str, Any] | None:
        return cast("dict[str, Any] | None", self.settings.get("websocket_compression_options", None))

    @ws_authenticated
    async def get(self, *args: Any, **kwargs: Any) -> None:
        user = self.current_user
        authorized = await ensure_async(self.authorizer.is_authorized(self, user, "execute", "kernels"))
        if not authorized:
            raise web.HTTPError(403)
        await super().get(*args, **kwargs)

    async def open(self, *args: Any, **kwargs: Any) -> None:
        super().open(*args, **kwargs)  # WebSocketMixin: keep-alive pings
        # Every message here is small (a JSON-RPC request, a text delta): with Nagle's
        # algorithm on, each reply waits for the browser's delayed ACK, ~40 ms a frame
        # (bench/RESULTS.md, "turn"). The Unix socket to the companion has no Nagle.
        if self.bridge.nodelay:
            self.set_nodelay(True)
        supervisor = self.bridge.supervisor
        path = await supervisor.wait_ready(self.bridge.ready_wait)
        if self.ws_connection is None:  # the client left while we waited
            return
        if path is None:
            if supervisor.stopping:
                self.close(CLOSE_GOING_AWAY, "Jupyter server is shutting down")
            else:
                why = supervisor.error or "Cellmate server is not ready"
                self.close(CLOSE_TRY_AGAIN_LATER, _reason(why))
            return
        exited = supervisor.current_exit()
        try:
            reader, writer = await asyncio.open_unix_connection(path)
        except OSError as err:
            self.log.warning("[cellmate] cannot connect to %s: %s", path, err)
            code = CLOSE_SERVICE_RESTART if exited is not None and exited.done() else CLOSE_INTERNAL_ERROR
            self.close(code, _reason(f"cannot connect to the Cellmate server: {err}"))
            return
        self._writer = writer
        if self.ws_connection is None:
            writer.close()
            return
        supervisor.add_client(self)
        self._pump = asyncio.ensure_future(self._pump_to_browser(reader, exited))

    async def on_message(self, message: str | bytes) -> None:
        writer = self._writer
        if writer is None or writer.is_closing():
            return
        body = message.encode("utf-8") if isinstance(message, str) else message
        writer.write(encode_frame(body))
        try:
            await writer.drain()
        except ConnectionError as err:
            self.log.warning("[cellmate] companion connection lost while writing: %s", err)
            self.close(CLOSE_INTERNAL_ERROR, "Cellmate server connection lost")

    async def _pump_to_browser(self, reader: asyncio.StreamReader, exited: asyncio.Future[None] | None) -> None:
        """Send each frame from the companion as one WebSocket message until either side ends."""
        code, reason = CLOSE_INTERNAL_ERROR, "Cellmate server closed the connection"
        try:
            while True:
                body = await read_frame(reader, self.bridge.max_message_size)
                if body is None:
                    break
                try:
                    await self.write_message(body.decode("utf-8"))
                except UnicodeDecodeError:
                    await self.write_message(body, binary=True)
        except WebSocketClosedError:
            return
        except FramingError as err:
            self.log.error("[cellmate] bad frame from the companion server: %s", err)
            code = CLOSE_TOO_BIG if "limit" in str(err) else CLOSE_INTERNAL_ERROR
            reason = _reason(f"bad frame from the Cellmate server: {err}")
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        if code == CLOSE_INTERNAL_ERROR and exited is not None:
            # A crash closes the socket just before the exit is noticed: wait a moment
            # so the pane hears "restarting" (1012), not "error" (1011).
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(exited), 1.0)
            if exited.done():
                code, reason = CLOSE_SERVICE_RESTART, "Cellmate server restarting"
        self.close(code, reason)

    def on_close(self) -> None:
        self.bridge.supervisor.remove_client(self)
        if self._pump is not None and self._pump is not asyncio.current_task():
            self._pump.cancel()
        if self._writer is not None:
            self._writer.close()
            self._writer = None


class StatusHandler(APIHandler):
    """``GET <base_url>cellmate/status``: the companion's state, as JSON."""

    @web.authenticated
    def get(self) -> None:
        bridge = cast(RelaySettings, self.settings[SETTINGS_KEY])
        self.set_header("Cache-Control", "no-store")
        self.finish(json.dumps({**bridge.supervisor.status(), "version": bridge.version}))


def _reason(text: str) -> str:
    """A close reason must fit the 123 bytes a close frame allows."""
    raw = text.encode("utf-8")
    return text if len(raw) <= 123 else raw[:120].decode("utf-8", "ignore") + "..."


__all__ = ["RelayHandler", "StatusHandler"]
