"""Storing cards and their Oracle history: a first ingest, and what a nightly re-run adds.

`python benchmarks/cards_store.py` measures, on the 22 MTGJSON 2022 set files of
../shared/realdata and on one AllPrintings.json of them repeated --copies times (cards.py's
builder: the copies' codes suffixed 2, 3, …, the same cards printed again), each as the
command runs it (`pipeline ingest`, every file read in a worker; benchmarks/measure.py):
- `first`: an ingest into an empty dataset, which stores the cards table and card_versions;
- `same`: a copy of the input whose meta.date is a day later, ingested into a copy of the
  first dataset: the nightly run that reads the same cards again (no card_versions part,
  the cards table not rewritten);
- `150 reworded`: the same copy with 150 cards' Oracle texts reworded the 2024 way, their
  self-references "CARDNAME deals/can't/gets" made "This spell/creature deals/can't/gets"
  in every printing of them (reword() below).
Each row: the median seconds of --runs fresh processes and the largest peak RSS (MiB) of the
main process and of the reading worker; for a re-run, the bytes its commit added to the
dataset's folder (new files only, each hard link once), of which card_versions' part, the
changes part, and the cards table's. Prints a table; asserts nothing.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import shutil
import statistics
import tempfile
from pathlib import Path
from typing import Any

from cards import SETS, build
from measure import Figures, job, run_child
from timed import ingest_as_cli

REWORDED = 150
# "Rift Bolt deals 3 damage": a self-reference the 2024 update wrote "This spell deals".
_VERBS = ("deals", "can't", "gets")


def _files(folder: Path) -> dict[tuple[int, int], tuple[Path, int]]:
    """Each regular file under FOLDER by (device, inode): its path and size."""
    found = {}
    for root, _, names in os.walk(folder):
        for name in names:
            path = Path(root, name)
            info = path.lstat()
            if path.is_file() and not path.is_symlink():
                found[(info.st_dev, info.st_ino)] = (path.relative_to(folder), info.st_size)
    return found


def _added(before: dict[tuple[int, int], tuple[Path, int]], out: Path) -> dict[str, int]:
    """The bytes of OUT's files not in BEFORE: in all, of card_versions, changes and cards."""
    new = [(path, size) for key, (path, size) in _files(out).items() if key not in before]
    sizes = {"all": sum(size for _, size in new)}
    for table in ("card_versions", "changes", "cards"):
        sizes[table] = sum(size for path, size in new if table in path.parts
                           or path.name.startswith(f"{table}."))  # fmt: skip
    return sizes


def _later(document: dict[str, Any]) -> None:
    """DOCUMENT's meta.date a day later: the next night's build of the same cards."""
    meta = document["meta"]
    meta["date"] = str(dt.date.fromisoformat(meta["date"]) + dt.timedelta(days=1))


def _reworded(card: dict[str, Any]) -> str | None:
    """CARD's text with its self-references reworded the 2024 way, or None if it has none."""
    types = set(card.get("types", []))
    if "faceName" in card or not types & {"Creature", "Instant", "Sorcery"}:
        return None
    subject = "This creature" if "Creature" in types else "This spell"
    pattern = rf"(^|(?<=[.:]\s)|(?<=\n))?\b{re.escape(card['name'])} ({'|'.join(_VERBS)})\b"

    def this(match: re.Match[str]) -> str:
        start = match.group(1) is not None
        return f"{subject if start else subject.lower()} {match.group(2)}"

    text = card.get("text") or ""
    new = re.sub(pattern, this, text)
    return new if new != text else None


def copies(sets: list[Path], folder: Path) -> tuple[Path, Path, int]:
    """The 22 files a day later in FOLDER/same and, 150 cards reworded, in FOLDER/reworded."""
    same, reworded = folder / "same", folder / "reworded"
    same.mkdir(parents=True)
    reworded.mkdir()
    documents = {path.name: json.loads(path.read_bytes()) for path in sets}
    names = sorted({c["name"] for d in documents.values() for c in d["data"]["cards"]
                    if _reworded(c) is not None})[:REWORDED]  # fmt: skip
    for name, document in documents.items():
        _later(document)
        (same / name).write_text(json.dumps(document, ensure_ascii=False), "utf-8")
        for card in document["data"]["cards"]:
            if card["name"] in names:
                card["text"] = _reworded(card)
        (reworded / name).write_text(json.dumps(document, ensure_ascii=False), "utf-8")
    return same, reworded, len(names)


def _median(figures: list[Figures]) -> str:
    seconds = statistics.median(f.seconds for f in figures)
    own, workers = max(f.own_mb for f in figures), max(f.workers_mb for f in figures)
    return f"{seconds:>8.2f} {own:>6.0f} {workers:>7.0f}"


def rows(name: str, inputs: dict[str, Path], work: Path, runs: int) -> None:
    """Print the three rows of one input: INPUTS["first"], ["same"] and ["reworded"] folders.

    Each folder holds files of the same names: a re-run reads what the first run read.
    """
    slug = re.sub(r"\W+", "-", name)
    first = work / f"{slug}-first"
    figures = []
    for _ in range(runs):
        shutil.rmtree(first, ignore_errors=True)
        figures.append(run_child(job(ingest_as_cli, str(inputs["first"]), str(first))))
    print(f"{name + ', first':<38} {_median(figures)}")
    for rerun in ("same", "reworded"):
        figures, added = [], {}
        for _ in range(runs):
            out = work / f"{slug}-{rerun}"
            shutil.rmtree(out, ignore_errors=True)
            shutil.copytree(first, out, symlinks=True)
            raw = work / f"{slug}-{rerun}-raw"
            shutil.rmtree(raw, ignore_errors=True)
            shutil.copytree(inputs[rerun], raw)
            before = _files(out)
            figures.append(run_child(job(ingest_as_cli, str(raw), str(out))))
            added = _added(before, out)
        label = f"{name}, {'same' if rerun == 'same' else f'{REWORDED} reworded'}"
        sizes = " ".join(f"{added[k]:>9,}" for k in ("all", "card_versions", "changes", "cards"))
        print(f"{label:<38} {_median(figures)} {sizes}")


def main() -> None:
    """Make the copies, measure each input, print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3, help="fresh processes per row (median)")
    parser.add_argument("--copies", type=int, default=10, help="each set this many times")
    parser.add_argument("--sets", type=Path, default=SETS, help="the folder of set files")
    parser.add_argument("--skip-allprintings", action="store_true", help="the 22 files only")
    options = parser.parse_args()
    sets = sorted(options.sets.glob("*.json"))
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        same, reworded, count = copies(sets, work / "sets")
        print(f"median of {options.runs} runs; peak RSS in MiB; bytes the re-run added")
        print(f"{count} cards reworded in every printing")
        head = f"{'input':<38} {'seconds':>8} {'main':>6} {'worker':>7}"
        print(f"{head} {'all':>9} {'versions':>9} {'changes':>9} {'cards':>9}")
        rows("22 files", {"first": options.sets, "same": same, "reworded": reworded}, work,
             options.runs)  # fmt: skip
        if options.skip_allprintings:
            return
        built = {}
        for name, source in (("first", sets), ("same", sorted(same.glob("*.json"))),
                             ("reworded", sorted(reworded.glob("*.json")))):  # fmt: skip
            (work / f"all-{name}").mkdir()
            build(source, work / f"all-{name}" / "AllPrintings.json", options.copies)
            built[name] = work / f"all-{name}"
        size = (built["first"] / "AllPrintings.json").stat().st_size / 2**20
        rows(f"AllPrintings ({size:,.0f} MiB)", built, work, options.runs)


if __name__ == "__main__":
    main()
