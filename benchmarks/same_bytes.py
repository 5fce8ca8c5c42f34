"""Two checkouts write the same datasets, byte for byte: a refactoring's proof.

`python benchmarks/same_bytes.py OLD NEW WORK` runs the same scenarios with the package of
each checkout (OLD and NEW: their folders; each in its own process, PYTHONPATH set to
it) into WORK/old and WORK/new, then compares every Parquet file of each dataset's version
in force, of its parts and of its cache, byte for byte, and those of every version it
still keeps (`.versions/`: each run's, the superseded ones too). Each checkout writes into
WORK/run (runs.parquet records the inputs' paths), moved to WORK/old or WORK/new after.
Two files embed times: runs.parquet when each run started and finished (its rows are
compared without those two columns), the sightings index each part's modification time
(its rows and each part's size are compared). Prints one line per dataset; exits 1 when
one differs.

The scenarios, every input with a fixed modification time and `today` fixed:
- seeds: the raw/ seeds with a catalog in `.catalog/`; again with nothing new (a run
  recorded anyway); one seed given a new ruling, another only a new modification time
  (hashed, then skipped), an unreadable catalog beside the first (rejected);
- real: the 22 MTGJSON 2022 set files and the 2022-10-07 Comprehensive Rules (../shared);
  every 300th ruling reworded, the rules of 2022-11-18 in the same file (rows carried by
  reference); the rules of 2023-11-17 and 2024-02-06, every file hashed again (--rehash);
- v3 … v7: each old dataset of tests/fixtures upgraded by the run that reads the seeds.

`python benchmarks/same_bytes.py --write WORK` writes the datasets with the package on the
path (what each checkout's process runs). Given one checkout twice (OLD and NEW the same
folder), it checks that the code is deterministic: two runs, the same bytes.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SEEDS = ROOT / "raw"
FIXTURES = ROOT / "tests" / "fixtures"
REAL = ROOT.parent / "shared" / "realdata"
TODAY = dt.date(2024, 6, 1)
MTIME = 1_717_200_000  # 2024-06-01 00:00 UTC: every input's modification time
EVERY = 300  # the real scenario rewords every EVERY-th MTGJSON ruling
TIMES = ("started_at", "finished_at")  # the columns of runs.parquet that hold times
INDEX = "sightings-index/"  # its metadata: each part's [size, modification time]
PARTS = b"pipeline.sightings_index.parts"
VERSIONS = ".versions"  # each run's version of the dataset, the one in force among them


def _fixed(folder: Path, seconds: int = MTIME) -> None:
    for path in folder.rglob("*"):
        if path.is_file():
            os.utime(path, (seconds, seconds))


def _seeds(work: Path) -> None:
    from pipeline import ingest  # noqa: PLC0415 - the package of the checkout on the path

    raw, out = work / "seeds-raw", work / "seeds"
    shutil.copytree(SEEDS, raw)
    (raw / ".catalog").mkdir()
    shutil.copy(FIXTURES / "catalog" / "who-the-tenth-doctor.json", raw / ".catalog")
    _fixed(raw)
    ingest([raw], out=out, today=TODAY, workers=2)
    ingest([raw], out=out, today=TODAY, workers=2, record_unchanged=True)
    first, second = sorted(p for p in raw.iterdir() if p.suffix == ".txt")[:2]
    first.write_text(first.read_text("utf-8") + "\n2024-05-05\n\nA new ruling.\n", "utf-8")
    (raw / ".catalog" / "broken.json").write_text("{", "utf-8")  # rejected, the run goes on
    _fixed(raw)
    os.utime(second, (MTIME + 60, MTIME + 60))  # the same bytes, a new time: hashed, skipped
    ingest([raw], out=out, today=TODAY, workers=2)


def _reword(raw: Path) -> None:
    seen = 0
    for path in sorted(raw.glob("*.json")):
        document = json.loads(path.read_text("utf-8"))
        for card in document["data"]["cards"]:
            for ruling in card.get("rulings", []):
                seen += 1
                if seen % EVERY == 0:
                    ruling["text"] += " (Revised.)"
        path.write_text(json.dumps(document), "utf-8")


def _real(work: Path) -> None:
    from pipeline import ingest  # noqa: PLC0415 - the package of the checkout on the path

    raw, out = work / "real-raw", work / "real"
    shutil.copytree(REAL / "mtgjson-2022", raw)
    rules = raw / "rules.txt"
    releases = sorted((REAL / "comprules").glob("*.txt"))
    shutil.copy(releases[0], rules)
    _fixed(raw)
    ingest([raw], out=out, today=TODAY, workers=2)
    _reword(raw)
    shutil.copy(releases[1], rules)
    _fixed(raw, MTIME + 86_400)
    ingest([raw], out=out, today=TODAY, workers=2)
    for day, release in enumerate(releases[2:], start=2):
        shutil.copy(release, rules)
        _fixed(raw, MTIME + day * 86_400)
        ingest([raw], out=out, today=TODAY, workers=2, rehash=True)


def _upgrades(work: Path) -> None:
    from pipeline import ingest  # noqa: PLC0415 - the package of the checkout on the path

    raw = work / "upgrade-raw"
    shutil.copytree(SEEDS, raw)
    _fixed(raw)
    for version in (3, 4, 5, 6, 7):
        out = work / f"v{version}"
        shutil.copytree(FIXTURES / f"dataset-v{version}", out, symlinks=True)
        ingest([raw], out=out, today=TODAY, workers=2)


def write(work: Path) -> None:
    """Write every scenario's dataset under WORK with the package on the path."""
    work.mkdir(parents=True)
    _seeds(work)
    _real(work)
    _upgrades(work)


