"""The Python server extension's modules import one another in one direction only, like the
TypeScript packages (scripts/test runs dpdm there): a circle means two modules that cannot be
read, tested or loaded apart, and it hides behind imports moved into function bodies."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "jupyterlab_cellmate"


def import_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in PACKAGE.glob("*.py"):
        name = path.stem
        edges = graph.setdefault(name, set())
        # Every import counts, also one inside a function body.
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                if node.module:
                    edges.add(node.module.split(".")[0])
                else:
                    edges.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("jupyterlab_cellmate."):
                edges.add(node.module.split(".")[1])
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt in graph and state.get(nxt) is None:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if state.get(node) is None:
            found = visit(node)
            if found:
                return found
    return None


def test_the_server_extension_has_no_import_circle() -> None:
    graph = import_graph()
    assert "handlers" in graph and "mcp_route" in graph
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph) or [])


def test_the_check_sees_a_circle_made_through_a_function_body() -> None:
    graph = import_graph()
    graph["settings"] = graph["settings"] | {"handlers"}
    assert find_cycle(graph) is not None
