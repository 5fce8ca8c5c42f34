"""The code the benchmarks time: each piece a function that child.py runs in a fresh process.

measure.job() names one of these functions and its arguments, str and int only: they travel
to the child as JSON. What the functions need is imported with this module, before the
clock starts, so the figures are the pipeline's work.
"""

from __future__ import annotations

# The package first, as in the command line: it chooses Arrow's allocator before pyarrow
# loads (pipeline/allocator.py), which importing pandas first would do.
from pipeline import ingest

# isort: split
import contextlib
from pathlib import Path

# Imported though nothing here names it: pyarrow imports pandas (0.2 s) the first time it
# converts a Python list, and that is not the pipeline's work.
import pandas as pd  # noqa: F401
import pyarrow.parquet as pq
from langdetect import DetectorFactory, detect
from langdetect.lang_detect_exception import LangDetectException

from pipeline.models import SourceHints
from pipeline.publishing.dataset import load_changeset
from pipeline.publishing.render import render_json, render_markdown
from pipeline.reading import read

__all__ = [
    "changelog",
    "ingest_as_cli",
    "ingest_linked",
    "ingest_unlinked",
    "langdetect_each",
    "read_floor",
]


def ingest_unlinked(raw: str, out: str) -> None:
    """A first ingest of RAW into OUT with the linking of translations put off.

    The throughput figures time this: the synthetic corpus holds 10% made-up foreign
    rulings, each linked among every English ruling (bench.py times that apart).
    """
    ingest([Path(raw)], out=Path(out), link_translations=False)


def ingest_linked(raw: str, out: str) -> None:
    """An ingest of RAW into OUT as the library makes it: translations linked."""
    ingest([Path(raw)], out=Path(out))


def ingest_as_cli(raw: str, out: str) -> None:
    """What `pipeline ingest RAW --out OUT` runs: a daily job is this command.

    Every file is read in a worker process (isolated: a hostile file costs its worker), and
    translations are linked.
    """
    ingest([Path(raw)], out=Path(out), isolate=True)


def read_floor(raw: str) -> None:
    """Read, decode and hash every file under RAW: the floor under any ingest of it."""
    for root, files in read.discover([Path(raw)], None):
        for file in files:
            read.to_document(file.name, read.read_bytes(file, root), SourceHints())


def langdetect_each(rulings: str, sample: int) -> None:
    """The naive way: langdetect on each of the first SAMPLE texts of the rulings table."""
    DetectorFactory.seed = 0
    texts = pq.read_table(rulings, columns=["text"])["text"].to_pylist()[:sample]
    for text in texts:
        # A text without letters has no language: the naive way goes on to the next.
        with contextlib.suppress(LangDetectException):
            detect(text)


def changelog(out: str) -> None:
    """The Markdown and JSON changelogs of the dataset in OUT's last run."""
    changes = load_changeset(Path(out))
    render_markdown(changes)
    render_json(changes)
