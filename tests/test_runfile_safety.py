"""A stranger's run file, and several writers of one run: nothing in a file runs code, nothing is lost.

Payloads are planted the way an adversarial trial did (a config class `subprocess:run` with the checksum
recomputed; an old-format file whose `.json` sidecar names it) and must never create their marker file.
Writers are killed with SIGKILL in the middle of a save (a hook that pauses inside the write, and a loop of
random kill times), run two at a time on one path, and run under a file-size limit (SIGXFSZ ignored): the
previous run stays whole, no temporary file survives the next save, and every error names the file.
The writers run in one fresh interpreter (tests/fixtures/runfile_writers.py, each writer a fork of it) that
imports `grokclocks.runfile` alone, so the same run shows that none of this needs JAX.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from grokclocks import DomainError
from grokclocks import runfile as R

REPO = Path(__file__).resolve().parents[1]


def _traj(k: float, n: int = 8) -> R.Trajectory:
    return R.Trajectory(times=np.arange(n), metrics={"m": np.full((2, n), float(k))}, extras={"k": np.array(k)})


def _rewrite_meta(npz: Path, out: Path, version: int | None = None, **config) -> None:
    """`npz` with its meta's config (and version) replaced and the sha256 recomputed (anyone can: it has no key)."""
    with np.load(npz) as f:
        arrays = {k: f[k] for k in f.files if k != "sha256"}
    meta = json.loads(str(arrays["meta"][()]))
    meta["config"] = config
    if version is not None:
        meta["version"] = version
    arrays["meta"] = np.array(json.dumps(meta, sort_keys=True))
    arrays["sha256"] = np.array(R._checksum(arrays))
    np.savez(out, **arrays)


# ------------------------------------------------------------------------------ no code from a file


def _plant(d: Path, marker: Path) -> list[str]:
    """The trial's payloads: a current-format file with a recomputed checksum, an old-format file whose `.json`
    sidecar names the class, and two more classes no run file may name."""
    d.mkdir()
    fields = {"args": f"touch {marker}", "shell": True}
    npz = R.save_trajectory(_traj(1), d / "honest")
    _rewrite_meta(npz, d / "new_format.npz", 2, **{"class": "subprocess:run", "fields": fields})  # as the trial did
    _rewrite_meta(npz, d / "new_format_v3.npz", **{"class": "subprocess:run", "fields": fields})
    np.savez(d / "old_format.npz", times=np.arange(3), **{"metric:m": np.ones(3)})
    (d / "old_format.json").write_text(json.dumps({"class": "subprocess:run", "fields": fields}))
    _rewrite_meta(npz, d / "builtin.npz", **{"class": "builtins:eval", "fields": {"source": "1"}})
    _rewrite_meta(npz, d / "dotted.npz", **{"class": "os.system", "fields": {}})
    return ["builtin.npz", "dotted.npz", "new_format.npz", "new_format_v3.npz", "old_format.npz"]


@pytest.fixture(scope="module")
def writers(tmp_path_factory):
    """Every scenario of tests/fixtures/runfile_writers.py, run once: scenario -> observations (and the base)."""
    base = tmp_path_factory.mktemp("writers")
    marker = base / "PWNED"
    planted = _plant(base / "payloads", marker)
    r = subprocess.run([sys.executable, str(REPO / "tests" / "fixtures" / "runfile_writers.py"), str(base)],
                       capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(REPO)), timeout=300)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    out.update(base=base, marker=marker, planted=planted)
    return out


def test_a_run_file_cannot_run_code(writers):
    assert not writers["marker"].exists()
    got = writers["payloads"]
    assert sorted(got) == sorted(writers["planted"] + ["honest.npz"]) and got["honest.npz"] == ["LOADED"] * 2
    for name in writers["planted"]:  # both readers refuse, naming the file and the class, and saying why
        for msg in got[name]:
            assert msg.startswith(str(writers["base"] / "payloads" / name)), msg
            assert "not one of the engine's config classes" in msg and "config_classes" in msg, msg
    assert "'subprocess:run'" in got["new_format.npz"][0] and "'subprocess:run'" in got["old_format.npz"][0]


