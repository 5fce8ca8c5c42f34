"""The project's exceptions; the CLI maps each to an exit code in one place."""

from __future__ import annotations


class PipelineError(Exception):
    """Base of every error the pipeline raises on purpose."""

    exit_code = 1


class UsageError(PipelineError):
    """The caller's options or paths are wrong (exit code 2)."""

    exit_code = 2


class InputError(PipelineError):
    """One input file cannot be read or parsed; the batch goes on without it."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class StoreError(PipelineError):
    """The dataset folder cannot be read or written safely."""

    exit_code = 1


class LockBusyError(PipelineError):
    """Another process holds the dataset's writer lock (exit code 4)."""

    exit_code = 4
