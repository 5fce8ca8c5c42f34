"""The Python API for analysts: the dataset as pandas DataFrames, or as DuckDB views."""

from __future__ import annotations

import datetime as dt
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Unpack

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipeline.columns import Column, listed, lookup, strings
from pipeline.diffing.oracle import oracle_history
from pipeline.folding.names import renamed
from pipeline.publishing.dataset import (
    card_sightings,
    english_of,
    explanations,
    load_history,
    require_dataset,
    translated_names,
)
from pipeline.publishing.today import rulings_today, weighed_rulings
from pipeline.schema import (
    CARRY_COLUMNS,
    FILE_COLUMNS,
    IN_FORCE,
    PARTITION_KEY,
    PARTITIONED,
    RULES_BY_NUMBER,
    RULING_KEY,
    SCHEMA_VERSION,
    TABLES,
    make_schema,
)
from pipeline.storage import layout, store

if TYPE_CHECKING:
    import duckdb


# The columns of Dataset.history(), typed: dates stay dates even when none is known.
_HISTORY = make_schema(
    [
        pa.field("source", pa.string(), nullable=False),
        pa.field("text_hash", pa.string(), nullable=False),
        pa.field("effective_date", pa.date32()),
        pa.field("text", pa.string(), nullable=False),
        pa.field("appeared", pa.int64(), nullable=False),
        pa.field("disappeared", pa.int64()),
        pa.field("as_of", pa.date32()),
        pa.field("gone_as_of", pa.date32()),
        pa.field("translates", pa.string()),
        pa.field("translates_fate", pa.string()),
    ]
)


# Added by Dataset.changes(): the rule changes the changelog names as explaining the change.
_EXPLAINED = pa.field("explained_by", pa.list_(pa.string()))


def _frame(table: pa.Table) -> pd.DataFrame:
    """A DataFrame with pyarrow-backed dtypes: strings stay strings, dates stay dates."""
    return table.to_pandas(types_mapper=pd.ArrowDtype)