def test_reading_and_writing_runs_needs_no_jax(writers):
    assert writers["jax_modules"] == []


def test_config_records_rebuild_only_registered_or_trusted_classes(tmp_path):
    @__import__("dataclasses").dataclass(frozen=True)
    class Mine:
        a: int
        b: tuple[float, ...] = ()

    Mine.__qualname__ = "Mine"  # a module-level class of the caller's own
    mine = R.Trajectory(times=np.arange(3), metrics={"m": np.ones(3)}, config=Mine(2, (0.5, float("inf"))))
    npz = R.save_trajectory(mine, tmp_path / "mine")
    side = json.loads(npz.with_suffix(".json").read_text())
    assert side["class"] == f"{__name__}:Mine" and side["fields"] == {"a": 2, "b": [0.5, "inf"]}
    with pytest.raises(R.RunFileError, match=r"mine\.npz.*not one of the engine's config classes"):
        R.load_trajectory(npz)
    back = R.load_trajectory(npz, config_classes=[Mine])
    assert back.config == mine.config and R.Trajectory.load(npz, config_classes=Mine).config.a == 2
    # the fields are checked against the declared types before the class is called
    for fields, what in (({"a": "2"}, "field 'a' of its config .*Mine must be int"),
                         ({"a": True}, "must be int"),
                         ({"a": 1, "b": [1, "x"]}, r"field 'b' .* must be tuple\[float, \.\.\.\]"),
                         ({"a": 1, "c": 3}, r"fields \['c'\] that Mine does not declare"),
                         ({"b": []}, r"lacks the required fields \['a'\]"),
                         ([1, 2], "must be a JSON object")):
        _rewrite_meta(npz, tmp_path / "bad.npz", **{"class": f"{__name__}:Mine", "fields": fields})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", R.RunFileWarning)
            with pytest.raises(R.RunFileError, match=what):
                R.load_trajectory(tmp_path / "bad.npz", config_classes=[Mine])
    with pytest.raises(DomainError, match="config_classes must hold dataclass types"):
        R.load_trajectory(npz, config_classes=[print])
    assert R.config_from_json(R.config_to_json(Mine(1)), config_classes=[Mine]) == Mine(1)
    with pytest.raises(DomainError, match="not one of the engine's config classes"):
        R.config_from_json(json.dumps({"class": "subprocess:run", "fields": {"args": "true"}}))
    assert R.config_from_json(R.config_to_json(None)) is None


def test_the_registry_names_every_engine_config_class_and_reads_old_names(tmp_path):
    pytest.importorskip("jax")
    import dataclasses
    import importlib
    import typing

    from grokclocks.sim.modular import TrainConfig

    found = {}
    for mod in ("linear", "modular", "landscapes", "deep_linear", "langevin"):
        m = importlib.import_module(f"grokclocks.sim.{mod}")
        for name in dir(m):
            obj = getattr(m, name)
            if isinstance(obj, type) and dataclasses.is_dataclass(obj) and name.endswith("Config"):
                found[f"{mod}.{name}"] = obj
    assert sorted(found) == sorted(R._REGISTRY)  # a new config class must be registered to be saved and read
    for name, cls in found.items():
        assert R._REGISTRY[name] == (cls.__module__, cls.__name__)
        for hint in typing.get_type_hints(cls).values():  # every annotation is one the field check understands
            text = str(hint)
            assert all(t in ("int", "float", "str", "bool", "None", "tuple", "Any", "...") for t in
                       text.replace("typing.", "").replace("<class '", "").replace("'>", "").replace("|", " ")
                       .replace("[", " ").replace("]", " ").replace(",", " ").replace("NoneType", "None").split()), (
                name, text)
    cfg = TrainConfig(model="embedding_mlp", model_kwargs=(("d_embed", 4),), p=5, operation="add", train_frac=(0.5,),
                      split="random", split_seed=None, seeds=(0,), optimizer="adamw", lr=(1e-3,), weight_decay=(1.0,),
                      betas=(0.9, 0.98), eps=1e-8, warmup_steps=0, loss="ce", batch_size=None, steps=10,
                      record_every=5, grid_axes=(), dtype="float32")
    npz = R.save_trajectory(R.Trajectory(times=np.arange(3), metrics={"m": np.ones(3)}, config=cfg), tmp_path / "t")
    assert json.loads(npz.with_suffix(".json").read_text())["class"] == "modular.TrainConfig"
    assert R.load_trajectory(npz).config == cfg
    # a version-2 file names the class by module:qualname: the engine's own classes are mapped, read and equal
    with np.load(npz) as f:
        arrays = {k: f[k] for k in f.files if k != "sha256"}
    meta = json.loads(str(arrays["meta"][()]))
    meta.update(version=2, config=dict(meta["config"], **{"class": "grokclocks.sim.modular:TrainConfig"}))
    arrays["meta"] = np.array(json.dumps(meta, sort_keys=True))
    arrays["sha256"] = np.array(R._checksum(arrays))
    np.savez(tmp_path / "v2.npz", **arrays)
    assert R.load_trajectory(tmp_path / "v2.npz").config == cfg
    # ... and a registered class with a value of the wrong type is refused before the class is called
    _rewrite_meta(npz, tmp_path / "typed.npz", **{"class": "modular.TrainConfig",
                                                   "fields": dict(meta["config"]["fields"], lr="print")})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", R.RunFileWarning)
        with pytest.raises(R.RunFileError, match=r"field 'lr' of its config modular.TrainConfig must be"):
            R.load_trajectory(tmp_path / "typed.npz")