def _parquet_files(out: Path) -> dict[str, Path]:
    """The Parquet files of OUT's versions, of its parts and its cache, by name.

    The version in force's by their names in it (`state/000001.parquet`), every version's
    (the one in force too) under `.versions/` (`.versions/000002/state/000001.parquet`):
    a superseded version is as much the code's output. The parts are those of every folder
    of OUT that is not a link nor `.versions`: each partitioned table's (sightings,
    changes, ruling_texts, …) and the cache.
    """
    current = (out / ".current").resolve()
    found = {str(p.relative_to(current)): p for p in current.rglob("*.parquet")}
    found |= {str(p.relative_to(out)): p for p in sorted((out / VERSIONS).rglob("*.parquet"))}
    for folder in sorted(out.iterdir()):
        if folder.is_dir() and not folder.is_symlink() and folder.name != VERSIONS:
            found |= {str(p.relative_to(out)): p for p in folder.rglob("*.parquet")}
    return found


def _in_version(name: str) -> str:
    """NAME as the version holding it names it: `.versions/000002/runs.parquet` is runs.parquet."""
    parts = name.split("/")
    return "/".join(parts[2:]) if parts[0] == VERSIONS else name


def _same(old: Path, new: Path, name: str) -> bool:
    name = _in_version(name)
    if name != "runs.parquet" and not name.startswith(INDEX):
        return old.read_bytes() == new.read_bytes()
    import pyarrow.parquet as pq  # noqa: PLC0415 - the comparing process alone needs it

    a, b = (pq.read_table(p) for p in (old, new))
    if name == "runs.parquet":
        return bool(a.drop_columns(list(TIMES)).equals(b.drop_columns(list(TIMES))))
    sizes = [
        {run: size for run, (size, _) in json.loads(t.schema.metadata[PARTS]).items()}
        for t in (a, b)
    ]
    return sizes[0] == sizes[1] and bool(a.equals(b))


def compare(old: Path, new: Path) -> bool:
    """Whether each dataset under OLD has the same Parquet files as its twin under NEW."""
    same = True
    names = sorted(p.name for p in old.iterdir() if (p / ".current").exists())
    for dataset in names:
        a, b = _parquet_files(old / dataset), _parquet_files(new / dataset)
        differ = sorted(n for n in a.keys() & b.keys() if not _same(a[n], b[n], n))
        missing = sorted(a.keys() ^ b.keys())
        same = same and not differ and not missing
        print(f"{dataset}: {len(a)} files, {len(differ)} differ {differ}, "
              f"{len(missing)} in one only {missing}")  # fmt: skip
    return same


def main(argv: list[str]) -> int:
    """Write the datasets with each checkout, then compare them."""
    if argv[:1] == ["--write"]:
        write(Path(argv[1]))
        return 0
    old, new, work = (Path(a).resolve() for a in argv)
    for name, checkout in (("old", old), ("new", new)):
        environment = {**os.environ, "PYTHONPATH": str(checkout)}
        subprocess.run([sys.executable, __file__, "--write", str(work / "run")],  # noqa: S603
                       check=True, env=environment, cwd=checkout)  # fmt: skip
        (work / "run").rename(work / name)
    return 0 if compare(work / "old", work / "new") else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
