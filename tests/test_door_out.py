"""One door out: every file grokclocks writes for a user goes through grokclocks/_safe_write.py.

Part 1 walks the syntax tree of every module of the package (and docs/gen_pages.py, which writes the pages
made from certificates) and fails on any call that writes, creates, renames or removes a file outside the
writer: `savefig(`, `write_text(`, `write_bytes(`, `numpy.save*`, `json.dump(` / `pickle.dump(` /
`torch.save(` to a file, `open(..., "w" / "a" / "x" / "+")`, `os.open` with a flag that writes or creates,
`os.replace` / `rename` / `link` / `symlink` / `unlink` / `remove` / `truncate` / `write` / `pwrite`,
`mkdir` / `makedirs` / `touch`, `shutil.copy*` / `move` / `rmtree`, a `ZipFile` opened for writing.  The
allow-list below is explicit, one reason each.  A probe plants each kind of violation in a module and shows
the walk catches every one (and passes the reading forms).

Out of scope, on purpose: verify/ and benchmarks/ are the project's own scripts that write into the
repository (budget tables, benchmark results), not the package writing on a user's path.

Part 2 runs the writer's rules on real files: an existing file, a symbolic link (to a file, dangling), a
FIFO, a directory, a missing directory, a wrong suffix, a file that appears while the content is written,
a write that fails half-way, the path reported; and the same rules through every user of the writer.
"""

from __future__ import annotations

import ast
import errno
import os
import time
from pathlib import Path

import numpy as np
import pytest

from grokclocks import DomainError, OutputExistsError
from grokclocks import _safe_write as W

ROOT = Path(__file__).resolve().parents[1]

# (file relative to the repository, function or "*" for the whole file, the call as reported or "*") -> why
ALLOWED = {
    ("grokclocks/_safe_write.py", "*", "*"): "the writer itself",
    ("grokclocks/cli/__init__.py", "_quiet_stdout", "os.open(...) with a flag that writes or creates"):
        "opens /dev/null to take over a closed pipe's descriptor (os.dup2): creates and writes no file",
    ("grokclocks/_safe_io/_files.py", "_open_fd", "os.open(...) with a flag that writes or creates"):
        "the door in: its flags are the read-only _RD / _DIR of grokclocks._safe_io._limits (plus O_NOFOLLOW), "
        "which the scan cannot see across modules; test_the_door_in_opens_read_only checks them",
    ("grokclocks/_safe_io/_folders.py", "scan", "os.open(...) with a flag that writes or creates"):
        "the door in: a read-only directory descriptor (_DIR | O_NOFOLLOW; test_the_door_in_opens_read_only)",
    ("grokclocks/_safe_io/_folders.py", "snapshot", ".mkdir(...)"):
        "the door in copies a user's folder (Aim, TensorBoard) into a TemporaryDirectory its caller made, "
        "never a user's path",
    ("grokclocks/_safe_io/_folders.py", "copy_file", "open(...) for writing"):
        "the door in copies a user's file into a TemporaryDirectory its caller made ('xb': a new file only)",
    ("grokclocks/logs/_tensorboard.py", "_copy_events", ".mkdir(...)"):
        "a folder inside the TemporaryDirectory the TensorBoard reader made for its copy, never a user's path",
    ("grokclocks/runfile/_format.py", "_write_run", "numpy.savez(...)"):
        "numpy.savez writes the run into the file object the writer opened (_atomic_write -> Writer.write): the "
        "temporary file beside the run, renamed by the writer",
}

_WRITE_METHODS = {"savefig", "write_text", "write_bytes", "touch", "mkdir", "symlink_to", "hardlink_to",
                  "rename", "replace", "unlink", "rmdir"}
_OS_CALLS = {"replace", "rename", "renames", "link", "symlink", "unlink", "remove", "removedirs", "rmdir", "mkdir",
             "makedirs", "truncate", "ftruncate", "write", "pwrite", "writev", "pwritev", "mkfifo", "mknod"}
_SHUTIL = {"copy", "copy2", "copyfile", "copyfileobj", "copytree", "move", "rmtree"}
_NUMPY_SAVE = {"save", "savez", "savez_compressed", "savetxt", "tofile"}
_DUMPS_TO_FILE = {("json", "dump"), ("pickle", "dump"), ("torch", "save"), ("marshal", "dump"), ("joblib", "dump")}
_READ_FLAGS = {"O_RDONLY", "O_NONBLOCK", "O_NOCTTY", "O_CLOEXEC", "O_DIRECTORY", "O_NOFOLLOW", "O_BINARY", "O_NOATIME"}


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    parts.append(node.id if isinstance(node, ast.Name) else "?")  # "?": a call or subscript, e.g. Path(p).open
    return ".".join(reversed(parts))