def test_a_json_that_disagrees_with_its_npz_is_reported(tmp_path, monkeypatch):
    npz = R.save_trajectory(_traj(1), tmp_path / "a")
    other = R.save_trajectory(_traj(2), tmp_path / "b")
    npz.with_suffix(".json").write_bytes(other.with_suffix(".json").read_bytes())  # a sidecar from another run
    with pytest.warns(R.RunFileWarning, match=r"a\.json does not match a\.npz.*a\.npz holds the run"):
        back = R.load_trajectory(npz)
    assert float(back["k"]) == 1.0  # the .npz counts
    R.save_trajectory(back, npz, overwrite=True)  # the next save rewrites it
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        R.load_trajectory(npz)
    monkeypatch.setattr(R._format, "_SIDECAR_MAX_BYTES", npz.with_suffix(".json").stat().st_size)
    with pytest.warns(R.RunFileWarning, match="does not match"):  # too large to be a sidecar: not read
        R.load_trajectory(npz)


# ------------------------------------------------------------------------------ one writer per run path


def test_a_second_writer_is_refused_and_told_who_writes(tmp_path, writers):
    npz = R.save_trajectory(_traj(1), tmp_path / "run")
    with R._RunLock.acquire(npz):
        assert npz.with_suffix(".lock").is_file()
        with pytest.raises(R.RunExistsError, match=rf"run\.npz is being written by pid {os.getpid()} \(this process\)"):
            R.save_trajectory(_traj(2), npz, overwrite=True)
    assert not npz.with_suffix(".lock").exists()  # released: removed
    h = writers["holder"]  # another process holds it: with overwrite=True and without, it is named
    lock = writers["base"] / "holder" / "run.lock"
    assert len(h["messages"]) == 2 and h["k"] == 1 and h["left"] == ["run.json", "run.npz"], h
    for msg in h["messages"]:
        assert f"run.npz is being written by pid {h['pid']} on host" in msg and f"(lock file {lock})" in msg, msg


def test_a_stale_lock_of_a_dead_process_is_taken_over(tmp_path):
    """The temporary files of the dead writer are removed; those of a live writer (a process still running,
    which may be writing its own run file under another lock) and of another host are left alone."""
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        npz = tmp_path / "run.npz"
        npz.with_suffix(".lock").write_text(json.dumps({"pid": pid, "host": R._files._HOST, "since": "then"}))
        (tmp_path / f".run.npz.{R._files._HOST_TAG}-{pid}.0123abcd.tmp").write_bytes(b"half a run")
        (tmp_path / f".run.json.{pid}.0123abcd.tmp").write_bytes(b"named before host tags")
        (tmp_path / ".run.npz.ffffffff-1.0123abcd.tmp").write_bytes(b"another host's: left alone")
        writing = f".run.npz.{R._files._HOST_TAG}-{live.pid}.0123abcd.tmp"
        (tmp_path / writing).write_bytes(b"a live writer's: left alone")
        with pytest.warns(R.RunFileWarning, match=rf"taking over the lock file run\.lock left by pid {pid} .*killed"):
            R.save_trajectory(_traj(1), npz)
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted([".run.npz.ffffffff-1.0123abcd.tmp", writing,
                                                                     "run.json", "run.npz"])
    finally:
        live.kill()
        live.wait()


