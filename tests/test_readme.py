"""README's command reference against the command line itself, and its links to docs/."""

from __future__ import annotations

import re

import click
import pytest
from conftest import ROOT

from pipeline.cli import cli

README = (ROOT / "README.md").read_text(encoding="utf-8")
_HELP = {"--help", "-h"}
# An option as the reference writes it: `--out DIR`, `-o FILE`, `--date-order dmy|mdy`.
_OPTION = re.compile(r"(?<![\w/.-])(--[a-z][a-z-]*|-[a-zA-Z])(?![\w-])")


def _reference() -> str:
    """README's "Commands" section, up to the next section."""
    start = README.index("\n## Commands\n")
    return README[start : README.index("\n## ", start + 1)]


def _subsections() -> dict[str, str]:
    """Each command's subsection of the reference, by command name, heading included."""
    parts = re.split(r"\n(?=### `pipeline )", _reference())
    found: dict[str, str] = {}
    for part in parts[1:]:
        name = part.removeprefix("### `pipeline ").split(maxsplit=1)[0].rstrip("`")
        found[name] = part
    return found


def _commands() -> dict[str, click.Command]:
    """Every command of the `pipeline` group."""
    assert isinstance(cli, click.Group)
    return dict(cli.commands)


def _options(command: click.Command) -> set[str]:
    """Every flag of COMMAND's options, long and short, but --help."""
    flags: set[str] = set()
    for param in command.params:
        if isinstance(param, click.Option):
            flags.update(param.opts, param.secondary_opts)
    return flags - _HELP


def _named(text: str) -> set[str]:
    """Every option TEXT names inside code spans."""
    spans = re.findall(r"`([^`]*)`", text)
    return {flag for span in spans for flag in _OPTION.findall(span)}


def test_every_command_has_a_subsection() -> None:
    """README has a subsection for each command, and none for a command that does not exist."""
    assert sorted(_subsections()) == sorted(_commands())


@pytest.mark.parametrize("name", sorted(_commands()))
def test_options_match_help(name: str) -> None:
    """Each command's subsection names every option of `--help`, and no other."""
    command = _commands()[name]
    text = _subsections()[name]
    assert _named(text) == _options(command)


@pytest.mark.parametrize("name", sorted(_commands()))
def test_choices_and_arguments_are_named(name: str) -> None:
    """Every choice of an option or argument, and every argument, appears in the subsection."""
    command = _commands()[name]
    text = _subsections()[name]
    heading = text.splitlines()[0]
    for param in command.params:
        if isinstance(param.type, click.Choice):
            for choice in param.type.choices:
                assert str(choice) in text, (param.name, choice)
        if isinstance(param, click.Argument) and not isinstance(param.type, click.Choice):
            assert (param.name or "").upper() in heading


def test_group_options_are_named() -> None:
    """The reference's introduction names the group's own options (--version)."""
    intro = _reference().split("\n### ", 1)[0]
    assert _options(cli) <= _named(intro)


def test_every_docs_file_is_linked() -> None:
    """README links every file of docs/, and every docs/ link it holds leads to a file."""
    docs = {f"docs/{path.name}" for path in (ROOT / "docs").glob("*.md")}
    linked = set(re.findall(r"\]\((docs/[^)#]+)", README))
    assert docs == linked


def _slug(heading: str) -> str:
    """A heading's anchor as a code host makes it: lowercase, punctuation dropped, - for blanks."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(text: str) -> set[str]:
    """The anchors of every heading of a Markdown TEXT (fenced blocks left out)."""
    text = re.sub(r"```.*?```", "", text, flags=re.DOTALL)
    return {_slug(line.lstrip("#")) for line in text.splitlines() if re.match(r"#{1,6} ", line)}


_PAGES = [
    "README.md",
    "CHANGELOG.md",
    *(f"docs/{p.name}" for p in sorted((ROOT / "docs").glob("*.md"))),
]


@pytest.mark.parametrize("page", _PAGES)
def test_links_lead_somewhere(page: str) -> None:
    """Every relative link of the page leads to a file, and its #anchor to a heading there."""
    path = ROOT / page
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.DOTALL)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        linked = (path.parent / file).resolve() if file else path
        assert linked.exists(), (page, target)
        if anchor:
            assert anchor in _anchors(linked.read_text(encoding="utf-8")), (page, target)


# README's option tables are `--help`'s option lists word for word: a row is
# `| `FLAGS METAVAR` | HELP |`, both as `--help` prints them (its `[default: ...]` and range
# included). Code spans are Markdown only (their backticks are not words), `\|` is a `|`
# in a table, and blanks are blanks. One more row: options whose help is that of another
# command, each in its own code span, with the meaning "as for `COMMAND`".
_AS_FOR = re.compile(r"as for (\w+)")


def _plain(cell: str) -> str:
    r"""A table cell's words: backticks dropped, `\|` a bar, runs of blanks one space."""
    return " ".join(cell.replace("`", "").replace("\\|", "|").split())


def _help_rows(name: str) -> list[tuple[str, str]]:
    """Each option of command NAME as `--help` prints it: flags and metavar, then help."""
    command = _commands()[name]
    ctx = click.Context(command, info_name=name, parent=click.Context(cli, info_name="pipeline"))
    rows = []
    for param in command.get_params(ctx):
        record = param.get_help_record(ctx)
        if isinstance(param, click.Option) and record and not _HELP & set(param.opts):
            rows.append((record[0], " ".join(record[1].split())))
    return rows


def _table_rows(name: str) -> list[tuple[str, str]]:
    """The option table of command NAME in README, "as for" rows spelled out."""
    text = _subsections()[name]
    table = text[text.index("| option | meaning |") :].split("\n\n", 1)[0]
    rows = []
    for line in table.splitlines()[2:]:
        flags, meaning = (c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1])
        same = _AS_FOR.fullmatch(_plain(meaning))
        if same is None:
            rows.append((_plain(flags), _plain(meaning)))
            continue
        theirs = dict(_help_rows(same.group(1)))
        rows += [(_plain(span), theirs[_plain(span)]) for span in re.findall(r"`([^`]*)`", flags)]
    return rows


@pytest.mark.parametrize("name", sorted(_commands()))
def test_option_table_is_help_word_for_word(name: str) -> None:
    """README's option table of each command says what its `--help` says, in its order."""
    assert _table_rows(name) == _help_rows(name)
