"""The package layout stays true as the code grows (issue 13): the import rules of
docs/ARCHITECTURE.md ("Import rules"), checked over the AST of every module, and the "Where things
live" table, compared with the tree.

The rules, exactly as `layout_violations` enforces them:

1. `memory_lake.store` imports nothing of memory_lake outside `memory_lake.store`.
2. Outside its own package, a package of memory_lake (store, a stage, demo, cli) is reached only
   through its ``__init__``: ``from memory_lake.<pkg> import name`` (or ``from ..<pkg> import``)
   with every name in that ``__init__``'s ``__all__``; never ``memory_lake.<pkg>.<module>``. This
   holds for function-local (lazy) imports too.
3. Who may import whom: store -> store; a stage (ingest, maintain, search, publish, observe) ->
   store and the other stages; demo -> store and stages; ``api`` -> store, stages; ``cli`` -> all
   but the top package. No module imports the top package ``memory_lake`` (it loads the facade).
4. Only ``memory_lake/cli`` imports ``flows``; no module of memory_lake imports ``prefect``.
5. The module-level import graph (imports run at import time: not inside a function) has no
   cycle. A lazy import inside a function is how a lower stage calls a higher one at run time.
"""

from __future__ import annotations

import ast
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "memory_lake"
ARCHITECTURE = ROOT / "docs" / "ARCHITECTURE.md"

STAGES = {"ingest", "maintain", "search", "publish", "observe"}
ALLOWED = {  # importer's part -> the parts of memory_lake it may import
    "store": {"store"},
    "text": {"store", "text"},
    **{stage: {"store", "text"} | STAGES for stage in STAGES},
    "demo": {"store", "text"} | STAGES,
    "api": {"store", "text"} | STAGES,
    "cli": {"store", "text", "demo", "api", "cli"} | STAGES,
    "": {"store", "text", "api"} | STAGES,  # memory_lake/__init__.py
}


@dataclass(frozen=True)
class Import:
    importer: str  # dotted module name
    line: int
    module: str  # dotted name after resolving relative imports
    names: tuple[str, ...]  # for `from m import a, b`; () for `import m`
    top_level: bool  # runs at import time (not inside a function)


