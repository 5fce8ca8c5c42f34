"""Figures of `pipeline site`: pages, seconds and bytes, built whole and rebuilt after a run.

`python benchmarks/site.py` builds the site of the 22 MTGJSON 2022 set files of
../shared/realdata with the Comprehensive Rules of 2023-11-17 and 2024-02-06 (two runs),
and of a synthetic set file of 30,000 cards (benchmarks/corpus.py, ten rulings a card, a
tenth of them translations), each: from nothing, again with nothing new, and after a
one-card run (one ruling of one card reworded in its bulk file, which the run reads whole
again, as a nightly job would); the real one also after an Oracle run (MTGJSON's 2025
build of three Time Spiral cards, tests/fixtures, beside the 2022 TSP.json). Each site's
search index is weighed (files, bytes, gzipped). With Chromium installed it also times the
index page's search over the 30,000 cards. Prints a table; asserts nothing. `--cards N`
changes the synthetic size.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from corpus import mtgjson_set

from pipeline.ingest import ingest
from pipeline.publishing.site import build_site

if TYPE_CHECKING:
    from collections.abc import Callable

HERE = Path(__file__).resolve().parent
REALDATA = HERE.parent.parent / "shared" / "realdata" / "mtgjson-2022"
RULES = REALDATA.parent / "comprules"
ORACLE_2025 = HERE.parent / "tests" / "fixtures" / "raw" / "mtgjson-tsp-cards-2025.json"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
_MEASURE = """
(function () {
  var out = {ready: Math.round(performance.now())}, q = document.getElementById("q");
  function time(value) {
    var t = performance.now();
    q.value = value;
    q.dispatchEvent(new Event("input"));
    document.body.offsetHeight;  // the layout the filter causes
    return Math.round(performance.now() - t);
  }
  out.first = time("c"); out.narrow = time("card 1"); out.narrower = time("card 17");
  out.none = time("zzzz"); out.all = time("");
  var pre = document.createElement("pre"); pre.id = "measured";
  pre.textContent = JSON.stringify(out); document.body.appendChild(pre);
})();
"""


def _row(label: str, seconds: float, report: object) -> None:
    pages, written = getattr(report, "pages", 0), len(getattr(report, "written", ()))
    size, rendered = getattr(report, "size", 0), getattr(report, "rendered", 0)
    print(f"  {label:<44}{seconds:>8.1f} s{pages:>8} pages{rendered:>8} rendered"
          f"{written:>8} written{size / 2**20:>9.1f} MiB")  # fmt: skip


def _timed(out: Path, folder: Path) -> tuple[float, object]:
    start = time.perf_counter()
    report = build_site(out, folder)
    return time.perf_counter() - start, report


def _reword(path: Path, card: str) -> None:
    """Reword the first ruling of CARD in the MTGJSON set file PATH (a rule change)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    cards = data["data"]["cards"]
    found = next(c for c in cards if c["name"] == card)
    found["rulings"][0]["text"] += " (Reworded.)"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


def weigh(folder: Path) -> None:
    """The site's files, and its search index: files, bytes, gzipped, the list a search loads."""
    files = [p for p in folder.rglob("*") if p.is_file()]
    search = [p for p in files if p.parent.name == "search"]
    size = sum(p.stat().st_size for p in files)
    weight = sum(p.stat().st_size for p in search)
    zipped = sum(len(gzip.compress(p.read_bytes())) for p in search)
    docs = folder / "search" / "docs.js"
    listed = docs.stat().st_size if docs.is_file() else 0
    print(
        f"    {len(files):,} files ({len(files) - len(search):,} pages, {len(search)} search "
        f"files), {size / 1e6:.1f} MB; search index {weight / 1e6:.2f} MB "
        f"({zipped / 1e6:.2f} MB gzipped), its list docs.js {listed / 1e3:.0f} KB"
    )


