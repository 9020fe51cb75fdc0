"""Hostile run files: every file below gives a one-line `RunFileError` naming it (or, where the run is whole, the
run), read with the limits of the log readers, within bounded time and memory.

`load_trajectory` (what `Trajectory.load` calls), the resume read of `simulate(resume=True)` (`_read_run` with
`max_bytes=None`: the members may unpack to the larger of 256 MiB and the file's own size) and
`grokclocks.compare.load_run` (its own check, then the run-file reader) each read the files in a child process
forked from one worker that has imported grokclocks once (no JAX), by the harness of tests/_hostile.py: the
child runs under an address-space cap (`RLIMIT_AS`, the worker's size + `CAP_MIB`) and is killed after
`LIMIT_S` seconds of wall clock (a hang); it reports the exception (type and message), the warnings, its CPU
time and the growth of its peak resident memory, and its CPU time must stay under `CPU_LIMIT_S`.  Before the
run-file reader went through the shared safe-reading layer these were a RecursionError (a meta or a `.json`
nested 10⁴ levels), a MemoryError (a 1 GiB `.json`), a bzip2 member and a member that is not an array read or
checksummed as data, a 400-digit planned step count loaded as a run, a FIFO reported as a missing file, and a
10¹²-element header, a deflate bomb or a truncated member reported as a MemoryError or an EOFError inside
numpy.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import zipfile
from pathlib import Path

import numpy as np
import pytest
from _hostile import (
    BOMB_BYTES,
    CAP_MIB,
    CPU_LIMIT_S,
    deflate_bomb,
    npy_header,
    run_cases,
    skip_unless_capped,
)

from grokclocks import DomainError
from grokclocks import runfile as R

# the harness's limits: CAP_MIB = 256 (the 384 MiB bomb cannot be unpacked), CPU_LIMIT_S = 10 s (the largest
# case here takes well under 1 s)


def _run(d: Path, name: str = "base") -> Path:
    """A genuine run file (format 3) with two accuracy series, as `Trajectory.save` writes it."""
    t = np.arange(0, 50, 10)
    acc = np.stack([np.minimum(t / 20, 1.0), np.minimum(t / 40, 1.0)])
    traj = R.Trajectory(times=t, metrics={"acc_train": acc, "acc_test": acc * 0.9}, extras={"k": np.array(1.0)})
    return R.save_trajectory(traj, d / name)


def _arrays(npz: Path) -> dict[str, np.ndarray]:
    with np.load(npz) as f:
        return {k: f[k] for k in f.files}


def _rewrite(src: Path, out: Path, meta_text=None, compression=zipfile.ZIP_STORED, extra=None, replace=None) -> Path:
    """`src` rewritten: its meta text replaced (and the sha256 recomputed: it has no key), members added or
    replaced by raw bytes (`extra`, `replace`: member name -> bytes), and every member compressed with
    `compression`."""
    arrays = _arrays(src)
    if meta_text is not None:
        arrays["meta"] = np.array(meta_text)
        arrays["sha256"] = np.array(R._checksum({k: v for k, v in arrays.items() if k != "sha256"}))
    with zipfile.ZipFile(out, "w", compression) as z:
        for k, v in arrays.items():
            if replace and f"{k}.npy" in replace:
                z.writestr(f"{k}.npy", replace[f"{k}.npy"])
                continue
            with z.open(f"{k}.npy", "w") as m:
                np.lib.format.write_array(m, v, allow_pickle=False)
        for member, data in (extra or {}).items():
            z.writestr(member, data)
    return out


def _meta(src: Path, edit) -> str:
    """The JSON text of `src`'s meta after `edit(text)`."""
    return edit(str(_arrays(src)["meta"][()]))


def _format1(d: Path, name: str, sidecar: bytes | None) -> Path:
    """A format-1 run file (no meta or checksum: its config is the `.json` beside it)."""
    t = np.arange(0, 50, 10.0)
    np.savez(d / f"{name}.npz", times=t, **{"metric:acc_train": np.minimum(t / 20, 1)})
    if sidecar is not None:
        (d / f"{name}.json").write_bytes(sidecar)
    return d / f"{name}.npz"


