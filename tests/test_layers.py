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
