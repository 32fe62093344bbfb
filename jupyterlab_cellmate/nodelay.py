"""TCP_NODELAY for Jupyter's kernel WebSockets.

The companion runs evals in a notebook's kernel through Jupyter Server's kernel WebSocket
(``/api/kernels/<id>/channels``), a loopback TCP connection whose traffic is small frames
in bursts (status, execute_input, stream, execute_reply, status). Jupyter Server leaves
Nagle's algorithm on there, so every frame after the first of a burst waits for the
companion's delayed ACK: ~40 ms added to each eval (bench/RESULTS.md, "turn"). Browsers
disable Nagle on their side; a server must do it on its own sockets, which is what this
does — for every kernel WebSocket, the pane's included (smaller packets, no other change).
Opt out with ``c.CellmateApp.tcp_nodelay = False`` (also for ``/cellmate/ws``).
"""

from __future__ import annotations

import functools
from typing import Any

_MARK = "_cellmate_nodelay"


def enable_nodelay_on_open(handler_class: type) -> bool:
    """Make ``handler_class.open`` call ``self.set_nodelay(True)`` first (idempotent).

    Returns False when it was already enabled.
    """
    original = handler_class.open  # type: ignore[attr-defined]
    if getattr(original, _MARK, False):
        return False

    @functools.wraps(original)
    async def open(self: Any, *args: Any, **kwargs: Any) -> Any:
        self.set_nodelay(True)
        return await original(self, *args, **kwargs)

    setattr(open, _MARK, True)
    handler_class.open = open  # type: ignore[attr-defined]
    return True


def enable_kernel_websocket_nodelay() -> bool:
    """Apply :func:`enable_nodelay_on_open` to Jupyter Server's kernel WebSocket handler."""
    from jupyter_server.services.kernels.websocket import KernelWebsocketHandler

    return enable_nodelay_on_open(KernelWebsocketHandler)
