"""Run files: the saved trajectories of the training engine, read and written without JAX.

A run saved at `run` is `run.npz` (arrays, format version, sha256 checksum, config) and `run.json`
(the config again, for people and tools that read JSON); see `save_trajectory` and `load_trajectory`.
This package is part of the pure core (numpy only; JAX is imported only to flatten a state pytree that
the engine passes when it saves a run to resume), so that `grokclocks.compare` and other readers can
load engine runs without JAX.  `grokclocks.sim.train` re-exports every public name.

Safe with a stranger's file: loading a run reads arrays (no pickles) and plain JSON data, and rebuilds
its config only with a class of a registry fixed in code (or one the caller passes); nothing in a file
decides which code is imported or run.  The file is read with the limits of the log readers (the
private `grokclocks._safe_io`, shared with `grokclocks.logs`): regular files only, at most `max_bytes`
(256 MiB by default) on disk and unpacked, checked from the zip directory and each `.npy` header before
anything is decompressed or allocated, stored or deflate members only, JSON nested at most 64 levels.
The checksum detects damage, not tampering.

Every failure to read or write a run (missing, empty, truncated, damaged, foreign, of a newer format,
a config class outside the registry, a full disk) is a `RunFileError` (a `grokclocks.DomainError`)
whose message names the file and what is wrong.  While a run is written its lock file `<run>.lock` is
held, so that a second writer of the same path gets a `RunExistsError` naming the first.

The package keeps one concept per private file: `_format` (the trajectory, the format, saving and
loading), `_configs` (the registry of config classes, config records in JSON), `_files` (atomic
writes, temporary files, the run lock, disk errors), `_errors` (the error classes).
"""

from __future__ import annotations

from .._facade import set_home

# the private names that the engine, compare, verification and the tests use are re-exported here too
from ._configs import _REGISTRY as _REGISTRY
from ._configs import _canonical_class as _canonical_class
from ._configs import _config_from_obj as _config_from_obj
from ._configs import _config_obj as _config_obj
from ._configs import _trusted_classes as _trusted_classes
from ._configs import config_from_json, config_to_json
from ._files import _atomic_write as _atomic_write
from ._files import _RunLock as _RunLock
from ._format import (
    RUN_FORMAT,
    RUN_FORMAT_VERSION,
    RunExistsError,
    RunFileError,
    RunFileNotFoundError,
    RunFileWarning,
    RunPaths,
    Trajectory,
    check_run_path,
    load_trajectory,
    save_trajectory,
)
from ._format import _check_absent as _check_absent
from ._format import _check_options as _check_options
from ._format import _checksum as _checksum
from ._format import _paths as _paths
from ._format import _read_run as _read_run
from ._format import _RunFile as _RunFile
from ._format import _write_run as _write_run

__all__ = [
    "Trajectory",
    "config_to_json",
    "config_from_json",
    "save_trajectory",
    "load_trajectory",
    "check_run_path",
    "RunPaths",
    "RUN_FORMAT",
    "RUN_FORMAT_VERSION",
    "RunFileError",
    "RunExistsError",
    "RunFileNotFoundError",
    "RunFileWarning",
]

set_home(__name__, globals(), __all__)
del annotations, set_home  # not part of the API
