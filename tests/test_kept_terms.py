"""The English texts' terms a run keeps for the next (pipeline.storage.terms)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline import ingest
from pipeline.folding.translate import terms as terms_module
from pipeline.folding.translate.terms import TermTable, english_terms, term_table
from pipeline.storage.terms import CACHE, FILE, KeptTerms

if TYPE_CHECKING:
    from collections.abc import Sequence

    import pytest

RAW = Path(__file__).resolve().parents[1] / "raw"
SEEDS = sorted(p.name for p in RAW.glob("0*.txt"))
TEXTS = {
    "a": "Exiling a card with suspend isn't casting that card.",
    "b": "If Rift Bolt is countered, it goes to its owner's graveyard.",
    "c": "",
}


def _same(first: TermTable, second: TermTable) -> bool:
    return (
        first.hashes == second.hashes
        and first.vocabulary == second.vocabulary
        and np.array_equal(first.ids, second.ids)
        and np.array_equal(first.offsets, second.offsets)
        and np.array_equal(first.counts, second.counts)
        and np.array_equal(first.named, second.named)
    )


def test_kept_terms_round_trip(tmp_path: Path) -> None:
    """What a run keeps is what the next one loads, to the term; an empty text included."""
    table = term_table(TEXTS)
    assert table.terms(0) == english_terms(TEXTS["a"])[0]
    assert table.offsets[-1] == table.offsets[-2]  # "c" holds no term
    kept = KeptTerms(tmp_path)
    assert kept.load() is None
    kept.save(table)
    loaded = kept.load()
    assert loaded is not None
    assert _same(loaded, table)
    assert sorted(p.name for p in (tmp_path / CACHE).iterdir()) == [FILE]


def test_a_term_is_one_string_however_many_texts_hold_it(tmp_path: Path) -> None:
    """Built or loaded, a table spells each distinct term once: its vocabulary, in order."""
    texts = {f"{n:02d}": f"Exiling a card with suspend isn't casting card {n}." for n in range(20)}
    texts["ü"] = "Über-Exiling — a card with suspend."  # not ASCII: taken one by one
    table = term_table(texts)
    kept = KeptTerms(tmp_path)
    kept.save(table)
    loaded = kept.load()
    assert loaded is not None
    assert _same(loaded, table)
    every = [term for n in range(len(texts)) for term in table.terms(n)]
    assert len(every) > 4 * len(table.vocabulary)
    assert table.vocabulary == sorted(set(every))
    for n, text_hash in enumerate(table.hashes):
        assert table.terms(n) == english_terms(texts[text_hash])[0]


def test_terms_taken_on_workers_are_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """Many texts that are not ASCII are taken on forked workers: the same table."""
    monkeypatch.setattr(terms_module, "PARALLEL_MIN", 1)
    texts = {
        f"{n:03d}": f"If {{T}} Rift Bolt {n} is exiled, a card of {n % 7} is cast{'…' * (n % 2)}."
        for n in range(60)
    }
    texts |= TEXTS
    alone, forked = term_table(texts), term_table(texts, workers=2)
    assert _same(forked, alone)
    half = term_table(dict(list(texts.items())[:30]))
    assert _same(term_table(texts, half, workers=2), alone)
    for n, text_hash in enumerate(alone.hashes):
        found = english_terms(texts[text_hash])
        first, last = alone.offsets[n], alone.offsets[n + 1]
        assert alone.terms(n) == found[0]
        assert alone.counts[first:last].tolist() == found[1]
        assert alone.named[first:last].tolist() == found[2]


def _texts_read(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts whose terms are taken from now on, as a list."""
    read: list[str] = []
    original = terms_module._taken

    def counted(texts: Sequence[str], workers: int) -> Any:
        read.extend(texts)
        return original(texts, workers)

    monkeypatch.setattr(terms_module, "_taken", counted)
    return read


def test_known_terms_are_not_taken_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the texts a kept table lacks are read; the table is the one made from scratch."""
    known = term_table({"a": TEXTS["a"]})
    read = _texts_read(monkeypatch)
    made = term_table(TEXTS, known)
    assert read == [TEXTS["b"], TEXTS["c"]]
    assert _same(made, term_table(TEXTS))


def test_terms_kept_as_plain_strings_are_read_too(tmp_path: Path) -> None:
    """A file whose terms are plain strings (as earlier versions wrote it) loads the same."""
    table = term_table(TEXTS)
    kept = KeptTerms(tmp_path)
    kept.save(table)
    written = pq.read_table(kept.path)
    assert pa.types.is_dictionary(written["terms"].type.value_type)
    plain = written.set_column(
        written.schema.get_field_index("terms"),
        "terms",
        written["terms"].cast(pa.list_(pa.string())),
    )
    pq.write_table(plain, kept.path)
    loaded = kept.load()
    assert loaded is not None
    assert _same(loaded, table)


def test_a_damaged_or_other_version_cache_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Garbage, or terms of another version, load as nothing: the run takes them again."""
    kept = KeptTerms(tmp_path)
    kept.save(term_table(TEXTS))
    monkeypatch.setattr("pipeline.storage.terms.TERMS_VERSION", 2)
    assert kept.load() is None
    monkeypatch.undo()
    assert kept.load() is not None
    kept.path.write_bytes(b"PAR1 not a parquet file")
    assert kept.load() is None


def _raw(folder: Path, names: list[str]) -> Path:
    folder.mkdir()
    shutil.copy(RAW / "manifest.csv", folder)
    for name in names:
        shutil.copy(RAW / name, folder)
    return folder


def test_a_run_keeps_the_terms_and_the_next_links_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seeds 000-001, then 002 (German): the second run links with the kept terms, alike.

    The first run keeps the terms of its English texts; the second reads only the texts
    it adds, and its links are those of the same runs with nothing kept.
    """
    first = _raw(tmp_path / "first", SEEDS[:2])
    second = _raw(tmp_path / "second", SEEDS[2:3])
    out, bare = tmp_path / "normalized", tmp_path / "bare"
    ingest([first], out=out, workers=1)
    kept = KeptTerms(out).load()
    assert kept is not None
    english = pq.read_table(out / "rulings", columns=["text_hash", "lang"]).to_pylist()
    assert kept.hashes == sorted({r["text_hash"] for r in english if r["lang"] == "en"})
    read = _texts_read(monkeypatch)
    ingest([second], out=out, workers=1)
    assert read  # 002's English texts, and no more
    assert len(read) < len(KeptTerms(out).load() or ())
    for raw in (first, second):
        ingest([raw], out=bare, workers=1)
        shutil.rmtree(bare / CACHE)
    linked = pq.read_table(out / "translations.parquet")
    assert linked.num_rows == 6
    assert linked.equals(pq.read_table(bare / "translations.parquet"))
