"""Build `pipeline/text/data/profiles.tsv`: character n-gram counts of real printed card texts.

Counted on the MTGJSON 2022 sets outside `langeval.HELD_OUT` only, so that the held-out sets
measure the detector on text it never saw. Rows are `latin` (1- to 3-grams of words, with
their boundaries, per language in `language.LATIN` order) and `han` (Han characters and
pairs, Japanese then Chinese). An n-gram seen fewer than MIN_COUNT times in all is left out.
Deterministic: the same set files give the same bytes.

    python benchmarks/langprofile.py
"""

from __future__ import annotations

import collections
import sys

from langeval import ROOT, labelled_set, set_names

sys.path.insert(0, str(ROOT))

from pipeline.text.language import HAN_ONLY, LATIN, han_grams, latin_words, word_grams

OUT = ROOT / "pipeline" / "text" / "data" / "profiles.tsv"
MIN_COUNT = 10


def main() -> None:
    """Count the n-grams of the training sets and write the profile table."""
    codes = set_names("train")
    latin: dict[str, collections.Counter[str]] = {lang: collections.Counter() for lang in LATIN}
    han: dict[str, collections.Counter[str]] = {lang: collections.Counter() for lang in HAN_ONLY}
    for item in labelled_set(codes, seeds=False):
        if item.lang in latin:
            for word in latin_words(item.text):
                latin[item.lang].update(word_grams(word))
        elif item.lang in han:
            han[item.lang].update(han_grams(item.text))
    lines = [
        "# Character n-gram counts of printed card texts, MTGJSON 2022 sets " + " ".join(codes),
        "# built by benchmarks/langprofile.py; columns: table, n-gram, count per language",
    ]
    for table, counters, languages in (("latin", latin, LATIN), ("han", han, HAN_ONLY)):
        grams = sorted(set().union(*counters.values()))
        for gram in grams:
            values = [counters[lang][gram] for lang in languages]
            if sum(values) >= MIN_COUNT:
                lines.append("\t".join([table, gram, *map(str, values)]))
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {len(lines) - 2} n-grams to {OUT}")


if __name__ == "__main__":
    main()
