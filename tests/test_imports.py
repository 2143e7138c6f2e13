"""The import graph of nbcli's packages (issues 13 and 26): no cycle, every
package imports only the packages below it, and the house stays small
enough to find one's way in. Function-level imports count too: a cycle or
an upward import hidden inside a function is still one.

The rule, bottom up (README "How it fits together"):

    errors, defaults   import nothing of nbcli
    text, evaluate     errors, defaults
    nb                 text, evaluate
    store              nb, text
    fit                nb, text, evaluate
    run                fit, store, nb, text (its executors: nothing of nbcli)
    spam               run and everything below it
    imap               spam and everything below it
    api                everything but cli
    cli                anything; nothing imports cli (but __main__)

`from nbcli import __version__` names the root package, which imports
nothing at import time (its public API is loaded on first use), so the root
is not a node of the graph.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "nbcli"
BASE = {"errors", "defaults"}
ALLOWED = {
    "errors": set(),
    "defaults": set(),
    "text": BASE,
    "evaluate": BASE,
    "nb": BASE | {"text", "evaluate"},
    "store": BASE | {"nb", "text"},
    "fit": BASE | {"nb", "text", "evaluate"},
    "run": BASE | {"fit", "store", "nb", "text"},
    "spam": BASE | {"run", "fit", "store", "nb", "text", "evaluate"},
    "imap": BASE | {"run", "fit", "store", "nb", "text", "evaluate", "spam"},
    "api": BASE | {"run", "fit", "store", "nb", "text", "evaluate", "spam"},
    "__main__": {"cli"},
}
EXECUTORS = ("nbcli.run.executor", "nbcli.run.dask_executor")


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _imports(name: str, path: Path, modules) -> set[str]:
    """The nbcli modules a module imports, anywhere in its body. `from
    nbcli.x import y` imports the module nbcli.x.y when there is one,
    else nbcli.x."""
    out = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1])
                base = f"{base}.{node.module}" if node.module else base
            else:
                base = node.module or ""
            for alias in node.names:
                out.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base)
    return {m for m in out if m in modules and m not in (name, "nbcli")}


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items() if name != "nbcli"}


def _package(module: str) -> str:
    return module.split(".")[1]


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


def longest_chain(graph: dict[str, set[str]]) -> list[str]:
    """The longest path of imports (the graph has no cycle)."""
    memo: dict[str, list[str]] = {}

    def chain(node):
        if node not in memo:
            memo[node] = [node, *max((chain(n) for n in sorted(graph[node])), key=len, default=[])]
        return memo[node]

    return max((chain(n) for n in sorted(graph)), key=len)


def test_the_graph_walk_sees_module_and_function_level_imports():
    graph = import_graph()
    assert "nbcli.text.sources" in graph["nbcli.nb.classifier"]  # module level
    assert "nbcli.errors" in graph["nbcli.nb.classifier"]  # inside a function (classifier_of)
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert longest_chain({"a": {"b"}, "b": {"c"}, "c": set(), "d": {"c"}}) == ["a", "b", "c"]


def test_nbcli_has_no_import_cycle():
    assert _cycle(import_graph()) is None


def test_every_package_imports_only_the_packages_below_it():
    graph = import_graph()
    upward = {
        f"{module} -> {dep}"
        for module, deps in graph.items()
        if _package(module) != "cli"
        for dep in deps
        if _package(dep) != _package(module) and _package(dep) not in ALLOWED[_package(module)]
    }
    assert sorted(upward) == []


def test_nothing_imports_the_cli():
    graph = import_graph()
    users = {m for m, deps in graph.items() if _package(m) not in ("cli", "__main__") for d in deps if ".cli" in d}
    assert users == set()


def test_the_executors_import_nothing_from_nbcli():
    graph = import_graph()
    assert {e: graph[e] - set(EXECUTORS) for e in EXECUTORS} == {e: set() for e in EXECUTORS}


def test_the_longest_chain_of_imports_is_at_most_nine_modules():
    chain = longest_chain(import_graph())
    assert len(chain) <= 9, " -> ".join(chain)


def test_at_most_eight_modules_directly_in_the_package_and_none_over_800_lines():
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= 8, top
    long = {_module_name(p): n for p in PACKAGE.rglob("*.py") if (n := len(p.read_text().splitlines())) > 800}
    assert long == {}


def test_no_module_shadows_the_standard_library():
    """A script run from a folder of nbcli's must not import nbcli's module
    instead of the standard library's (tokenize.py once broke `inspect`)."""
    import sys

    shadows = {_module_name(p) for p in PACKAGE.rglob("*.py") if p.stem in sys.stdlib_module_names}
    assert shadows == set()


def test_the_architecture_notes_name_every_module():
    """docs/architecture.md lists every module by its path, so a new module
    (or a renamed one) comes with a line saying what it is for."""
    notes = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    unnamed = [
        str(p.relative_to(PACKAGE))
        for p in sorted(PACKAGE.rglob("*.py"))
        if p.name != "__init__.py" and p.parent != PACKAGE and f"`{p.relative_to(PACKAGE).as_posix()}`" not in notes
    ]
    assert unnamed == []
