"""The door in: every byte grokclocks reads from a user's path goes through `grokclocks._safe_io`.

Two halves.  The structure: `test_no_read_outside_the_door` walks the package's syntax trees and fails on any
call that opens, lists or parses a file outside the door module -- `open` for reading, `os.open`, `os.read`,
`Path.read_text` / `read_bytes`, any `.open(...)` (a zip member, `Path.open`, `tarfile.open`, `gzip.open`),
`json.load` / `json.loads`, `np.load` / `loadtxt` / `fromfile`, `pickle.load`, `torch.load`, `sqlite3.connect`,
`zipfile.ZipFile`, `tarfile`, a folder listing (`os.scandir`, `os.listdir`, `os.walk`, `iterdir`, `glob`),
`shutil.copy*`, and `csv.reader` on anything but text already read -- except the calls of `ALLOWED`, each with
its reason (the package's own source files, the kernel's `/proc`, the lock a writer holds, text that is not from
a file).  `test_the_scan_finds_a_planted_read` shows it can fail.

The rules: the door's own tests (links, sizes, JSON, zip archives, SQLite), each written so that the mutation
an outside trial found surviving (a file that grows past `max_bytes` silently cut instead of refused) fails it.
"""

from __future__ import annotations

import ast
import json
import os
import sqlite3
import threading
import time
import zipfile
from pathlib import Path

import pytest

from grokclocks import _safe_io

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "grokclocks"
DOORS = {"grokclocks/_safe_io"}  # the door in: the only package that may open, list and parse a user's file

# (file, enclosing function, what) -> why the call may stay outside the door
ALLOWED: dict[tuple[str, str, str], str] = {
    ("grokclocks/_fielddocs.py", "_module_tree", "open"):
        "reads the package's own source file of a record class, to list its fields in help()",
    ("grokclocks/verification/_certificate.py", "_cpu_model", "read_text"):
        "/proc/cpuinfo, the kernel's description of the machine, for the certificate's meta",
    ("grokclocks/verification/_suites.py", "_parse", "read_text"):
        "the repository's own verify/ test files, parsed for the suite fingerprint (source, not data)",
    ("grokclocks/verification/_suites.py", "suite_fingerprint", "read_bytes"):
        "the repository's own verify/ files, hashed into the suite fingerprint",
    ("grokclocks/verification/_suites.py", "suite_files", "rglob"):
        "lists the repository's own verify/<suite>/ files",
    ("grokclocks/verification/_suites.py", "check_suite", "glob"):
        "lists the repository's own verify/<suite>/ test files",
    ("grokclocks/verification/_suites.py", "suites", "iterdir"):
        "lists the repository's own verify/ folder",
    ("grokclocks/verification/_suites.py", "suites", "glob"):
        "lists the repository's own verify/<suite>/ test files",
    ("grokclocks/verification/_planner.py", "suite_tests", "glob"):
        "lists the repository's own verify/<suite>/ test files",
    ("grokclocks/cli/_verify.py", "_suites", "iterdir"):
        "lists the repository's own verify/ folder",
    ("grokclocks/cli/_verify.py", "_suites", "glob"):
        "lists the repository's own verify/<suite>/ test files",
    ("grokclocks/_safe_write.py", "_proc_stat", "os.open"):
        "/proc/PID/stat, the kernel's process table, to tell a live lock holder from a dead one (the door out)",
    ("grokclocks/_safe_write.py", "_proc_stat", "os.read"):
        "/proc/PID/stat, at most 4096 bytes of the kernel's process table (the door out)",
    ("grokclocks/_safe_write.py", "remove_stale_temps", "os.scandir"):
        "the writer lists the folder it writes into for its own stale temporary files (the door out)",
    ("grokclocks/_safe_write.py", "_fsync_dir", "os.open"):
        "opens the folder the writer just renamed into, to fsync it; no byte is read (the door out)",
    ("grokclocks/_safe_write.py", "write", "os.open"):
        "creates the writer's own new temporary file (O_CREAT|O_EXCL|O_NOFOLLOW, write only): the door out",
    ("grokclocks/_safe_write.py", "write", "os.fdopen"):
        "wraps the descriptor of the writer's own new temporary file for writing: the door out",
    ("grokclocks/_safe_write.py", "open_lock_file", "os.open"):
        "creates or opens a run's lock file, O_NOFOLLOW, refused unless a regular file with one link: the door out",
    ("grokclocks/runfile/_files.py", "_read_record", "os.pread"):
        "the lock's own record, at most 4096 bytes, from the descriptor of the lock the writer holds (door out)",
    ("grokclocks/runfile/_files.py", "_read_record", "json.loads"):
        "the lock's own record (at most 4096 bytes, RecursionError caught), written by grokclocks (door out)",
    ("grokclocks/sim/train/_engine.py", "free_device_memory", "read_text"):
        "/proc/meminfo, the kernel's free memory, to size a batch",
    ("grokclocks/sim/train/_engine.py", "_config_diff", "json.loads"):
        "a round trip of in-memory configs through JSON (json.loads(json.dumps(...))): no file",
    ("grokclocks/logs/_torch.py", "_read_torch", "torch.load"):
        "reads from a file object the door opened and checked (regular file, max_bytes, zip members unpack to "
        "at most max_bytes), with weights_only=True",
}

