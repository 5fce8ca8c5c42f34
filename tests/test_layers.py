"""The package follows the data: no stage imports one that comes after it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "pipeline"
# The stages in the order the data goes through them (docs/architecture.md).
STAGES = ["fetching", "text", "reading", "folding", "storage", "diffing", "publishing"]
# Shared vocabulary any stage may import: errors, the row and table shapes, Arrow helpers, and
# the bounded decoder both the fetch and the reader decode untrusted bytes with.
FOUNDATION = {"errors", "models", "limits", "schema", "keys", "columns", "interrupts", "decoding"}
# What runs the stages: the ingest and update orchestrations, the command line around them, the
# process set-up the package makes on import (Arrow's allocator).
SHELL = {"__init__", "__main__", "ingest", "update", "rebuild", "cli", "cli_options", "allocator"}


def _rank(module: str) -> int:
    """Where a module under pipeline/ stands: foundation 0, the stages 1-7, the shell 8."""
    first = module.split(".", maxsplit=1)[0]
    if first in FOUNDATION:
        return 0
    if first in SHELL:
        return len(STAGES) + 1
    return STAGES.index(first) + 1


def _modules() -> list[tuple[str, Path]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        found.append((".".join(parts), path))
    return found


def _imports(path: Path) -> set[str]:
    """The pipeline modules PATH imports, as names under pipeline/."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "pipeline":
                names |= {alias.name for alias in node.names}
            elif node.module.startswith("pipeline."):
                names.add(node.module.removeprefix("pipeline."))
        elif isinstance(node, ast.Import):
            names |= {a.name.removeprefix("pipeline.") for a in node.names
                      if a.name.startswith("pipeline.")}  # fmt: skip
    return names


def test_every_module_has_a_place() -> None:
    """Each module is in a stage, the foundation or the shell; each stage is a package."""
    places = FOUNDATION | SHELL | set(STAGES)
    for module, _ in _modules():
        assert module.split(".", maxsplit=1)[0] in places, module
    for stage in STAGES:
        assert (PACKAGE / stage / "__init__.py").is_file(), stage


@pytest.mark.parametrize(("module", "path"), _modules(), ids=[m for m, _ in _modules()])
def test_no_stage_imports_a_later_one(module: str, path: Path) -> None:
    """A module imports the foundation, its own stage and earlier ones; never a later one."""
    later = sorted(name for name in _imports(path) if _rank(name) > _rank(module))
    assert later == [], f"{module} imports {later}"


def test_each_stage_says_what_it_holds_and_may_import() -> None:
    """Each stage's __init__ is a docstring: what it holds, then what it may import."""
    for stage in STAGES:
        doc = ast.get_docstring(ast.parse((PACKAGE / stage / "__init__.py").read_text()))
        assert doc is not None, stage
        holds, imports = doc.split("\n\n")
        # Numbered from 0: fetching, stage 0, comes before text (1) and reading (2).
        assert holds.startswith(f"Stage {STAGES.index(stage)}, {stage}:"), stage
        assert "import" in imports.lower(), stage


def test_every_module_is_in_the_architecture() -> None:
    """docs/architecture.md's "Every module" table names each module of the package."""
    doc = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    table = doc.split("## Every module", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"^\| `([\w/]+\.py)` \|", table, flags=re.MULTILINE))
    modules = {
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if path.name != "__init__.py" or path.parent == PACKAGE
    }
    assert sorted(modules - listed) == []
    assert sorted(listed - modules) == []


# Storage's own modules in three layers, bottom first: each imports its own layer and those
# below at run time (a type needed the other way is imported under TYPE_CHECKING alone).
STORAGE_LAYERS = [
    {"kinds", "layout", "lock"},  # how each table is stored, where its files are, reading one
    {"carry", "texts", "segments", "load", "index", "selection", "manifest", "terms"},  # encodings
    {"store", "part", "commit", "upgrade", "verify"},  # versions: read, written, checked
]
STORAGE = PACKAGE / "storage"
_FOR_TYPES = {"TYPE_CHECKING", "typing.TYPE_CHECKING"}  # an `if` whose body is for mypy alone


def _storage_modules() -> list[str]:
    return sorted(p.stem for p in STORAGE.glob("*.py") if p.stem != "__init__")


def _layer(module: str) -> int:
    return next(at for at, layer in enumerate(STORAGE_LAYERS) if module in layer)


def _storage_imports(path: Path) -> set[str]:
    """The modules of pipeline/storage that PATH imports at run time (not for type checking)."""
    names: set[str] = set()
    pending: list[ast.AST] = [ast.parse(path.read_text(encoding="utf-8"))]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.If) and ast.unparse(node.test) in _FOR_TYPES:
            pending.extend(node.orelse)
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "pipeline.storage":
                names |= {alias.name for alias in node.names}
            elif node.module.startswith("pipeline.storage."):
                names.add(node.module.split(".")[2])
        elif isinstance(node, ast.Import):
            names |= {a.name.split(".")[2] for a in node.names
                      if a.name.startswith("pipeline.storage.")}  # fmt: skip
        pending.extend(ast.iter_child_nodes(node))
    return names


def _storage_graph() -> dict[str, set[str]]:
    return {m: _storage_imports(STORAGE / f"{m}.py") - {m} for m in _storage_modules()}


def test_every_storage_module_has_a_layer() -> None:
    """Each module of pipeline/storage is in exactly one of STORAGE_LAYERS."""
    listed = [m for layer in STORAGE_LAYERS for m in layer]
    assert sorted(listed) == _storage_modules()


@pytest.mark.parametrize("module", _storage_modules())
def test_no_storage_module_imports_a_higher_layer(module: str) -> None:
    """Layout and file reading at the bottom, the encodings above, versions on top."""
    higher = sorted(m for m in _storage_graph()[module] if _layer(m) > _layer(module))
    assert higher == [], f"storage.{module} imports {higher}"


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    """A cycle of GRAPH (module → the modules it imports) as a path, or [] if none."""
    done: set[str] = set()

    def visit(module: str, path: list[str]) -> list[str]:
        if module in path:
            return [*path[path.index(module) :], module]
        if module in done:
            return []
        for name in sorted(graph.get(module, ())):
            found = visit(name, [*path, module])
            if found:
                return found
        done.add(module)
        return []

    for module in sorted(graph):
        found = visit(module, [])
        if found:
            return found
    return []


def test_no_cycle_among_storage_modules() -> None:
    """No storage module imports, through others, one that imports it (at run time)."""
    assert _cycle({"store": {"index"}, "index": {"store"}}) == ["index", "store", "index"]
    assert _cycle(_storage_graph()) == []
