"""Options more than one command takes are one declaration (pipeline/cli_options.py)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import click

from pipeline.cli import cli

# Same flags, different options: changelog writes its text to a FILE, site into a folder.
DIFFERENT = {"--output"}


def _declarations() -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """Each long flag: the commands that take it, with what its option is besides its help."""
    found: dict[str, list[tuple[str, dict[str, Any]]]] = defaultdict(list)
    ctx = click.Context(cli)
    for name, command in sorted(cli.commands.items()):
        for param in command.get_params(ctx):
            if isinstance(param, click.Option) and "--help" not in param.opts:
                info = param.to_info_dict()
                info.pop("help")
                found[max(param.opts, key=len)].append((name, info))
    return found


def test_a_shared_flag_is_the_same_option_everywhere() -> None:
    """A flag two commands take has one type, default and destination; only its help varies."""
    shared = {flag: uses for flag, uses in _declarations().items() if len(uses) > 1}
    assert {"--out", "--catalog", "--workers", "--wait", "--raw"} <= set(shared)
    for flag, uses in shared.items():
        if flag in DIFFERENT:
            continue
        first = uses[0][1]
        assert all(info == first for _, info in uses), flag
