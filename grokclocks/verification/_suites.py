"""Per-suite certificates of the verify tiers, their fingerprint and their state (passed, failed, stale, never run).

A suite is one directory `verify/<suite>/`.  Its certificate records a fingerprint: the sha256 of every file
its results can depend on -- the suite's own files, `verify/conftest.py` and, transitively, every module of
grokclocks or of verify/ they import (imports inside functions included, and the parent packages a module
import runs).  The files are found by reading the sources (`ast`), never by importing them, so the state of a
certificate is known without JAX or a GPU.  A certificate whose fingerprint differs from the files' today is
stale: it is kept (and shown as stale), never deleted and never counted as a result of the current code.

The modules that only write, read, render, merge or plan certificates (grokclocks.verification
except `_report.py`, which computes each row's error and verdict) are imported by every suite but cannot
change a row; the fingerprint keeps their hashes apart (`"reporting"`), and a change to them does not make a
certificate stale.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import json
import re
import subprocess
from pathlib import Path
from typing import Any

from .. import _validate as V
from .._escape import markdown_code, markdown_text
from ._budget import GPU_SUITE_LIMIT_S
from ._checked import check_certificate
from ._read import CertificateError, read_json

_PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # the checkout holding grokclocks/ (and verify/ beside it)
_SUITE_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
_COMMIT = re.compile(r"^[0-9a-f]{7,40}$")
_REL_PATH = re.compile(r"^(?!/)(?!.*(^|/)\.\.(/|$))[A-Za-z0-9_./-]+$")
STATES = ("passed", "failed", "stale", "incomplete", "never run")
"""The states of a suite's certificate against the files of today, as `SuiteStatus.state` names them:
"passed" and "failed" (fresh and complete), "stale" (the suite's files changed since), "incomplete" (some
tests did not run), "never run" (no certificate)."""


def _root(root: Any) -> Path:
    if root is None:
        return _PACKAGE_ROOT
    if not isinstance(root, (str, Path)):
        raise V.DomainError(f"root must be None or a path to the checkout (got {V.show(root)})")
    p = Path(root)
    if not (p / "verify").is_dir():
        raise V.DomainError(f"root must be a checkout with a verify/ directory (got {str(p)!r})")
    return p.resolve()


def check_suite(suite: Any, root: Any = None) -> str:
    """The name of a verify suite, checked: a directory verify/<suite>/ holding test_*.py files.

    Parameters
    ----------
    suite : str
        The suite's directory name under verify/, e.g. "levi" (letters, digits and underscores).
    root : str or pathlib.Path, optional
        The checkout, a directory holding verify/; default `None`: the checkout this package was imported
        from.

    Returns
    -------
    str
        `suite`.

    Raises
    ------
    DomainError
        If `suite` is not such a name or the directory holds no test file.
    """
    r = _root(root)
    if not isinstance(suite, str) or not _SUITE_NAME.match(suite):
        raise V.DomainError(f"suite must be the name of a directory under verify/ (got {V.show(suite)})")
    if not any((r / "verify" / suite).glob("test_*.py")):
        raise V.DomainError(f"suite {suite!r}: no verify/{suite}/test_*.py in {str(r)!r}")
    return suite


def suites(root: Any = None) -> list[str]:
    """Every verify suite of a checkout: the directories verify/<suite>/ holding test_*.py files, sorted.

    Parameters
    ----------
    root : str or pathlib.Path, optional
        The checkout, a directory holding verify/; default `None`: the checkout this package was imported
        from.

    Returns
    -------
    list of str
        The suite names.

    Raises
    ------
    DomainError
        If `root` is not a checkout with a verify/ directory.
    """
    r = _root(root)
    return sorted(d.name for d in (r / "verify").iterdir()
                  if d.is_dir() and _SUITE_NAME.match(d.name) and any(d.glob("test_*.py")))


# ------------------------------------------------------------------------------------------ dependencies

_VERIFICATION_DIR = "grokclocks/verification/"
_VERDICT_MODULE = "grokclocks/verification/_report.py"


def _is_reporting(path: str) -> bool:
    """Whether a fingerprinted file (a path relative to the checkout, as `suite_files` lists them) only reports:
    the modules of grokclocks.verification that write, read, render, merge or plan certificates -- every file
    of grokclocks/verification/ except `_report.py`, which computes each row's error and verdict.  A change to
    such a file cannot change a row, so it leaves the suite's certificates fresh."""
    return path.startswith(_VERIFICATION_DIR) and path != _VERDICT_MODULE


