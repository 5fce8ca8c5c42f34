"""The ingest stage end to end: dedupe, re-runs, bad input, ambiguity, order independence."""

from __future__ import annotations

import os
import shutil
from dataclasses import fields
from typing import TYPE_CHECKING

import pyarrow as pa
import pytest
from conftest import RAW, SEEDS, data_files, rows
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline import ingest
from pipeline.folding.repair import repair
from pipeline.ingest import IngestKeywords, IngestOptions, Outcome
from pipeline.models import DateOrder, FileStatus
from pipeline.reading.sightings import RULING_TEXT
from pipeline.text.normalize import text_hash

if TYPE_CHECKING:
    from pathlib import Path

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01"


def _table(out: Path, name: str) -> list[dict[str, object]]:
    return rows(out, name)


def test_seeds_ingest_into_one_run(raw_copy: Path, out: Path) -> None:
    """The shipped raw folder: five files, 77 rulings, one warning for the unknown card."""
    report = ingest([raw_copy], out=out)
    assert (report.run, report.count(FileStatus.STORED), report.rulings_read) == (1, 5, 77)
    assert report.rejected == ()
    assert report.warnings == (
        (
            "003_4e428d287bba6602.txt: no card: the title is not a card name and no manifest "
            "or catalog names one"
        ),
    )
    rulings = _table(out, "rulings")
    assert len(rulings) == report.new_keys == 77
    stripped = [r for r in _table(out, "sightings") if r["repaired_from"]]
    assert [(r["source_path"], r["card"]) for r in stripped] == [
        ("000_3c6244a5804b91f0.txt", "The Tenth Doctor"),
        ("003_4e428d287bba6602.txt", None),
    ]
    assert all(
        "{X}" in str(r["text"]) for r in rulings if "in its mana cost, you must" in str(r["text"])
    )


def test_same_ruling_twice_is_one_key_with_two_sightings(tmp_path: Path, out: Path) -> None:
    """A file copied under another name adds sightings, not rulings."""
    raw = tmp_path / "raw"
    raw.mkdir()
    for name in ("a.txt", "b.txt"):
        shutil.copy(RAW / SEEDS[1], raw / name)
    report = ingest([raw], out=out)
    assert (report.rulings_read, report.new_keys, report.duplicates) == (26, 13, 13)
    assert {r["sightings"] for r in _table(out, "rulings")} == {2}
    assert len(_table(out, "sightings")) == 26


def test_a_repaired_copy_points_at_the_text_read_with_its_symbols() -> None:
    """A stripped copy read in the run of its ruling's text takes that text's place.

    Added to the dictionary again, the text was held twice: rows of one text in two groups
    (keys.codes), and a Parquet dictionary page with uninitialized bytes (commit.py).
    """
    full, stripped = "If it has {X} in its cost, choose 0.", "If it has  in its cost, choose 0."
    texts = pa.array([full, stripped]).dictionary_encode()
    table = pa.table(
        {
            "text": texts,
            "text_hash": [text_hash(full), text_hash(stripped)],
            "source_path": ["a.txt", "b.txt"],
            "position": pa.array([0, 0], pa.int64()),
            "repaired_from": pa.nulls(2, pa.string()),
            RULING_TEXT: texts,
        }
    )
    repaired, warnings = repair(table, [])
    assert warnings == []
    assert repaired["text_hash"].to_pylist() == [text_hash(full)] * 2
    ruling_text = repaired[RULING_TEXT].combine_chunks()
    assert isinstance(ruling_text, pa.DictionaryArray)
    assert ruling_text.dictionary.to_pylist() == [full, stripped]
    assert ruling_text.indices.to_pylist() == [0, 0]


def test_unchanged_reingest_records_nothing(raw_copy: Path, out: Path) -> None:
    """Same bytes again: files are skipped, no file is rewritten and no empty run recorded.

    An empty run would hide the last real changelog (`pipeline changelog` shows the last run).
    """
    ingest([raw_copy], out=out)
    before = data_files(out)
    report = ingest([raw_copy], out=out)
    assert (report.count(FileStatus.SKIPPED), report.rulings_read, report.stored) == (5, 0, False)
    assert data_files(out) == before
    assert [r["run"] for r in _table(out, "runs")] == [1]