def test_a_lock_file_that_is_not_a_plain_file_is_refused_by_name(tmp_path):
    """A run.lock that is a symbolic link (to the user's thesis.tex) was opened with O_CREAT through the link,
    truncated and given the pid record, even when the save was then refused; a FIFO or /dev/null gave a raw
    OSError [Errno 22].  Now each is a RunFileError naming the lock file, and nothing is written anywhere."""
    thesis = tmp_path / "thesis.tex"
    thesis.write_text("\\chapter{Results}")
    (tmp_path / "a.lock").symlink_to(thesis)
    (tmp_path / "b.lock").symlink_to(os.devnull)
    os.mkfifo(tmp_path / "c.lock")
    os.link(thesis, tmp_path / "d.lock")  # a hard link: the same file under the lock's name
    (tmp_path / "e.lock").symlink_to(tmp_path / "nowhere")
    for stem, message in (("a", r"a\.lock of .*a\.npz is a symbolic link \(to '.*thesis\.tex'\)"),
                          ("b", r"b\.lock of .*b\.npz is a symbolic link \(to '/dev/null'\)"),
                          ("c", r"c\.lock of .*c\.npz is a FIFO \(named pipe\), not a regular file"),
                          ("d", r"d\.lock of .*d\.npz has 2 names \(hard links\)"),
                          ("e", r"e\.lock of .*e\.npz is a symbolic link")):
        for overwrite in (False, True):
            with pytest.raises(R.RunFileError, match=message):
                R.save_trajectory(_traj(1), tmp_path / stem, overwrite=overwrite)
    assert thesis.read_text() == "\\chapter{Results}" and not (tmp_path / "nowhere").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.lock", "b.lock", "c.lock", "d.lock", "e.lock",
                                                          "thesis.tex"]


def test_a_save_whose_lock_was_removed_or_replaced_is_refused(tmp_path):
    """The lock file removed by hand (or the folder deleted) while a writer holds it: a second writer can take a
    new lock on the same path, so the first writer's next save is refused rather than written over the second's
    run; a save made without holding the lock at all is refused too."""
    npz = tmp_path / "run.npz"
    lock = npz.with_suffix(".lock")
    paths = R._paths(tmp_path / "run")
    with R._RunLock.acquire(npz):
        R._write_run(_traj(1), paths)
        lock.unlink()
        with pytest.raises(R.RunFileError, match=r"lock file .*run\.lock is no longer the one this process holds "
                                                 r"\(the lock file was removed or replaced"):
            R._write_run(_traj(2), paths)
        lock.write_text(json.dumps({"pid": 1, "host": "another writer's"}))  # a second writer's new lock file
        with pytest.raises(R.RunFileError, match="is no longer the one this process holds"):
            R._write_run(_traj(2), paths)
    assert json.loads(lock.read_text())["host"] == "another writer's"  # releasing removes only its own lock file
    lock.unlink()
    with pytest.raises(R.RunFileError, match=r"a run is saved only while its lock file .*run\.lock is held"):
        R._write_run(_traj(3), paths)
    assert R.load_trajectory(npz).extras["k"] == 1


