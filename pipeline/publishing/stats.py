"""Figures of a dataset, for `pipeline stats`."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.columns import strings
from pipeline.publishing.dataset import require_dataset
from pipeline.publishing.today import weighed_rulings
from pipeline.reading.read import shown
from pipeline.storage import store

if TYPE_CHECKING:
    from pathlib import Path


def dataset_stats(out: Path) -> dict[str, Any]:
    """Runs, cards, rulings (in force, stale, historical) by language, kind and source."""
    require_dataset(out)
    version = store.open_version(out)
    rulings = weighed_rulings(version)
    runs = version.table("runs").to_pylist()
    files = version.table("files")
    by_source: Counter[str] = Counter()
    for part in version.parts("sightings"):  # one run at a time: memory stays flat
        sources = pa.Table.from_arrays([part["source"].cast(pa.string())], names=["source"])
        counted = sources.group_by("source", use_threads=False).aggregate([("source", "count")])
        pairs = zip(strings(counted["source"]), counted["source_count"].to_pylist(), strict=True)
        by_source.update({source: int(n or 0) for source, n in pairs})
    last = runs[-1] if runs else None
    current = rulings.filter(pc.field("current"))
    carried = pc.sum(rulings["source_current"]).as_py() or 0
    rejected = files.filter(
        (pc.field("run") == (last["run"] if last else 0)) & (pc.field("status") == "rejected")
    )
    return {
        "runs": len(runs),
        "last_run": None
        if last is None
        else {
            "run": last["run"],
            "started_at": last["started_at"].isoformat(),
            "files_read": last["files_read"],
            "files_skipped": last["files_skipped"],
            "files_rejected": last["files_rejected"],
            "rulings_read": last["rulings_read"],
            "new_keys": last["new_keys"],
        },
        "cards": len({c for c in rulings["card"].to_pylist() if c}),
        "rulings": {
            "current": current.num_rows,
            "stale_source": carried - current.num_rows,
            "historical": rulings.num_rows - carried,
            "total": rulings.num_rows,
        },
        "sightings": sum(by_source.values()),
        "by_lang": _counts(rulings, current, "lang"),
        "by_kind": _counts(rulings, current, "kind"),
        "by_source": dict(sorted(by_source.items())),
        "rejected_last_run": [
            {"path": r["source_path"], "reason": r["reason"]} for r in rejected.to_pylist()
        ],
    }


def _counts(rulings: pa.Table, current: pa.Table, column: str) -> dict[str, dict[str, int]]:
    everything = Counter(rulings[column].to_pylist())
    today = Counter(current[column].to_pylist())
    return {str(k): {"current": today.get(k, 0), "total": n} for k, n in sorted(everything.items())}


def render_stats(figures: dict[str, Any]) -> str:
    """The figures as an aligned text table."""
    lines = [f"runs              {figures['runs']}"]
    last = figures["last_run"]
    if last:
        lines.append(
            f"last run          {last['run']} at {last['started_at']}: {last['files_read']} read, "
            f"{last['files_skipped']} unchanged, {last['files_rejected']} rejected"
        )
    counts = figures["rulings"]
    lines += [
        f"cards             {figures['cards']}",
        (
            f"rulings           {counts['total']} ({counts['current']} in force, "
            f"{counts['stale_source']} only in a staler source, {counts['historical']} historical)"
        ),
        f"sightings         {figures['sightings']}",
    ]
    for title, key in (("by language", "by_lang"), ("by kind", "by_kind")):
        lines.append(f"{title}:")
        lines += [
            f"  {name:<16}{n['current']:>8} in force {n['total']:>8} total"
            for name, n in figures[key].items()
        ]
    lines.append("by source (sightings):")
    lines += [f"  {name:<32}{n:>8}" for name, n in figures["by_source"].items()]
    if figures["rejected_last_run"]:
        lines.append("rejected in the last run:")
        lines += [f"  {shown(r['path'])}: {r['reason']}" for r in figures["rejected_last_run"]]
    return "\n".join(lines)