def scenario(
    title: str,
    raw: Path,
    card: str,
    set_file: Path,
    work: Path,
    *,
    then: Callable[[], None] | None = None,
    oracle: Callable[[], None] | None = None,
) -> Path:
    """Ingest RAW, build, rebuild, reword CARD in SET_FILE, ingest, rebuild: print each.

    THEN changes RAW for a second run before the first build (the next rules release);
    ORACLE changes it for a run of its own, and a rebuild, before the one-card run.
    """
    out, folder = work / "normalized", work / "site"
    start = time.perf_counter()
    ingest([raw], out=out)
    if then is not None:
        then()
        ingest([raw], out=out)
    print(f"{title} (ingest {time.perf_counter() - start:.1f} s)")
    _row("full build", *_timed(out, folder))
    weigh(folder)
    _row("rebuild, nothing new", *_timed(out, folder))
    if oracle is not None:
        oracle()
        ingest([raw], out=out)
        seconds, report = _timed(out, folder)
        _row("rebuild after an Oracle run (3 cards)", seconds, report)
        print(f"    written: {', '.join(getattr(report, 'written', ()))}")
    _reword(set_file, card)
    ingest([raw], out=out)
    seconds, report = _timed(out, folder)
    _row(f"rebuild after a one-card run ({card})", seconds, report)
    print(f"    written: {', '.join(getattr(report, 'written', ()))}")
    return folder


def browse(folder: Path) -> None:
    """Time the index's search in headless Chromium (milliseconds, the layout included)."""
    if CHROMIUM is None:
        print("  (no chromium: the index's search is not timed)")
        return
    page = folder / "measure.html"
    html = (folder / "index.html").read_text(encoding="utf-8")
    page.write_text(html.replace("</body>", f"<script>{_MEASURE}</script></body>"), "utf-8")
    profile = folder.parent / "profile"
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
               f"--user-data-dir={profile}", "--dump-dom", f"file://{page}"]  # fmt: skip
    dom = subprocess.run(command, capture_output=True, text=True, timeout=300, check=True).stdout  # noqa: S603
    page.unlink()
    match = re.search(r'<pre id="measured">(.*?)</pre>', dom)
    figures = json.loads(match.group(1)) if match else {}
    print(
        f"  index in Chromium ({(folder / 'index.html').stat().st_size / 2**20:.1f} MiB): "
        f"script ready {figures.get('ready')} ms after navigation; typing 'c' (all shown, "
        f"the first layout) {figures.get('first')} ms, 'card 1' {figures.get('narrow')} ms, "
        f"'card 17' {figures.get('narrower')} ms, no match {figures.get('none')} ms, "
        f"cleared {figures.get('all')} ms"
    )


def main() -> None:
    """Command line: both scenarios, or the synthetic one alone without ../shared."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cards", type=int, default=30_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        if REALDATA.is_dir():
            raw = root / "real" / "raw"
            shutil.copytree(REALDATA, raw / "sets")
            (raw / "rules").mkdir()
            shutil.copy(RULES / "2023-11-17.txt", raw / "rules")

            def next_release() -> None:
                (raw / "rules" / "2023-11-17.txt").unlink()
                shutil.copy(RULES / "2024-02-06.txt", raw / "rules")

            def oracle_2025() -> None:
                shutil.copy(ORACLE_2025, raw / "sets" / "TSP-2025.json")

            scenario(
                "22 MTGJSON 2022 set files, the rules of 2023-11-17 then 2024-02-06",
                raw,
                "Rift Bolt",
                raw / "sets" / "TSP.json",
                root / "real",
                then=next_release,
                oracle=oracle_2025,
            )
        else:
            print("(../shared/realdata is not beside this checkout: the real sets are skipped)")
        raw = root / "synthetic" / "raw"
        mtgjson_set(raw / "SYN.json", args.cards * 10, prefix="Card")
        folder = scenario(f"synthetic, {args.cards:,} cards", raw, "Card 17", raw / "SYN.json",
                          root / "synthetic")  # fmt: skip
        browse(folder)


if __name__ == "__main__":
    main()
