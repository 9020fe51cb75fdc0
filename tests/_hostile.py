"""The harness of the hostile-file tests: each case read in its own capped, timed child process.

Used by tests/test_logs_hostile.py (the log readers), tests/test_runfile_hostile.py (the run-file reader) and,
through `run_cli_cases`, tests/test_hostile_cli.py (whole `grokclocks` commands, their stdout and stderr).
One worker process imports the readers once (the modules of every target, before anything is read), then
forks a child per case: the child runs under an address-space cap (`RLIMIT_AS`, the worker's size +
`CAP_MIB`), calls the reader on the file, and reports the exception (type, classes, message) or None, its wall
and CPU time, the growth of its peak resident memory and, where asked, the warnings it raised; a child that
has not answered after `LIMIT_S` seconds of wall clock (a read that hangs) is killed and reported as
"killed".  The worker also reports whether importing the readers loaded JAX (they must not).

The files themselves are built by each test; `npy_header` and `deflate_bomb` write the archive parts both
need.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CAP_MIB = 256  # address space a case may add to the worker's (a 384 MiB array cannot be allocated)
LIMIT_S = 60.0  # wall clock after which a case is killed (a read that hangs)
CPU_LIMIT_S = 10.0  # CPU time of one case: the largest take 1-2 s; the quadratic column handling took > 60 s
BOMB_BYTES = 384 * 2**20  # uncompressed size of the deflate bomb: over DEFAULT_MAX_BYTES and over CAP_MIB

_CHILD = r"""
import json, os, resource, signal, sys, time


def status(key):
    return int(open("/proc/self/status").read().split(key + ":")[1].split()[0]) // 1024  # MiB


def capped(cap):  # in the child: cap its address space at its size + cap bytes, reset its peak; its memory now
    size = status("VmSize") * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (size + cap, size + cap))
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # peak resident memory := current
    return status("VmRSS")


def cpu():
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def answer(pid, r, limit):  # in the worker: the child's JSON on pipe r, None when killed after limit s
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < limit:
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.01)
    else:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    data = b""
    while chunk := os.read(r, 1 << 16):
        data += chunk
    os.close(r)
    return json.loads(data) if data else None
"""

WORKER = _CHILD + r"""
import importlib, warnings
cases, cap, limit, record = json.loads(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), sys.argv[4] == "1"
functions = {}
for target, _, _ in cases.values():
    module, name = target.split(":")
    functions[target] = getattr(importlib.import_module(module), name)
jax_loaded = any(m.split(".")[0] in ("jax", "jaxlib") for m in sys.modules)
if not record:
    warnings.simplefilter("ignore")

for case, (target, path, kw) in cases.items():
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        rss0 = capped(cap)
        cpu0 = cpu()
        t0 = time.perf_counter()
        with warnings.catch_warnings(record=True) as seen:
            if record:
                warnings.simplefilter("always")
            try:
                functions[target](path, **kw)
                out = {"type": None, "msg": None}
            except BaseException as exc:
                out = {"type": type(exc).__name__, "mro": [c.__name__ for c in type(exc).__mro__], "msg": str(exc)}
        out.update(seconds=time.perf_counter() - t0, cpu_s=cpu() - cpu0, peak_mib=status("VmHWM") - rss0)
        if record:
            out["warnings"] = [str(x.message) for x in seen]
        os.write(w, json.dumps(out).encode())
        os._exit(0)
    os.close(w)
    res = answer(pid, r, limit) or {"type": "killed", "msg": f"no answer within {limit} s", "seconds": limit}
    print(json.dumps({"case": case, "jax": jax_loaded, **res}), flush=True)
"""

CLI_WORKER = _CHILD + r"""
import io, tempfile, traceback
cases, cap, limit = json.loads(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
import matplotlib
matplotlib.use("Agg")
from grokclocks import cli
import grokclocks.compare, grokclocks.forecast, grokclocks.logs, grokclocks.verification  # noqa: F401 (once)
jax_loaded = any(m.split(".")[0] in ("jax", "jaxlib") for m in sys.modules)

for case, (argv, cwd) in cases.items():
    r, w = os.pipe()
    out = tempfile.TemporaryFile()
    err = tempfile.TemporaryFile()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        rss0 = capped(cap)
        os.chdir(cwd)
        os.dup2(out.fileno(), 1)
        os.dup2(err.fileno(), 2)
        sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8", errors="surrogateescape")
        sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8", errors="surrogateescape",
                                      line_buffering=True)
        cpu0 = cpu()
        exc = None
        try:
            rc = cli.main(argv)
        except SystemExit as e:
            rc = e.code if isinstance(e.code, int) else 2
        except BaseException as e:
            rc, exc = None, "".join(traceback.format_exception(e))[-3000:]
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:
            pass
        res = {"rc": rc, "exc": exc, "cpu_s": cpu() - cpu0, "peak_mib": status("VmHWM") - rss0}
        os.write(w, json.dumps(res).encode())
        os._exit(0)
    os.close(w)
    t0 = time.perf_counter()
    res = answer(pid, r, limit) or {"rc": "killed", "exc": None, "cpu_s": None, "peak_mib": None}
    res["seconds"] = time.perf_counter() - t0
    for name, f in (("stdout", out), ("stderr", err)):
        f.seek(0)
        res[name] = f.read().decode("utf-8", "surrogateescape")
    print(json.dumps({"case": case, "jax": jax_loaded, **res}), flush=True)
