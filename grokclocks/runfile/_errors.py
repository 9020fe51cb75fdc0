"""The errors and the warning of run files."""

from __future__ import annotations

from .._validate import DomainError, OutputExistsError


class RunFileError(DomainError):
    """A run file cannot be used, or cannot be written.

    Missing, empty, truncated, damaged, foreign, of an unknown format version, naming a config class
    outside the registry, not the run being resumed, or a write that failed (a full disk, a file-size
    limit).  The message names the file and what is wrong.
    """


class RunExistsError(RunFileError, OutputExistsError):
    """A run exists where a new run would be written, or another writer holds the run's lock.

    `resume=True` or `overwrite=True` decide what happens to an existing run; a run being written by
    another process (its lock file is held) is never touched, and the message names that process.
    """


class RunFileNotFoundError(RunFileError, FileNotFoundError):
    """No run file at the given path (also a `FileNotFoundError`)."""


class RunFileWarning(UserWarning):
    """A run file was read with a caveat.

    An old format without checksum, a partial run, a `.json` config file that disagrees with its
    `.npz`, or a lock taken over from a writer that was killed.
    """