class Dataset:
    """A dataset folder written by `pipeline ingest`, opened read-only.

    It pins the version in force when it is opened: every method reads that version,
    whatever runs commit meanwhile (for as long as commit.RETAIN_SECONDS keeps it after it
    is superseded). Open the dataset again to see later runs.
    """

    def __init__(self, path: str | Path = "normalized") -> None:
        self.path = Path(path)
        require_dataset(self.path)
        self._version = store.open_version(self.path)
        for name in layout.VERSIONED:  # fail now, with the file's name, not in a notebook
            self._version.table(name).schema  # noqa: B018 - read to validate

    def __repr__(self) -> str:
        return f"Dataset({str(self.path)!r})"

    @property
    def last_run(self) -> int:
        """The latest run of the pinned version (0 before the first)."""
        return self._version.last_run

    def _table(self, name: str, **options: Unpack[store.ReadOptions]) -> pa.Table:
        # Plain strings for analysts (the stages hold `text` dictionary-encoded).
        return self._version.table(name, **options).cast(TABLES[name])

    def rulings(
        self,
        *,
        current_only: bool = True,
        card: str | None = None,
        lang: str | None = None,
        kind: str | None = None,
        today: bool = False,
    ) -> pd.DataFrame:
        """One row per ruling key; by default only those in force today (`current`).

        A ruling is in force when a freshest source of its card carries it (in its
        language; see docs/dataset.md, "Today"). TODAY gives every ruling some source
        still carries, in force or not, with a `stale_source` column: true where only a
        staler source than the card's freshest carries it ("may be out of date").
        """
        table = self._today() if today else self._rulings()
        conditions = [
            (current_only and not today, pc.field("current")),
            (card is not None, pc.field("card") == card),
            (lang is not None, pc.field("lang") == lang),
            (kind is not None, pc.field("kind") == kind),
        ]
        for wanted, condition in conditions:
            if wanted:
                table = table.filter(condition)
        return _frame(table)

    def _rulings(self) -> pa.Table:
        return weighed_rulings(self._version).cast(TABLES["rulings"])

    def _today(self) -> pa.Table:
        return rulings_today(self._rulings())

    def sightings(self, *, card: str | None = None) -> pd.DataFrame:
        """Every ruling read, in every run; of one CARD only if given.

        A sighting stored under a translated name before a run learned the card's English
        name comes with the English name, as the rulings are.
        """
        if card is None:
            english = english_of(self._version)
            return _frame(renamed(self._table("sightings"), english))
        return _frame(card_sightings(self._version, card).cast(TABLES["sightings"]))

    def changes(
        self,
        *,
        run: int | None = None,
        since: dt.date | str | None = None,
        started_since: dt.date | str | None = None,
        rule_changes_only: bool = False,
    ) -> pd.DataFrame:
        """Changes of one run, of all runs, or of those as of SINCE or later.

        SINCE compares the as-of date each change carries (the date its source speaks
        for); STARTED_SINCE the wall-clock start of the run that found it (UTC). The
        column `explained_by` lists the rule changes the changelog names as explaining a
        ruling change ("702.62a (amended, effective 2024-02-02)"), or is null.
        """
        chosen: list[int] | None = None if run is None else [run]
        if started_since is not None:
            day = _day(started_since)
            runs = self._table("runs").to_pylist()
            later = [r["run"] for r in runs if r["started_at"].date() >= day]
            chosen = later if chosen is None else [r for r in chosen if r in later]
        table = renamed(self._table("changes", runs=chosen), english_of(self._version))
        if since is not None:
            table = table.filter(pc.field("as_of") >= pa.scalar(_day(since), pa.date32()))
        if rule_changes_only:
            table = table.filter(pc.field("rule_change"))
        explained = explanations(self._version, table)
        reasons = [list(explained.get(g, ())) or None for g in strings(table["group"])]
        table = table.append_column(_EXPLAINED, pa.array(reasons, _EXPLAINED.type))
        return _frame(table)

    def translations(self, *, card: str | None = None, stale_only: bool = False) -> pd.DataFrame:
        """Each non-English ruling beside the English one it translates (null when unsure).

        STALE_ONLY keeps the translations whose original is no longer current. Beside the
        columns of translations.parquet come `text`, the translation's, and
        `original_text`, the English ruling's (null without one): the DuckDB view
        `translation_texts` holds the same.
        """
        table = self._table("translations")
        if card is not None:
            table = table.filter(pc.field("card") == card)
        if stale_only:
            table = table.filter(pc.field("original_current") == False)  # noqa: E712 - Arrow
        rulings = self._version.table("rulings").select(["text_hash", "card", "text"])
        both = [*table["text_hash"].chunks, *table["original_text_hash"].chunks]
        hashes = pc.unique(pa.chunked_array(both, pa.string()))
        wanted = rulings.filter(pc.is_in(rulings["text_hash"].cast(pa.string()), value_set=hashes))
        wanted = wanted.cast(make_schema([pa.field(n, pa.string()) for n in wanted.column_names]))
        for name, hashed in (("text", "text_hash"), ("original_text", "original_text_hash")):
            table = table.append_column(name, _texts_of(table[hashed], table["card"], wanted))
        return _frame(table)

    def history(self, card: str) -> pd.DataFrame:
        """Every version of every ruling of CARD, oldest first, with when it came and went."""
        entries = [asdict(e) for e in load_history(self.path, card, self._version)]
        return _frame(pa.Table.from_pylist(entries, schema=_HISTORY))

    def cards(self, *, card: str | None = None, legal_in: str | None = None) -> pd.DataFrame:
        """One row per card, as its freshest card source has it; join rulings by oracle_id.

        CARD keeps one card (its English name); LEGAL_IN the cards legal in that format.
        """
        table = self._table("cards")
        if card is not None:
            table = table.filter(pc.field("card") == card)
        if legal_in is not None:
            formats = table["legal_in"]
            at = pc.equal(pc.list_flatten(formats), pa.scalar(legal_in))
            table = table.take(pc.unique(pc.filter(pc.list_parent_indices(formats), at)))
        return _frame(table)

    def oracle_history(self, card: str | None = None) -> pd.DataFrame:
        """Each Oracle text each source gave each card (of CARD only if given), in turn.

        One row per text in an unbroken line of a source's versions: `since` (the date of
        the first version with it), `until` (the date of the next text; null: in force in
        that source), the runs that stored them.
        """
        versions = self._table("card_versions")
        if card is not None:
            versions = versions.filter(pc.field("card") == card)
        return _frame(oracle_history(versions))

    def runs(self) -> pd.DataFrame:
        """One row per run: when, what it read, what it found."""
        return _frame(self._table("runs"))

    def duckdb(self) -> duckdb.DuckDBPyConnection:
        """An in-memory DuckDB connection: a view per table, and rulings_today (see rulings)."""
        try:
            import duckdb  # noqa: PLC0415 - an optional extra
        except ImportError as exc:
            msg = "Dataset.duckdb() needs DuckDB: pip install '.[analysis]'"
            raise ImportError(msg) from exc
        connection = duckdb.connect()
        version = self._version
        connection.from_arrow(self._today()).create_view("rulings_today")
        aliases = _aliases(version)
        connection.from_arrow(aliases).create_view("card_aliases")
        renames = bool(aliases.num_rows)
        weighed = (
            layout.segments_version(self.path, "rulings", base=version.base) or SCHEMA_VERSION
        ) < IN_FORCE
        for name in TABLES:
            columns = ", ".join(f'"{column}"' for column in TABLES[name].names)
            if name in PARTITIONED and not layout.legacy(self.path, version.base):
                files = _listed_parts(version, name)
                if not files:
                    connection.from_arrow(TABLES[name].empty_table()).create_view(name)
                    continue
                listed = ", ".join(map(_quoted, files))
                source = (
                    f"(SELECT {_part_columns(self.path, name)} FROM read_parquet([{listed}], "  # noqa: S608
                    "hive_partitioning = true, union_by_name = true, "
                    f"hive_types = {{'run': BIGINT}}) WHERE run <= {version.last_run})"
                )
            elif name == "rulings" and weighed:  # written before version 8: weighed here
                connection.from_arrow(self._rulings()).create_view(name)
                continue
            else:  # one file or a folder of segments, whatever version wrote it: as it is
                found = layout.path_of(version.base, name)
                if not found.exists():
                    found = version.base / f"{name}.parquet"  # kept as one file before
                if not found.exists():  # older than the table
                    connection.from_arrow(TABLES[name].empty_table()).create_view(name)
                    continue
                segments = _listed_segments(version, name) if found.is_dir() else [found]
                listed = ", ".join(map(_quoted, segments))
                connection.execute(f"CREATE VIEW {name} AS SELECT * FROM read_parquet([{listed}])")  # noqa: S608
                continue
            if name == "sightings":  # carried rows expanded, left-out texts their ruling's
                kept_as = layout.segments_version(self.path, "rulings") or SCHEMA_VERSION
                unkeyed = kept_as < RULES_BY_NUMBER
                view = _sightings_view(source, _carries(self.path), renames, unkeyed=unkeyed)
                connection.execute(view)
                continue
            if name == "changes" and renames:  # stored under a name since learned as translated
                columns = columns.replace('"card"', "coalesce(a.english, c.card) AS card")
                source += " AS c LEFT JOIN card_aliases AS a ON a.alias = c.card"
            # Names are our tables' and columns', paths are quoted: no injection.
            connection.execute(f"CREATE VIEW {name} AS SELECT {columns} FROM {source}")  # noqa: S608
        connection.execute(_TRANSLATION_TEXTS)
        return connection


