"""pipeline repair: a dataset's derived tables made again, into a new version.

What nothing rebuilds is checked first (runs, files, every part of runs 1 … L against the
manifest and read whole): one bad is refused, naming it, with nothing written. The derived
tables are then made from it: `state` from the sightings (diffing.history, as an upgrade
from version 3 does), `rulings` folded from them (folding.merge) and weighed
(`current`), their texts from the log `ruling_texts` (a sighting leaves out the text of its
ruling, docs/format.md §5.4), `names` from the log `names_learned`, `cards` from
`card_versions` (diffing.oracle), the sightings index from the parts, the kept terms
dropped (a cache). `translations` is carried as stored when sound, else linked again in
full (folding.translate). A sound segment's cards keep their segment numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.diffing.history import origins_from_files, state_from_sightings, with_current
from pipeline.diffing.oracle import cards_from_versions
from pipeline.errors import StoreError
from pipeline.folding.merge import merge_rulings
from pipeline.folding.translate import update_translations
from pipeline.keys import first_rows
from pipeline.reading.sightings import RULING_TEXT
from pipeline.schema import NAMES, PARTITION_KEY, RULING_KEY, SEGMENTED, TABLES, in_memory
from pipeline.storage import commit, layout, lock, segments, store, verify
from pipeline.storage.terms import CACHE, FILE, KeptTerms
from pipeline.storage.texts import ruling_rows
from pipeline.storage.upgrade import read_outdated

if TYPE_CHECKING:
    from pathlib import Path

_KEY = list(RULING_KEY)
_SHOWN = 3  # cards named in a refusal
_TEXTS = pa.schema([TABLES["rulings"].field(name) for name in [*_KEY, "text"]])


@dataclass(frozen=True, slots=True)
class RepairReport:
    """What a repair did: the version it wrote, the damaged files it found, what it chose."""

    version: str
    damaged: list[str]
    translations: str  # "carried" or "linked again"


def repair(out: Path, *, wait: float = 0, retain: float | None = None) -> RepairReport:
    """Rebuild the derived tables of the dataset in OUT into a new version (one commit).

    WAIT is how long an ingest writing OUT is waited for; RETAIN as ingest()'s.
    """
    lock.check_folder_name(out)
    out = out.resolve()  # as the version's folder is (layout.pinned): paths named relative to it
    if not (out / layout.CURRENT).is_symlink():
        msg = f"{out}: no {layout.CURRENT} link here: not a dataset to repair; check --out"
        raise StoreError(msg)
    with lock.writer_lock(out, wait):
        bad = verify.primary_faults(out)  # before recover(), which reads runs.parquet
        if bad:
            named = "; ".join(map(str, bad))
            msg = (
                f"{named}: not derived from anything, so not rebuilt: restore it from a "
                "backup; nothing written"
            )
            raise StoreError(msg)
        commit.recover(out, retain=retain)
        if read_outdated(out) is not None:
            msg = f"{out}: of an older schema version: run pipeline ingest first (it upgrades)"
            raise StoreError(msg)
        damaged = sorted({f.path for f in verify.check(out).faults})
        version = store.open_version(out)
        texts = _logged_texts(version)
        sightings = _sightings(out, version, texts)
        files = version.table("files")
        state = origins_from_files(state_from_sightings(sightings), files)
        rows = ruling_rows(sightings.select(_KEY), texts.select(_KEY))
        ruling_text = pc.take(texts["text"], rows).cast(pa.string())
        _check_texts(sightings.filter(pc.is_null(ruling_text)))
        folded = merge_rulings(
            in_memory("rulings").empty_table(), sightings.append_column(RULING_TEXT, ruling_text)
        )
        rulings = with_current(folded, state)
        names = _logged_names(version)
        cards = cards_from_versions(version.table("card_versions"))
        translations = _sound_table(out, version.base, "translations")
        chosen = "carried"
        if translations is None:
            chosen = "linked again"
            translations = _linked(out, rulings, version.last_run)
        tables = {
            "files": files,
            "runs": version.table("runs"),
            "names": names,
            "cards": cards,
            "translations": translations,
        }
        plan = _plan(version.base, _sound_segments(out, version.base))
        rewritten = segments.split({"rulings": rulings, "state": state}, plan)
        commit.commit(out, tables, {}, rewritten, reindex=True, retain=retain)
        (out / CACHE / FILE).unlink(missing_ok=True)  # a cache: the next linking run remakes it
        return RepairReport(layout.pinned(out).name, damaged, chosen)


def _relative(out: Path, path: Path) -> str:
    return path.relative_to(out).as_posix()


def _sound_table(out: Path, version: Path, name: str) -> pa.Table | None:
    """Table NAME of VERSION if its file passes its check, else None."""
    relative = _relative(out, version / f"{name}.parquet")
    if verify.file_fault(out, relative, name) is not None:
        return None
    return store.read_table(out, name, base=version)


def _logged_texts(version: store.Version) -> pa.Table:
    """Each ruling key's text, as the last run that stored it logged it (ruling_texts)."""
    logged = version.table("ruling_texts")
    latest = logged.take(pc.sort_indices(logged, sort_keys=[(PARTITION_KEY, "descending")]))
    return latest.take(first_rows(latest, _KEY)).select([*_KEY, "text"]).cast(_TEXTS)