def test_changed_file_is_read_again(raw_copy: Path, out: Path) -> None:
    """A file whose bytes changed is a new sighting; unchanged rulings keep their key."""
    ingest([raw_copy], out=out)
    seed = raw_copy / SEEDS[1]
    seed.write_text(seed.read_text(encoding="utf-8") + "\n\n2024-03-01\n\nA new ruling.\n", "utf-8")
    report = ingest([raw_copy], out=out)
    assert (report.count(FileStatus.STORED), report.rulings_read, report.new_keys) == (1, 14, 1)
    new = [r for r in _table(out, "rulings") if r["first_run"] == 2]
    assert [(r["card"], r["text"]) for r in new] == [("Rift Bolt", "A new ruling.")]
    assert {r["last_run"] for r in _table(out, "rulings") if r["card"] == "Rift Bolt"} == {2}


def test_bad_files_are_rejected_and_the_rest_stored(raw_copy: Path, out: Path) -> None:
    """Each bad file is named with its reason; the good ones are stored."""
    (raw_copy / "empty.txt").write_bytes(b"")
    (raw_copy / "image.png").write_bytes(PNG)
    (raw_copy / "headings.txt").write_text("Rulings\n\nSearch\n", encoding="utf-8")
    report = ingest([raw_copy], out=out)
    assert {(f.source_path, f.reason) for f in report.rejected} == {
        ("empty.txt", "empty file"),
        ("image.png", "binary file (control bytes in the first 8 KiB), not text"),
        ("headings.txt", "no known layout: no dated rulings and no prose paragraphs"),
    }
    assert report.count(FileStatus.STORED) == 5
    files = {r["source_path"]: r["status"] for r in _table(out, "files")}
    assert files["empty.txt"] == "rejected"


def test_strict_stores_nothing(raw_copy: Path, out: Path) -> None:
    """With strict, one rejection means the run stores nothing at all."""
    (raw_copy / "empty.txt").write_bytes(b"")
    report = ingest([raw_copy], out=out, strict=True)
    assert not report.stored
    assert not data_files(out)


def test_link_out_of_the_root_is_rejected(raw_copy: Path, out: Path, tmp_path: Path) -> None:
    """A symlink that escapes the raw root is not followed."""
    secret = tmp_path / "secret.txt"
    secret.write_text("Card\n\n2024-01-01\n\nSecret.\n", encoding="utf-8")
    (raw_copy / "link.txt").symlink_to(secret)
    report = ingest([raw_copy], out=out)
    assert [(f.source_path, f.reason) for f in report.rejected] == [
        ("link.txt", "the file (or a link to it) lies outside the raw root")
    ]


AMBIGUOUS = "Rift Bolt\n\n07/06/2013\n\nA ruling.\n\n02/02/2024\n\nAnother.\n"


def test_ambiguous_dates_stay_empty_and_are_reported(tmp_path: Path, out: Path) -> None:
    """No date decides the order and no hint is given: dates stay null, the file is named."""
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "amb.txt").write_text(AMBIGUOUS, encoding="utf-8")
    report = ingest([raw], out=out)
    assert report.ambiguous == ("amb.txt",)
    rows = [
        (r["date_printed"], r["effective_date"], r["date_ambiguous"])
        for r in _table(out, "sightings")
    ]
    assert [(p, d is None, a) for p, d, a in rows] == [
        ("07/06/2013", True, True),
        ("02/02/2024", False, False),
    ]


@pytest.mark.parametrize("via", ["manifest", "option"])
def test_date_order_hint_resolves_ambiguity(tmp_path: Path, out: Path, via: str) -> None:
    """The manifest's date_order or --date-order decides an undecided document."""
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "amb.txt").write_text(AMBIGUOUS, encoding="utf-8")
    if via == "manifest":
        (raw / "manifest.csv").write_text("path,date_order\namb.txt,mdy\n", encoding="utf-8")
    report = ingest([raw], out=out, date_order=DateOrder.MDY if via == "option" else None)
    assert report.ambiguous == ()
    dates = [str(r["effective_date"]) for r in _table(out, "sightings")]
    assert dates == ["2013-07-06", "2024-02-02"]


