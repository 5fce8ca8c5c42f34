"""Rebuild the shipped lexicon from MTGJSON set files.

Run as `python -m pipeline.folding.translate.build` (or `make lexicon`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pipeline.errors import PipelineError
from pipeline.folding.translate.lexicon import LEXICON_PATH, build, dumps
from pipeline.folding.translate.parallel import DEV_SETS, TEST_SETS, read_pairs

DEFAULT_SETS = Path(__file__).resolve().parents[4] / "shared" / "realdata" / "mtgjson-2022"


def main(argv: list[str] | None = None) -> int:
    """Learn the lexicon from every set file but the held-out ones, and write it."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sets", type=Path, default=DEFAULT_SETS, help="folder of set files")
    parser.add_argument("--out", type=Path, default=LEXICON_PATH, help="lexicon file to write")
    parser.add_argument(
        "--method", choices=("model1", "dice"), default="model1", help="how words are paired"
    )
    options = parser.parse_args(argv)
    held_out = {f"{code}.json" for code in (*DEV_SETS, *TEST_SETS)}
    paths = [path for path in options.sets.glob("*.json") if path.name not in held_out]
    if not paths:
        sys.stderr.write(f"{options.sets}: no MTGJSON set files (*.json) to learn from\n")
        return 2
    try:
        pairs = read_pairs(paths)
    except PipelineError as error:
        sys.stderr.write(f"{error}\n")
        return 1
    data = dumps(build(pairs, options.method))
    options.out.write_bytes(data)
    sys.stdout.write(
        f"{options.out}: {len(data):,} bytes from {len(pairs):,} card texts of {len(paths)} sets\n"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
