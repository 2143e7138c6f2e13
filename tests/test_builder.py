"""The event-model builder (issue 26): one function turns counts and
settings into a fitted event model, and the library's parameter errors name
the parameter, which the command line turns into its flag."""

from __future__ import annotations

import ast
from pathlib import Path

NBCLI = Path(__file__).resolve().parent.parent / "nbcli"


def _registry_uses() -> dict[str, list[str]]:
    """{module: [the functions that name the event-model registry MODELS]}
    over nbcli's source (imports of it count, as `module-level`)."""
    uses: dict[str, list[str]] = {}
    for path in sorted(NBCLI.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        for node in ast.walk(tree):
            named = (isinstance(node, ast.Name) and node.id == "MODELS") or (
                isinstance(node, ast.Attribute) and node.attr == "MODELS"
            )
            imported = isinstance(node, ast.ImportFrom) and any(a.name == "MODELS" for a in node.names)
            if not (named or imported):
                continue
            where, up = "module-level", node
            while up in parents:
                up = parents[up]
                if isinstance(up, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    where = up.name
                    break
            uses.setdefault(path.name, []).append(where)
    return uses


def test_exactly_one_module_calls_the_event_model_registry_to_build_a_model():
    uses = _registry_uses()
    assert set(uses) == {"model.py"}, uses
    # defined (and checked against EVENT_MODELS) at module level, looked up in the builder only
    assert {w for w in uses["model.py"] if w != "module-level"} == {"build_event_model"}
