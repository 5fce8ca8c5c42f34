"""The bilingual lexicon: learning it from parallel texts (Dice), saving and loading it."""

from __future__ import annotations

import gzip
import io
import json
from collections import Counter, defaultdict
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from pipeline.errors import StoreError
from pipeline.folding.translate.features import prepare, words

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from pipeline.folding.translate.parallel import Pair

# Foreign feature -> English features with their weights, per language.
Lexicon = dict[str, dict[str, tuple[tuple[str, float], ...]]]
LEXICON_PATH = Path(__file__).with_name("lexicon.json.gz")
FORMAT_VERSION = 1
# A translation a feature keeps: among its TOP best, Dice at least MIN_DICE, seen MIN_PAIRS
# times together (once is chance).
TOP = 3
MIN_DICE = 0.1
MIN_PAIRS = 2
# IBM Model 1: EM iterations, and the least probability and weight worth keeping.
ITERATIONS = 8
MIN_PROBABILITY = 0.01
MIN_WEIGHT = 0.05


def segments(pairs: Iterable[Pair]) -> dict[str, list[tuple[str, str]]]:
    """Aligned (English, foreign) segments per language: lines when both have as many."""
    found: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for pair in pairs:
        english, foreign = pair.english.split("\n"), pair.foreign.split("\n")
        if len(english) == len(foreign):
            found[pair.lang] += zip(english, foreign, strict=True)
        else:
            found[pair.lang].append((pair.english, pair.foreign))
    return dict(found)


def learn(
    aligned: Iterable[tuple[str, str]], lang: str
) -> dict[str, tuple[tuple[str, float], ...]]:
    """Each foreign feature's likeliest English features by Dice co-occurrence."""
    english_count: Counter[str] = Counter()
    foreign_count: Counter[str] = Counter()
    together: Counter[tuple[str, str]] = Counter()
    for english, foreign in aligned:
        english_set = set(words(prepare(english), "en"))
        foreign_set = set(words(prepare(foreign), lang))
        english_count.update(english_set)
        foreign_count.update(foreign_set)
        together.update((f, e) for f in foreign_set for e in english_set)
    best: dict[str, list[tuple[str, float]]] = defaultdict(list)
    for (f, e), count in together.items():
        if count < MIN_PAIRS:
            continue
        dice = 2 * count / (foreign_count[f] + english_count[e])
        if dice >= MIN_DICE:
            best[f].append((e, round(dice, 3)))
    return {
        f: tuple(sorted(options, key=lambda option: (-option[1], option[0]))[:TOP])
        for f, options in sorted(best.items())
    }