_PATH_READS = {"read_text", "read_bytes", "iterdir", "glob", "rglob"}
_DOTTED = {"json.load", "json.loads", "np.load", "numpy.load", "np.fromfile", "np.memmap", "pickle.load",
           "pickle.loads", "torch.load", "sqlite3.connect", "zipfile.ZipFile", "zipfile.Path", "tarfile.open", "tarfile.TarFile", "gzip.open", "bz2.open", "lzma.open",
           "io.open", "os.open", "os.fdopen", "os.read", "os.pread", "os.scandir", "os.listdir", "os.walk",
           "glob.glob", "glob.iglob", "shutil.copy", "shutil.copy2", "shutil.copyfile", "shutil.copytree",
           "mmap.mmap", "marshal.load", "marshal.loads", "shelve.open"}
_OPENERS = {"open", "io.open", "os.fdopen", "codecs.open", "gzip.open", "bz2.open", "lzma.open"}
# calls named `.open` that open no file: sympy's open interval (a, b) (grokclocks.symbolic)
_NOT_FILES = {"Interval.open", "sp.Interval.open", "sympy.Interval.open"}
_WRITE_FLAGS = {"O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND", "O_TRUNC"}


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else node.attr
    return ""


def _write_mode(call: ast.Call) -> bool:
    """Whether `open(...)` / `os.open(...)` opens for writing (the door out's business, not the door in's)."""
    mode = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg in ("mode", "flags")),
                                                         None)
    if isinstance(mode, ast.Constant) and isinstance(mode.value, str):
        return any(c in mode.value for c in "wax+")
    names = {n.attr if isinstance(n, ast.Attribute) else getattr(n, "id", "") for n in ast.walk(mode)} if mode else set()
    return bool(names & _WRITE_FLAGS)


def _reads(call: ast.Call) -> str | None:
    """What kind of read `call` is ("open", "read_text", "json.loads", ...), or None for anything else."""
    name = _dotted(call.func)
    if name in ("open", "io.open"):
        return None if _write_mode(call) else "open"
    if name == "os.open":
        return None if _write_mode(call) else "os.open"
    if name in ("csv.reader", "csv.DictReader"):  # on a file opened right there, not on text already read
        first = call.args[0] if call.args else None
        opened = isinstance(first, ast.Call) and (_dotted(first.func) in _OPENERS or (
            isinstance(first.func, ast.Attribute) and first.func.attr == "open"))
        return name if opened else None
    if name in ("np.loadtxt", "numpy.loadtxt", "np.genfromtxt", "numpy.genfromtxt"):  # a path reads the file
        first = call.args[0] if call.args else None
        text = isinstance(first, ast.Call) and _dotted(first.func) in ("StringIO", "io.StringIO")
        return None if text else name
    if name in _DOTTED:
        return name
    if name in _NOT_FILES:
        return None
    if isinstance(call.func, ast.Attribute):
        if call.func.attr in ("read_text", "read_bytes") and len(call.args) >= 2:
            return None  # the door's Reader.read_text(path, max_bytes, ...): Path's methods take no path
        if call.func.attr in _PATH_READS:
            return call.func.attr
        if call.func.attr == "open":
            return ".open"
    return None