def module_name(path: Path, base: Path) -> str:
    parts = list(path.relative_to(base.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules_of(base: Path) -> dict[str, Path]:
    return {module_name(p, base): p for p in sorted(base.rglob("*.py")) if "__pycache__" not in p.parts}


def imports_of(name: str, path: Path) -> list[Import]:
    is_package = path.name == "__init__.py"
    found: list[Import] = []

    def visit(node: ast.AST, top: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = top and not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                found.extend(Import(name, child.lineno, a.name, (), top) for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    anchor = name.split(".") if is_package else name.split(".")[:-1]
                    anchor = anchor[: len(anchor) - (child.level - 1)]
                    module = ".".join(anchor + ([child.module] if child.module else []))
                else:
                    module = child.module or ""
                found.append(Import(name, child.lineno, module, tuple(a.name for a in child.names), top))
            visit(child, inner)

    visit(ast.parse(path.read_text(encoding="utf-8")), True)
    return found


def part_of(module: str) -> str:
    """'store' for memory_lake.store.lake, 'api' for memory_lake.api, '' for memory_lake itself."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def exported(path: Path) -> set[str]:
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return set(ast.literal_eval(node.value))
    return set()


def layout_violations(base: Path = PACKAGE) -> list[str]:
    """Every broken import rule under `base` (a memory_lake folder), one line each."""
    modules = modules_of(base)
    problems: list[str] = []
    edges: dict[str, set[str]] = {m: set() for m in modules}
    for importer, path in modules.items():
        rel = path.relative_to(base.parent)
        mine = part_of(importer)
        for imp in imports_of(importer, path):
            where = f"{rel}:{imp.line}: {imp.module}"
            root = imp.module.split(".")[0]
            if root == "prefect":
                problems.append(f"{where}: memory_lake never imports prefect")
            if root == "flows" and mine != "cli":
                problems.append(f"{where}: only memory_lake/cli imports flows")
            if root != "memory_lake":
                continue
            target = part_of(imp.module)
            if target == "" and mine != "":
                problems.append(f"{where}: the top package memory_lake (the facade) is imported by nobody inside it")
                continue
            if target != mine:
                if target not in ALLOWED[mine]:
                    problems.append(f"{where}: {mine or 'memory_lake'} may not import {target} (see ALLOWED)")
                elif (base / target).is_dir():  # a package: through its __init__
                    package = f"memory_lake.{target}"
                    if imp.module != package:
                        problems.append(f"{where}: reach {package} through its __init__, not its module")
                    else:
                        missing = sorted(set(imp.names) - exported(modules[package])) if imp.names else ["(import of the whole package)"]
                        if missing:
                            problems.append(f"{where}: {', '.join(missing)} not in {package}.__all__")
            if not imp.top_level:
                continue
            for name in imp.names or ("",):  # `from pkg import submodule` imports the submodule
                full = f"{imp.module}.{name}" if f"{imp.module}.{name}" in modules else imp.module
                if full in modules:
                    edges[importer].add(full)
            parts = imp.module.split(".")  # a package's __init__ runs first, unless it is our own
            for i in range(2, len(parts)):
                ancestor = ".".join(parts[:i])
                if ancestor in modules and not importer.startswith(ancestor + ".") and importer != ancestor:
                    edges[importer].add(ancestor)
    problems += [f"import cycle: {' -> '.join(cycle)}" for cycle in cycles(edges)]
    return problems


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each strongly connected component with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def strongconnect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                strongconnect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or v in edges.get(v, ()):
                found.append(cycle_in(sorted(component), edges))

    for v in sorted(edges):
        if v not in index:
            strongconnect(v)
    return found


def cycle_in(component: list[str], edges: dict[str, set[str]]) -> list[str]:
    """A path from the component's first module back to itself, inside the component."""
    members, start = set(component), component[0]
    paths = {start: [start]}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(edges[v] & members):
            if w == start:
                return paths[v] + [start]
            if w not in paths:
                paths[w] = paths[v] + [w]
                queue.append(w)
    return component


# ---------------------------------------------------------------- the tree as it is


def test_the_tree_keeps_the_import_rules():
    assert layout_violations() == []


def test_the_top_package_still_gives_the_facade_and_write_snapshot():
    import memory_lake
    from memory_lake.api import Lake as Facade
    from memory_lake.store import Lake as StorageLake

    assert memory_lake.Lake is Facade and issubclass(Facade, StorageLake)
    assert memory_lake.write_snapshot.__module__ == "memory_lake.ingest.inbox"
    storage_methods = set(dir(StorageLake))
    assert {"ingest", "search", "dedup", "edit", "publish"}.isdisjoint(storage_methods)  # store knows no steps
    assert {"open", "init", "writer", "reader", "reading", "sql", "hold"} <= storage_methods


# ---------------------------------------------------------------- the rules can fail


def broken_copy(tmp_path: Path, module: str, line: str) -> Path:
    base = tmp_path / "memory_lake"
    shutil.copytree(PACKAGE, base, ignore=shutil.ignore_patterns("__pycache__", "*.json", "*.tsv"))
    target = base / module
    target.write_text(target.read_text(encoding="utf-8") + "\n" + line + "\n", encoding="utf-8")
    return base


def test_an_upward_import_from_store_is_caught(tmp_path):
    base = broken_copy(tmp_path, "store/clock.py", "from ..maintain import dedup")
    problems = layout_violations(base)
    assert problems[0].startswith("memory_lake/store/clock.py:")
    assert problems[0].endswith(": memory_lake.maintain: store may not import maintain (see ALLOWED)")
    assert any(p.startswith("import cycle: ") and "memory_lake.store.clock" in p for p in problems)


def test_a_lazy_import_of_a_sibling_stage_module_is_caught(tmp_path):
    base = broken_copy(tmp_path, "ingest/merge.py", "def late():\n    from ..maintain.forget import forget_memories")
    problems = layout_violations(base)
    assert len(problems) == 1 and problems[0].endswith(
        ": memory_lake.maintain.forget: reach memory_lake.maintain through its __init__, not its module")


def test_a_name_the_package_does_not_export_is_caught(tmp_path):
    base = broken_copy(tmp_path, "search/query.py", "def late():\n    from ..publish import _sha256")
    assert [p.split(": ", 2)[2] for p in layout_violations(base)] == ["_sha256 not in memory_lake.publish.__all__"]


def test_a_module_level_cycle_between_stages_is_caught(tmp_path):
    base = broken_copy(tmp_path, "ingest/merge.py", "from ..maintain import forget_memories")
    problems = layout_violations(base)
    assert len(problems) == 1 and problems[0].startswith("import cycle: ")
    assert "memory_lake.ingest.merge" in problems[0] and "memory_lake.maintain" in problems[0]


def test_prefect_and_flows_are_caught(tmp_path):
    base = broken_copy(tmp_path, "observe/runs.py", "def late():\n    import prefect\n    from flows.nightly import nightly")
    assert [p.split(": ", 2)[2] for p in layout_violations(base)] == [
        "memory_lake never imports prefect", "only memory_lake/cli imports flows"]


# ---------------------------------------------------------------- the table in ARCHITECTURE.md


def where_things_live() -> list[str]:
    """The first-column paths of the "Where things live" table, in order."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    section = text.split("## Where things live", 1)[1].split("\n## ", 1)[0]
    return [m.group(1) for m in re.finditer(r"^\| `([^`]+)` \|", section, re.M)]


def test_the_where_things_live_table_matches_the_tree():
    listed = where_things_live()
    modules = sorted(str(p.relative_to(ROOT)) for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)
    assert sorted(p for p in listed if p.endswith(".py")) == modules  # each module once, nothing extra
    assert [p for p in listed if not (ROOT / p).exists()] == []  # the data folders listed exist too
