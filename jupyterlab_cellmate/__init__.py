"""Cellmate's thin Python side: a Jupyter server extension and the prebuilt lab extension.

Everything that thinks is TypeScript. This package only (1) ships the prebuilt
JupyterLab extension (``share/jupyter/labextensions/jupyterlab-cellmate``), (2) runs the
companion Node server as a child of Jupyter, and (3) bridges the pane's WebSocket to
it, so that Jupyter's authentication guards the agent and the companion opens no TCP port.

Contract
========

Companion process (``supervisor.py``)
    ``<node> <server_main> --socket <sock> --workspace <root_dir>``, cwd ``<root_dir>``
    (Jupyter's ``root_dir``), Jupyter's environment plus:

    - ``CELLMATE_JUPYTER_URL``: this Jupyter server on the loopback, with base URL
      (``http://127.0.0.1:8888/``);
    - ``CELLMATE_JUPYTER_TOKEN``: its token, when it has one;
    - ``CELLMATE_JUPYTER_RUNTIME_DIR``: where kernel connection files are.

    ``<sock>`` is ``server.sock`` in a fresh 0700 directory from
    ``tempfile.mkdtemp(prefix="cellmate-")`` (under 104 bytes). The child must print
    exactly one line ``CELLMATE_READY <socketpath>`` on stdout once the socket listens,
    and log on stderr (each line goes to Jupyter's log as ``[cellmate] …``). It runs in
    its own session; on Linux it gets SIGTERM if Jupyter dies.

    ``<node>``: ``c.CellmateApp.node``, else ``$CELLMATE_NODE``, else ``node`` on PATH.
    ``<server_main>``: ``c.CellmateApp.server_main``, else ``$CELLMATE_SERVER_MAIN``, else
    ``<repo>/server/dist/main.js`` beside this package (editable install). Missing either
    is logged ("run scripts/setup") and reported in ``/cellmate/status`` as ``error``.

Supervision
    Started in the background once Jupyter's loop runs. If the child exits unexpectedly:
    logged, every bridged WebSocket is closed with 1012, and it is restarted after a
    backoff of 0.5 s doubling to 10 s (back to 0.5 s after a run of 60 s). A child that
    does not print its ready line within ``startup_timeout`` (60 s) is killed and
    restarted. On Jupyter shutdown: WebSockets closed with 1001, SIGTERM to the child's
    process group, SIGKILL after ``stop_timeout`` (3 s), socket directory removed.
    Whenever the child exits, what is left in its process group (processes it started
    and did not stop: language servers, debug adapters) gets SIGKILL.

``<base_url>cellmate/ws`` (``handlers.RelayHandler``)
    Authenticated like kernel WebSockets (token or cookie; the user must be allowed to
    ``execute`` on ``kernels``), else HTTP 403. Each WebSocket gets its own Unix-socket
    connection. A WebSocket text message is one JSON-RPC message, written as one frame
    ``Content-Length: <bytes>\\r\\n\\r\\n<utf-8 body>``; each frame read back (other headers
    tolerated) is sent as one text message. Messages up to ``max_message_size`` (64 MiB).
    A WebSocket opened before the companion is ready waits up to ``ready_wait`` (15 s).
    Close codes from the server:

    - 1001: Jupyter is shutting down;
    - 1009: the companion sent a frame over the size limit;
    - 1011: the Unix connection closed or failed while the companion kept running;
    - 1012: the companion exited and is being restarted: reconnect;
    - 1013: the companion was not ready within ``ready_wait`` or cannot run (reason says why).

    Closing the WebSocket closes its Unix connection. The WebSocket has TCP_NODELAY on
    (``tcp_nodelay``): its messages are small, and with Nagle's algorithm each waited for
    a delayed ACK.

``GET <base_url>cellmate/status`` (``handlers.StatusHandler``)
    Authenticated (403 otherwise). JSON::

        {"running": bool, "ready": bool, "pid": int|null, "restarts": int,
         "lastExit": int|null, "startedAt": iso8601|null, "uptimeSeconds": float|null,
         "socketDir": str|null, "error": str|null, "version": str}

    ``restarts`` counts unexpected exits; ``lastExit`` is the last one's exit code
    (negative: killed by that signal, as in Python's ``returncode``).

``<base_url>cellmate/mcp`` (``mcp_route.McpHandler``)
    Cellmate's MCP server for other agents (Streamable HTTP, stateless JSON mode). Same
    auth as ``/cellmate/ws`` (token or cookie, ``execute`` on ``kernels``; HTTP 403
    otherwise, never a login redirect). Each request is relayed as one HTTP/1.0 exchange
    to ``mcp.sock``, which the companion listens on beside ``<sock>`` in the same 0700
    directory; 503 while the companion is not ready, 502 if it does not answer.

Jupyter's kernel WebSockets (``nodelay.py``)
    The companion reaches a notebook's kernel through Jupyter Server's kernel WebSocket;
    the extension sets TCP_NODELAY on those too (``tcp_nodelay``, default on).

Traitlets (``CellmateApp``): ``node``, ``server_main``, ``ready_wait``, ``startup_timeout``,
``stop_timeout``, ``max_message_size``, ``tcp_nodelay``.
"""

from __future__ import annotations

from typing import Any

from .app import CellmateApp, package_version

__version__ = package_version()


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    """Where the prebuilt lab extension is, for ``jupyter labextension develop``."""
    return [{"src": "labextension", "dest": "jupyterlab-cellmate"}]


def _jupyter_server_extension_points() -> list[dict[str, Any]]:
    """The server extension: an ExtensionApp, so Jupyter stops the companion on shutdown."""
    return [{"module": "jupyterlab_cellmate", "app": CellmateApp}]


def _load_jupyter_server_extension(serverapp: Any) -> CellmateApp:
    """Load the extension into ``serverapp``.

    Jupyter Server 2 loads ``CellmateApp`` through the extension point above; this
    module-level hook does the same for callers that look for it here.
    """
    return CellmateApp._load_jupyter_server_extension(serverapp)  # type: ignore[no-untyped-call,no-any-return]


__all__ = ["CellmateApp", "__version__"]