def _result_files(files: dict[str, str]) -> dict[str, str]:
    """The entries of a fingerprint's file map that can change a row (`_is_reporting` false)."""
    return {f: h for f, h in files.items() if not _is_reporting(f)}


def _module_of(path: Path, root: Path) -> tuple[str, bool]:
    """(dotted module name, is a package) of a file: grokclocks/x/y.py -> grokclocks.x.y; verify/levi/t.py ->
    levi.t (verify/ is the import root of the verify suites)."""
    rel = path.relative_to(root)
    parts = list(rel.with_suffix("").parts)
    if parts[0] == "verify":
        parts = parts[1:]
    is_pkg = parts[-1] == "__init__"
    if is_pkg:
        parts = parts[:-1]
    return ".".join(parts), is_pkg


def _file_of(dotted: str, root: Path) -> Path | None:
    """The file of a module of the checkout (grokclocks.* or a verify/ module), else None."""
    parts = dotted.split(".")
    if not parts or not all(parts):
        return None
    base = root if parts[0] == "grokclocks" else root / "verify"
    p = base.joinpath(*parts)
    for cand in (p.with_suffix(".py"), p / "__init__.py"):
        if cand.is_file():
            return cand
    return None


def _with_parents(dotted: str, root: Path) -> list[Path]:
    """The module's file and its parent packages' __init__.py (importing a.b.c runs a and a.b first)."""
    parts = dotted.split(".")
    out = []
    for k in range(1, len(parts) + 1):
        f = _file_of(".".join(parts[:k]), root)
        if f is not None:
            out.append(f)
    return out


def _parse(path: Path) -> ast.Module | None:
    """The syntax tree of the Python file `path`, read and never run; None where it cannot be read or parsed
    (such a file contributes no test and no import)."""
    try:
        return ast.parse(path.read_text(), filename=str(path))
    except (OSError, SyntaxError, ValueError):
        return None


_IMPORTS_CACHE: dict[tuple, list[Path]] = {}


def _imports(path: Path, root: Path) -> list[Path]:
    """The files of the checkout a file imports (every import statement, inside functions too); cached by the
    file's size and modification time."""
    try:
        st = path.stat()
    except OSError:
        return []
    key = (path, root, st.st_size, st.st_mtime_ns)
    if key in _IMPORTS_CACHE:
        return _IMPORTS_CACHE[key]
    tree = _parse(path)
    if tree is None:
        return []
    _IMPORTS_CACHE[key] = out = _resolve_imports(tree, path, root)
    return out


def _resolve_imports(tree: ast.AST, path: Path, root: Path) -> list[Path]:
    name, is_pkg = _module_of(path, root)
    package = name.split(".") if is_pkg else name.split(".")[:-1]
    out: list[Path] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                out += _with_parents(a.name, root)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1] if node.level > 1 else package
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if not mod:
                continue
            out += _with_parents(mod, root)
            for a in node.names:
                sub = _file_of(f"{mod}.{a.name}", root)
                if sub is not None:
                    out.append(sub)
    return out


def suite_files(suite: str, root: Any = None) -> list[str]:
    """The files a suite's results can depend on, as paths relative to the checkout, sorted.

    Parameters
    ----------
    suite : str
        The suite: the name of a directory verify/<suite>/ holding test_*.py files, e.g. "levi".
    root : str or pathlib.Path, optional
        The checkout, a directory holding verify/; default `None`: the checkout this package was imported
        from.

    Returns
    -------
    list of str
        verify/conftest.py, every .py file of verify/<suite>/, and, transitively, every module of grokclocks
        and of verify/ they import: imports inside functions included, and for a module its parent packages
        (importing grokclocks.sim.train runs grokclocks/__init__.py and grokclocks/sim/__init__.py).

    Raises
    ------
    DomainError
        If `suite` is not a suite of the checkout.

    Notes
    -----
    The sources are read with `ast`, never imported. A module imported by name only at run time
    (`importlib.import_module`) is not seen; the verify modules import what they use by statement.
    """
    r = _root(root)
    suite = check_suite(suite, r)
    todo = [r / "verify" / "conftest.py", *sorted((r / "verify" / suite).rglob("*.py"))]
    seen: set[Path] = set()
    while todo:
        f = todo.pop()
        if f in seen or not f.is_file():
            continue
        seen.add(f)
        todo += [g for g in _imports(f, r) if g not in seen]
    return sorted(p.relative_to(r).as_posix() for p in seen)


