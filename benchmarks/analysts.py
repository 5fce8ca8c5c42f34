"""Five analysts' questions on three real runs, answered with pandas and with DuckDB.

`python benchmarks/analysts.py` ingests the seeds; then the 22 MTGJSON set files of
../shared/realdata with the 2023-11-17 Comprehensive Rules; then the 2024-02-06 release at
the same path. It prints each answer both ways and whether they agree: card rulings per
card today, the last run's changes by kind, the versions of rule 702.62a, translations with
their originals, and rulings per set release year. Asserts nothing: the answers are read.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

import pandas as pd

from pipeline import ingest, open_dataset

ROOT = Path(__file__).resolve().parent.parent
REALDATA = ROOT.parent / "shared" / "realdata"
SHOWN = 8  # rows printed of each answer
SETS_RUN = 2  # the run that read the MTGJSON set files


def _runs(work: Path) -> Path:
    raw, out = work / "raw", work / "normalized"
    shutil.copytree(ROOT / "raw", raw)
    ingest([raw], out=out)
    for path in sorted((REALDATA / "mtgjson-2022").glob("*.json")):
        shutil.copy(path, raw / path.name)
    shutil.copy(REALDATA / "comprules" / "2023-11-17.txt", raw / "comprules.txt")
    ingest([raw], out=out)
    shutil.copy(REALDATA / "comprules" / "2024-02-06.txt", raw / "comprules.txt")
    ingest([raw], out=out)
    return out


def _same(name: str, mine: pd.DataFrame, theirs: pd.DataFrame) -> None:
    def rows(frame: pd.DataFrame) -> list[tuple[str, ...]]:  # dates, numbers as text
        return [tuple("" if pd.isna(v) else str(v)[:10] if hasattr(v, "year") else str(v)
                      for v in row) for row in frame.itertuples(index=False)]  # fmt: skip

    agree = rows(mine) == rows(theirs)
    if not agree:
        only = set(rows(mine)) ^ set(rows(theirs))
        print(f"{len(only)} rows differ, e.g. {sorted(only)[:3]}")
    print(f"\n## {name}: pandas and DuckDB {'agree' if agree else 'DISAGREE'}")
    print(mine.head(SHOWN).to_string(index=False, max_colwidth=60))
    if len(mine) > SHOWN:
        print(f"… {len(mine)} rows")


def main() -> int:
    """Make the three runs, print the five answers both ways."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--work", type=Path, help="scratch folder (default: a temporary one)")
    args = parser.parse_args()
    if not REALDATA.is_dir():
        print("needs ../shared/realdata", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as scratch:
        work = args.work or Path(scratch)
        shutil.rmtree(work / "raw", ignore_errors=True)
        shutil.rmtree(work / "normalized", ignore_errors=True)
        ds = open_dataset(_runs(work))
        con = ds.duckdb()

        today = ds.rulings(today=True, kind="ruling")
        today = today[~today["stale_source"] & today["card"].notna()]
        per_card = today.groupby("card").size().rename("rulings").reset_index()
        per_card = per_card.sort_values(["rulings", "card"], ascending=[False, True])
        sql = (
            "SELECT card, count(*) AS rulings FROM rulings_today WHERE kind = 'ruling' "
            "AND NOT stale_source AND card IS NOT NULL GROUP BY card ORDER BY rulings DESC, card"
        )
        _same("card rulings per card today", per_card, con.sql(sql).df())

        last = ds.changes(run=ds.last_run)
        kinds = last.groupby(["kind", "change"]).size().rename("n").reset_index()
        sql = (
            f"SELECT kind, change, count(*) AS n FROM changes WHERE run = {ds.last_run} "  # noqa: S608 - a number
            "GROUP BY ALL ORDER BY kind, change"
        )
        _same("the last run's changes by kind", kinds, con.sql(sql).df())

        rules = ds.rulings(current_only=False, kind="rule")
        versions = rules.loc[rules["rule_id"] == "702.62a", ["effective_date", "current", "text"]]
        versions = versions.sort_values("effective_date")
        sql = (
            "SELECT effective_date, current, text FROM rulings WHERE rule_id = '702.62a' "
            "ORDER BY effective_date"
        )
        _same("the versions of 702.62a", versions, con.sql(sql).df())

        pairs = ds.translations()
        pairs = pairs.loc[pairs["original_text_hash"].notna(), ["card", "lang", "text",
                                                                "original_text"]]  # fmt: skip
        sql = (
            "SELECT card, lang, text, original_text FROM translation_texts "
            "WHERE original_text_hash IS NOT NULL"
        )
        _same("translations and their originals", pairs, con.sql(sql).df())

        sightings = ds.sightings()
        dated = sightings[(sightings["run"] == SETS_RUN) & sightings["set_released"].notna()]
        per_year = dated.groupby(dated["set_released"].map(lambda d: d.year)).size()
        years = per_year.rename("rulings").rename_axis("year").reset_index()
        sql = (
            "SELECT year(set_released) AS year, count(*) AS rulings FROM sightings "  # noqa: S608
            f"WHERE run = {SETS_RUN} AND set_released IS NOT NULL GROUP BY 1 ORDER BY 1"
        )
        _same("rulings per set release year (run 2)", years, con.sql(sql).df())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