def scan(package: Path, doors: set[str] = DOORS) -> list[tuple[str, str, str, int]]:
    """Every read outside `doors`: (file relative to the package's parent, enclosing function, what, line)."""
    found = []
    for f in sorted(package.rglob("*.py")):
        rel = f.relative_to(package.parent).as_posix()
        if any(rel == d or rel.startswith(d + "/") for d in doors):
            continue
        tree = ast.parse(f.read_text(), filename=str(f))

        def visit(node: ast.AST, where: str) -> None:
            for child in ast.iter_child_nodes(node):
                inner = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else where
                if isinstance(child, ast.Call):
                    what = _reads(child)
                    if what is not None:
                        found.append((rel, where, what, child.lineno))
                visit(child, inner)

        visit(tree, "<module>")
    return found


def test_no_read_outside_the_door():
    """Every call that opens, lists or parses a file outside grokclocks/_safe_io/ is one of ALLOWED."""
    found = scan(PACKAGE)
    bad = [f"{rel}:{line} {what} in {where}()" for rel, where, what, line in found if (rel, where, what) not in ALLOWED]
    assert not bad, ("reads outside the door in (route them through grokclocks._safe_io, or add them to ALLOWED "
                     "with the reason):\n" + "\n".join(bad))
    stale = sorted(set(ALLOWED) - {(rel, where, what) for rel, where, what, _ in found})
    assert not stale, f"ALLOWED entries that match no call any more (remove them): {stale}"
    assert all(reason.strip() for reason in ALLOWED.values())


def test_the_scan_finds_a_planted_read(tmp_path):
    """The check can fail: a package with a reader of each kind outside its door is reported, call by call."""
    pkg = tmp_path / "grokclocks"
    (pkg / "logs").mkdir(parents=True)
    (pkg / "_safe_io").mkdir()
    (pkg / "_safe_io" / "_files.py").write_text("def ok(p):\n    return open(p).read()\n")  # the door itself may
    (pkg / "logs" / "_bad.py").write_text(
        "import csv, io, json, sqlite3, zipfile\nimport numpy as np\nfrom pathlib import Path\n\n"
        "def read(p):\n"
        "    text = open(p).read()\n"
        "    meta = json.loads(Path(p).read_text())\n"
        "    con = sqlite3.connect(p)\n"
        "    rows = list(csv.reader(open(p)))\n"
        "    z = zipfile.ZipFile(p)\n"
        "    a = np.load(p)\n"
        "    for q in Path(p).glob('*.csv'):\n"
        "        pass\n"
        "    with z.open('m.npy') as m:\n"
        "        pass\n"
        "    mask = np.loadtxt(p)\n"
        "    return text, meta, con, rows, a, mask\n\n"
        "def fine(text, out, reader):\n"
        "    open(out, 'w').write(text)\n"  # a write: the door out's, not this test's
        "    reader.read_text(out, 100)\n"  # the door's Reader.read_text(path, max_bytes)
        "    return list(csv.reader(text.splitlines())), np.loadtxt(io.StringIO(text))\n")
    got = sorted((what, line) for rel, where, what, line in scan(pkg, {"grokclocks/_safe_io"}))
    assert got == [(".open", 14), ("csv.reader", 9), ("glob", 12), ("json.loads", 7), ("np.load", 11),
                   ("np.loadtxt", 16), ("open", 6), ("open", 9), ("read_text", 7), ("sqlite3.connect", 8),
                   ("zipfile.ZipFile", 10)]
    assert all(rel == "grokclocks/logs/_bad.py" and where == "read" for rel, where, _, _ in
               scan(pkg, {"grokclocks/_safe_io"}))


# ============================================================================================ the door's rules

R = _safe_io.Reader(ValueError, limit_hint="raise max_bytes")


def test_a_file_that_grows_past_max_bytes_is_refused_not_cut(tmp_path, monkeypatch):
    """`read_open` reads at most max_bytes + 1 bytes whatever fstat said, and refuses: a file that grows after
    fstat, or reports size 0 as /proc files do, is never returned cut to max_bytes."""
    status = Path("/proc/self/status")
    if status.exists():
        with pytest.raises(ValueError, match=r"^status: the file holds more than 100 bytes"):
            R.read_bytes(status, 100, named=status)
        whole = R.read_bytes(status, 1 << 20, named=status)  # within the limit: all of it, not the first 0 bytes
        assert whole.startswith(b"Name:") and whole.endswith(b"\n") and len(whole) > 100
    f = tmp_path / "grows.log"
    f.write_bytes(b"x" * 1000)
    real = os.fstat

    def stale(fd):  # fstat as it was before the file grew: 10 bytes
        st = real(fd)
        return os.stat_result((st.st_mode, st.st_ino, st.st_dev, st.st_nlink, st.st_uid, st.st_gid, 10,
                               st.st_atime, st.st_mtime, st.st_ctime))

    monkeypatch.setattr(os, "fstat", stale)
    with pytest.raises(ValueError, match=r"^grows\.log: the file holds more than 500 bytes"):
        R.read_bytes(f, 500, named=f)
    assert R.read_bytes(f, 1000, named=f) == b"x" * 1000


