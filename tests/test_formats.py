"""Files as users download them: compressed, zipped, JSON Lines; bombs, truncation."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import os
import shutil
import zipfile
from hashlib import sha256
from typing import TYPE_CHECKING

import pytest
import zstandard
from click.testing import CliRunner
from conftest import FIXTURES, RAW, rows

from pipeline import ingest
from pipeline.cli import cli
from pipeline.limits import Limits
from pipeline.models import FileStatus

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

SEED = RAW / "001_ca7dd0badab20c1e.txt"  # Rift Bolt, 13 rulings, plain layout
SEED_RULINGS = 13
SET_FILE = FIXTURES / "raw" / "mtgjson-tsp-rift-bolt.json"  # Rift Bolt, 15 rulings
SET_RULINGS = 15
RULINGS = FIXTURES / "raw" / "scryfall" / "rulings-single.json"  # Deathrite Shaman, 2
CARDS = FIXTURES / "catalog" / "scryfall-cards.json"
COMPRESS: dict[str, Callable[[bytes], bytes]] = {
    "gz": gzip.compress,
    "xz": lzma.compress,
    "bz2": bz2.compress,
    "zst": zstandard.ZstdCompressor().compress,
}


def _raw(tmp_path: Path, files: dict[str, bytes]) -> Path:
    raw = tmp_path / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (raw / name).write_bytes(data)
    return raw


def _stored(out: Path) -> dict[str, tuple[str, int]]:
    """source_path -> (status, rulings) of the files table."""
    return {r["source_path"]: (r["status"], r["rulings"]) for r in rows(out, "files")}


def _texts(out: Path) -> list[tuple[str | None, str]]:
    return sorted((r["card"], r["text"]) for r in rows(out, "rulings"))


@pytest.mark.parametrize(
    ("original", "suffix", "count"),
    [
        (SEED, "gz", SEED_RULINGS),
        (SET_FILE, "xz", SET_RULINGS),
        (SET_FILE, "bz2", SET_RULINGS),
        (SET_FILE, "zst", SET_RULINGS),
    ],
    ids=["plain-text-seed-in-gz", "set-file-in-xz", "set-file-in-bz2", "set-file-in-zst"],
)
def test_each_compression_gives_the_rows_of_the_plain_file(
    tmp_path: Path, original: Path, suffix: str, count: int
) -> None:
    """A compressed file is stored with its own name and the rows of its content, plain."""
    name = f"{original.name}.{suffix}"
    packed = _raw(tmp_path / "packed", {name: COMPRESS[suffix](original.read_bytes())})
    plain = _raw(tmp_path / "plain", {original.name: original.read_bytes()})
    report = ingest([packed], out=tmp_path / "out")
    ingest([plain], out=tmp_path / "out-plain")
    assert report.rejected == ()
    assert _stored(tmp_path / "out") == {name: ("stored", count)}
    assert _texts(tmp_path / "out") == _texts(tmp_path / "out-plain")
    # A dump's source is its name without the compression: the same dump as the plain file.
    sources = {r["source"] for r in rows(tmp_path / "out", "sightings")}
    assert sources == {r["source"] for r in rows(tmp_path / "out-plain", "sightings")}


def test_a_zip_holds_one_document_per_member(tmp_path: Path) -> None:
    """Each member of a zip is a document named `archive.zip/member`; folders are no members."""
    archive = tmp_path / "raw" / "archive.zip"
    archive.parent.mkdir()
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as packed:
        packed.write(SEED, "dumps/rift-bolt.txt")
        packed.write(SET_FILE, "TSP.json")
        packed.writestr("__MACOSX/._TSP.json", b"\x00\x05\x16\x07")
    report = ingest([archive.parent], out=tmp_path / "out")
    assert report.rejected == ()
    assert _stored(tmp_path / "out") == {
        "archive.zip/TSP.json": ("stored", SET_RULINGS),
        "archive.zip/dumps/rift-bolt.txt": ("stored", SEED_RULINGS),
    }
    paths = {r["source_path"] for r in rows(tmp_path / "out", "sightings")}
    assert paths == {"archive.zip/TSP.json", "archive.zip/dumps/rift-bolt.txt"}


@pytest.mark.parametrize(
    ("name", "pack"),
    [
        ("TSP.json", lzma.compress),
        ("rift-bolt.txt", gzip.compress),
        ("notes.csv", zstandard.ZstdCompressor().compress),
        ("TSP.json.gz", bz2.compress),
    ],
    ids=["xz-named-json", "gzip-named-txt", "zstd-named-csv", "bzip2-named-gz"],
)
def test_compression_is_told_by_its_magic_bytes_not_the_name(
    tmp_path: Path, name: str, pack: Callable[[bytes], bytes]
) -> None:
    """A compressed file under a misleading name is read by what its first bytes say."""
    raw = _raw(tmp_path, {name: pack(SET_FILE.read_bytes())})
    report = ingest([raw], out=tmp_path / "out")
    assert report.rejected == ()
    assert _stored(tmp_path / "out") == {name: ("stored", SET_RULINGS)}


def _jsonl(bad_line: bool) -> bytes:  # noqa: FBT001
    """The real rulings response as JSON Lines, a broken line between its two rulings."""
    lines = [json.dumps(item) for item in json.loads(RULINGS.read_bytes())["data"]]
    if bad_line:
        lines.insert(1, '{"object": "ruling", "comment": "cut short')
    return ("\n".join(lines) + "\n").encode()


@pytest.mark.parametrize("compressed", [False, True], ids=["jsonl", "jsonl-gz"])
def test_json_lines_with_a_bad_line_store_the_rest(tmp_path: Path, compressed: bool) -> None:  # noqa: FBT001
    """A line that is no JSON is a warning naming its line; the lines around it are stored."""
    name = "rulings.jsonl.gz" if compressed else "rulings.jsonl"
    data = gzip.compress(_jsonl(bad_line=True)) if compressed else _jsonl(bad_line=True)
    report = ingest([_raw(tmp_path, {name: data})], out=tmp_path / "out")
    assert report.rejected == ()
    [stored] = report.files
    assert (stored.layout, stored.rulings) == ("scryfall", 2)
    assert stored.warnings == ("line 2 is not JSON (Unterminated string starting at); skipped",)
    assert {r["source"] for r in rows(tmp_path / "out", "sightings")} == {"scryfall/wotc"}


def test_json_lines_are_told_by_their_lines_not_the_name(tmp_path: Path) -> None:
    """JSON Lines named .json are read as lines; a JSON document over many lines is JSON."""
    raw = _raw(
        tmp_path, {"rulings.json": _jsonl(bad_line=False), "one.json": SET_FILE.read_bytes()}
    )
    report = ingest([raw], out=tmp_path / "out")
    assert {f.source_path: (f.layout, f.rulings) for f in report.files} == {
        "one.json": ("mtgjson", SET_RULINGS),
        "rulings.json": ("scryfall", 2),
    }


def test_json_lines_of_cards_name_the_rulings_as_catalog(tmp_path: Path) -> None:
    """Scryfall's Oracle Cards as gzipped JSON Lines, --catalog: oracle-id rulings get a card."""
    cards = tmp_path / "oracle-cards.jsonl.gz"
    lines = [json.dumps(card) for card in json.loads(CARDS.read_bytes())]
    cards.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    raw = _raw(tmp_path, {"rulings.jsonl": _jsonl(bad_line=False)})
    out = tmp_path / "out"
    result = CliRunner().invoke(
        cli, ["ingest", str(raw), "--out", str(out), "--catalog", str(cards)]
    )
    assert result.exit_code == 0, result.output
    assert {(r["card"], r["oracle_id"]) for r in rows(out, "rulings")} == {
        ("Deathrite Shaman", "22f1a4a4-c423-4d1c-8775-0ed604a9fa51")
    }


