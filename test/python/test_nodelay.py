"""TCP_NODELAY on Jupyter's kernel WebSockets (jupyterlab_cellmate/nodelay.py): the patch
runs set_nodelay(True) before the handler's own open, once, and reaches Jupyter's class.
The latency it removes is measured by `npm run bench -- turn` (turn-notebook line)."""

from __future__ import annotations

import asyncio
from typing import Any

from jupyter_server.services.kernels.websocket import KernelWebsocketHandler

from jupyterlab_cellmate.nodelay import enable_kernel_websocket_nodelay, enable_nodelay_on_open


def test_open_sets_nodelay_first_then_runs_the_original_with_its_arguments() -> None:
    calls: list[Any] = []

    class Handler:
        def set_nodelay(self, value: bool) -> None:
            calls.append(("nodelay", value))

        async def open(self, kernel_id: str) -> str:
            calls.append(("open", kernel_id))
            return "opened"

    assert enable_nodelay_on_open(Handler) is True
    assert enable_nodelay_on_open(Handler) is False  # idempotent: wrapped once
    assert asyncio.run(Handler().open("k1")) == "opened"
    assert calls == [("nodelay", True), ("open", "k1")]


def test_jupyters_kernel_websocket_handler_is_patched() -> None:
    enable_kernel_websocket_nodelay()
    assert getattr(KernelWebsocketHandler.open, "_cellmate_nodelay", False) is True
    assert KernelWebsocketHandler.open.__wrapped__.__qualname__ == "KernelWebsocketHandler.open"