DEEP = "[" * 10_000 + "]" * 10_000
DIGITS = "1" * 400


def _build(d: Path) -> dict[str, tuple[str, str, str | None, str | None]]:
    """name -> (load, resume or compare; path; regex the error must match, None = the run; regex of a warning)."""
    cases: dict[str, tuple[str, str, str | None, str | None]] = {}

    def case(name, path, expect, call="load", warns=None):
        cases[name] = (call, str(path), expect, warns)

    base = _run(d)
    os.mkfifo(d / "fifo.npz")
    case("FIFO", d / "fifo.npz", r"fifo\.npz: a FIFO \(named pipe\), not a regular file; only files are read")
    case("FIFO, resume", d / "fifo.npz", r"fifo\.npz: a FIFO \(named pipe\), not a regular file", call="resume")
    os.symlink("/dev/zero", d / "zero.npz")
    case("/dev/zero", d / "zero.npz", r"zero\.npz: a character device, not a regular file")
    _rewrite(base, d / "huge.npz", extra={"metric:big.npy": npy_header((10**12,)) + bytes(16)})
    huge = (r"huge\.npz: member 'metric:big\.npy': the \.npy header announces shape \(1000000000000,\) of float64 = "
            r"8000000000000 bytes \(7\.629e\+06 MiB\), over the limit max_bytes = ")
    case("member header of 10^12 elements", d / "huge.npz", huge + r"268435456 \(256 MiB\); raise it with "
         r"load_trajectory\(\.\.\., max_bytes=N\)")
    case("member header of 10^12 elements, resume", d / "huge.npz", huge + r"268435456 .*resume=True reads at most",
         call="resume")
    deflate_bomb(d / "bomb.npz", BOMB_BYTES, b"metric:acc_train.npy")
    bomb = rf"bomb\.npz: the archive's members unpack to {BOMB_BYTES + 128} bytes \(384 MiB\), over the limit "
    case("deflate bomb", d / "bomb.npz", bomb + r"max_bytes = 268435456 \(256 MiB\); raise it with load_trajectory")
    case("deflate bomb, resume", d / "bomb.npz", bomb + r"max_bytes = 268435456 \(256 MiB\); resume=True reads at "
         r"most the larger of 256 MiB and the run file's own size", call="resume")
    _rewrite(base, d / "bz2.npz", compression=zipfile.ZIP_BZIP2)
    bz2 = r"bz2\.npz: member 'sha256\.npy' is compressed with method 12 \(numpy and torch write stored or deflate"
    case("bzip2 members", d / "bz2.npz", bz2)
    case("bzip2 members, compare", d / "bz2.npz", bz2, call="compare")
    _rewrite(base, d / "txt.npz", extra={"readme.txt": b"hello"})
    case("a member that is not .npy", d / "txt.npz", r"txt\.npz: member 'readme\.txt' is not a \.npy array")
    _rewrite(base, d / "deep.npz", meta_text=_meta(base, lambda t: t.replace('"fields": null', f'"fields": {DEEP}')))
    deep = r"deep\.npz: its meta entry: JSON nested deeper than 64 levels"
    case("meta nested 10^4 levels", d / "deep.npz", deep)
    case("meta nested 10^4 levels, resume", d / "deep.npz", deep, call="resume")
    case("meta nested 10^4 levels, compare", d / "deep.npz", deep, call="compare")
    _rewrite(base, d / "planned.npz", meta_text=_meta(base, lambda t: t.replace('"planned_steps": null',
                                                                                f'"planned_steps": {DIGITS}')))
    # an integer literal of more than 300 digits is refused by the door in, wherever it is (the checks of the
    # values themselves, planned_steps in [0, 2^63 - 1] and a known version, are tested below with shorter ones)
    case("meta planned_steps of 400 digits", d / "planned.npz", r"planned\.npz: its meta entry: an integer of 400 "
         r"digits \(more than 300, beyond the double range\)")
    _rewrite(base, d / "version.npz", meta_text=_meta(base, lambda t: t.replace('"version": 3',
                                                                                f'"version": {DIGITS}')))
    case("meta version of 400 digits", d / "version.npz", r"version\.npz: its meta entry: an integer of 400 digits")
    _rewrite(base, d / "planned30.npz", meta_text=_meta(base, lambda t: t.replace('"planned_steps": null',
                                                                                  f'"planned_steps": {"1" * 30}')))
    case("meta planned_steps of 30 digits", d / "planned30.npz", r"planned30\.npz is damaged: its planned number of "
         r"steps is 1111111111.*, not an integer in \[0, 9223372036854775807\]")
    _rewrite(base, d / "version30.npz", meta_text=_meta(base, lambda t: t.replace('"version": 3',
                                                                                  f'"version": {"1" * 30}')))
    case("meta version of 30 digits", d / "version30.npz", r"version30\.npz has run-file format version 1111111.*; "
         r"this grokclocks reads versions <= 3")
    _rewrite(base, d / "cut.npz", replace={"metric:acc_test.npy": npy_header((1000,)) + bytes(16)})
    case("a truncated member", d / "cut.npz", r"cut\.npz: member 'metric:acc_test\.npy': truncated: the \.npy header "
         r"announces shape \(1000,\) of float64 = 8000 bytes, but 16 follow it")
    _format1(d, "old_huge", b"")
    os.truncate(d / "old_huge.json", 2**30)  # sparse: 1 GiB of zeros that take no disk
    case("format-1 .json of 1 GiB", d / "old_huge.npz", r"old_huge\.json: the file holds 1073741824 bytes "
         r"\(1024 MiB\), over the limit max_bytes = 67108863 \(64 MiB\); a run's \.json holds its config")
    _format1(d, "old_deep", ('{"class": null, "fields": ' + DEEP + "}").encode())
    case("format-1 .json nested 10^4 levels", d / "old_deep.npz", r"old_deep\.json: JSON nested deeper than 64 levels")
    _format1(d, "old_fifo", None)
    os.mkfifo(d / "old_fifo.json")
    case("format-1 .json a FIFO", d / "old_fifo.npz", r"old_fifo\.json: a FIFO \(named pipe\), not a regular file")
    _run(d, "side_deep")
    (d / "side_deep.json").write_text(DEEP)
    case("format-3 .json nested 10^4 levels", d / "side_deep.npz", None, warns=r"side_deep\.json does not match")
    return cases


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    """Each case's outcome in its own capped, timed child process."""
    skip_unless_capped(fifo=True)
    cases = _build(tmp_path_factory.mktemp("hostile_runs"))
    calls = {"load": ("grokclocks.runfile:load_trajectory", {}),
             "resume": ("grokclocks.runfile:_read_run", {"max_bytes": None}),  # what simulate(resume=True) reads
             "compare": ("grokclocks.compare:load_run", {})}
    return cases, run_cases({name: (calls[call][0], path, calls[call][1]) for name, (call, path, _, _) in cases.items()},
                            record_warnings=True)


