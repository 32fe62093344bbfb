"""Hatch build hook: bundle the companion into a (platform-tagged) wheel.

For a standard wheel build this runs ``node scripts/bundle.mjs --out build/companion``
(tsc -b, then esbuild; native addons as files) and ships that directory as
``jupyterlab_cellmate/companion``; the wheel is tagged for the platform the addons were
built for (``cellmate-bundle.json``). Editable installs and sdists skip it: a checkout runs
the companion from server/dist (jupyterlab_cellmate/locate.py).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class CompanionBundleHook(BuildHookInterface):
    """Bundles the companion before hatch collects the wheel's files."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or version == "editable":
            return
        root = Path(self.root)
        out = root / "build" / "companion"
        node = shutil.which("node")
        if node is None:
            raise RuntimeError("building the wheel needs Node.js >= 20.19 on PATH (scripts/bundle.mjs)")
        subprocess.run([node, str(root / "scripts" / "bundle.mjs"), "--out", str(out)], cwd=root, check=True)
        manifest = json.loads((out / "cellmate-bundle.json").read_text("utf-8"))
        build_data["force_include"][str(out)] = "jupyterlab_cellmate/companion"
        build_data["pure_python"] = False
        build_data["tag"] = f"py3-none-{manifest['wheelTag']}"