def test_json_lines_of_cards_as_input_say_they_are_a_catalog(tmp_path: Path) -> None:
    """Card objects given as rulings are rejected with the option that reads them."""
    lines = [json.dumps(card) for card in json.loads(CARDS.read_bytes())]
    raw = _raw(tmp_path, {"cards.jsonl": ("\n".join(lines) + "\n").encode()})
    [rejected] = ingest([raw], out=tmp_path / "out").rejected
    assert (
        rejected.reason == "JSON Lines of Scryfall cards: a card catalog (pass it with --catalog)"
    )


def _bomb(suffix: str) -> bytes:
    """1 GiB of zeros: a GiB-long stream of 1,024 members (frames), each 1 MiB compressed once."""
    member = COMPRESS[suffix](bytes(1 << 20))
    return member * 1024


@pytest.mark.parametrize("suffix", ["gz", "xz", "bz2", "zst"])
def test_a_decompression_bomb_is_rejected_beside_the_seed(tmp_path: Path, suffix: str) -> None:
    """1 GiB of zeros in a small file is stopped at its ratio cap; the seed beside it is stored."""
    raw = _raw(tmp_path, {"bomb.json." + suffix: _bomb(suffix), SEED.name: SEED.read_bytes()})
    report = ingest([raw], out=tmp_path / "out")
    [rejected] = report.rejected
    assert rejected.source_path == f"bomb.json.{suffix}"
    assert rejected.reason is not None
    assert rejected.reason.endswith(", over the limit of 200 (PIPELINE_MAX_RATIO raises it)")
    assert report.rulings_read == SEED_RULINGS


