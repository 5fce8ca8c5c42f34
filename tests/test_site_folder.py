"""The site folder holds only what is published: its manifest and lock sit beside it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import RAW

from pipeline import ingest
from pipeline.errors import UsageError
from pipeline.publishing.site import LOCK, MANIFEST, beside, build_site


@pytest.fixture(scope="module")
def seeds(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The dataset of raw/'s seeds."""
    out = tmp_path_factory.mktemp("seeds") / "normalized"
    ingest([RAW], out=out)
    return out


def _names(folder: Path) -> set[str]:
    return {p.name for p in folder.rglob("*")}


def test_the_folder_holds_only_the_site(seeds: Path, tmp_path: Path) -> None:
    """No dot-file in the folder: `.site.site.json` and `.site.site.lock` beside it."""
    folder = tmp_path / "site"
    build_site(seeds, folder)
    assert not [name for name in _names(folder) if name.startswith(".")]
    assert beside(folder) == (tmp_path / ".site.site.json", tmp_path / ".site.site.lock")
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".site.site.json",
        ".site.site.lock",
        "site",
    ]
    assert beside(Path("site/")) == beside(Path("site"))
    with pytest.raises(UsageError, match="needs a folder with a name"):
        beside(Path("/"))


def test_a_manifest_beside_a_folder_of_other_files_makes_it_no_site(
    seeds: Path, tmp_path: Path
) -> None:
    """The site's folder emptied and given files of one's own: refused, nothing written.

    So is a folder with a page the manifest lists beside a file it does not list.
    """
    folder = tmp_path / "site"
    build_site(seeds, folder)
    shutil.rmtree(folder)
    folder.mkdir()
    (folder / "notes.txt").write_text("mine", encoding="utf-8")
    (folder / "index.html").write_text("mine", encoding="utf-8")
    with pytest.raises(UsageError, match=r"did not write \(notes.txt not in \.site\.site\.json\)"):
        build_site(seeds, folder)
    assert (folder / "index.html").read_text(encoding="utf-8") == "mine"
    assert sorted(p.name for p in folder.iterdir()) == ["index.html", "notes.txt"]
    elsewhere = tmp_path / "other"
    elsewhere.mkdir()
    (elsewhere / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(UsageError, match=r"did not write \(no \.other\.site\.json beside it\)"):
        build_site(seeds, elsewhere)


def test_a_site_of_an_older_build_moves_its_manifest_out(seeds: Path, tmp_path: Path) -> None:
    """A folder with `.site.json` and `.site.lock` in it, as builds kept them before.

    Rebuilt in place from that manifest (nothing written again), both dot-files gone from
    the folder, the manifest beside it.
    """
    folder = tmp_path / "site"
    build_site(seeds, folder)
    manifest, lock = beside(folder)
    manifest.rename(folder / MANIFEST)
    lock.rename(folder / LOCK)
    pages = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file() and p.suffix == ".html"}
    report = build_site(seeds, folder)
    assert not report.full
    assert report.written == ()
    assert not (folder / MANIFEST).exists()
    assert not (folder / LOCK).exists()
    assert manifest.is_file()
    assert {p: p.read_bytes() for p in pages} == pages
