"""The import graph of nbcli's modules (issue 13): no cycle, and the core
never imports upward (the CLI, its options, the pipeline or the executor).
Function-level imports count too: a cycle hidden inside a function is
still a cycle."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "nbcli"
CORE = ("model", "vectorize", "tokenize", "mail", "classifier", "training", "modelfile")
UPWARD = ("cli", "options", "pipeline", "executor", "cluster", "parallel")


def _imports(path: Path) -> set[str]:
    """The nbcli modules a module imports, anywhere in its body."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: from . import x / from .x import y
                base = node.module or ""
                names = [base] if base else [a.name for a in node.names]
                names = [f"nbcli.{n}" for n in names]
            elif node.module == "nbcli":
                names = [f"nbcli.{a.name}" for a in node.names]
            else:
                names = [node.module or ""]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] == "nbcli" and len(parts) > 1 and (PACKAGE / f"{parts[1]}.py").exists():
                out.add(parts[1])
    return out


def import_graph() -> dict[str, set[str]]:
    return {p.stem: _imports(p) - {p.stem} for p in sorted(PACKAGE.glob("*.py"))}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph, as a path, or None."""
    state: dict[str, int] = {}  # 1: on the stack, 2: done
    stack: list[str] = []

    def visit(node):
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_the_graph_walk_sees_module_and_function_level_imports():
    graph = import_graph()
    assert "sources" in graph["classifier"]  # module level
    assert "evaluation" in graph["classifier"]  # inside a method
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_nbcli_has_no_import_cycle():
    assert _cycle(import_graph()) is None


def test_the_core_never_imports_the_cli_options_pipeline_or_executor():
    graph = import_graph()
    upward = {m: sorted(graph[m] & set(UPWARD)) for m in CORE if graph[m] & set(UPWARD)}
    assert upward == {}


def test_tune_speaks_in_fields_and_leaves_flags_to_the_cli():
    """tuning drives the pipeline but writes no command line: the flags are
    options.py's (options.train_command)."""
    assert not import_graph()["tuning"] & {"cli", "options"}


def test_the_executor_imports_nothing_from_nbcli():
    assert import_graph()["executor"] == set()