def test_a_file_growing_while_read_is_refused(tmp_path):
    """A writer appending while the door reads: the read ends with the whole file or a refusal, never a cut."""
    f = tmp_path / "live.log"
    f.write_bytes(b"a" * 100)
    stop = threading.Event()

    def append():
        with open(f, "ab") as out:
            while not stop.is_set():
                out.write(b"b" * 4096)
                out.flush()

    t = threading.Thread(target=append)
    t.start()
    try:
        time.sleep(0.05)
        with pytest.raises(ValueError, match="the file holds"):
            R.read_bytes(f, 20_000, named=f)
    finally:
        stop.set()
        t.join()


def test_links_are_followed_only_where_the_user_named_them(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("root:x:0:0:SECRET\n")
    run = tmp_path / "run"
    (run / "metrics").mkdir(parents=True)
    (run / "metrics" / "acc").symlink_to(secret)
    (run / "real").mkdir()
    (run / "real" / "loss").write_text("1 2 3\n")
    (run / "via").symlink_to(run / "real", target_is_directory=True)
    named_link = tmp_path / "named.txt"
    named_link.symlink_to(secret)
    # named: followed
    assert R.read_text(named_link, 100, named=named_link) == "root:x:0:0:SECRET\n"
    # found inside the named folder: the file a link, or a folder on the way a link: refused, not read
    with pytest.raises(ValueError, match=r"'metrics/acc' is a symbolic link inside the folder 'run'") as e:
        R.read_text(run / "metrics" / "acc", 100, named=run)
    assert "SECRET" not in str(e.value)
    with pytest.raises(ValueError, match=r"'via' is a symbolic link inside the folder 'run'"):
        R.read_text(run / "via" / "loss", 100, named=run)
    assert R.read_text(run / "real" / "loss", 100, named=run) == "1 2 3\n"
    # a sidecar beside a named file is found, not named
    (tmp_path / "x.csv").write_text("a\n")
    (tmp_path / "x.csv.json").symlink_to(secret)
    with pytest.raises(ValueError, match="is a symbolic link"):
        R.read_json(tmp_path / "x.csv.json", 100, named=tmp_path / "x.csv")
    # a path outside what the user named is refused
    with pytest.raises(ValueError, match="not inside"):
        R.read_text(secret, 100, named=run)
    # a walk does not descend into a linked folder; a linked file is listed (and refused when opened)
    assert [p.relative_to(run).as_posix() for p in R.walk(run, lambda n: True, named=run)] == [
        "metrics/acc", "real/loss", "via"]
    assert [p.name for p in R.subdirs(run, named=run)] == ["metrics", "real"]


def test_fifo_and_devices_are_refused_without_waiting(tmp_path):
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match=r"a FIFO \(named pipe\), not a regular file"):
        R.read_bytes(fifo, 10, named=fifo)
    if Path("/dev/zero").exists():
        with pytest.raises(ValueError, match="a character device"):
            R.read_bytes(Path("/dev/zero"), 10, named=Path("/dev/zero"))


def test_text_is_utf8_only():
    assert R.decode("\ufeffstep,acc\n".encode("utf-8"), "a.csv") == "step,acc\n"
    with pytest.raises(ValueError, match="UTF-16"):
        R.decode("step".encode("utf-16"), "a.csv")
    with pytest.raises(ValueError, match=r"byte 0xe9 at offset 1 \(line 1\).*cp1252"):
        R.decode("débit".encode("latin-1"), "a.csv")