def _model1(
    sentences: list[tuple[list[int], list[int]]], sources: int
) -> dict[tuple[int, int], float]:
    """IBM Model 1 t(target | source) by EM over (source ids, target ids) sentence pairs.

    Source id 0 is NULL (added to every sentence). Vectorised: one row per (sentence,
    target, source) triple, expectations and counts summed with numpy's bincount.
    """
    group_of: list[int] = []
    pair_target: list[int] = []
    pair_source: list[int] = []
    group = 0
    for source_ids, target_ids in sentences:
        with_null = [0, *source_ids]
        for target in target_ids:
            group_of += [group] * len(with_null)
            pair_target += [target] * len(with_null)
            pair_source += with_null
            group += 1
    targets = np.asarray(pair_target, dtype=np.int64)
    source_of = np.asarray(pair_source, dtype=np.int64)
    groups = np.asarray(group_of, dtype=np.int64)
    keys, pair = np.unique(targets * sources + source_of, return_inverse=True)
    key_source = keys % sources
    t = np.ones(len(keys))
    for _ in range(ITERATIONS):
        p = t[pair]
        posterior = p / np.bincount(groups, weights=p)[groups]
        counts = np.bincount(pair, weights=posterior, minlength=len(keys))
        t = counts / np.bincount(key_source, weights=counts)[key_source]
    return {
        (int(key // sources), int(key % sources)): float(value)
        for key, value in zip(keys, t, strict=True)
        if value >= MIN_PROBABILITY
    }


def learn_model1(
    aligned: Iterable[tuple[str, str]], lang: str
) -> dict[str, tuple[tuple[str, float], ...]]:
    """Each foreign feature's English features, by IBM Model 1 trained both ways.

    A pair's weight is the geometric mean of t(english | foreign) and t(foreign | english):
    high only when each word is the other's likely translation.
    """
    english_ids: dict[str, int] = {"": 0}
    foreign_ids: dict[str, int] = {"": 0}
    sentences: list[tuple[list[int], list[int]]] = []
    for english, foreign in aligned:
        e = [
            english_ids.setdefault(w, len(english_ids))
            for w in sorted(set(words(prepare(english), "en")))
        ]
        f = [
            foreign_ids.setdefault(w, len(foreign_ids))
            for w in sorted(set(words(prepare(foreign), lang)))
        ]
        if e and f:
            sentences.append((f, e))
    english_given = _model1(sentences, len(foreign_ids))
    foreign_given = _model1([(e, f) for f, e in sentences], len(english_ids))
    english_names = sorted(english_ids, key=english_ids.__getitem__)
    foreign_names = sorted(foreign_ids, key=foreign_ids.__getitem__)
    best: dict[str, list[tuple[str, float]]] = defaultdict(list)
    for (english_id, foreign_id), forward in english_given.items():
        backward = foreign_given.get((foreign_id, english_id), 0.0)
        weight = (forward * backward) ** 0.5
        if english_id and foreign_id and weight >= MIN_WEIGHT:
            best[foreign_names[foreign_id]].append((english_names[english_id], round(weight, 3)))
    return {
        f: tuple(sorted(options, key=lambda option: (-option[1], option[0]))[:TOP])
        for f, options in sorted(best.items())
    }


def build(pairs: Iterable[Pair], method: str = "model1") -> Lexicon:
    """The lexicon of every language the pairs hold, by METHOD ("model1" or "dice")."""
    learner = learn_model1 if method == "model1" else learn
    return {lang: learner(aligned, lang) for lang, aligned in sorted(segments(pairs).items())}


def dumps(lexicon: Lexicon) -> bytes:
    """Deterministic gzip'd JSON of a lexicon (sorted keys, no timestamp in the header)."""
    document = {
        "version": FORMAT_VERSION,
        "languages": {
            lang: {f: [[e, w] for e, w in options] for f, options in sorted(table.items())}
            for lang, table in sorted(lexicon.items())
        },
    }
    text = json.dumps(document, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", compresslevel=9, mtime=0) as handle:
        handle.write(text.encode("utf-8"))
    return buffer.getvalue()


def loads(data: bytes, source: str) -> Lexicon:
    """A lexicon from dumps() bytes; SOURCE names the file in errors."""
    try:
        document = json.loads(gzip.decompress(data))
        version = document["version"]
        languages: Mapping[str, Mapping[str, list[list[object]]]] = document["languages"]
    except (OSError, ValueError, KeyError, TypeError, EOFError) as error:
        msg = f"{source}: not a lexicon file ({type(error).__name__}: {error})"
        raise StoreError(msg) from error
    if version != FORMAT_VERSION:
        msg = f"{source}: lexicon format {version}, this pipeline reads {FORMAT_VERSION}"
        raise StoreError(msg)
    # One object per distinct English feature and weight: the languages' options share them.
    features: dict[str, str] = {}
    weights: dict[float, float] = {}

    def option(english: object, weight: object) -> tuple[str, float]:
        text, value = str(english), float(str(weight))
        return features.setdefault(text, text), weights.setdefault(value, value)

    return {
        lang: {f: tuple(option(e, w) for e, w in options) for f, options in table.items()}
        for lang, table in languages.items()
    }


@cache
def shipped() -> Lexicon:
    """The lexicon shipped inside the package (`python -m pipeline.folding.translate.build`)."""
    try:
        data = LEXICON_PATH.read_bytes()
    except OSError as error:
        msg = f"{LEXICON_PATH}: cannot read the lexicon ({error.strerror})"
        raise StoreError(msg) from error
    return loads(data, str(LEXICON_PATH))