def test_a_stream_past_the_expanded_cap_is_rejected(tmp_path: Path) -> None:
    """PIPELINE_MAX_EXPANDED lowered: a set file expanding past it is rejected naming it."""
    raw = _raw(tmp_path, {"TSP.json.xz": lzma.compress(SET_FILE.read_bytes()),
                          SEED.name: SEED.read_bytes()})  # fmt: skip
    env = {"PIPELINE_MAX_EXPANDED": "4096"}
    result = CliRunner(env=env).invoke(cli, ["ingest", str(raw), "--out", str(tmp_path / "out")])
    assert result.exit_code == 3, result.output
    assert (
        "TSP.json.xz: xz data expanding past 4,096 bytes, over the limit of 4,096 "
        "(PIPELINE_MAX_EXPANDED raises it)"
    ) in result.output
    assert _stored(tmp_path / "out")[SEED.name] == ("stored", SEED_RULINGS)


@pytest.mark.parametrize("suffix", ["xz", "gz", "bz2", "zst"])
def test_a_truncated_file_is_rejected_and_the_rest_stored(tmp_path: Path, suffix: str) -> None:
    """A download cut short is rejected with the decompressor's reason; the seed is stored."""
    packed = COMPRESS[suffix](SET_FILE.read_bytes())
    name = f"TSP.json.{suffix}"
    raw = _raw(tmp_path, {name: packed[: len(packed) // 2], SEED.name: SEED.read_bytes()})
    report = ingest([raw], out=tmp_path / "out")
    [rejected] = report.rejected
    assert rejected.source_path == name
    assert rejected.reason is not None
    assert rejected.reason.startswith(f"a truncated or corrupt {_KIND[suffix]} file (")
    assert report.rulings_read == SEED_RULINGS


_KIND = {"xz": "xz", "gz": "gzip", "bz2": "bzip2", "zst": "zstd"}


def test_a_corrupt_zip_member_is_rejected_and_the_others_stored(tmp_path: Path) -> None:
    """A member whose bytes were damaged fails its CRC; the archive's other member is stored."""
    archive = tmp_path / "raw" / "archive.zip"
    archive.parent.mkdir()
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_STORED) as packed:
        packed.writestr("a.txt", SEED.read_bytes())
        packed.writestr("b.json", SET_FILE.read_bytes())
    data = bytearray(archive.read_bytes())
    at = data.index(b"Rift Bolt")  # the first member's title, stored as is
    data[at : at + 4] = b"Rust"
    archive.write_bytes(bytes(data))
    report = ingest([archive.parent], out=tmp_path / "out")
    [rejected] = report.rejected
    assert rejected.source_path == "archive.zip/a.txt"
    assert rejected.reason == "a truncated or corrupt zip file (Bad CRC-32 for file 'a.txt')"
    assert _stored(tmp_path / "out")["archive.zip/b.json"] == ("stored", SET_RULINGS)


@pytest.mark.parametrize("kind", ["xz", "zip"])
def test_an_unchanged_compressed_file_is_skipped(tmp_path: Path, kind: str) -> None:
    """The next run skips it by the sha256 of its stored bytes, even once its time changed."""
    name = f"TSP.json.{kind}"
    raw = tmp_path / "raw"
    raw.mkdir()
    if kind == "zip":
        with zipfile.ZipFile(raw / name, "w") as packed:
            packed.write(SET_FILE, "TSP.json")
            packed.write(SEED, SEED.name)
    else:
        (raw / name).write_bytes(lzma.compress(SET_FILE.read_bytes()))
    first = ingest([raw], out=tmp_path / "out")
    assert first.rejected == ()
    stat = (raw / name).stat()
    os.utime(raw / name, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # hashed again
    again = ingest([raw], out=tmp_path / "out")
    assert [(f.source_path, f.status) for f in again.files] == [(name, FileStatus.SKIPPED)]
    shas = {r["source_sha256"] for r in rows(tmp_path / "out", "files")}
    assert shas == {again.files[0].source_sha256}


def test_a_streamed_file_is_not_refused_for_its_size(tmp_path: Path) -> None:
    """The memory budget refuses a text larger than itself unread, not JSON read as a stream."""
    packed = lzma.compress(SET_FILE.read_bytes())
    raw = _raw(tmp_path, {"TSP.json.xz": packed, "TSP.json": SET_FILE.read_bytes()})
    shutil.copy(SEED, raw / SEED.name)
    budget = min(len(packed), SEED.stat().st_size) - 1
    report = ingest([raw], out=tmp_path / "out", limits=Limits(memory=budget))
    assert [f.source_path for f in report.rejected] == [SEED.name]
    assert _stored(tmp_path / "out") == {
        "TSP.json": ("stored", SET_RULINGS),
        "TSP.json.xz": ("stored", SET_RULINGS),
        SEED.name: ("rejected", 0),
    }


def test_a_compressed_text_past_the_memory_budget_is_rejected(tmp_path: Path) -> None:
    """A text is held whole: one that expands past the memory budget is refused as it grows."""
    blocks = (f"2024-02-02\n\n{sha256(str(n).encode()).hexdigest()}\n\n" for n in range(40_000))
    text = ("Rift Bolt\n\n" + "".join(blocks)).encode()  # 3 MB that compresses 2 to 3 times
    raw = _raw(tmp_path, {"big.txt.gz": gzip.compress(text), "TSP.json": SET_FILE.read_bytes()})
    report = ingest([raw], out=tmp_path / "out", limits=Limits(memory=1 << 21))
    [rejected] = report.rejected
    assert rejected.reason == (
        "a compressed text expanding past 2,097,152 bytes, its budget, over the limit of "
        "2,097,152 (PIPELINE_FILE_MEMORY raises it)"
    )


def test_a_json_line_past_a_limit_rejects_the_file(tmp_path: Path) -> None:
    """A line nested past the depth cap is a hostile file, not a slip: rejected, naming the line."""
    lines = _jsonl(bad_line=False).decode().splitlines()
    lines.insert(1, '{"object": "ruling", "x": ' + "[" * 100 + "]" * 100 + "}")
    report = ingest(
        [_raw(tmp_path, {"deep.jsonl": "\n".join(lines).encode()})], out=tmp_path / "out"
    )
    [rejected] = report.rejected
    assert rejected.reason == (
        "line 2: JSON nested too deeply, over the limit of 64 (PIPELINE_MAX_DEPTH raises it)"
    )