def test_json_rules_depth_integers_and_duplicate_keys():
    assert R.json_loads('{"a": [1, {"b": 2}], "n": ' + "9" * 300 + "}", "x") == {"a": [1, {"b": 2}], "n": int("9" * 300)}
    with pytest.raises(ValueError, match=r"^x: an integer of 301 digits \(more than 300"):
        R.json_loads('{"n": -' + "1" * 301 + "}", "x")
    assert R.json_loads('{"s": "' + "1" * 400 + '"}', "x") == {"s": "1" * 400}  # digits in a string are text
    with pytest.raises(ValueError, match=r"^x: line 3: the key 'a' appears twice in one JSON object"):
        R.json_loads('{"z": {"a": 1, "b": 2, "a": 3}}', "x", "line 3: ")
    with pytest.raises(ValueError, match="nested deeper than 64 levels"):
        R.json_loads("[" * 100_000 + "]" * 100_000, "x")
    with pytest.raises(ValueError, match="nested deeper than 64 levels"):
        R.json_loads("[" * 65 + "]" * 65, "x")
    assert R.json_loads("[" * 64 + "]" * 64, "x") is not None
    with pytest.raises(json.JSONDecodeError):  # the caller words "not JSON" with the line it knows
        R.json_loads("{", "x")


def test_excerpt_is_short_and_escaped():
    assert _safe_io.excerpt("root:x:0:0:" + "y" * 100) == repr("root:x:0:0:" + "y" * 29) + "..."
    assert "\x1b" not in _safe_io.excerpt("\x1b]0;owned\x07 title") and "\\x1b" in _safe_io.excerpt("\x1b]0;x")


def test_zip_member_count_is_refused_before_the_directory_is_parsed(tmp_path, monkeypatch):
    path = tmp_path / "many.npz"
    with zipfile.ZipFile(path, "w") as z:
        for i in range(50):
            z.writestr(f"m{i}.npy", b"")
    monkeypatch.setattr(_safe_io._limits, "MAX_ZIP_MEMBERS", 40)
    parsed = []
    monkeypatch.setattr(zipfile, "ZipFile", lambda *a, **k: parsed.append(1))
    with open(path, "rb") as f, pytest.raises(ValueError, match=r"^many\.npz: a zip archive of 50 members, more "
                                                                r"than 40"):
        R.open_zip(f, "many.npz")
    assert parsed == []  # refused from the end record, before zipfile read the directory


def _db(path: Path, script: str) -> Path:
    con = sqlite3.connect(path)
    con.executescript(script)
    con.commit()
    con.close()
    return path


def test_sqlite_is_read_from_bytes_and_plain_tables_only(tmp_path, monkeypatch):
    good = _db(tmp_path / "good.db", "CREATE TABLE t (a INTEGER, b TEXT); INSERT INTO t VALUES (1, 'x');")
    con = R.open_sqlite(good, 1 << 20, named=good)
    try:
        assert con.execute("SELECT a, b FROM t").fetchall() == [(1, "x")]
        assert R.sqlite_tables(con, ["t", "missing"], "good.db") == {"t": {"a", "b"}, "missing": set()}
        with pytest.raises(sqlite3.OperationalError):  # query_only: the in-memory copy is not written either
            con.execute("INSERT INTO t VALUES (2, 'y')")
    finally:
        con.close()
    for name, script, match in [
        ("gen", "CREATE TABLE t (a INTEGER, b INTEGER GENERATED ALWAYS AS (a * 2) VIRTUAL);",
         r"table 't' has generated or hidden column\(s\) \['b'\]"),
        ("view", "CREATE TABLE u (a); CREATE VIEW t AS SELECT a FROM u;", r"'t' is a view, not a plain table"),
        ("trig", "CREATE TABLE t (a); CREATE TABLE u (a); CREATE TRIGGER g AFTER INSERT ON t BEGIN "
                 "INSERT INTO u VALUES (1); END;", r"table 't' has trigger\(s\) \['g'\]"),
    ]:
        db = _db(tmp_path / f"{name}.db", script)
        con = R.open_sqlite(db, 1 << 20, named=db)
        try:
            with pytest.raises(ValueError, match=match):
                R.sqlite_tables(con, ["t"], f"{name}.db")
        finally:
            con.close()
    # every statement is stopped after MAX_SQL_SECONDS
    monkeypatch.setattr(_safe_io._limits, "MAX_SQL_SECONDS", 0.2)
    con = R.open_sqlite(good, 1 << 20, named=good)
    t0 = time.perf_counter()
    with pytest.raises(sqlite3.OperationalError, match="interrupt"):
        con.execute("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c").fetchall()
    assert time.perf_counter() - t0 < 5
    con.close()
    with pytest.raises(ValueError, match="not an SQLite database"):
        (tmp_path / "text.db").write_text("step,acc\n")
        R.open_sqlite(tmp_path / "text.db", 1 << 20, named=tmp_path / "text.db")


