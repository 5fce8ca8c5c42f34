"""Bytes to text: encodings, line ends, unusable files, the manifest."""

from __future__ import annotations

import codecs
import os
from typing import TYPE_CHECKING

import pytest

from pipeline.errors import InputError, UsageError
from pipeline.models import DateOrder
from pipeline.reading.read import MANIFEST_MAX, decode, discover, read_manifest

if TYPE_CHECKING:
    from pathlib import Path

TEXT = "Rift Bolt\r\n\r\n2024-02-02\r\n\r\nCards exiled with suspend aren\u2019t cast.\r\n"
EXPECTED = "Rift Bolt\n\n2024-02-02\n\nCards exiled with suspend aren\u2019t cast.\n"


@pytest.mark.parametrize(
    ("data", "encoding"),
    [
        (TEXT.encode("utf-8"), "utf-8"),
        (codecs.BOM_UTF8 + TEXT.encode("utf-8"), "utf-8"),
        (codecs.BOM_UTF16_LE + TEXT.encode("utf-16-le"), "utf-16-le"),
        (codecs.BOM_UTF16_BE + TEXT.encode("utf-16-be"), "utf-16-be"),
        (TEXT.replace("\r\n", "\r").encode("utf-8"), "utf-8"),
    ],
    ids=["utf8", "utf8-bom", "utf16le-bom", "utf16be-bom", "bare-cr"],
)
def test_decodes_supported_encodings(data: bytes, encoding: str) -> None:
    """BOMs pick the codec; CRLF and bare CR become LF; no warning is raised."""
    text, found, warnings = decode(data, "x.txt")
    assert (text, found, warnings) == (EXPECTED, encoding, ())


def test_cp1252_fallback_is_reported() -> None:
    """Text that is not UTF-8 decodes as cp1252, with a warning saying so."""
    text, encoding, warnings = decode(TEXT.encode("cp1252"), "x.txt")
    assert text == EXPECTED
    assert encoding == "cp1252"
    assert warnings == ("not UTF-8; decoded as cp1252",)


def test_utf16_without_bom_is_recognised_and_reported() -> None:
    """UTF-16 without a BOM is recognised by its zero bytes and reported."""
    text, encoding, warnings = decode(TEXT.encode("utf-16-le"), "x.txt")
    assert (text, encoding) == (EXPECTED, "utf-16-le")
    assert "no byte-order mark" in warnings[0]


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"", "empty file"),
        (b"  \n\r\n", "empty file"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary file"),
        (b"caf\xc3 \x81\x8d", "undecodable: neither UTF-8 nor cp1252 (byte 0x81)"),
        (codecs.BOM_UTF8 + b"\xff\xfe bad", "undecodable as utf-8-sig"),
    ],
    ids=["empty", "blank", "png", "not-utf8-nor-cp1252", "bad-after-bom"],
)
def test_unusable_bytes_raise_input_error(data: bytes, reason: str) -> None:
    """Unusable files raise InputError naming the file and the reason."""
    with pytest.raises(InputError) as caught:
        decode(data, "dir/bad.txt")
    assert caught.value.path == "dir/bad.txt"
    assert caught.value.reason.startswith(reason)
    assert str(caught.value).startswith("dir/bad.txt: ")


def test_manifest_reads_hints(tmp_path: Path) -> None:
    """Manifest rows become hints keyed by their relative path."""
    manifest = tmp_path / "m.csv"
    manifest.write_text(
        "path,card,source,fetched_at,date_order\n"
        "a/b.txt,Rift Bolt,gatherer,2024-02-03,DMY\nc.txt,,,,\n",
        encoding="utf-8",
    )
    hints, problems = read_manifest(manifest)
    assert problems == []
    assert hints["a/b.txt"].card == "Rift Bolt"
    assert hints["a/b.txt"].source == "gatherer"
    assert hints["a/b.txt"].date_order is DateOrder.DMY
    assert hints["c.txt"].card is None


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("card\nX\n", "a manifest needs a 'path' column"),
        ("path,colour\na.txt,red\n", "unknown manifest columns ['colour']"),
    ],
    ids=["no-path", "unknown-column"],
)
def test_malformed_manifest_is_a_usage_error(tmp_path: Path, content: str, message: str) -> None:
    """A manifest of the wrong shape stops the run before anything is read."""
    manifest = tmp_path / "m.csv"
    manifest.write_text(content, encoding="utf-8")
    with pytest.raises(UsageError, match=message.replace("[", r"\[").replace("(", r"\(")):
        read_manifest(manifest)