def test_future_and_invalid_dates_are_kept_and_warned(tmp_path: Path, out: Path) -> None:
    """A date in the future is kept; an impossible one stays printed with an empty date."""
    raw = tmp_path / "raw"
    raw.mkdir()
    text = "Rift Bolt\n\n19/03/2021\n\nA.\n\n31/02/2024\n\nB.\n\n01/01/2999\n\nC.\n"
    (raw / "d.txt").write_text(text, encoding="utf-8")
    report = ingest([raw], out=out)
    assert report.warnings == (
        "d.txt: invalid date '31/02/2024': kept as printed, date left empty",
        "d.txt: date '01/01/2999' is in the future; kept",
    )
    dates = [str(r["effective_date"]) for r in _table(out, "sightings")]
    assert dates == ["2021-03-19", "None", "2999-01-01"]


@pytest.mark.slow
@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(order=st.permutations(SEEDS))
def test_rulings_do_not_depend_on_input_order(
    tmp_path_factory: pytest.TempPathFactory, order: list[str]
) -> None:
    """Listing the same files in any order gives byte-identical rulings."""
    base = tmp_path_factory.mktemp("perm")
    reference = base / "ref"
    ingest([RAW / name for name in SEEDS], out=reference)
    permuted = base / "perm"
    ingest([RAW / name for name in order], out=permuted)
    segment = "rulings/000001.parquet"
    assert data_files(reference)[segment] == data_files(permuted)[segment]


def test_unchanged_stat_skips_without_reading(raw_copy: Path, out: Path) -> None:
    """Same size and mtime: skipped unread; --rehash reads and hashes every file anyway."""
    ingest([raw_copy], out=out)
    seed = raw_copy / SEEDS[1]
    before = seed.stat()
    text = seed.read_bytes()
    seed.write_bytes(text.replace(b"Rift Bolt", b"Rift Bol!"))  # same size, new bytes
    os.utime(seed, ns=(before.st_atime_ns, before.st_mtime_ns))
    report = ingest([raw_copy], out=out)
    assert report.count(FileStatus.SKIPPED) == 5  # trusted by its size and mtime
    report = ingest([raw_copy], out=out, rehash=True)
    assert [f.source_path for f in report.files if f.status is FileStatus.STORED] == [SEEDS[1]]


def test_touched_file_with_same_bytes_is_skipped(raw_copy: Path, out: Path) -> None:
    """A new mtime alone means a hash; the same bytes are still skipped."""
    ingest([raw_copy], out=out)
    os.utime(raw_copy / SEEDS[0], ns=(1, 1))
    report = ingest([raw_copy], out=out)
    assert report.count(FileStatus.SKIPPED) == 5


def test_keywords_are_the_options_fields() -> None:
    """ingest()'s keywords are IngestOptions' fields, of the same types: one list of knobs."""
    expected = {f.name: f.type for f in fields(IngestOptions)}
    annotations = IngestKeywords.__annotations__  # each a ForwardRef of its text
    assert {name: ref.__forward_arg__ for name, ref in annotations.items()} == expected
    assert IngestKeywords.__optional_keys__ == set(expected)


def test_options_and_keywords_are_the_same_run(raw_copy: Path, tmp_path: Path) -> None:
    """OPTIONS given as an object, or each as a keyword (those win), make the same run."""
    given = ingest([raw_copy], out=tmp_path / "a", options=IngestOptions(strict=True))
    assert given.outcome is Outcome.STORED
    (raw_copy / "bad.json").write_text("{not json", "utf-8")
    as_object = ingest([raw_copy], out=tmp_path / "a", options=IngestOptions(strict=True))
    as_keyword = ingest([raw_copy], out=tmp_path / "b", strict=True)
    overridden = ingest([raw_copy], out=tmp_path / "c", options=IngestOptions(strict=True),
                        strict=False)  # fmt: skip
    assert as_object.outcome is as_keyword.outcome is Outcome.STRICT
    assert overridden.outcome is Outcome.STORED