def test_sqlite_in_wal_mode_with_pending_writes_is_refused(tmp_path):
    db = tmp_path / "wal.db"
    con = sqlite3.connect(db)
    con.execute("PRAGMA journal_mode = WAL")
    con.execute("CREATE TABLE t (a)")
    con.execute("INSERT INTO t VALUES (1)")
    con.commit()  # the writer is still open: its writes are in wal.db-wal, not yet in wal.db
    try:
        if (tmp_path / "wal.db-wal").stat().st_size == 0:
            pytest.skip("this SQLite checkpointed at once")
        with pytest.raises(ValueError, match=r"WAL mode whose write-ahead log wal\.db-wal is not empty"):
            R.open_sqlite(db, 1 << 20, named=db)
    finally:
        con.close()  # the last connection checkpoints: now the file holds everything
    con = R.open_sqlite(db, 1 << 20, named=db)
    assert con.execute("SELECT a FROM t").fetchall() == [(1,)]
    con.close()


def test_folder_walks_share_one_budget(tmp_path, monkeypatch):
    for i in range(30):
        (tmp_path / f"d{i}").mkdir()
    monkeypatch.setattr(_safe_io._limits, "MAX_DIR_ENTRIES", 50)
    assert len(R.subdirs(tmp_path, named=tmp_path)) == 30  # one listing: 30 entries
    with _safe_io.listing_budget():
        R.subdirs(tmp_path, named=tmp_path)
        R.subdirs(tmp_path, named=tmp_path)  # the same listing again: remembered, not listed twice
        with pytest.raises(ValueError, match="more than 50 folder entries"):
            R.walk(tmp_path, lambda n: True, named=tmp_path)  # 30 more: 60 > 50 in this read


def test_walks_record_the_linked_folders_they_do_not_enter(tmp_path):
    """A link to a folder found by a walk is not entered, and the read's budget records it (`linked`), so the
    reader can say so (before, a linked seed or a linked validation/ folder was left out without a word);
    a folder the walk skips by name (a dot-folder) is not reported."""
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "m.csv").write_text("a\n")
    (tmp_path / "run" / "sub").mkdir(parents=True)
    os.symlink(tmp_path / "real", tmp_path / "run" / "seed1")
    os.symlink(tmp_path / "real", tmp_path / "run" / "sub" / "validation")
    os.symlink(tmp_path / "real", tmp_path / "run" / ".hidden")
    os.symlink(tmp_path / "real" / "m.csv", tmp_path / "run" / "file_link.csv")  # a link to a file: listed, refused
    with _safe_io.listing_budget() as budget:
        found = R.walk(tmp_path / "run", lambda n: n.endswith(".csv"), named=tmp_path / "run",
                       skip=lambda parts: parts[-1].startswith("."))
        assert [f.name for f in found] == ["file_link.csv"]  # nothing found through the linked folders
        assert R.subdirs(tmp_path / "run", named=tmp_path / "run") == [tmp_path / "run" / "sub"]
    assert budget.linked == ["run/seed1", "run/sub/validation"]
    with _safe_io.listing_budget() as outer, _safe_io.listing_budget() as inner:
        assert inner is outer  # nested reads share the outer budget


def test_budget_tables_and_slices_found_in_a_folder_are_not_followed(tmp_path):
    """`budget_estimates` and `merge_certificates` list their folder through the door and read each file found with
    `found_in`: a linked budget table is skipped (was read), a linked slice refused by name (was merged)."""
    from grokclocks.verification import CertificateError, budget_estimates, merge_certificates, partial_certificates

    table = {"modules": {"levi/test_levi.py": {"items": [{"test": "test_a", "h100_s": 2.5}]}}}
    (tmp_path / "elsewhere.json").write_text(json.dumps(table))
    (tmp_path / "tables").mkdir()
    os.symlink(tmp_path / "elsewhere.json", tmp_path / "tables" / "levi.json")
    assert budget_estimates(tmp_path / "tables") == {}
    assert budget_estimates(tmp_path / "elsewhere.json") == {} and budget_estimates(tmp_path / "missing") == {}
    (tmp_path / "slices").mkdir()
    os.symlink(tmp_path / "elsewhere.json", tmp_path / "slices" / "verify-cpu-shard-1-of-1.json")
    assert partial_certificates([tmp_path / "slices"]) == [tmp_path / "slices" / "verify-cpu-shard-1-of-1.json"]
    with pytest.raises(CertificateError, match=r"verify-cpu-shard-1-of-1\.json' is a symbolic link inside the folder"):
        merge_certificates([tmp_path / "slices"])