def test_without_flock_the_lock_record_decides(tmp_path, monkeypatch):
    """On a file system without flock (ENOLCK), a lock of a live pid of this host, or of another host, is refused;
    one of a dead pid, or of a pid now running another process, is taken over."""
    monkeypatch.setattr(R._files, "_flock", lambda fd: None)
    npz = tmp_path / "run.npz"
    lock = npz.with_suffix(".lock")
    live = {"pid": os.getppid(), "host": R._files._HOST, "start": R._files._proc_start(os.getppid())}
    for record, message in ((live, rf"pid {os.getppid()} on host"), ({"pid": 1, "host": "elsewhere"}, "elsewhere")):
        lock.write_text(json.dumps(record))
        with pytest.raises(R.RunExistsError, match=message) as info:
            R.save_trajectory(_traj(1), npz)
        assert f"no flock: if that process is gone, delete {lock}" in str(info.value)
    stale = [{"pid": 2**22 + 12345, "host": R._files._HOST}]  # above the default pid_max: no such process
    if live["start"] is not None:  # /proc tells a reused pid: it runs, but not the process that took the lock
        stale.append(dict(live, start="0"))
    for record in stale:
        lock.write_text(json.dumps(record))
        with pytest.warns(R.RunFileWarning, match="taking over"):
            R.save_trajectory(_traj(1), npz, overwrite=True)
        assert not lock.exists()


def test_kill_9_while_the_npz_is_written(writers):
    o = writers["kill_npz"]
    assert o["locked_while_writing"]  # the writer holds the run's lock while it writes
    assert any(n.startswith(".run.npz.") and n.endswith(".tmp") for n in o["on_disk"]), o  # its half-written file
    assert o["npz_unchanged"] and o["k"] == 1 and o["load_warnings"] == [], o  # the old run is whole
    assert any(f"left by pid {o['pid']}" in w for w in o["next_save_warnings"]), o  # the next save takes over ...
    assert o["left"] == ["run.json", "run.npz"] and o["k_after"] == 3 and o["after_warnings"] == [], o  # ... cleans


def test_kill_9_between_the_npz_and_the_json(writers):
    o = writers["kill_json"]
    assert o["locked_while_writing"] and o["k"] == 2, o  # the new .npz is whole and counts
    assert [w for w in o["load_warnings"] if "run.json does not match run.npz" in w], o  # the stale .json is reported
    assert o["left"] == ["run.json", "run.npz"] and o["k_after"] == 3 and o["after_warnings"] == [], o


def test_kill_9_at_random_times_never_loses_the_run(writers):
    """30 writers killed at random instants of a 128 kB save loop: every time the run loads whole (the last
    complete save), and the next save removes every temporary file and takes over the dead writer's lock, with
    a warning exactly when the kill left one that names the writer (a kill between two saves leaves no lock, one
    right after the lock file's creation an empty one, taken over silently: there is no run of it to warn about)."""
    out = writers["kill_loop"]
    assert len(out) == 30
    for o in out:
        assert o["k"] > 1000 * (o["round"] + 1), o  # the writer's first save or a later one, never the old run
        assert o["left"] == ["run.json", "run.npz"] and o["took_over"] == (o["lock_pid"] == o["pid"]), o
    assert sum(bool(o["temps"]) for o in out) >= 1, out  # the kills do land inside writes
    assert sum(o["lock_pid"] == o["pid"] for o in out) >= 1, out  # and leave named locks behind to take over


def test_two_writers_on_one_path_never_mix_two_runs(writers):
    """15 rounds of two processes saving over one run at the same instant, with overwrite: the loser is told who
    writes (RunExistsError), the .json always belongs to the .npz, and no temporary or lock file is left."""
    out = writers["two_writers"]
    assert len(out) == 15
    for o in out:
        assert set(o["codes"]) <= {0, 3} and 0 in o["codes"], o
        winners = [2 * o["round"] + j for j, c in enumerate(o["codes"]) if c == 0]
        assert o["k"] in winners and o["same"] and not o["warned"], o
        assert o["left"] == ["run.json", "run.npz"], o


def test_a_file_size_limit_is_a_run_file_error_and_the_old_run_stays(writers):
    o = writers["file_size_limit"]
    npz = writers["base"] / "file_size_limit" / "run.npz"
    assert o["message"].startswith(f"RunFileError: save_path: cannot write {npz}: the file would exceed this process's "
                                   "file-size limit (ulimit -f) (EFBIG)") and "intact" in o["message"], o
    assert o["k"] == 1 and o["left"] == ["run.json", "run.npz"], o  # the old run, no temporary, no lock
