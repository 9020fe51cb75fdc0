"""Slices of one verify run (`pytest verify --shard K/N`) and the merge of their partial certificates."""

from __future__ import annotations

import datetime as _dt
import hashlib
import os
from pathlib import Path
from typing import Any

from .. import _validate as V
from ._checked import MAX_SLICES, check_certificate
from ._read import CertificateError, list_files, read_json


def parse_shard(text: str) -> tuple[int, int]:
    """Read a slice "K/N" of a verify run.

    Parameters
    ----------
    text : str
        "K/N": slice K of N, integers with 1 ≤ K ≤ N (spaces around the numbers allowed).

    Returns
    -------
    tuple of int
        (K, N).

    Raises
    ------
    DomainError
        If `text` is not of that form; the message names the expected form.
    """
    try:
        k_s, n_s = str(text).split("/")
        k, n = int(k_s), int(n_s)
    except ValueError:
        raise V.DomainError(f"--shard must be K/N with integers 1 <= K <= N, e.g. 2/3 (got {text!r})") from None
    if not 1 <= k <= n:
        raise V.DomainError(f"--shard must be K/N with integers 1 <= K <= N, e.g. 2/3 (got {text!r})")
    return k, n


def shard_plan(weights: dict[str, float], n: int) -> dict[str, int]:
    """Assign groups of tests to `n` slices (numbered from 1), balancing the summed weights; deterministic.

    Parameters
    ----------
    weights : dict of str to float
        Test group (a module path or a shared-training group name) → its weight, finite and ≥ 0 (estimated
        seconds, or the number of tests).
    n : int
        The number of slices, in [1, 10⁴].

    Returns
    -------
    dict of str to int
        Group → its slice in 1..`n`.

    Raises
    ------
    DomainError
        If `weights` is not such a dict or `n` is out of range.

    Notes
    -----
    Longest-processing-time greedy: groups by decreasing weight (ties by a stable hash of the name, then the
    name) each go to the least loaded slice (ties: the lowest index). The same weights give the same plan in
    every process, so `--shard 1/n` ... `--shard n/n` together run every group exactly once.
    """
    n = V.integer_at_least(n, "n", 1, maximum=MAX_SLICES)  # slices of one verify run (each group scans all n)
    if not isinstance(weights, dict) or not all(isinstance(g, str) for g in weights):
        raise V.DomainError(f"weights must be a dict test group (str) -> weight (got {V.show(weights)})")
    if weights:
        V.nonnegative(list(weights.values()), "weights")

    def key(g: str) -> tuple:
        return (-float(weights[g]), hashlib.sha1(g.encode()).hexdigest(), g)

    load = [0.0] * n
    plan: dict[str, int] = {}
    for g in sorted(weights, key=key):
        i = min(range(n), key=lambda j: (load[j], j))
        plan[g] = i + 1
        load[i] += float(weights[g])
    return plan


def partial_certificates(paths: list[str | Path]) -> list[Path]:
    """The partial certificates verify-<scale>-shard-K-of-N.json in each directory (or the files given).

    Parameters
    ----------
    paths : list of str or pathlib.Path
        Directories (searched for verify-*-shard-*-of-*.json) or certificate files, at least one; a tuple
        is accepted too.

    Returns
    -------
    list of pathlib.Path
        The files found, in the order the paths were given (each directory's files sorted by name; the
        directory listed through the door, without entering sub-folders); a path that exists and is no
        directory is returned as given, and reading it (`merge_certificates`) refuses it by name unless it
        is a regular file; a file found in a directory is refused if it is a link.

    Raises
    ------
    CertificateError
        If `paths` is empty or not a list of paths, a path does not exist, or a directory holds none.
    """
    return [f for f, _ in _slices(paths)]


def _slices(paths: list[str | Path]) -> list[tuple[Path, Path | None]]:
    """(file, the folder it was found in or None for a file named) of each partial certificate of `paths`; the
    folders are listed through the door, and a file found in one is read with `found_in` (a link there is
    refused, not followed)."""
    if not isinstance(paths, (list, tuple)) or not paths:
        raise CertificateError(f"paths must be a non-empty list of partial certificates or directories "
                               f"(got {V.show(paths)})")
    if not all(isinstance(p, (str, Path)) for p in paths):
        raise CertificateError(f"paths must hold file or directory names, str or pathlib.Path (got {V.show(paths)})")
    found: list[tuple[Path, Path | None]] = []
    for p in map(Path, paths):
        if p.is_dir():
            hits = list_files(p, "verify-*-shard-*-of-*.json")
            if not hits:
                raise CertificateError(f"no partial certificate (verify-<scale>-shard-K-of-N.json) in {p}")
            found += [(h, p) for h in hits]
        elif os.path.lexists(p):  # a file, or something the reader refuses by name (a FIFO, a device)
            found.append((p, None))
        else:
            raise CertificateError(f"{p}: no such file or directory")
    return found