@pytest.mark.parametrize(
    ("row", "reason"),
    [
        ("a.txt,ymd", "date_order must be dmy or mdy, got 'ymd'; row ignored"),
        ("../../etc/passwd,", "path '../../etc/passwd' escapes the raw root; row ignored"),
        ("/etc/passwd,", "path '/etc/passwd' escapes the raw root; row ignored"),
        ("..\\x.txt,", "path '..\\\\x.txt' escapes the raw root; row ignored"),
    ],
    ids=["bad-order", "escapes-root", "absolute", "backslashes"],
)
def test_bad_manifest_rows_are_skipped_and_named(tmp_path: Path, row: str, reason: str) -> None:
    """A bad row is skipped with its line and reason; the good rows stand."""
    manifest = tmp_path / "m.csv"
    manifest.write_text(f"path,date_order\nok.txt,dmy\n{row}\n", encoding="utf-8")
    hints, problems = read_manifest(manifest)
    assert list(hints) == ["ok.txt"]
    assert problems == [("m.csv:3", reason)]


def test_discover_names_files_relative_to_root(tmp_path: Path) -> None:
    """Folders are read recursively; the manifest, READMEs and hidden files are not inputs."""
    (tmp_path / "sub").mkdir()
    for name in ("b.txt", "sub/a.txt", "manifest.csv", "README.md", ".hidden"):
        (tmp_path / name).write_text("x", encoding="utf-8")
    [(root, files)] = discover([tmp_path], None)
    assert root == tmp_path
    assert [f.name for f in files] == ["b.txt", "sub/a.txt"]
    [(root, files)] = discover([tmp_path / "sub" / "a.txt"], None)
    assert (root, [f.name for f in files]) == (tmp_path / "sub", ["a.txt"])


def test_discover_records_size_and_mtime_and_skips_folder_links(tmp_path: Path) -> None:
    """Each file's size and mtime come from the walk; links to folders are not followed."""
    raw = tmp_path / "raw"
    (raw / "deep" / "er").mkdir(parents=True)
    (raw / "deep" / "er" / "a.txt").write_text("abc", encoding="utf-8")
    (raw / ".git").mkdir()
    (raw / ".git" / "b.txt").write_text("hidden", encoding="utf-8")
    (raw / "loop").symlink_to(raw, target_is_directory=True)
    (raw / "link.txt").symlink_to(raw / "deep" / "er" / "a.txt")
    [(_, files)] = discover([raw], None)
    assert [(f.name, f.link, f.size) for f in files] == [
        ("deep/er/a.txt", False, 3),
        ("link.txt", True, 3),
    ]
    assert files[0].mtime_ns == (raw / "deep" / "er" / "a.txt").stat().st_mtime_ns


def test_discover_rejects_a_missing_path(tmp_path: Path) -> None:
    """A PATH that does not exist is a usage error naming it."""
    with pytest.raises(UsageError, match="nope: no such file or folder"):
        discover([tmp_path / "nope"], None)


def test_a_fifo_manifest_is_a_usage_error(tmp_path: Path) -> None:
    """A manifest that is a named pipe is refused before it is opened (it would block)."""
    manifest = tmp_path / "m.csv"
    os.mkfifo(manifest)
    with pytest.raises(UsageError, match="the manifest is not a regular file"):
        read_manifest(manifest)


def test_a_manifest_too_large_is_refused_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A manifest past 64 MiB (sparse here) stops the run as a usage error, before it is read."""
    manifest = tmp_path / "manifest.csv"
    with manifest.open("wb") as file:
        file.truncate(MANIFEST_MAX + 1)

    def unread(self: Path) -> bytes:
        raise AssertionError(self)

    monkeypatch.setattr(type(manifest), "read_bytes", unread)
    with pytest.raises(UsageError) as refused:
        read_manifest(manifest)
    assert str(refused.value) == (
        f"{manifest}: a manifest of {MANIFEST_MAX + 1:,} bytes, over the limit of {MANIFEST_MAX:,}"
    )
