"""``<base_url>cellmate/mcp``: Cellmate's MCP server for other agents.

Streamable HTTP in stateless JSON mode. Authenticated like every Jupyter API route (token
or cookie; HTTP 403 otherwise, never a login redirect) and, like the ``/cellmate/ws``
relay, only for a user allowed to ``execute`` on ``kernels``. Each request is relayed to
the companion's ``mcp.sock`` (beside its JSON-RPC socket in the same 0700 folder) as one
HTTP/1.0 exchange; the companion answers from its registry (actor ``mcp``), so there is no
TCP port of its own and no second copy of the tools here.
"""

from __future__ import annotations

import asyncio
import os
from typing import cast

from jupyter_core.utils import ensure_async
from jupyter_server.base.handlers import APIHandler
from tornado import web

from .settings import SETTINGS_KEY, RelaySettings

MCP_SOCKET_NAME = "mcp.sock"
"""The companion's MCP endpoint, beside ``server.sock``."""

_REQUEST_HEADERS = ("Content-Type", "Accept", "Mcp-Protocol-Version", "Mcp-Session-Id", "Last-Event-Id")
_RESPONSE_HEADERS = ("content-type", "mcp-protocol-version", "mcp-session-id", "allow")


class McpHandler(APIHandler):
    """Relays MCP requests to the companion; see the module docstring."""

    @property
    def bridge(self) -> RelaySettings:
        return cast(RelaySettings, self.settings[SETTINGS_KEY])

    @web.authenticated
    async def post(self) -> None:
        await self._relay()

    @web.authenticated
    async def get(self) -> None:
        await self._relay()

    @web.authenticated
    async def delete(self) -> None:
        await self._relay()

    async def _relay(self) -> None:
        if not await ensure_async(self.authorizer.is_authorized(self, self.current_user, "execute", "kernels")):
            raise web.HTTPError(403)
        body = self.request.body or b""
        if len(body) > self.bridge.max_message_size:
            raise web.HTTPError(413, "MCP request body too large")
        path = await self.bridge.supervisor.wait_ready(self.bridge.ready_wait)
        if path is None:
            raise web.HTTPError(503, self.bridge.supervisor.error or "Cellmate server is not ready")
        sock = os.path.join(os.path.dirname(path), MCP_SOCKET_NAME)
        try:
            status, headers, payload = await _exchange(sock, self.request.method or "POST", self.request.headers, body)
        except (OSError, ValueError) as error:
            raise web.HTTPError(502, f"Cellmate's MCP endpoint did not answer: {error}") from error
        self.set_status(status)
        self.clear_header("Content-Type")
        for name in _RESPONSE_HEADERS:
            if name in headers:
                self.set_header(name, headers[name])
        self.set_header("Cache-Control", "no-store")
        self.finish(payload)


async def _exchange(sock: str, method: str, incoming: object, body: bytes) -> tuple[int, dict[str, str], bytes]:
    """One HTTP/1.0 request over the Unix socket: no chunking, the response ends at EOF."""
    reader, writer = await asyncio.open_unix_connection(sock)
    try:
        lines = [f"{method} /mcp HTTP/1.0", "Host: cellmate", f"Content-Length: {len(body)}"]
        for name in _REQUEST_HEADERS:
            value = incoming.get(name)  # type: ignore[attr-defined]
            if value:
                lines.append(f"{name}: {value}")
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
        await writer.drain()
        raw = await reader.read()
    finally:
        writer.close()
        await writer.wait_closed()
    head, sep, payload = raw.partition(b"\r\n\r\n")
    if not sep:
        raise ValueError("incomplete HTTP response")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    status = int(status_line.split(" ", 2)[1])
    headers = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return status, headers, payload


__all__ = ["MCP_SOCKET_NAME", "McpHandler"]