def merge_certificates(paths: list[str | Path]) -> dict[str, Any]:
    """Combine the partial certificates of `pytest verify --shard K/N` (one per slice) into one.

    Parameters
    ----------
    paths : list of str or pathlib.Path
        Directories holding the slices' partial certificates verify-<scale>-shard-K-of-N.json, or those
        files, at least one; every slice 1..N of one run exactly once.

    Returns
    -------
    dict
        The merged certificate (meta, rows, tests, budget_warnings), ready for `write_certificate`. Rows and
        per-test records are concatenated in slice order; meta["merged_from"] lists the slices with their
        durations; meta["duration_s"] is their sum (the wall time of running them one after another).

    Raises
    ------
    CertificateError
        If a file is refused (not a regular file, over 64 MiB, not UTF-8, not JSON, nested deeper than 64
        levels: one line naming it) or is not a partial certificate (a field missing or of the wrong type, a
        row whose stated error, `passed` or verdict does not follow from its numbers, counts that are not
        those of its rows: one line naming the file and the field), the slices differ in scale, commit,
        package version, number of slices or shard plan, a slice is given twice or missing (the message names
        the missing ones), or a test ran in two slices.
    """
    certs = []
    for f, folder in _slices(paths):
        # a link found in a folder is refused (found_in); every field typed, every row's verdict recomputed
        c = check_certificate(read_json(f, found_in=folder), str(f))
        if not c["meta"].get("shard"):
            raise CertificateError(f"{f}: not a partial certificate (written without --shard: no meta.shard)")
        certs.append((f, c))
    first_f, first = certs[0]
    m0 = first["meta"]
    n = m0["shard"][1]
    for f, c in certs[1:]:
        m = c["meta"]
        for key, name in (("scale", "scale"), ("commit", "commit"), ("grokclocks", "grokclocks version")):
            if m.get(key) != m0.get(key):
                raise CertificateError(f"{name} differs between slices: {V.show(m.get(key))} in {f.name}, "
                                       f"{V.show(m0.get(key))} in {first_f.name}")
        if m["shard"][1] != n:
            raise CertificateError(f"number of slices differs: {f.name} is of {m['shard'][1]}, {first_f.name} of {n}")
        if m.get("plan") != m0.get("plan"):
            raise CertificateError(f"shard plans differ between {f.name} and {first_f.name} (different test "
                                   "selection or budget table): run every slice with the same arguments")
    by_k: dict[int, Path] = {}
    for f, c in certs:
        k = c["meta"]["shard"][0]
        if k in by_k:
            raise CertificateError(f"slice {k} of {n} given twice: {by_k[k]} and {f}")
        by_k[k] = f
    if len(by_k) < n:  # n <= MAX_SLICES (check_certificate), so the list is bounded; at most 20 are named
        missing = [k for k in range(1, n + 1) if k not in by_k]
        shown = ", ".join(map(str, missing[:20])) + (f" and {len(missing) - 20} more" if len(missing) > 20 else "")
        raise CertificateError(f"missing slice(s) {shown} of {n} (have {sorted(by_k)[:20]})")
    certs.sort(key=lambda fc: fc[1]["meta"]["shard"][0])
    rows, tests, warn, seen = [], [], [], {}
    for f, c in certs:
        for t in c["tests"]:
            if t["test"] in seen:
                raise CertificateError(f"test {V.show(t['test'])} ran in two slices ({seen[t['test']]} and {f.name})")
            seen[t["test"]] = f.name
        rows += c["rows"]
        tests += c["tests"]
        warn += c["budget_warnings"]
    durs = [c["meta"].get("duration_s") or 0.0 for _, c in certs]
    meta = {k: v for k, v in m0.items() if k not in ("shard", "duration_s", "date")}
    # the counts from the rows' verdicts, each recomputed from its numbers when its slice was read
    meta.update(date=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"), duration_s=float(sum(durs)),
                n_rows=len(rows), n_failed=sum(r["verdict"] in ("FAIL", "NOT REJECTED") for r in rows),
                n_reported=sum(r["kind"] == "report" for r in rows), dirty=any(c["meta"].get("dirty") for _, c in certs),
                merged_from=[{"file": str(f), "shard": c["meta"]["shard"], "n_tests": len(c["tests"]),
                              "n_rows": len(c["rows"]), "duration_s": c["meta"].get("duration_s") or 0.0,
                              "date": c["meta"].get("date"), "environment": c["meta"].get("environment")}
                             for f, c in certs])
    return {"meta": meta, "rows": rows, "tests": tests, "budget_warnings": warn}
