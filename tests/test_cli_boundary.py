"""One boundary: every command's exceptions become `Error:` lines and exit codes in one place."""

from __future__ import annotations

import errno
import re
import signal
from typing import TYPE_CHECKING

import pytest
from click.testing import CliRunner
from conftest import ROOT, unstamped

from pipeline import interrupts
from pipeline.cli import cli
from pipeline.errors import PipelineError

if TYPE_CHECKING:
    from pathlib import Path

# Each command: its arguments, and the call it makes to the library, patched to raise.
COMMANDS = {
    "ingest": ((), "pipeline.cli.ingest"),
    "fetch": ((), "pipeline.cli.fetch"),
    "update": ((), "pipeline.cli.update"),
    "changelog": ((), "pipeline.publishing.dataset.load_changeset"),
    "history": (("Rift Bolt",), "pipeline.publishing.dataset.load_history_fates"),
    "site": (("-o", "site"), "pipeline.publishing.site.build_site"),
    "stats": ((), "pipeline.publishing.stats.dataset_stats"),
    "verify": (("--out", "."), "pipeline.storage.verify.check"),
    "repair": ((), "pipeline.rebuild.repair"),
}
LOGGED = {"fetch", "update"}


class _OddError(PipelineError):
    """An error of an exit code no command uses: it can only come from the error's own."""

    exit_code = 7


def _run_raising(
    name: str, exc: BaseException, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> tuple[int, str, str]:
    """Run command NAME with its library call raising EXC; exit code, stdout, stderr."""
    args, target = COMMANDS[name]

    def fail(*_args: object, **_options: object) -> None:
        raise exc

    monkeypatch.setattr(target, fail)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, [name, *args])
    if name in LOGGED:  # the nightly job's lines begin with the time
        return result.exit_code, unstamped(result.stdout), unstamped(result.stderr)
    return result.exit_code, result.stdout, result.stderr


def test_every_command_is_covered() -> None:
    """The cases below run every command of the group: a new one must be added here."""
    assert sorted(cli.commands) == sorted(COMMANDS)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_pipeline_error_is_one_line_and_its_own_exit_code(
    name: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Whatever command raises a PipelineError ends with `Error: ...` and the error's code."""
    code, stdout, stderr = _run_raising(
        name, _OddError(f"odd failure in {name}"), monkeypatch, tmp_path
    )
    assert (code, stdout, stderr) == (7, "", f"Error: odd failure in {name}\n")


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_an_unforeseen_system_error_is_one_line_and_exit_1(
    name: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """An OSError no one foresaw is one line asking for a report, never a traceback."""
    exc = PermissionError(errno.EACCES, "Permission denied", "x")
    code, _, stderr = _run_raising(name, exc, monkeypatch, tmp_path)
    assert code == 1
    assert stderr == (
        "Error: PermissionError: [Errno 13] Permission denied: 'x' "
        "(not foreseen here: please report it)\n"
    )


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_closed_pipe_is_left_to_click(
    name: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A write to a closed pipe ends with click's exit 1 and no `Error:` line."""
    exc = BrokenPipeError(errno.EPIPE, "Broken pipe")
    code, _, stderr = _run_raising(name, exc, monkeypatch, tmp_path)
    assert code == 1
    assert "Error:" not in stderr


@pytest.mark.parametrize("name", ["ingest", "update"])
def test_an_interrupt_before_the_commit_says_nothing_was_stored(
    name: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A signal that stopped a run before its commit point is one line and exit 1."""
    exc = interrupts.Interrupted(signal.SIGTERM)
    code, stdout, stderr = _run_raising(name, exc, monkeypatch, tmp_path)
    assert (code, stdout) == (1, "")
    assert stderr == (
        "Error: interrupted (SIGTERM): nothing stored; the version before this run stays in force\n"
    )


def test_one_place_turns_exceptions_into_exit_codes() -> None:
    """cli.py catches PipelineError once, and exits with an error's code once."""
    source = (ROOT / "pipeline" / "cli.py").read_text(encoding="utf-8")
    assert len(re.findall(r"except .*PipelineError", source)) == 1
    assert source.count("exc.exit_code") == 1
