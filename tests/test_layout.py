"""The package layout stays true as the code grows (issues 13 and 36): the import rules of
docs/ARCHITECTURE.md ("Import rules"), checked over the AST of every module, function-level
imports included; the size of every module; and the "Where things live" table, compared with the tree.

The rules, exactly as `layout_violations` enforces them:

1. Layers run one way, the way the data flows: ``store`` <- ``text`` <- ``ingest`` <- ``maintain``
   <- ``search`` <- ``publish`` <- ``targets`` <- ``observe``; above them ``demo``, ``api`` and
   ``cli``. A part imports only itself and the parts below it (`ALLOWED`), at module level or inside a function:
   a lower stage that needs what a higher one owns gets it registered (``store.registry``), never
   imports it. No module imports the top package ``memory_lake`` (it loads the facade).
2. Outside its own package, a package of memory_lake (store, text, a stage, demo, cli) is reached
   only through its ``__init__``: ``from memory_lake.<pkg> import name`` (or ``from ..<pkg>
   import``) with every name in that ``__init__``'s ``__all__``; never ``memory_lake.<pkg>.<module>``.
3. Only ``memory_lake/cli`` imports ``flows``; no module of memory_lake imports ``prefect``.
4. The import graph has no cycle, counting every import: module level and inside functions.
5. No module is longer than `MAX_MODULE_LINES`.
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

# The layers, lowest first: each may import itself and those before it.
LAYERS = ("store", "text", "ingest", "maintain", "search", "publish", "targets", "observe")
STAGES = set(LAYERS[2:])
ALLOWED = {  # importer's part -> the parts of memory_lake it may import
    **{part: set(LAYERS[: i + 1]) for i, part in enumerate(LAYERS)},
    "demo": {"demo"} | set(LAYERS),
    "api": {"api"} | set(LAYERS),
    "analyst": {"analyst"} | set(LAYERS),  # open_lake: the analyst's tables (issue 39)
    "serve": {"serve", "api"} | set(LAYERS),  # the query service (HTTP, MCP): beside api, below cli
    "cli": {"store", "text", "demo", "api", "analyst", "serve", "cli"} | STAGES,
    "": {"store", "text", "api", "analyst"} | STAGES,  # memory_lake/__init__.py
}
# A module a person can hold in their head (issue 36).
MAX_MODULE_LINES = 800


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
                    problems.append(f"{where}: {mine or 'memory_lake'} may not import {target} "
                                    f"(layers run {' <- '.join(LAYERS)}; see ALLOWED)")
                elif (base / target).is_dir():  # a package: through its __init__
                    package = f"memory_lake.{target}"
                    if imp.module != package:
                        problems.append(f"{where}: reach {package} through its __init__, not its module")
                    else:
                        missing = sorted(set(imp.names) - exported(modules[package])) if imp.names else ["(import of the whole package)"]
                        if missing:
                            problems.append(f"{where}: {', '.join(missing)} not in {package}.__all__")
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


LAYER_ORDER = "(layers run store <- text <- ingest <- maintain <- search <- publish <- targets <- observe; see ALLOWED)"


def test_an_upward_import_from_store_is_caught(tmp_path):
    base = broken_copy(tmp_path, "store/clock.py", "from ..maintain import dedup")
    problems = layout_violations(base)
    assert problems[0].startswith("memory_lake/store/clock.py:")
    assert problems[0].endswith(f": memory_lake.maintain: store may not import maintain {LAYER_ORDER}")
    assert any(p.startswith("import cycle: ") and "memory_lake.store.clock" in p for p in problems)


def test_a_lower_stage_importing_a_higher_one_inside_a_function_is_caught(tmp_path):
    # what ingest did before issue 36 to tombstone a deleted record (maintain.forget_memories)
    base = broken_copy(tmp_path, "ingest/merge.py", "def late():\n    from ..maintain import forget")
    problems = layout_violations(base)
    assert problems[0] == (f"memory_lake/ingest/merge.py:{len((PACKAGE / 'ingest/merge.py').read_text().splitlines()) + 3}: "
                           f"memory_lake.maintain: ingest may not import maintain {LAYER_ORDER}")
    # and, counting that import, ingest and maintain now import each other
    assert problems[1].startswith("import cycle: ") and "memory_lake.ingest" in problems[1]
    assert len(problems) == 2


def test_the_language_layer_may_not_reach_up_to_search(tmp_path):
    base = broken_copy(tmp_path, "text/tokenize.py", "def late():\n    from ..search import search")
    assert layout_violations(base)[0].endswith(f": memory_lake.search: text may not import search {LAYER_ORDER}")


def test_a_cycle_made_by_a_function_level_import_inside_a_stage_is_caught(tmp_path):
    # before issue 36, decisions and conflicts called each other this way (apply_or_queue / resolve)
    base = broken_copy(tmp_path, "maintain/queue.py", "def late():\n    from .decisions import apply_decisions")
    problems = layout_violations(base)
    # one cycle, through the new import (decisions and conflicts import the queue)
    assert len(problems) == 1 and problems[0].startswith("import cycle: ")
    assert "memory_lake.maintain.queue -> memory_lake.maintain.decisions" in problems[0]


def test_a_lazy_import_of_a_sibling_stage_module_is_caught(tmp_path):
    base = broken_copy(tmp_path, "search/query.py", "def late():\n    from ..maintain.conflicts import list_conflicts")
    problems = layout_violations(base)
    assert len(problems) == 1 and problems[0].endswith(
        ": memory_lake.maintain.conflicts: reach memory_lake.maintain through its __init__, not its module")


def test_a_name_the_package_does_not_export_is_caught(tmp_path):
    base = broken_copy(tmp_path, "search/query.py", "def late():\n    from ..maintain import _sha256")
    assert [p.split(": ", 2)[2] for p in layout_violations(base)] == ["_sha256 not in memory_lake.maintain.__all__"]


def test_a_module_level_cycle_between_stages_is_caught(tmp_path):
    base = broken_copy(tmp_path, "ingest/merge.py", "from ..maintain import forget")
    problems = layout_violations(base)
    assert problems[1].startswith("import cycle: ")
    assert "memory_lake.ingest.merge" in problems[1] and "memory_lake.maintain" in problems[1]


def test_prefect_and_flows_are_caught(tmp_path):
    base = broken_copy(tmp_path, "observe/runs.py", "def late():\n    import prefect\n    from flows.nightly import nightly")
    assert [p.split(": ", 2)[2] for p in layout_violations(base)] == [
        "memory_lake never imports prefect", "only memory_lake/cli imports flows"]


def long_modules(base: Path = PACKAGE) -> list[str]:
    """Every module over MAX_MODULE_LINES, with its length."""
    return [f"{path.relative_to(base.parent)}: {n} lines" for path in sorted(base.rglob("*.py"))
            if "__pycache__" not in path.parts and (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES]


def test_every_module_is_short_enough_to_read():
    assert long_modules() == []


def test_a_long_module_is_caught(tmp_path):
    base = broken_copy(tmp_path, "maintain/tiers.py", "\n" * MAX_MODULE_LINES)
    assert [p.split(": ")[0] for p in long_modules(base)] == ["memory_lake/maintain/tiers.py"]


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