CASE_NAMES = [  # every case of _build (the files are built once, by the fixture)
    "FIFO", "FIFO, resume", "/dev/zero", "member header of 10^12 elements", "member header of 10^12 elements, resume",
    "deflate bomb", "deflate bomb, resume", "bzip2 members", "bzip2 members, compare",
    "a member that is not .npy", "meta nested 10^4 levels", "meta nested 10^4 levels, resume",
    "meta nested 10^4 levels, compare", "meta planned_steps of 400 digits", "meta version of 400 digits",
    "meta planned_steps of 30 digits", "meta version of 30 digits",
    "a truncated member", "format-1 .json of 1 GiB", "format-1 .json nested 10^4 levels", "format-1 .json a FIFO",
    "format-3 .json nested 10^4 levels"]


def test_every_case_is_run(outcomes):
    cases, got = outcomes
    assert list(cases) == CASE_NAMES and set(got) == set(cases)


@pytest.mark.parametrize("name", CASE_NAMES)
def test_hostile_run_file(name, outcomes):
    cases, got = outcomes
    call, path, expect, warns = cases[name]
    res = got[name]
    assert not res["jax"], "reading a run file must not import JAX"
    assert res["type"] != "killed", f"{name}: {res['msg']}"
    assert res["cpu_s"] < CPU_LIMIT_S and res["peak_mib"] < CAP_MIB, res
    if warns is not None:
        assert any(re.search(warns, w) for w in res["warnings"]), res["warnings"]
    if expect is None:
        assert res["type"] is None, f"{name}: expected the run, got {res['type']}: {res['msg']}"
        return
    assert res["type"] is not None, f"{name}: expected an error matching {expect!r}, got the run"
    want = "LogError" if call == "compare" and "RunFileError" not in res["mro"] else "RunFileError"
    assert want in res["mro"] and "DomainError" in res["mro"], f"{name}: {res['type']}: {res['msg']}"
    assert res["type"] != "RunFileNotFoundError", f"{name}: the file exists: {res['msg']}"
    assert "\n" not in res["msg"] and len(res["msg"]) < 500, res["msg"]
    assert Path(path).name in res["msg"] or Path(path).with_suffix(".json").name in res["msg"], res["msg"]
    assert re.search(expect, res["msg"]), f"{name}: {res['msg']!r} does not match {expect!r}"


