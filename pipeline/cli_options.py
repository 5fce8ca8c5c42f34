"""The options more than one command takes, each declared once (sqlite-utils' way).

A command applies the decorators here; an option only one command takes is declared above
that command in cli.py. An option whose help differs between commands is declared once with
its help as the one argument.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from pipeline.fetching.client import MAX_SIZE, Settings
from pipeline.fetching.fetch import SOURCES, Upstreams
from pipeline.limits import Limits

if TYPE_CHECKING:
    from collections.abc import Callable

_Command = TypeVar("_Command", bound="Callable[..., Any]")


def out(text: str) -> Callable[[_Command], _Command]:
    """--out DIR, the dataset folder: TEXT says whether the command reads or writes it."""
    return click.option(
        "--out",
        type=click.Path(path_type=Path),
        metavar="DIR",
        default=Path("normalized"),
        show_default=True,
        help=text,
    )


RETAIN = click.option(
    "--retain",
    type=click.FloatRange(min=0, max=10 * 365 * 24 * 3600),
    metavar="SECONDS",
    help="Keep superseded versions this long after they were superseded, for readers that "
    "pinned them (the one just before the version in force is always kept) [default: "
    "PIPELINE_RETAIN_SECONDS, else 3600].",
)
READ_OUT = out("Dataset folder to read.")
WRITE_OUT = out("Dataset folder to write.")


def catalogs(text: str) -> Callable[[_Command], _Command]:
    """--catalog FILE, repeatable: card catalogs besides those a raw root holds."""
    return click.option(
        "--catalog",
        "catalogs",
        multiple=True,
        type=click.Path(path_type=Path, dir_okay=False, exists=True),
        help=text,
    )


def workers(text: str) -> Callable[[_Command], _Command]:
    """--workers N, the processes of the per-file stage."""
    return click.option("--workers", type=click.IntRange(min=1), metavar="N", help=text)


def wait(text: str) -> Callable[[_Command], _Command]:
    """--wait SECONDS, how long to wait for a lock another job holds."""
    return click.option(
        "--wait",
        type=click.FloatRange(min=0),
        default=0,
        show_default=True,
        metavar="SECONDS",
        help=text,
    )


_UPSTREAMS, _SETTINGS = Upstreams(), Settings()  # the defaults the options show
_UNITS = {
    "": 1,
    "k": 1 << 10,
    "kib": 1 << 10,
    "m": 1 << 20,
    "mib": 1 << 20,
    "g": 1 << 30,
    "gib": 1 << 30,
}


class _Size(click.ParamType[int, object]):
    """A size in bytes, or with a binary unit: 16MiB, 4GiB, 500KiB."""

    name = "SIZE"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:  # noqa: ANN401 - click's signature
        """VALUE as a whole number of bytes, at least 1."""
        if isinstance(value, int):
            return value
        text = str(value).strip().lower()
        number = text.rstrip("kmgib")
        unit = text[len(number) :]
        if not number.isdigit() or unit not in _UNITS or int(number) < 1:
            self.fail(
                f"{value!r} is not a size (bytes, or a number with KiB, MiB or GiB)", param, ctx
            )
        return int(number) * _UNITS[unit]


def _shown(size: int) -> str:
    """SIZE in the largest binary unit that divides it: 4GiB, 16MiB."""
    for unit, factor in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size % factor == 0:
            return f"{size // factor}{unit}"
    return str(size)


def _seconds(flag: str, default: float, text: str) -> Callable[[_Command], _Command]:
    """FLAG SECONDS, a time limit of at least 0.1 s."""
    return click.option(
        flag,
        type=click.FloatRange(min=0.1),
        metavar="SECONDS",
        default=default,
        show_default=True,
        help=text,
    )


def fetch_options(command: _Command) -> _Command:
    """The SOURCE arguments and options `fetch` and `update` share."""
    options = [
        click.argument("sources", nargs=-1, type=click.Choice(SOURCES)),
        click.option(
            "--raw",
            type=click.Path(path_type=Path, file_okay=False),
            metavar="DIR",
            default=Path("raw"),
            show_default=True,
            help="Raw folder to fetch into.",
        ),
        click.option(
            "--scryfall-api",
            metavar="URL",
            default=_UPSTREAMS.scryfall,
            show_default=True,
            help="Scryfall API root (its /bulk-data index).",
        ),
        click.option(
            "--mtgjson-api",
            metavar="URL",
            default=_UPSTREAMS.mtgjson,
            show_default=True,
            help="MTGJSON v5 API root (AllPrintings.json.xz, Meta.json).",
        ),
        click.option(
            "--comprules-page",
            metavar="URL",
            default=_UPSTREAMS.comprules,
            show_default=True,
            help="The rules page linking the Comprehensive Rules .txt.",
        ),
        click.option(
            "--pause",
            type=click.FloatRange(min=0),
            metavar="SECONDS",
            default=_SETTINGS.pause,
            show_default=True,
            help="Seconds between two requests to one host (Scryfall asks 50 to 100 ms).",
        ),
        _seconds(
            "--timeout",
            _SETTINGS.read_timeout,
            f"Seconds a server may stay silent (connect: at most {_SETTINGS.connect_timeout:g}).",
        ),
        click.option(
            "--retries",
            type=click.IntRange(min=0),
            metavar="N",
            default=_SETTINGS.retries,
            show_default=True,
            help="Attempts after the "
            "first, per request, on 408, 429, 5xx and broken connections; each waits "
            "1, 2, 4... seconds, or the Retry-After asked (seconds or an HTTP date).",
        ),
        click.option(
            "--max-wait",
            type=click.FloatRange(min=0),
            metavar="SECONDS",
            default=_SETTINGS.max_wait,
            show_default=True,
            help="Longest wait before a retry; a Retry-After above it fails the source at once.",
        ),
        _seconds(
            "--request-time",
            _SETTINGS.request_seconds,
            "Seconds one request may take, its body, retries and waits included.",
        ),
        _seconds(
            "--source-time",
            _SETTINGS.source_seconds,
            "Seconds one source may take, every request and wait included.",
        ),
        _seconds(
            "--max-time",
            _SETTINGS.total_seconds,
            "Seconds the whole fetch may take "
            "(not the ingest after it), waits included; the sources left when it is "
            "spent fail.",
        ),
        *(
            click.option(
                f"--{name}-max-size",
                type=_Size(),
                default=_shown(MAX_SIZE[name]),
                show_default=True,
                help=f"Largest {name} file taken, as stored (any "
                "Content-Encoding undone), in bytes or with KiB, MiB, GiB.",
            )
            for name in SOURCES
        ),
        wait(
            "Seconds to wait for another fetch or update holding --raw (update holds it to "
            "the end of its ingest) and, in update, for another ingest writing --out; then "
            "exit 4."
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def fetch_settings(options: dict[str, Any]) -> tuple[list[str], Upstreams, Settings]:
    """The sources (default: all, each once), upstreams and settings of fetch_options."""
    names = list(dict.fromkeys(options["sources"])) or list(SOURCES)
    upstreams = Upstreams(
        options["scryfall_api"], options["mtgjson_api"], options["comprules_page"]
    )
    settings = Settings(
        pause=options["pause"],
        connect_timeout=min(_SETTINGS.connect_timeout, options["timeout"]),
        read_timeout=options["timeout"],
        retries=options["retries"],
        max_wait=options["max_wait"],
        request_seconds=options["request_time"],
        source_seconds=options["source_time"],
        total_seconds=options["max_time"],
        max_size={name: options[f"{name}_max_size"] for name in SOURCES},
        limits=Limits.from_env(),
    )
    return names, upstreams, settings
