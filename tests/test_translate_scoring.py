"""The linker's batch scoring: shortlists and coverage, checked against their plain definitions."""

from __future__ import annotations

import importlib
import json
import random
from typing import TYPE_CHECKING

import numpy as np
import pytest
from conftest import FIXTURES

from pipeline.folding.translate import EnglishIndex
from pipeline.folding.translate.lexicon import shipped
from pipeline.text.normalize import text_hash

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from pipeline.folding.translate.index import Queries
    from pipeline.folding.translate.lexicon import Lexicon

index_module = importlib.import_module("pipeline.folding.translate.index")
scoring_module = importlib.import_module("pipeline.folding.translate.scoring")

_SAMPLE = FIXTURES / "language" / "held-out-sample.jsonl"


@pytest.fixture(scope="module")
def sample() -> tuple[EnglishIndex, list[tuple[str, str]]]:
    """An index of the held-out sample's English texts, and its translations."""
    rows = [json.loads(line) for line in _SAMPLE.read_text(encoding="utf-8").splitlines()]
    english = {text_hash(row["text"]): row["text"] for row in rows if row["lang"] == "en"}
    foreign = [(row["text"], row["lang"]) for row in rows if row["lang"] != "en"]
    return EnglishIndex(english), foreign


def _best_by_sorting(cosine: NDArray[np.float32], count: int) -> list[list[int]]:
    """_best() by its definition: each column sorted, highest first, then lowest row."""
    return [
        sorted((row for row in range(len(column)) if column[row] > 0), key=lambda r: -column[r])[
            :count
        ]
        for column in cosine.T.tolist()
    ]


@pytest.mark.parametrize("texts", [1, 19, 20, 21, 255, 256, 257, 700, 3000])
def test_best_is_each_column_sorted(texts: int) -> None:
    """_best() keeps each column's best rows, ties by row, above 0: with many equal values."""
    rng = np.random.default_rng(texts)
    # Few distinct values: ties everywhere, across the blocks and inside them.
    values = np.asarray([0.0, 0.0, 0.1, 0.25, 0.5, 0.75, 1.0], dtype=np.float32)
    cosine = values[rng.integers(0, len(values), (texts, 40))]
    # And columns of distinct values: the floor must not pass a column's COUNT-th best.
    cosine[:, 20:] = rng.random((texts, 20), dtype=np.float32)
    cosine[:, 0] = 0.0  # a translation that shares no term with any text
    cosine[:, 1] = 0.5  # one where every text ties
    cosine[-1, 2] = 2.0  # the best in the rows past the last whole round of blocks
    for count in (1, 3, 20):
        assert scoring_module._best(cosine, count) == _best_by_sorting(cosine, count)


def test_shortlists_are_the_cosines_term_by_term(
    sample: tuple[EnglishIndex, list[tuple[str, str]]],
) -> None:
    """The product text by text gives the bits of the sums taken term by term, in term order."""
    index, foreign = sample
    queries = index.queries(foreign[:300], shipped())
    rows = list(range(0, 300, 3))
    bags = queries.bags[np.asarray(rows)]
    # Term by term: each term's texts get its product with every query, in term order.
    by_term = index.vectors.toarray().T
    cosine = np.zeros((len(index), len(rows)), dtype=np.float32)
    dense = bags.astype(np.float32).toarray()
    for term in np.unique(bags.indices).tolist():
        cosine += by_term[term][:, None] * dense[:, term][None, :]
    assert index.shortlists(queries, 20, rows) == _best_by_sorting(cosine, 20)


def test_shortlists_of_several_batches_in_blocks_are_each_batch_s(
    sample: tuple[EnglishIndex, list[tuple[str, str]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two batches' shortlists in one product, the texts in blocks of any size: the same lists.

    A block's best of each query, then the best of the blocks': the same rows in the same
    order (value, then row) as the whole matrix's, and the same as each batch's alone.
    """
    index, foreign = sample
    first, second = (
        index.queries(foreign[:120], shipped()),
        index.queries(foreign[120:300], shipped()),
    )
    first_rows, second_rows = list(range(0, 120, 2)), list(range(1, 180, 3))
    alone = index.shortlists(first, 20, first_rows) + index.shortlists(second, 20, second_rows)
    assert sum(map(len, alone)) > 20 * len(alone) / 2
    for cells in (1, 5_000, 1 << 22):
        monkeypatch.setattr(index_module, "_COSINE_CELLS", cells)
        together = index.shortlists([(first, first_rows), (second, second_rows)], 20)
        assert together == alone


def _pairs(queries: Queries, texts: int, seed: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Each query with a dozen random texts (some twice, some of no shared term)."""
    rng = random.Random(seed)
    pair_query = np.repeat(np.arange(queries.size, dtype=np.int64), 12)
    pair_doc = np.asarray([rng.randrange(texts) for _ in pair_query], dtype=np.int64)
    return pair_query, pair_doc


def test_coverage_in_parts_is_coverage_at_once(
    sample: tuple[EnglishIndex, list[tuple[str, str]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pairs taken a few at a time (a small table of texts) score the same bits."""
    index, foreign = sample
    queries = index.queries(foreign[:200], shipped())
    pair_query, pair_doc = _pairs(queries, len(index), 0)
    whole = index.coverage_many(queries, pair_query, pair_doc)
    for cells in (1, 50, 5_000):
        monkeypatch.setattr(scoring_module, "_HELD_CELLS", cells)
        index._reach = None
        assert index.coverage_many(queries, pair_query, pair_doc).tobytes() == whole.tobytes()
    assert np.count_nonzero(whole) > len(whole) / 4


def test_a_foreign_term_s_credit_is_its_best_option_in_any_order(
    sample: tuple[EnglishIndex, list[tuple[str, str]]],
) -> None:
    """Options best first (the first found is the best) or not: coverage() as defined."""
    index, foreign = sample
    lexicon = shipped()
    german = [(text, lang) for text, lang in foreign if lang == "de"][:40]
    # The same options, worst first: the best found is not the first found.
    rising: Lexicon = {"de": {feature: options[::-1] for feature, options in lexicon["de"].items()}}
    for table in (lexicon, rising):
        queries = index.queries(german, table)
        assert index._reach is None or index._reach[0] is not queries
        pair_query, pair_doc = _pairs(queries, len(index), 1)
        scores = index.coverage_many(queries, pair_query, pair_doc)
        assert index._reach is not None
        assert index._reach[1].descending == (table is lexicon)
        weighed = [
            index.weigh(index_module.foreign_terms(text, lang, table)) for text, lang in german
        ]
        expected = [
            index.coverage(doc, weighed[query])
            for query, doc in zip(pair_query.tolist(), pair_doc.tolist(), strict=True)
        ]
        assert scores.tolist() == pytest.approx(expected, rel=1e-12, abs=1e-15)
        assert np.count_nonzero(scores) > len(scores) / 4