def suite_fingerprint(suite: str, root: Any = None) -> dict[str, Any]:
    """The fingerprint of a suite's files today: a digest and the sha256 of each file.

    Parameters
    ----------
    suite : str
        The suite: the name of a directory verify/<suite>/ holding test_*.py files, e.g. "levi".
    root : str or pathlib.Path, optional
        The checkout, a directory holding verify/; default `None`: the checkout this package was imported
        from.

    Returns
    -------
    dict
        {"digest": sha256 over the sorted (path, file sha256) pairs of "files", "files": {path: file sha256}
        of the files that can change a row, "reporting": {path: file sha256} of those that only report
        (`_is_reporting`)}; together the paths of `suite_files`.

    Raises
    ------
    DomainError
        If `suite` is not a suite of the checkout.
    """
    r = _root(root)
    every = {f: hashlib.sha256((r / f).read_bytes()).hexdigest() for f in suite_files(suite, r)}
    files = _result_files(every)
    digest = hashlib.sha256(json.dumps(sorted(files.items())).encode()).hexdigest()
    return {"digest": digest, "files": files, "reporting": {f: h for f, h in every.items() if f not in files}}


# ------------------------------------------------------------------------------------------ certificates


def suite_certificate(rows: list, suite: str, scale: str, duration_s: float | None = None, *,
                      tests: list[dict[str, Any]] | None = None, meta: dict[str, Any] | None = None,
                      root: Any = None) -> dict[str, Any]:
    """The certificate of one suite: `certificate` stamped with the suite and its fingerprint.

    Parameters
    ----------
    rows : list of Row
        The suite's rows, in the order shown.
    suite : str
        The suite: the name of a directory verify/<suite>/ holding test_*.py files, e.g. "levi".
    scale : {"cpu", "gpu"}
        The configuration size of the rows.
    duration_s : float, optional
        The suite's wall time in seconds (first test start to last test end), finite and ≥ 0; default
        `None` (unknown).
    tests : list of dict, optional
        The suite's per-test records: each a dict with a "test" node ID and, where measured, "outcome",
        "wall_s", "compile_s", "compile_max_s" (seconds, `None` or finite and ≥ 0), "peak_bytes"; default
        `None` (no records).
    meta : dict, optional
        Further JSON-ready metadata (commit, dirty, complete, not_run, startup_s, ...); default `None`
        (none). A suite is complete unless meta says complete=False.
    root : str or pathlib.Path, optional
        The checkout whose files are fingerprinted, a directory holding verify/; default `None`: the
        checkout this package was imported from.

    Returns
    -------
    dict
        The certificate; meta["suite"], meta["fingerprint"] (see `suite_fingerprint`) and meta["complete"]; at GPU
        scale a suite over `GPU_SUITE_LIMIT_S` (420 s) of wall time is listed under its budget warnings.

    Raises
    ------
    DomainError
        If an argument is not of the form above.
    """
    from ._certificate import certificate

    suite = check_suite(suite, root)
    if meta is not None and not isinstance(meta, dict):
        raise V.DomainError(f"meta must be None or a dict (got {V.show(meta)})")
    m = {"suite": suite, "fingerprint": suite_fingerprint(suite, root), "complete": True}
    m.update(meta or {})
    cert = certificate(rows, scale, duration_s, tests=tests, meta=m)
    wall = cert["meta"]["duration_s"]
    if scale == "gpu" and wall is not None and wall > GPU_SUITE_LIMIT_S:
        cert["budget_warnings"].append(f"suite {suite}: wall time {wall:.0f} s > {GPU_SUITE_LIMIT_S:.0f} s")
    return cert