# ------------------------------------------------------------------------------------------ in this process


def test_max_bytes_is_the_limit_and_can_be_raised(tmp_path):
    npz = _run(tmp_path)
    size = npz.stat().st_size
    for load in (R.load_trajectory, R.Trajectory.load):
        with pytest.raises(R.RunFileError, match=rf"base\.npz: the file holds {size} bytes .* max_bytes = {size - 1} "
                                                 r".*raise it with load_trajectory\(\.\.\., max_bytes=N\)"):
            load(npz, max_bytes=size - 1)
        assert load(npz, max_bytes=size).times.size == 5
    comp = tmp_path / "comp.npz"  # the same arrays deflated: the file is smaller than what it unpacks to
    _rewrite(npz, comp, compression=zipfile.ZIP_DEFLATED)
    with zipfile.ZipFile(comp) as z:
        unpacked = sum(i.file_size for i in z.infolist())
    assert comp.stat().st_size < unpacked
    with pytest.raises(R.RunFileError, match=rf"comp\.npz: the archive's members unpack to {unpacked} bytes .* "
                                             rf"max_bytes = {unpacked - 1} "):
        R.load_trajectory(comp, max_bytes=unpacked - 1)
    assert R.load_trajectory(comp, max_bytes=unpacked).times.size == 5


@pytest.mark.parametrize("bad", [0, -1, True, 1.5, "1000", None])
def test_max_bytes_must_be_a_positive_integer(bad, tmp_path):
    npz = _run(tmp_path)
    for load in (R.load_trajectory, R.Trajectory.load):
        with pytest.raises(DomainError, match=r"max_bytes must be an integer >= 1"):
            load(npz, max_bytes=bad)


def test_resume_reads_up_to_the_file_size(tmp_path, monkeypatch):
    """A resume reads an uncompressed run of any size (the engine wrote it), but no archive that unpacks to more
    than the larger of 256 MiB and its own size (here the default limit is lowered to 1000 bytes)."""
    npz = _run(tmp_path)
    monkeypatch.setattr(R._format, "DEFAULT_MAX_BYTES", 1000)
    assert npz.stat().st_size > 1000 and R._read_run(npz, max_bytes=None).arrays["times"].size == 5
    comp = _rewrite(npz, tmp_path / "comp.npz", compression=zipfile.ZIP_DEFLATED)
    size = comp.stat().st_size
    with pytest.raises(R.RunFileError, match=rf"comp\.npz: the archive's members unpack to \d+ bytes .* max_bytes = "
                                             rf"{size} .*resume=True reads at most the larger of 256 MiB and the run "
                                             r"file's own size"):
        R._read_run(comp, max_bytes=None)