def _mode(call: ast.Call, pos: int) -> ast.AST | None:
    for kw in call.keywords:
        if kw.arg == "mode":
            return kw.value
    return call.args[pos] if len(call.args) > pos else None


def _writes_mode(mode: ast.AST | None) -> bool:
    if mode is None:
        return False
    if isinstance(mode, ast.Constant) and isinstance(mode.value, str):
        return any(c in mode.value for c in "wax+")
    return True  # a mode computed at run time: cannot tell, so it counts


def _os_open_writes(flags: ast.AST | None, names: dict[str, list[ast.AST]]) -> bool:
    if flags is None:
        return False
    if isinstance(flags, ast.Name) and names.get(flags.id):  # flags = os.O_RDONLY | ... assigned before
        return any(_os_open_writes(v, {}) for v in names[flags.id])
    for n in ast.walk(flags):
        if isinstance(n, ast.Attribute) and n.attr.startswith("O_") and n.attr not in _READ_FLAGS:
            return True
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.startswith("O_") \
                and n.value not in _READ_FLAGS:
            return True  # getattr(os, "O_CREAT", 0)
        if isinstance(n, ast.Name) and n.id not in ("os", "getattr"):
            return True  # flags from a variable: cannot tell, so it counts
    return False


def _why(call: ast.Call, names: dict[str, list[ast.AST]] | None = None) -> str | None:
    """What the call writes, in words, or None for a call that writes no file (`names`: the values assigned
    to each local name of the function, to read an `os.open` flags variable)."""
    f = call.func
    name = _dotted(f)
    head, _, last = name.rpartition(".")
    if isinstance(f, ast.Attribute) and _dotted(f.value).rpartition(".")[2].upper().endswith("WRITER"):
        return None  # a method of grokclocks._safe_write.Writer: the door itself
    if name in ("open", "io.open", "builtins.open", "codecs.open", "gzip.open", "bz2.open", "lzma.open"):
        return "open(...) for writing" if _writes_mode(_mode(call, 1)) else None
    if name == "os.fdopen" or (last == "fdopen" and head):
        return "os.fdopen(...) for writing" if _writes_mode(_mode(call, 1)) else None
    if name == "os.open":
        return "os.open(...) with a flag that writes or creates" if _os_open_writes(
            call.args[1] if len(call.args) > 1 else None, names or {}) else None
    if head == "os" and last in _OS_CALLS:
        return f"os.{last}(...)"
    if head == "shutil" and last in _SHUTIL:
        return f"shutil.{last}(...)"
    if head in ("np", "numpy") and last in _NUMPY_SAVE:
        return f"numpy.{last}(...)"
    if (head.rpartition(".")[2], last) in _DUMPS_TO_FILE:
        return f"{head}.{last}(...) to a file"
    if last.endswith("ZipFile") or last == "TarFile" or name in ("tarfile.open",):
        return f"{last}(...) for writing" if _writes_mode(_mode(call, 1)) else None
    if isinstance(f, ast.Attribute) and f.attr in _WRITE_METHODS:
        if f.attr in ("replace", "rename") and (len(call.args) != 1 or call.keywords):
            return None  # str.replace(a, b), dataclasses.replace(obj, x=...), datetime.replace(tzinfo=...):
            # Path.replace / Path.rename take exactly one argument
        if f.attr == "replace" and _dotted(f.value).split(".")[-1] in ("dataclasses", "datetime"):
            return None
        return f".{f.attr}(...)"
    if isinstance(f, ast.Attribute) and f.attr == "open":  # Path.open(mode), ZipFile.open(name, mode)
        modes = [kw.value for kw in call.keywords if kw.arg == "mode"]
        modes += [a for a in call.args[:2] if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        return "Path.open(...) for writing" if any(_writes_mode(m) for m in modes) else None
    if isinstance(f, ast.Attribute) and f.attr in _NUMPY_SAVE - {"save"}:
        return f".{f.attr}(...)"
    return None


def _allowed(filename: str, func: str, why: str) -> bool:
    return any((filename, f, c) in ALLOWED for f in (func, "*") for c in (why, "*"))


def _assigned(node: ast.AST) -> dict[str, list[ast.AST]]:
    """The values assigned to each plain name directly in `node`'s body (not in nested functions)."""
    out: dict[str, list[ast.AST]] = {}
    stack = list(ast.iter_child_nodes(node))
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(n, ast.Assign):
            for t in n.targets:
                if isinstance(t, ast.Name):
                    out.setdefault(t.id, []).append(n.value)
        stack.extend(ast.iter_child_nodes(n))
    return out


def violations(source: str, filename: str) -> list[str]:
    """Every call of `source` (the module `filename`, relative to the repository) that writes outside the writer."""
    tree = ast.parse(source, filename=filename)
    found: list[str] = []
    module_names = _assigned(tree)

    def visit(node: ast.AST, func: str, names: dict[str, list[ast.AST]]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(child, child.name, {**module_names, **_assigned(child)})
                continue
            if isinstance(child, ast.Call):
                why = _why(child, names)
                if why and not _allowed(filename, func, why):
                    found.append(f"{filename}:{child.lineno} in {func or '<module>'}: {why}")
            visit(child, func, names)

    visit(tree, "", module_names)
    return found


def _sources() -> list[Path]:
    return sorted((ROOT / "grokclocks").rglob("*.py")) + [ROOT / "docs" / "gen_pages.py"]


def test_every_write_goes_through_the_writer():
    found = []
    for path in _sources():
        found += violations(path.read_text(), path.relative_to(ROOT).as_posix())
    assert not found, ("files written outside grokclocks/_safe_write.py (write through its Writer, or add an "
                       "entry with its reason to ALLOWED):\n" + "\n".join(found))


def test_the_door_in_opens_read_only():
    """The flags the door in opens with (allowed above without the scan seeing them) neither write nor create."""
    from grokclocks._safe_io import _limits

    writes = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND | getattr(os, "O_EXCL", 0)
    for flags in (_limits._RD, _limits._DIR, _limits._NOFOLLOW):
        assert flags & writes == 0


def test_every_allowed_entry_is_still_needed():
    """An allow-list entry whose function no longer writes (or no longer exists) is removed, not kept."""
    for (filename, func, _call), reason in ALLOWED.items():
        if func == "*":
            continue
        tree = ast.parse((ROOT / filename).read_text())
        fns = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == func]
        assert fns, f"{filename}: no function {func} ({reason})"
        assert any(_why(c) for fn in fns for c in ast.walk(fn) if isinstance(c, ast.Call)), (filename, func)


_PLANTED = '''
import json, os, pickle, shutil, zipfile
import numpy as np
from pathlib import Path

def f(p, fig, a, fd, flags):
    fig.savefig(p)
    Path(p).write_text("x")
    Path(p).write_bytes(b"x")
    open(p, "w")
    open(p, mode="ab")
    open(p, "x")
    open(p, "r+")
    open(p, a)
    Path(p).open("w")
    os.fdopen(fd, "wb")
    np.save(p, a)
    np.savez(p, a=a)
    np.savez_compressed(p, a=a)
    a.tofile(p)
    json.dump(a, fd)
    pickle.dump(a, fd)
    os.replace(p, p)
    os.rename(p, p)
    os.link(p, p)
    os.symlink(p, p)
    os.unlink(p)
    os.remove(p)
    Path(p).unlink()
    Path(p).rename(p)
    Path(p).mkdir()
    os.makedirs(p)
    Path(p).touch()
    os.open(p, os.O_WRONLY | os.O_CREAT)
    os.open(p, os.O_RDWR | getattr(os, "O_CLOEXEC", 0))
    os.open(p, getattr(os, "O_CREAT", 0))
    os.open(p, flags)
    os.write(fd, b"x")
    os.pwrite(fd, b"x", 0)
    os.ftruncate(fd, 0)
    shutil.copyfile(p, p)
    shutil.move(p, p)
    zipfile.ZipFile(p, "w")

def reads(p, fd, text, obj):
    open(p)
    open(p, "rb")
    open(p, mode="r", encoding="utf-8")
    os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0))
    os.fdopen(fd, "rb")
    np.load(p)
    json.dumps(obj)
    json.loads(text)
    text.replace("a", "b")
    obj.replace(field=1)
    zipfile.ZipFile(p)
    Path(p).read_text()
'''


def test_the_walk_catches_each_planted_violation():
    """The check can fail: each of the 37 planted writes is reported once (with its line), and none of the
    reading forms beside them."""
    found = violations(_PLANTED, "grokclocks/planted.py")
    lines = sorted(int(x.split(":")[1].split()[0]) for x in found)
    first = _PLANTED.splitlines().index("def f(p, fig, a, fd, flags):") + 2
    last = _PLANTED.splitlines().index("def reads(p, fd, text, obj):")  # the blank line before it
    assert lines == list(range(first, last)) and len(lines) == 37, "\n".join(found)
    assert all(" in f: " in x for x in found)
    assert violations(_PLANTED, "grokclocks/_safe_write.py") == []  # the writer's own file is allowed


# ------------------------------------------------------------------------------------------ the writer's rules


def test_an_existing_file_is_kept_without_overwrite(tmp_path):
    p = tmp_path / "out.json"
    p.write_text("mine")
    with pytest.raises(OutputExistsError, match=r"out\.json already exists; pass overwrite=True"):
        W.WRITER.write_text(p, "new")
    assert p.read_text() == "mine"
    assert W.WRITER.write_text(p, "new", overwrite=True) == p and p.read_text() == "new"
    assert sorted(x.name for x in tmp_path.iterdir()) == ["out.json"]


@pytest.mark.parametrize("overwrite", [False, True])
def test_a_symbolic_link_is_never_written_through(tmp_path, overwrite):
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes")
    (tmp_path / "l.png").symlink_to(notes)
    (tmp_path / "dangling.png").symlink_to(tmp_path / "nowhere.png")
    for name in ("l.png", "dangling.png"):
        with pytest.raises(DomainError, match=rf"{name} is a symbolic link \(to '.*'\); grokclocks writes no file"):
            W.WRITER.write_bytes(tmp_path / name, b"PNG", overwrite=overwrite)
    assert notes.read_text() == "my notes" and not (tmp_path / "nowhere.png").exists()
    assert (tmp_path / "l.png").is_symlink() and (tmp_path / "dangling.png").is_symlink()


def test_only_regular_files_in_existing_directories_with_the_right_suffix(tmp_path):
    os.mkfifo(tmp_path / "fifo.json")
    (tmp_path / "adir").mkdir()
    cases = [(tmp_path / "fifo.json", {"overwrite": True}, "is a FIFO \\(named pipe\\), not a regular file"),
             (tmp_path / "adir", {"overwrite": True}, "is a directory"),
             (tmp_path / "missing" / "x.json", {}, "the directory .*missing does not exist"),
             (tmp_path / "out", {"suffixes": ("json",)}, r"must end with its format, one of \.json \(e\.g\. out\.json\)"),
             (tmp_path / "fifo.json" / "x.json", {}, "cannot write")]
    for path, kw, message in cases:
        with pytest.raises(DomainError, match=message):
            W.WRITER.write_bytes(path, b"{}", **kw)
    assert W.WRITER.write_bytes(tmp_path / "new" / "deep" / "x.json", b"{}", make_parents=True).read_bytes() == b"{}"
    assert sorted(x.name for x in tmp_path.iterdir()) == ["adir", "fifo.json", "new"]


def test_a_file_that_appears_while_writing_is_not_replaced(tmp_path):
    p = tmp_path / "out.json"

    def write(fh):
        fh.write(b"new")
        p.write_text("written meanwhile by someone else")

    with pytest.raises(OutputExistsError, match="was created by another program while it was written"):
        W.WRITER.write(p, write)
    assert p.read_text() == "written meanwhile by someone else"

    def plant_link(fh):
        fh.write(b"new")
        p.unlink()
        p.symlink_to(tmp_path / "target")

    with pytest.raises(DomainError, match="became a symbolic link"):
        W.WRITER.write(p, plant_link, overwrite=True)
    assert p.is_symlink() and not (tmp_path / "target").exists()
    assert sorted(x.name for x in tmp_path.iterdir()) == ["out.json"]  # no temporary file left


def test_a_failed_write_leaves_the_previous_file_and_no_temporary(tmp_path):
    p = tmp_path / "out.json"
    p.write_text("previous")

    def full(fh):
        fh.write(b"half")
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(DomainError, match=r"^save: cannot write .*out\.json: no space left on the device \(ENOSPC\); "
                                          r"out\.json is as it was"):
        W.WRITER.write(p, full, name="save", overwrite=True)

    def interrupted(fh):
        fh.write(b"half")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        W.WRITER.write(p, interrupted, overwrite=True)
    assert p.read_text() == "previous" and sorted(x.name for x in tmp_path.iterdir()) == ["out.json"]


def test_stale_temporary_files_of_dead_writers_only_are_removed(tmp_path):
    """A temporary file named for a process that ended is removed by the next write; one of a process that
    runs (a live writer, still writing) is left alone (the mutant "delete every temporary" fails here)."""
    import subprocess
    import sys

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        p = tmp_path / "run.npz"
        stale = tmp_path / f".run.npz.{W.HOST_TAG}-{int(dead.stdout)}.0123abcd.tmp"
        writing = tmp_path / f".run.npz.{W.HOST_TAG}-{live.pid}.0123abcd.tmp"
        other_host = tmp_path / ".run.npz.ffffffff-1.0123abcd.tmp"
        for f in (stale, writing, other_host):
            f.write_bytes(b"half")
        W.WRITER.write_bytes(p, b"run", overwrite=True)
        assert not stale.exists() and writing.exists() and other_host.exists()
    finally:
        live.kill()
        live.wait()


def test_a_zombie_is_dead_and_a_live_process_is_not():
    """`alive` counts a zombie (ended, its status not collected) as dead: its lock or temporary file is stale."""
    import subprocess
    import sys

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # not reaped: it becomes a zombie
        fields = W._proc_stat(child.pid)
        if fields is not None and fields[0] == "Z":
            break
        time.sleep(0.01)
    else:
        pytest.skip("no /proc state for the child")
    try:
        os.kill(child.pid, 0)  # a zombie still has its pid: os.kill alone says it exists
        assert not W.alive(child.pid)
        assert W.alive(os.getpid()) and W.alive(os.getpid(), W.proc_start(os.getpid()))
        assert not W.alive(os.getpid(), "0")  # the pid now names another process than the one recorded
        assert not W.alive(True) and not W.alive(-3) and not W.alive(2**80)
    finally:
        child.wait()


def test_figures_go_through_the_writer(tmp_path):
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    fig = Figure()
    fig.subplots().plot([1, 2], [3, 4])
    p = W.WRITER.save_figure(fig, tmp_path / "f.pdf")
    assert p == tmp_path / "f.pdf" and p.read_bytes()[:4] == b"%PDF"
    with pytest.raises(DomainError, match=r"must end with its format.*\(e\.g\. f\.nope\.png\)"):
        W.WRITER.save_figure(fig, tmp_path / "f.nope")
    with pytest.raises(OutputExistsError):
        W.WRITER.save_figure(fig, tmp_path / "f.pdf")


def test_a_figure_shows_its_texts_as_text(tmp_path):
    """Names from files reach a figure's title and legend: `$...$` there is not typeset (an unknown command made
    matplotlib raise at save, after the table was printed) and control characters are shown as escapes; tick
    labels keep matplotlib's own formulas."""
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    name = "run $\\oops$ \x1b[2J\x07 | <b>"
    fig = Figure()
    ax = fig.subplots()
    ax.semilogy([1, 10, 100], [1, 10, 1000], label=name)
    ax.legend()
    fig.suptitle(name)
    p = W.WRITER.save_figure(fig, tmp_path / "f.png")
    assert p.read_bytes()[:4] == b"\x89PNG"
    shown = fig.texts[0].get_text()
    assert shown == "run $\\oops$ \\x1b[2J\\x07 | <b>" and not fig.texts[0].get_parse_math()
    assert ax.get_legend().get_texts()[0].get_text() == shown
    assert all(t.get_parse_math() for t in ax.yaxis.get_ticklabels())
    W.plain_figure_texts(fig)  # a second pass changes nothing
    assert fig.texts[0].get_text() == shown


def test_run_files_and_certificates_refuse_links(tmp_path):
    from grokclocks import runfile as R
    from grokclocks.verification import Report, write_report

    notes = tmp_path / "notes.txt"
    notes.write_text("mine")
    (tmp_path / "run.npz").symlink_to(notes)
    traj = R.Trajectory(times=np.arange(3), metrics={"m": np.ones(3)})
    with pytest.raises(R.RunFileError, match="run.npz is a symbolic link"):
        R.save_trajectory(traj, tmp_path / "run", overwrite=True)
    rep = Report()
    rep.check("levi:eq8", predicted=1.0, measured=1.0, rtol=0.1, source="demo")
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "verify-cpu.md").symlink_to(notes)
    with pytest.raises(DomainError, match="verify-cpu.md is a symbolic link"):
        write_report(rep.rows, tmp_path / "c", "cpu", overwrite=True)
    assert notes.read_text() == "mine" and sorted(x.name for x in (tmp_path / "c").iterdir()) == ["verify-cpu.md"]