def _logged_names(version: store.Version) -> pa.Table:
    """names.parquet as the runs learned it (names_learned), sorted as learned() keeps it."""
    logged = version.table("names_learned").rename_columns({PARTITION_KEY: "first_run"})
    table = logged.select(NAMES.names).cast(NAMES)
    order: list[tuple[str, Literal["ascending", "descending"]]] = [
        ("name", "ascending"),
        ("lang", "ascending"),
        ("card", "ascending"),
    ]
    return table.take(pc.sort_indices(table, sort_keys=order))


def _sound_segments(out: Path, version: Path) -> dict[str, list[pa.Table]]:
    """The segments of VERSION that pass their check, by table: their cards stay where they are."""
    sound: dict[str, list[pa.Table]] = {name: [] for name in SEGMENTED}
    for name in SEGMENTED:
        for seg in layout.segment_ids(version, name):
            relative = _relative(out, layout.segment_path(version, name, seg))
            if verify.file_fault(out, relative, name) is None:
                table = layout.read_segments(version, name, [seg])[seg]
                sound[name].append(table.append_column("segment", _repeat(seg, table)))
    return sound


def _sightings(out: Path, version: store.Version, texts: pa.Table) -> pa.Table:
    """Every sighting of VERSION, carried rows expanded, left-out texts taken from TEXTS."""
    parts = store.iter_parts(
        out, "sightings", base=version.base, upto=version.last_run, rulings=texts
    )
    return pa.concat_tables([in_memory("sightings").empty_table(), *parts])


def _repeat(value: int, table: pa.Table) -> pa.Array[Any]:
    return pa.array([value] * table.num_rows, pa.int64())


def _check_texts(lost: pa.Table) -> None:
    """Refuse when the ruling's text of sightings LOST is in no log (a part was lost)."""
    if not lost.num_rows:
        return
    cards = sorted({str(c) for c in lost["card"].to_pylist()})
    shown = ", ".join(cards[:_SHOWN]) + (", …" if len(cards) > _SHOWN else "")
    rulings = len(pc.unique(lost["text_hash"].cast(pa.string())))
    msg = (
        f"ruling_texts/: the texts of {rulings} rulings (cards {shown}) are in no part of "
        "it, and the sightings leave their ruling's text out (docs/format.md §5.4): restore "
        "the parts from a backup; nothing written"
    )
    raise StoreError(msg)


def _plan(version: Path, sound: dict[str, list[pa.Table]]) -> segments.Plan:
    """Every segment rewritten; each card in the segment a sound file of it holds."""
    ids = sorted({seg for name in SEGMENTED for seg in layout.segment_ids(version, name)})
    home: dict[str, int] = {}
    for name in SEGMENTED:
        for table in sound[name]:
            cards = segments.groups(table).to_pylist()
            at = [int(seg) for seg in table["segment"].to_pylist() if seg is not None]
            home.update(zip((str(c) for c in cards), at, strict=True))
    next_id = max(ids, default=0) + 1
    return segments.Plan(tuple(ids), home, next_id, next_id)


def _linked(out: Path, rulings: pa.Table, run: int) -> pa.Table:
    """The translations linked again among every ruling, as a run reading every card would."""
    cards = pc.unique(rulings["card"].cast(pa.string()).drop_null())
    old = in_memory("translations").empty_table()
    return update_translations(old, rulings, cards, run, kept=KeptTerms(out))
