"""docs/dataset.md against the files a run writes, and README's "Reading it" examples run."""

from __future__ import annotations

import os
import re
import shutil
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import ROOT

from pipeline import ingest
from pipeline.schema import PARTITIONED, TABLES
from pipeline.storage import layout

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

README = (ROOT / "README.md").read_text(encoding="utf-8")
DICTIONARY = (ROOT / "docs" / "dataset.md").read_text(encoding="utf-8")
_TYPES = {"string": "string", "date32": "date32[day]", "int64": "int64", "bool": "bool",
          "float64": "double"}  # fmt: skip
# The tables docs/dataset.md documents as a table of columns; the others as a sentence listing them.
_TABULATED = ("rulings", "sightings", "changes", "state")


def _section(table: str) -> str:
    """docs/dataset.md's section of TABLE: from its `### `normalized/TABLE…` heading to the next."""
    start = DICTIONARY.index(f"### `normalized/{table}")
    ends = [DICTIONARY.find(mark, start + 1) for mark in ("\n### ", "\n## ")]
    return DICTIONARY[start : min((end for end in ends if end != -1), default=len(DICTIONARY))]


def _documented(table: str, types: dict[str, tuple[str, bool]]) -> list[tuple[str, str, bool]]:
    """(column, type, nullable) of each row of TABLE's column table, in docs/dataset.md's order.

    A row with no type ("as in rulings", "the key it is stored under") takes the type
    TYPES (the rulings' rows) gives its columns.
    """
    rows = []
    for line in _section(table).splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not cells[0].startswith("`"):  # column, type, meaning
            continue
        for column in re.findall(r"`([^`]+)`", cells[0]):
            if cells[1]:
                kind, *null = (part.strip() for part in cells[1].split(","))
                rows.append((column, _TYPES[kind], null == ["null"]))
            else:
                rows.append((column, *types[column]))
    return rows


def _on_disk(out: Path, table: str) -> list[tuple[str, str, bool]]:
    """(column, type, nullable) of TABLE's files, `run` first for a folder of parts."""
    found = layout.path_of(out, table)
    path = next(iter(sorted(found.rglob("*.parquet")))) if found.is_dir() else found
    schema = pq.read_schema(path)
    fields: list[Any] = list(schema)
    if table in PARTITIONED:  # `run` lives in the folder name: readers put it first
        fields.insert(0, pa.field("run", pa.int64(), nullable=False))
    if table == "sightings":  # nullable in the files for the carried rows alone (carry.py)
        expanded = TABLES["sightings"]
        fields = [f.with_nullable(expanded.field(f.name).nullable) if f.name in expanded.names
                  else f for f in fields]  # fmt: skip
    return [(f.name, _plain(f.type), f.nullable) for f in fields]


def _plain(kind: pa.DataType) -> str:
    """A type's name, a dictionary-encoded string read as the string it decodes to."""
    return str(kind.value_type) if pa.types.is_dictionary(kind) else str(kind)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two runs of the seeds, the first with an MTGJSON file: every table holds rows."""
    base = tmp_path_factory.mktemp("dictionary")
    out, raw, mtgjson = base / "normalized", ROOT / "raw", base / "mtgjson"
    mtgjson.mkdir()
    shutil.copy(ROOT / "tests" / "fixtures" / "raw" / "mtgjson-tsp-rift-bolt.json", mtgjson)
    ingest([raw, mtgjson], out=out)
    ingest([raw], out=out, rehash=True)
    return out


@pytest.mark.parametrize("table", _TABULATED)
def test_column_tables_match_the_files(dataset: Path, table: str) -> None:
    """Every column, its type, nullability and place, as docs/dataset.md's table gives them."""
    types = {c: (t, n) for c, t, n in _documented("rulings", {})}
    assert _documented(table, types) == _on_disk(dataset, table)


@pytest.mark.parametrize("table", sorted(set(TABLES) - set(_TABULATED)))
def test_column_sentences_match_the_files(dataset: Path, table: str) -> None:
    """A table documented in a sentence names every column of its files, in their order."""
    names = [name for name, _, _ in _on_disk(dataset, table)]
    mentioned = re.findall(r"`([a-z_0-9]+)`", _section(table))
    first = list(dict.fromkeys(m for m in mentioned if m in names))
    assert first == names


def _examples() -> Iterator[str]:
    """The Python blocks of "Reading it: five lines each"."""
    start = README.index("### Reading it")
    section = README[start : README.index("\n## ", start)]
    yield from re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)


@pytest.mark.parametrize("code", list(_examples()), ids=["pandas", "duckdb", "polars"])
def test_reading_it_examples_run(dataset: Path, code: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each example of README's "Reading it" runs as written, beside the dataset."""
    monkeypatch.chdir(dataset.parent)
    assert os.path.isdir("normalized")  # noqa: PTH112 - the examples' own relative path
    exec(compile(code, "README.md", "exec"), {})  # noqa: S102 - our README's own code