# A change's kind where its part is older than the column: from its rule numbers, as
# schema.kinds_of() gives it.
_KIND_OF_NUMBER = (
    "CASE WHEN coalesce(new_rule_id, old_rule_id) IS NULL THEN 'ruling' "
    r"WHEN regexp_full_match(coalesce(new_rule_id, old_rule_id), '\d{3}(\.\d+[a-z]*)?\.?') "
    "THEN 'rule' ELSE 'glossary' END"
)


def _part_columns(out: Path, name: str) -> str:
    """The SELECT list of table NAME's parts: every column, as null where no part has it.

    Parts are written in run order, so the last has every column any part has; columns
    newer than it are null (a change's kind follows from its rule numbers), and the
    columns of carried rows are kept where it has them.
    """
    last = layout.part_path(out, name, layout.part_runs(out, name)[-1])
    present = {*pq.read_schema(last).names, PARTITION_KEY}
    listed = []
    for field in TABLES[name]:
        column = f'"{field.name}"'
        if name == "changes" and field.name == "kind":
            listed.append(
                f"coalesce({column}, {_KIND_OF_NUMBER}) AS kind"
                if field.name in present
                else f"{_KIND_OF_NUMBER} AS kind"
            )
        elif field.name in present:
            listed.append(column)
        else:
            listed.append(f"CAST(NULL AS {_SQL_TYPES[str(field.type)]}) AS {column}")
    listed += [f'"{c}"' for c in CARRY_COLUMNS if name == "sightings" and c in present]
    return ", ".join(listed)