def read_suite_certificate(path: Any) -> dict[str, Any] | None:
    """A suite certificate read from a JSON file, its fields checked; None if there is none.

    Parameters
    ----------
    path : str or os.PathLike
        The certificate file, e.g. docs/verification/gpu/levi.json.

    Returns
    -------
    dict or None
        The certificate; None if the file does not exist.

    Raises
    ------
    DomainError
        If `path` is not a path naming a file.
    CertificateError
        If the file is refused (not a regular file, over 64 MiB, not UTF-8, not JSON, nested deeper than 64
        levels) or is not a suite certificate (meta with suite, scale, fingerprint digest and files, rows and
        tests lists; every field of its type; every row's stated error, `passed` and verdict those its numbers
        give; counts those of its rows); one line naming the file and the field.
    """
    p = V.file_path(path, "path")
    if not p.exists():
        return None
    c = read_json(p)
    m = c.get("meta") if isinstance(c, dict) else None
    fp = m.get("fingerprint") if isinstance(m, dict) else None
    ok = (isinstance(m, dict) and isinstance(m.get("suite"), str) and _SUITE_NAME.match(m["suite"])
          and m.get("scale") in ("cpu", "gpu") and isinstance(fp, dict) and isinstance(fp.get("digest"), str)
          and all(isinstance(fp.get(key, {}), dict)
                  and all(isinstance(k, str) and isinstance(v, str) for k, v in fp.get(key, {}).items())
                  for key in ("files", "reporting")) and isinstance(fp.get("files"), dict)
          and isinstance(c.get("rows"), list) and isinstance(c.get("tests", []), list)
          and all(isinstance(t, dict) and isinstance(t.get("test"), str) for t in c.get("tests", [])))
    if not ok:
        raise CertificateError(f"{p}: not a suite certificate (meta: suite, scale, fingerprint; rows; tests)")
    return check_certificate(c, str(p))  # every field typed, every row's verdict recomputed from its numbers


@dataclasses.dataclass(frozen=True)
class SuiteStatus:
    """The state of one suite's certificate against the files of today, as `suite_status` returns it."""

    suite: str
    """The suite's name (its directory under verify/)."""
    state: str
    """One of `STATES`: "never run": no certificate; "stale": the fingerprint differs from the files today
    (whatever the verdict); "incomplete": fresh but some tests did not run (budget, interruption); "failed":
    fresh, complete, a row or a test failed; "passed": fresh, complete, nothing failed."""
    verdict: str | None = None
    """The certificate's verdict as it recorded it, "passed" or "failed" (also for a stale one); `None`
    without a certificate."""
    date: str | None = None
    """The certificate's UTC date (ISO 8601); `None` without a certificate."""
    commit: str | None = None
    """The commit the certificate was produced at; `None` without one."""
    device: str | None = None
    """The machine the certificate ran on, in words; `None` without one."""
    wall_s: float | None = None
    """The suite's wall time in seconds; `None` without a certificate or where it was not recorded."""
    n_rows: int = 0
    """The certificate's number of rows, ≥ 0 (0 without a certificate)."""
    n_failed: int = 0
    """The certificate's failed rows (a check that failed, a wrong variant not rejected), ≥ 0 (0 without a
    certificate)."""
    n_failed_tests: int = 0
    """The certificate's tests that failed or raised without a failed row of their own (a plain assert, an
    error), ≥ 0 (0 without a certificate); a test stopped by its failed row is counted once, as that row."""
    stale_since: str | None = None
    """For a stale certificate: the first commit after the certificate's that changed one of its files, or
    "uncommitted changes"; `None` where git cannot tell, was not asked, or the certificate is not stale."""
    changed: tuple[str, ...] = ()
    """For a stale certificate: the files whose content differs (added, removed or edited), as paths
    relative to the checkout; empty otherwise."""
    not_run: tuple[str, ...] = ()
    """For an incomplete certificate: the tests that did not run; empty otherwise."""
    certificate: dict | None = dataclasses.field(default=None, repr=False, compare=False)
    """The certificate itself; `None` without one."""

