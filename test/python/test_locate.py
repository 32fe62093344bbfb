"""What jupyterlab_cellmate/locate.py tells the companion (companion_env): the Node it runs
on, for the bundle's language-server shims, and this environment's scripts folder, where
PyPI's basedpyright put basedpyright-langserver (server/src/workspace/tool-bins.ts reads both)."""

from __future__ import annotations

import os
import sysconfig

import pytest

from jupyterlab_cellmate.locate import companion_env, tool_bins


def test_tool_bins_is_this_environments_scripts_folder() -> None:
    scripts = sysconfig.get_path("scripts")
    assert tool_bins() == [scripts]
    # The folder of this interpreter's console scripts (pytest's here, basedpyright's in a wheel's venv).
    assert os.path.isfile(os.path.join(scripts, "pytest"))


def test_companion_env_names_the_node_and_appends_to_a_users_tool_bins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CELLMATE_TOOL_BINS", raising=False)
    assert companion_env("/opt/node/bin/node") == {
        "CELLMATE_NODE": "/opt/node/bin/node",
        "CELLMATE_TOOL_BINS": sysconfig.get_path("scripts"),
    }
    monkeypatch.setenv("CELLMATE_TOOL_BINS", os.pathsep.join(["/mine/bin", ""]))
    env = companion_env("")
    assert "CELLMATE_NODE" not in env  # no usable Node: the supervisor reports that itself
    assert env["CELLMATE_TOOL_BINS"].split(os.pathsep) == ["/mine/bin", sysconfig.get_path("scripts")]