"""


def run_cli_cases(cases: dict[str, tuple[list[str], str]]) -> dict[str, dict]:
    """Each `grokclocks` command's outcome, run by `grokclocks.cli.main` in its own child process of one worker.

    Parameters
    ----------
    cases : dict
        Case name -> (argv, cwd): the command's arguments (after `grokclocks`) and the folder it runs in.

    Returns
    -------
    dict
        Case name -> {"case", "jax", "rc" (the exit status; None when an exception escaped `main`, "killed"
        for a case that ran past `LIMIT_S`), "exc" (the traceback of an exception that escaped), "stdout",
        "stderr" (as the command wrote them, undecodable bytes as surrogates), "cpu_s", "peak_mib",
        "seconds"}.  Each child runs under the address-space cap of `run_cases` (the worker's size + `CAP_MIB`).
    """
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", MPLBACKEND="Agg",
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-c", CLI_WORKER, json.dumps(cases), str(CAP_MIB * 2**20), str(LIMIT_S)],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=LIMIT_S * len(cases) + 120,
                          check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return {r["case"]: r for r in map(json.loads, proc.stdout.splitlines())}


def skip_unless_capped(*, fifo: bool = False) -> None:
    """Skip the calling test where the child processes cannot be capped and measured (Linux only), or, with
    `fifo`, where `os.mkfifo` is missing."""
    if not Path("/proc/self/status").exists() or not hasattr(os, "fork") or (fifo and not hasattr(os, "mkfifo")):
        pytest.skip("the memory cap and peak measurement need Linux (RLIMIT_AS, /proc/self/status, fork"
                    + (", mkfifo)" if fifo else ")"))


def run_cases(cases: dict[str, tuple[str, str, dict]], *, record_warnings: bool = False) -> dict[str, dict]:
    """Each case's outcome, read in its own child process of one worker (see the module docstring).

    Parameters
    ----------
    cases : dict
        Case name -> (target, path, keywords): the reader "module:function" (imported by the worker once),
        the file it is called on, and the keyword arguments of the call (JSON-ready).
    record_warnings : bool, optional
        Report the warnings each call raised (every one, "always"); default False: warnings are ignored.

    Returns
    -------
    dict
        Case name -> {"case", "jax" (whether the worker's imports loaded JAX), "type" (the exception's class
        name, None for a result, "killed" for a case that hung), "mro", "msg", "seconds", "cpu_s", "peak_mib"
        and, with `record_warnings`, "warnings"}.
    """
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-c", WORKER, json.dumps(cases), str(CAP_MIB * 2**20), str(LIMIT_S),
                           "1" if record_warnings else "0"],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=LIMIT_S * len(cases) + 60,
                          check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return {r["case"]: r for r in map(json.loads, proc.stdout.splitlines())}


def npy_header(shape: tuple[int, ...], descr: str = "<f8") -> bytes:
    """A version-1.0 .npy header announcing `shape` of `descr` (what numpy.save writes before the data)."""
    text = ("{'descr': '%s', 'fortran_order': False, 'shape': %r, }" % (descr, shape)).encode("latin1")
    text += b" " * (64 - (10 + len(text) + 1) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text


def deflate_bomb(path: Path, n_bytes: int, name: bytes = b"steps.npy", npy: bool = True) -> None:
    """A genuine zip of one member `name` of `n_bytes` zero bytes (after a .npy header announcing them as float64
    if `npy`), deflated to a few hundred KiB.

    Written by hand: a 1 MiB block of zeros is compressed once after a full flush (no reference to earlier
    data) and repeated, which is a valid deflate stream; the CRC-32 and the sizes in the zip are the true ones."""
    header = npy_header((n_bytes // 8,)) if npy else b""
    zeros = bytes(2**20)
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = c.compress(header) + c.flush(zlib.Z_FULL_FLUSH)
    block = c.compress(zeros) + c.flush(zlib.Z_FULL_FLUSH)
    data = head + block * (n_bytes // 2**20) + c.flush(zlib.Z_FINISH)
    crc = zlib.crc32(header)
    for _ in range(n_bytes // 2**20):
        crc = zlib.crc32(zeros, crc)
    size = len(header) + n_bytes
    local = struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0x21, crc, len(data), size, len(name), 0) + name
    central = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 8, 0, 0x21, crc, len(data), size, len(name),
                          0, 0, 0, 0, 0, 0) + name
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 1, 1, len(central), len(local) + len(data), 0)
    path.write_bytes(local + data + central + end)
