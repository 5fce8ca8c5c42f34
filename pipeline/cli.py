"""The command line: a thin shell over the library; the only module that prints."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click
from tqdm import tqdm

from pipeline.errors import PipelineError
from pipeline.ingest import IngestReport, ingest
from pipeline.models import DateOrder, FileStatus

if TYPE_CHECKING:
    from collections.abc import Iterable

    from pipeline.read import InputFile

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_PARTIAL = 3


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="mtg-rulings-pipeline")
def cli() -> None:
    """Ingest Magic: The Gathering ruling dumps into a historied Parquet dataset."""


@cli.command("ingest")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=Path("normalized"),
    show_default=True,
    help="Dataset folder to write.",
)
@click.option(
    "--manifest",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    help="CSV with path, card, source, fetched_at, date_order "
    "[default: manifest.csv in each raw root].",
)
@click.option(
    "--date-order",
    type=click.Choice([o.value for o in DateOrder]),
    help="Day/month order for documents whose dates do not decide it.",
)
@click.option("--strict", is_flag=True, help="Store nothing if any input is rejected.")
@click.option(
    "--wait",
    type=click.FloatRange(min=0),
    default=0,
    show_default=True,
    help="Seconds to wait for another ingest writing the same --out.",
)
def ingest_command(  # noqa: PLR0917 - click passes one argument per option
    paths: tuple[Path, ...],
    out: Path,
    manifest: Path | None,
    date_order: str | None,
    strict: bool,  # noqa: FBT001 - click passes flags positionally
    wait: float,
) -> None:
    """Ingest raw dumps (files or folders; default raw/) into the dataset as one run."""
    try:
        report = ingest(
            list(paths) or [Path("raw")],
            out=out,
            manifest=manifest,
            date_order=DateOrder(date_order) if date_order else None,
            strict=strict,
            wait=wait,
            progress=_progress_bar,
        )
    except PipelineError as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(exc.exit_code)
    click.echo(summary(report))
    if not report.stored:
        sys.exit(EXIT_FAILED)
    sys.exit(EXIT_PARTIAL if report.rejected else EXIT_OK)


def _progress_bar(items: Iterable[InputFile], total: int) -> Iterable[InputFile]:
    # tqdm writes to stderr, and only when it is a terminal: batch logs stay clean.
    return tqdm(items, total=total, unit="file", disable=not sys.stderr.isatty(), leave=False)


def summary(report: IngestReport) -> str:
    """The human summary of one run, as printed at its end."""
    lines = [
        f"run {report.run}: " + ("stored" if report.stored else "NOT stored (--strict)"),
        f"  files read      {report.count(FileStatus.STORED)}",
        f"  files unchanged {report.count(FileStatus.SKIPPED)} (skipped)",
        f"  files rejected  {len(report.rejected)}",
        f"  rulings read    {report.rulings_read}",
        f"  new keys        {report.new_keys}",
        f"  duplicates      {report.duplicates}",
        f"  warnings        {len(report.warnings)}",
    ]
    if report.rejected:
        lines.append("rejected:")
        lines += [f"  {f.source_path}: {f.reason}" for f in report.rejected]
    if report.ambiguous:
        lines.append("ambiguous dates (left empty):")
        lines += [f"  {path}" for path in report.ambiguous]
    if report.warnings:
        lines.append("warnings:")
        lines += [f"  {w}" for w in report.warnings]
    return "\n".join(lines)


def main() -> None:
    """Entry point of the `pipeline` console script."""
    cli(prog_name="pipeline")