_SQL_TYPES = {
    "string": "VARCHAR",
    "date32[day]": "DATE",
    "int64": "BIGINT",
    "bool": "BOOLEAN",
    "double": "DOUBLE",
}


def _carries(out: Path) -> bool:
    """Whether the last sightings part has the columns of carried rows (schema version 6)."""
    last = layout.part_path(out, "sightings", layout.part_runs(out, "sightings")[-1])
    return "carried" in pq.read_schema(last).names


def _texts_of(hashes: Column, cards: Column, rulings: pa.Table) -> Column:
    """The text of each of HASHES as the ruling of its card prints it, else as any does.

    Rulings of one hash may print it differently (typographic quotes): of several, the
    least, as the DuckDB view translation_texts takes it.
    """
    own = rulings.group_by(["text_hash", "card"], use_threads=False).aggregate([("text", "min")])
    anyone = rulings.group_by("text_hash", use_threads=False).aggregate([("text", "min")])
    keys = [
        f"{h}\x00{c}" for h, c in zip(listed(own["text_hash"]), listed(own["card"]), strict=True)
    ]
    mine = dict(zip(keys, strings(own["text_min"]), strict=True))
    theirs = dict(zip(strings(anyone["text_hash"]), strings(anyone["text_min"]), strict=True))
    wanted = [f"{h}\x00{c}" for h, c in zip(listed(hashes), listed(cards), strict=True)]
    if not theirs:
        return pa.nulls(len(wanted), pa.string())
    found = lookup(pa.array(wanted, pa.string()), mine)
    return pc.coalesce(found, lookup(hashes.cast(pa.string()), theirs))


_TRANSLATION_TEXTS = (
    "CREATE VIEW translation_texts AS "
    "WITH own AS (SELECT text_hash, card, min(text) AS text FROM rulings GROUP BY ALL), "
    "anyone AS (SELECT text_hash, min(text) AS text FROM rulings GROUP BY ALL) "
    "SELECT t.*, coalesce(a.text, c.text) AS text, coalesce(b.text, d.text) AS original_text "
    "FROM translations AS t "
    "LEFT JOIN own AS a ON a.text_hash = t.text_hash AND a.card IS NOT DISTINCT FROM t.card "
    "LEFT JOIN anyone AS c ON c.text_hash = t.text_hash "
    "LEFT JOIN own AS b ON b.text_hash = t.original_text_hash "
    "AND b.card IS NOT DISTINCT FROM t.card "
    "LEFT JOIN anyone AS d ON d.text_hash = t.original_text_hash "
    "ORDER BY t.card NULLS LAST, t.lang, t.text_hash"
)


# A rule of a dataset whose rulings are not yet keyed by rule number (before version 7,
# until its next run upgrades it) may be keyed to no ruling: its text is its hash's.
_BY_HASH = (
    " LEFT JOIN (SELECT text_hash, min(text) AS text FROM rulings GROUP BY text_hash) AS h "
    "ON s.text IS NULL AND r.text IS NULL AND h.text_hash = s.text_hash"
)