def test_a_sidecar_is_read_through_the_safe_layer(tmp_path):
    """The `.json` of a format-1 run is its config: it is read as strictly as the archive (its own limit 64 MiB,
    or `max_bytes` if smaller); that of a later format is only compared, and a bad one is reported, not read."""
    npz = _format1(tmp_path, "old", json.dumps({"class": None, "fields": None}).encode())
    with pytest.warns(R.RunFileWarning, match="format 1"):
        assert R.load_trajectory(npz).config is None
    latin1 = b'{"class": null, "fields": "d\xe9but"}'
    (tmp_path / "old.json").write_bytes(latin1)
    with pytest.raises(R.RunFileError, match=rf"old\.json: not UTF-8 text: byte 0xe9 at offset {latin1.index(0xE9)} "):
        R.load_trajectory(npz)
    (tmp_path / "old.json").write_text(json.dumps({"class": None, "fields": None}) + " " * 5000)
    n = (tmp_path / "old.json").stat().st_size
    assert npz.stat().st_size < n - 1
    with pytest.raises(R.RunFileError, match=rf"old\.json: the file holds {n} bytes .* max_bytes = {n - 1} "):
        R.load_trajectory(npz, max_bytes=n - 1)
    ok = _run(tmp_path, "new")
    for text in ("[" * 65 + "]" * 65, "not json", "\xff"):
        (tmp_path / "new.json").write_text(text, encoding="latin-1")
        with pytest.warns(R.RunFileWarning, match=r"new\.json does not match new\.npz"):
            assert R.load_trajectory(ok).times.size == 5


def test_json_depth_limit_is_exact(tmp_path):
    """A meta nested 64 levels is read (and its config refused as malformed), 65 levels are refused as too deep."""
    npz = _run(tmp_path)
    for depth, match in ((64, r"its config record has fields but no class"),
                         (65, r"its meta entry: JSON nested deeper than 64 levels")):
        inner = "[" * (depth - 2) + "]" * (depth - 2)  # meta is level 1, its config level 2, the fields below
        bad = _rewrite(npz, tmp_path / "d.npz", meta_text=_meta(npz, lambda t, x=inner: t.replace('"fields": null',
                                                                                              f'"fields": {x}')))
        with pytest.raises(R.RunFileError, match=match):
            R.load_trajectory(bad)


def test_config_from_json_refuses_deep_text():
    with pytest.raises(DomainError, match=r"^text: JSON nested deeper than 64 levels"):
        R.config_from_json('{"class": null, "fields": ' + DEEP + "}")
    with pytest.raises(DomainError, match=r"text must be the JSON text of a config record, a str \(got int\)"):
        R.config_from_json(3)
    assert R.config_from_json(b'{"class": null, "fields": null}') is None


def test_a_hostile_lock_file_or_temporary_name_does_not_stop_a_save(tmp_path):
    """The run's directory may hold what a stranger wrote: a lock file nested 3,000 levels (was a RecursionError)
    or whose record names a host of 3,000 characters, and a temporary-file name with a 30-digit pid (was an
    OverflowError from os.kill at every save).  The save goes on: the lock is taken over with a one-line warning,
    the stale temporary file is removed."""
    traj = R.Trajectory(times=np.arange(3), metrics={"m": np.ones(3)})
    (tmp_path / "run.lock").write_text("[" * 3000 + "]" * 3000)
    with pytest.warns(R.RunFileWarning, match=r"taking over the lock file run\.lock left by an unknown process"):
        R.save_trajectory(traj, tmp_path / "run")
    (tmp_path / "run.lock").write_text(json.dumps({"pid": 2**22 + 12345, "host": "h" * 3000}))  # read: 4 KiB
    with pytest.warns(R.RunFileWarning, match=r"left by pid 4206649 on host h{77}\.\.\., which ended") as seen:
        R.save_trajectory(traj, tmp_path / "run", overwrite=True)
    assert len(str(seen[0].message)) < 400
    stale = tmp_path / f".run.npz.{R._files._HOST_TAG}-{'9' * 30}.0123abcd.tmp"
    stale.write_text("left by no process that can exist")
    R.save_trajectory(traj, tmp_path / "run", overwrite=True)
    assert not stale.exists() and R.load_trajectory(tmp_path / "run").times.size == 3