def _git(root: Path, *args: str) -> str | None:
    try:
        out = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _stale_since(root: Path, commit: Any, changed: list[str]) -> str | None:
    """The first commit after `commit` that changed one of `changed` (paths checked), "uncommitted changes"
    when only the working tree differs, None when git cannot tell."""
    paths = [c for c in changed if _REL_PATH.match(c) and (root / c).exists()]
    if isinstance(commit, str) and _COMMIT.match(commit) and _git(root, "cat-file", "-e", f"{commit}^{{commit}}") == "":
        if paths:
            log = _git(root, "log", "--format=%h", "--reverse", f"{commit}..HEAD", "--", *paths)
            if log:
                return log.splitlines()[0]
        elif changed:  # only removed files: the commit that removed one
            removed = [c for c in changed if _REL_PATH.match(c)]
            log = _git(root, "log", "--format=%h", "--reverse", f"{commit}..HEAD", "--", *removed) if removed else None
            if log:
                return log.splitlines()[0]
    if paths and _git(root, "status", "--porcelain", "--", *paths):
        return "uncommitted changes"
    return None


def suite_status(certificate: dict[str, Any] | None, suite: str, root: Any = None, *,
                 git: bool = True) -> SuiteStatus:
    """The state of a suite's certificate against the files of today.

    Parameters
    ----------
    certificate : dict or None
        The suite's certificate, as `read_suite_certificate` returns it (its fields checked), or `None` if
        the suite has none.
    suite : str
        The suite: the name of a directory verify/<suite>/ holding test_*.py files, e.g. "levi".
    root : str or pathlib.Path, optional
        The checkout, a directory holding verify/; default `None`: the checkout this package was imported
        from.
    git : bool, optional
        Ask git for the commit since which a stale certificate is stale; default True (False: stale_since
        is None).

    Returns
    -------
    SuiteStatus
        The suite's state ("never run" without a certificate; "stale" when its fingerprint differs from the
        files of today, with the files changed and since when; else "incomplete", "failed" or "passed"), the
        certificate's verdict, date, commit, device, wall time and row counts.

    Raises
    ------
    DomainError
        If `suite` is not a suite of the checkout, or the certificate belongs to another suite.
    """
    r = _root(root)
    suite = check_suite(suite, r)
    git = V.flag(git, "git")
    if certificate is None:
        return SuiteStatus(suite, "never run")
    m = certificate["meta"]
    if m.get("suite") != suite:
        raise V.DomainError(f"certificate of suite {m.get('suite')!r} given for suite {suite!r}")
    now = suite_fingerprint(suite, r)
    rec = m["fingerprint"]
    rows = certificate.get("rows", [])
    failed_rows = [row for row in rows if isinstance(row, dict) and row.get("passed") is False]
    with_failed_row = {row.get("test") for row in failed_rows}
    failed_tests = [t for t in certificate.get("tests", []) if t.get("outcome") in ("failed", "error")]
    n_failed = len(failed_rows) if rows else int(m.get("n_failed") or 0)
    n_failed_tests = sum(t["test"] not in with_failed_row for t in failed_tests)
    verdict = "failed" if n_failed or n_failed_tests else "passed"
    base = dict(suite=suite, verdict=verdict, date=m.get("date"), commit=m.get("commit"), device=m.get("device"),
                wall_s=m.get("duration_s"), n_rows=len(rows), n_failed=n_failed, n_failed_tests=n_failed_tests,
                certificate=certificate)
    # certificates written before "reporting" was kept apart list every file under "files" (and their digest is
    # over all of them): compare the files that can change a row, whichever way they were recorded, and for a
    # certificate of the split form also its digest
    old, new = _result_files(rec.get("files", {})), now["files"]
    if old != new or ("reporting" in rec and rec.get("digest") != now["digest"]):
        changed = sorted(f for f in set(old) | set(new) if old.get(f) != new.get(f))
        since = _stale_since(r, m.get("commit"), changed) if git else None
        return SuiteStatus(state="stale", stale_since=since, changed=tuple(changed), **base)
    if m.get("complete") is False:
        not_run = tuple(str(t) for t in m.get("not_run", []) if isinstance(t, str))
        return SuiteStatus(state="incomplete", not_run=not_run, **base)
    return SuiteStatus(state=verdict, **base)


