"""``python -m jupyterlab_cellmate.js_kernel -f <connection_file>``: start Cellmate's JS kernel.

The ``cellmate-js`` kernelspec a wheel installs (``share/jupyter/kernels/cellmate-js``) runs
this: a kernelspec is a static file, so it cannot name the Node.js and the bundled kernel of
the machine it lands on. This finds both (jupyterlab_cellmate.locate, the same answer the
server extension uses) and replaces itself with ``<node> <js-kernel main.js> <args>``, so the
kernel's pid is this process's and ``interrupt_mode: signal`` reaches Node directly.
"""

from __future__ import annotations

import os
import sys

from .locate import NodeNotFound, find_companion, find_node


def main(argv: list[str]) -> None:
    """Exec the JS kernel with ``argv`` (Jupyter passes ``-f <connection_file>``)."""
    main_js = find_companion().js_kernel_main
    if not main_js.is_file():
        sys.exit(f"cellmate-js: {main_js} is missing (a checkout needs `npm run build`).")
    try:
        node = find_node()
    except NodeNotFound as e:
        sys.exit(f"cellmate-js: {e}")
    os.execv(node, [node, str(main_js), *argv])


if __name__ == "__main__":
    main(sys.argv[1:])