def _aliases(version: store.Version) -> pa.Table:
    """Each translated card name the runs learned (`alias`), with its `english` name."""
    pairs = sorted(translated_names(version).items())
    return pa.table(
        {"alias": [a for a, _ in pairs], "english": [e for _, e in pairs]}, schema=_ALIASES
    )


_ALIASES = make_schema([pa.field("alias", pa.string()), pa.field("english", pa.string())])


def _sightings_view(
    source: str,
    carries: bool,  # noqa: FBT001
    renames: bool = False,  # noqa: FBT001, FBT002
    *,
    unkeyed: bool = False,
) -> str:
    """The DuckDB view of the sightings parts of SOURCE (a read_parquet() of them).

    If some part CARRIES rows (storage/carry.py), each carried row becomes the sightings it
    stands for: the base run's rows of the same file from `base_position` on, with the
    carried row's run, file columns and positions. Each text left out on disk is then taken
    from the ruling of the row's key.
    """
    names = TABLES["sightings"].names
    stored = f"SELECT * FROM {source}"  # noqa: S608 - our SQL, a quoted path
    if carries:
        kept = {*FILE_COLUMNS, PARTITION_KEY}
        taken = ", ".join(
            f'c."{n}"'
            if n in kept
            else "c.position + c.k AS position"
            if n == "position"
            else f'w."{n}"'
            for n in names
        )
        listed = ", ".join(f'"{n}"' for n in names)
        stored = (
            f"WITH stored AS ({stored}), whole AS (SELECT * FROM stored WHERE carried IS NULL), "  # noqa: S608
            "carried AS (SELECT *, unnest(range(carried)) AS k FROM stored "
            "WHERE carried IS NOT NULL) "
            f"SELECT {listed} FROM whole UNION ALL SELECT {taken} FROM carried AS c "
            "JOIN whole AS w ON w.run = c.base_run AND w.source_path = c.source_path "
            "AND w.position = c.base_position + c.k"
        )
    columns = ", ".join(
        f"coalesce(s.text, r.text{', h.text' if unkeyed else ''}) AS text"
        if column == "text"
        else "coalesce(a.english, s.card) AS card"
        if column == "card" and renames
        else f's."{column}"'
        for column in names
    )
    aliased = " LEFT JOIN card_aliases AS a ON a.alias = s.card" if renames else ""
    same_key = " AND ".join(f"s.{part} IS NOT DISTINCT FROM r.{part}" for part in RULING_KEY)
    # The path is quoted and the rest is ours: no injection.
    return (
        f"CREATE VIEW sightings AS SELECT {columns} FROM ({stored}) AS s "  # noqa: S608
        f"LEFT JOIN rulings AS r ON s.text IS NULL AND {same_key} "
        f"{_BY_HASH if unkeyed else ''}{aliased} "
        "ORDER BY s.run, s.source_path, s.position"
    )


def _day(value: dt.date | str) -> dt.date:
    return dt.date.fromisoformat(value) if isinstance(value, str) else value


def _listed_parts(version: store.Version, name: str) -> list[Path]:
    """The parts of table NAME of VERSION: those its manifest lists (else on disk), in order."""
    out, upto = version.out, version.last_run
    listing = version.listing
    runs = layout.part_runs(out, name) if listing is None else listing.parts.get(name, ())
    return [layout.part_path(out, name, run) for run in sorted(runs) if run <= upto]


def _listed_segments(version: store.Version, name: str) -> list[Path]:
    """The segments of table NAME of VERSION: those its manifest lists (else on disk)."""
    listing = version.listing
    found = layout.segment_ids(version.base, name) if listing is None else listing.segments[name]
    return [layout.segment_path(version.base, name, seg) for seg in sorted(found)]


def _quoted(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def open_dataset(path: str | Path = "normalized") -> Dataset:
    """Open the dataset in PATH; a missing or foreign folder raises a UsageError or StoreError."""
    return Dataset(path)


__all__ = ["Dataset", "open_dataset"]
