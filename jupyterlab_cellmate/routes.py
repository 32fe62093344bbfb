"""The extension's routes, relative to the base URL (the extension app prefixes it)."""

from __future__ import annotations

from tornado import web

from .handlers import RelayHandler, StatusHandler
from .mcp_route import McpHandler


def handlers() -> list[tuple[str, type[web.RequestHandler]]]:
    return [(r"/cellmate/ws", RelayHandler), (r"/cellmate/status", StatusHandler), (r"/cellmate/mcp", McpHandler)]