def test_a_lock_record_reaches_the_terminal_escaped(tmp_path):
    """Whoever can write the run's directory writes its lock record: an escape sequence in its host or date was
    printed raw by `RunExistsError` (a lock held by another process) and by the take-over warning."""
    import subprocess
    import sys

    traj = R.Trajectory(times=np.arange(3), metrics={"m": np.ones(3)})
    lock = tmp_path / "run.lock"
    lock.write_text(json.dumps({"pid": os.getppid(), "host": "h\x1b]0;PWNED\x07\x1b[2J", "since": "x\x1b[31m\u202e"}))
    holder = subprocess.Popen([sys.executable, "-c", "import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_RDWR); "
                               "fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); time.sleep(60)", str(lock)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(R.RunExistsError) as exc:
            R.save_trajectory(traj, tmp_path / "run")
    finally:
        holder.kill()
        holder.wait()
    msg = str(exc.value)
    assert "on host h\\x1b]0;PWNED\\x07\\x1b[2J, since x\\x1b[31m\\u202e" in msg, msg
    with pytest.warns(R.RunFileWarning) as seen:
        R.save_trajectory(traj, tmp_path / "run", overwrite=True)
    for text in (msg, *(str(w.message) for w in seen)):
        assert not any(c in text for c in "\x1b\x07\u202e"), repr(text)


def test_simulate_resume_reads_through_the_safe_layer(tmp_path):
    """`simulate(resume=True)` refuses a hostile file at its save_path as `load_trajectory` does (it was a
    RecursionError for a meta nested 10⁴ levels)."""
    pytest.importorskip("jax")
    import jax.numpy as jnp

    from grokclocks.sim.train import simulate

    base = _run(tmp_path)
    _rewrite(base, tmp_path / "deep.npz", meta_text=_meta(base, lambda t: t.replace('"fields": null',
                                                                                   f'"fields": {DEEP}')))
    with pytest.raises(R.RunFileError, match=r"deep\.npz: its meta entry: JSON nested deeper than 64 levels"):
        simulate(lambda x, inp: x * inp["a"], lambda x, inp: {"x": x}, jnp.array([1.0]), {"a": jnp.asarray(0.5)},
                 steps=4, record_every=2, save_path=tmp_path / "deep", resume=True)


if __name__ == "__main__":  # pragma: no cover - `PYTHONPATH=.:tests python tests/test_runfile_hostile.py`
    import tempfile

    class _Factory:
        def mktemp(self, name):
            return Path(tempfile.mkdtemp(prefix=name))

    built, results = outcomes.__wrapped__(_Factory())
    for case_name in CASE_NAMES:
        r = results[case_name]
        what = "result" if r["type"] is None else f"{r['type']}: {r['msg']}"
        print(f"{case_name:42s} {r.get('cpu_s', float('nan')):6.3f} s CPU {r.get('peak_mib', float('nan')):5.0f} MiB"
              f"  {what[:150]}")


def test_every_engine_config_class_has_evaluable_annotations():
    """The run-file reader checks each saved field against its class's type hints: every registered engine config
    must give them (a package face that re-homes a class must import the names its annotations use)."""
    import importlib
    import typing

    from grokclocks.runfile._configs import _REGISTRY

    for name, (module, attr) in _REGISTRY.items():
        assert typing.get_type_hints(getattr(importlib.import_module(module), attr)), name


@dataclasses.dataclass(frozen=True)
class _ConfigWithAnUnknownType:
    steps: "NoSuchType"  # noqa: F821 - the point of the test: an annotation that does not evaluate


def test_a_config_whose_field_types_cannot_be_known_is_refused():
    """Fields whose types cannot be evaluated are refused, not rebuilt unchecked (the reader used to skip the
    check: a hostile file could then put any JSON value into such a field)."""
    text = R.config_to_json(_ConfigWithAnUnknownType(steps=3))
    with pytest.raises(DomainError, match="annotations of _ConfigWithAnUnknownType do not evaluate"):
        R.config_from_json(text, config_classes=[_ConfigWithAnUnknownType])