def suite_statuses(directories: Any, suite_names: Any = None, root: Any = None, *,
                   git: bool = True) -> list[SuiteStatus]:
    """The state of every suite's certificate in one or several directories (the newest where several).

    Parameters
    ----------
    directories : str or pathlib.Path or list of them
        Directories holding <suite>.json certificates (e.g. docs/verification/gpu), at least one; a missing
        directory holds none.
    suite_names : list of str, optional
        The suites, each the name of a directory verify/<suite>/ holding test_*.py files, in the order
        returned; default `None`: every suite of the checkout, as `suites` lists them.
    root : str or pathlib.Path, optional
        The checkout, a directory holding verify/; default `None`: the checkout this package was imported
        from.
    git : bool, optional
        Ask git for the commit since which a stale certificate is stale; default True (False: stale_since
        is None).

    Returns
    -------
    list of SuiteStatus
        One per suite. Where several directories hold a certificate of a suite, the newest by date is used.

    Raises
    ------
    DomainError
        If an argument is not of the form above.
    CertificateError
        If a certificate file is unreadable or not a suite certificate.
    """
    r = _root(root)
    dirs = [directories] if isinstance(directories, (str, Path)) else directories
    dirs = V.sequence(dirs, "directories", min_len=1, what="a directory or a list of directories")
    if not all(isinstance(d, (str, Path)) for d in dirs):
        raise V.DomainError(f"directories must be paths (got {V.show(directories)})")
    names = suites(r) if suite_names is None else [check_suite(s, r) for s in
                                                   V.sequence(suite_names, "suite_names", min_len=0)]
    out = []
    for s in names:
        best = None
        for d in dirs:
            c = read_suite_certificate(Path(d) / f"{s}.json")
            if c is not None and (best is None or str(c["meta"].get("date", "")) > str(best["meta"].get("date", ""))):
                best = c
        out.append(suite_status(best, s, r, git=git))
    return out


def status_markdown(statuses: list[SuiteStatus], *, link_dir: str | None = None) -> str:
    """The state of the suites as a Markdown table: one line per suite.

    Parameters
    ----------
    statuses : list of SuiteStatus
        The suites' states, one line each in the order given, as `suite_statuses` returns them.
    link_dir : str, optional
        A relative directory: each suite's name links its certificate page <link_dir>/<suite>.md; default
        `None` (no link).

    Returns
    -------
    str
        The table: suite, state (passed / failed / stale since commit X / incomplete / never run), rows with
        the failed ones in parentheses (and the tests that failed outside the table, e.g. on a plain assert),
        date, device, wall time, commit.

    Raises
    ------
    DomainError
        If `statuses` is not a list of `SuiteStatus`.
    """
    items = V.sequence(statuses, "statuses", min_len=0, what="a list of SuiteStatus")
    if not all(isinstance(s, SuiteStatus) for s in items):
        raise V.DomainError(f"statuses must hold SuiteStatus records (got {V.show(statuses)})")
    out = ["| suite | state | rows (failed) | date (UTC) | device | wall time | commit |",
           "|---|---|---|---|---|---|---|"]
    for s in items:  # every text from a certificate file is escaped (`markdown_text`): no markup, no HTML
        plain = isinstance(s.suite, str) and _SUITE_NAME.match(s.suite)  # a suite's name: letters, digits, _
        suite = f"`{s.suite}`" if plain else markdown_code(s.suite)
        if s.state == "never run":
            out.append(f"| {suite} | never run | - | - | - | - | - |")
            continue
        state = s.state
        if s.state == "stale":
            state = (f"stale since {markdown_code(s.stale_since)}" if s.stale_since
                     and s.stale_since != "uncommitted changes"
                     else "stale (uncommitted changes)" if s.stale_since else "stale")
            state += f" (was {markdown_text(s.verdict)}; {len(s.changed)} files changed)"
        elif s.state == "incomplete":
            state = f"incomplete ({len(s.not_run)} tests not run)"
        elif s.state == "failed":
            state = "**failed**"
        name = f"[{suite}]({link_dir}/{s.suite}.md)" if link_dir and plain else suite
        wall = f"{s.wall_s:.0f} s" if isinstance(s.wall_s, (int, float)) else "-"
        date = markdown_text(str(s.date or "-")[:16].replace("T", " "))
        commit = markdown_code(str(s.commit)[:10]) if s.commit else "-"
        failed = f"{s.n_failed}" + (f" + {s.n_failed_tests} test{'s' * (s.n_failed_tests != 1)} outside the table"
                                    if s.n_failed_tests else "")
        out.append(f"| {name} | {state} | {s.n_rows} ({failed}) | {date} | {markdown_text(s.device or '-')} | "
                   f"{wall} | {commit} |")
    return "\n".join(out)
