"""The ``grokclocks`` command (grokclocks.cli): every subcommand, --help, error exit status."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import grokclocks
from grokclocks import linear as L
from grokclocks.citations import cite
from grokclocks.cli import VERIFY_SUITES, build_parser, main

REPO = Path(grokclocks.__file__).resolve().parent.parent


def run(argv, capsys):
    rc = main(argv)
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.mark.parametrize("argv", [[], ["verify"], ["cite"], ["time"], ["compare"], ["list"]])
def test_help_has_examples(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv + ["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "usage: grokclocks" in out and "examples:" in out


def test_no_command_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main([])
    assert exc.value.code == 2


def test_cite(capsys):
    rc, out, _ = run(["cite", "grokclocks.linear.grok_time"], capsys)
    assert rc == 0 and out.strip() == cite("grokclocks.linear.grok_time").strip() and "@inproceedings" in out
    rc, out, _ = run(["cite", "levi:eq11", "--format", "text"], capsys)
    assert rc == 0 and out.strip() == cite("levi:eq11", format="text")
    rc, out, err = run(["cite", "nonsense.function"], capsys)
    assert rc == 2 and out == "" and err.startswith("grokclocks: error:") and len(err.strip().splitlines()) == 1


def test_cite_several_targets_bare_names_and_missing_author(capsys):
    rc, out, err = run(["cite", "mp_edges", "grok_time", "levi:eq11"], capsys)
    assert rc == 0 and out.count("@inproceedings{levi2024grokking") == 1 and err == ""  # one paper, once
    rc, out, err = run(["cite", "grokclocks.compare.compare_run", "--format", "text"], capsys)
    # one line per source: the five papers and grokclocks (kramers:milestones is its own definition)
    assert rc == 0 and len(out.strip().splitlines()) == 6 and "[levi:" in out and "kramers:eq15" in out
    assert err.startswith("grokclocks: warning: the citation of '") and "the citation of 'kramers'" in err
    assert "no author" in err
    rc, out, err = run(["cite", "kramers"], capsys)
    assert "author = {{Anonymous / not stated in the source}}" in out and "INCOMPLETE CITATION" in out
    assert "warning" in err
    rc, _, err = run(["cite", "load_run"], capsys)
    assert rc == 2 and "computes no result of the papers" in err


def test_time_matches_grok_time(capsys):
    rc, out, _ = run(["time", "--lam", "0.5", "--eps", "1e-3"], capsys)
    assert rc == 0 and f"{L.grok_time(0.5, 1e-3, 0.01):.6g}" in out and "431.3" in out
    rc, out, _ = run(["time", "--lam", "0.7", "--eps", "1e-3", "--eta", "0.02", "--gamma", "0.001", "--d-out", "5",
                      "--level", "0.9", "--json"], capsys)
    d = json.loads(out)
    want = L.grok_time(0.7, 1e-3, 0.02, d_out=5, gamma=0.001, level=0.9)
    assert rc == 0 and d["grok_time"] == pytest.approx(want, rel=1e-12)
    assert d["t_train"] == pytest.approx(L.t_star("train", 0.7, 1e-3, 0.02, d_out=5, gamma=0.001, level=0.9))
    rc, out, _ = run(["time", "--lam", "1.5", "--eps", "1e-3"], capsys)
    assert rc == 0 and "never" in out


def test_time_errors_exit_2(capsys):
    rc, out, err = run(["time", "--lam", "0.5", "--eps", "1e-3", "--level", "1.5"], capsys)
    assert rc == 2 and "level" in err and len(err.strip().splitlines()) == 1
    rc, _, err = run(["time", "--lam", "0.5", "--eps", "1e-3", "--d-out", "0"], capsys)
    assert rc == 2 and "d_out" in err
    with pytest.raises(SystemExit) as exc:
        main(["time", "--lam", "-1", "--eps", "1e-3"])
    assert exc.value.code == 2


def test_verify_dry_run_default_and_only(capsys, tmp_path):
    rc, out, _ = run(["verify", "--dry-run"], capsys)
    assert rc == 0
    cd, cmd = out.strip().split(" && ", 1)
    assert cd == f"cd {REPO}"
    args = shlex.split(cmd)
    assert args[:3] == [sys.executable, "-m", "pytest"]
    present = [f"verify/{s}" for s in VERIFY_SUITES if (REPO / "verify" / s).is_dir()]
    assert [a for a in args if a.startswith("verify/")] == present
    assert "verify/modular" in present and args[args.index("--scale") + 1] == "cpu"
    rc, out, _ = run(["verify", "--only", "levi, coverage,levi", "--scale", "gpu", "--report-dir", str(tmp_path),
                      "--dry-run", "--", "-x", "-k", "eq11"], capsys)
    args = shlex.split(out.strip().split(" && ", 1)[1])
    assert rc == 0 and [a for a in args if a.startswith("verify/")] == ["verify/levi", "verify/uniformity"]
    assert args[args.index("--report-dir") + 1] == str(tmp_path.resolve()) and args[-3:] == ["-x", "-k", "eq11"]
    assert args[args.index("--scale") + 1] == "gpu"


def test_verify_errors(capsys, monkeypatch, tmp_path):
    rc, _, err = run(["verify", "--only", "nosuchpaper", "--dry-run"], capsys)
    assert rc == 2 and "unknown suite 'nosuchpaper'" in err
    monkeypatch.setattr(grokclocks, "__file__", str(tmp_path / "site-packages" / "grokclocks" / "__init__.py"))
    rc, _, err = run(["verify", "--dry-run"], capsys)
    assert rc == 2 and "source checkout" in err and len(err.strip().splitlines()) == 1


def test_verify_runs_pytest(capsys, tmp_path):
    """A real run of one fast verify check through the subprocess: exit 0 and the certificate written."""
    rc = main(["verify", "--only", "levi", "--report-dir", str(tmp_path), "--", "-q", "-p", "no:cacheprovider",
               "-k", "test_asymptotic_forms_vs_exact"])
    capsys.readouterr()
    assert rc == 0
    assert (tmp_path / "verify-cpu.md").exists() and (tmp_path / "verify-cpu.json").exists()


def _user_npz(path: Path) -> Path:
    steps = np.arange(0, 3001, 50.0)
    train = 1 / (1 + np.exp(-(steps - 200) / 20))
    test = 1 / (1 + np.exp(-(steps - 1500) / 100))
    np.savez(path, steps=steps, train_acc=train, test_acc=test, train_loss=np.exp(-steps / 100) + 1e-7,
             test_loss=2 * (1 - test) + 1e-3)
    return path


def test_compare_text_markdown_json_plot(capsys, tmp_path):
    f = _user_npz(tmp_path / "run.npz")
    rc, out, _ = run(["compare", str(f)], capsys)
    assert rc == 0 and out.startswith("run: run.npz") and "t_test (test acc >= 0.99)" in out and "verdicts:" in out
    rc, out, _ = run(["compare", str(f), "--markdown", "--test-level", "0.5"], capsys)
    assert rc == 0 and "| theory | id | quantity |" in out and "| t_test | t_test (test acc >= 0.5) | 1500 |" in out
    rc, out, _ = run(["compare", str(f), "--json"], capsys)
    d = json.loads(out)
    by_id = {e["id"]: e for e in d["entries"]}
    assert rc == 0 and by_id["delta_t"]["quantity"] == "Delta t = t_test - t_train"
    assert isinstance(by_id["t_test"]["value"], float) and by_id["ceiling"]["value"] is None
    assert d["verdicts"][1]["theory"] == "clocks" and d["verdicts"][1]["verdict"] == "consistent"
    pytest.importorskip("matplotlib")
    png = tmp_path / "run.png"
    rc, _, err = run(["compare", str(f), "--plot", str(png)], capsys)
    assert rc == 0 and png.stat().st_size > 1000 and "figure written" in err


def test_compare_with_train_mask_file(capsys, tmp_path):
    f = _user_npz(tmp_path / "run.npz")
    mask = np.random.default_rng(0).random((7, 7)) < 0.5
    np.save(tmp_path / "mask.npy", mask)
    rc, out, _ = run(["compare", str(f), "--train-mask", str(tmp_path / "mask.npy")], capsys)
    assert rc == 0 and "test-accuracy ceiling Ceil(inf)" in out and "predicted" in out


FIX = Path(__file__).resolve().parent / "fixtures" / "logs"


def test_compare_several_seeds_columns_and_cite(capsys):
    seeds = sorted(str(p) for p in FIX.glob("seeds/seed*/metrics.csv"))
    rc, out, err = run(["compare", *seeds], capsys)
    assert rc == 0 and out.startswith("run: 3 seeds: seed0, seed1, seed2; 3 run(s)")
    assert "1450 [850, 1500] (3/3)" in out and "have 3" in out  # t_test; the escape test needs 5 seeds
    rc, out, err = run(["compare", str(FIX / "wandb_history.jsonl"), "--columns", "test_acc=val/acc,steps=_step",
                        "--cite"], capsys)
    assert rc == 0 and "citations of the results used" in out and "@misc{tan2026twoclocks" in out
    assert "ignored columns that match no series: ['_runtime', '_timestamp', 'lr']" in err
    rc, out, _ = run(["compare", str(FIX / "metrics.csv"), "--json", "--cite", "text"], capsys)
    d = json.loads(out)
    assert rc == 0 and "Deciphering Two Training Clocks" in d["citations"] and d["input"][0].startswith("read as csv")
    rc, _, err = run(["compare", str(FIX / "metrics.csv"), "--columns", "test_acc"], capsys)
    assert rc == 2 and "NAME=COLUMN" in err


def test_compare_train_mask_as_indices(capsys, tmp_path):
    mask = np.random.default_rng(0).random((7, 7)) < 0.5
    np.savetxt(tmp_path / "train_pairs.txt", np.flatnonzero(mask), fmt="%d")
    f = _user_npz(tmp_path / "run.npz")
    rc, out_idx, err = run(["compare", str(f), "--train-mask", str(tmp_path / "train_pairs.txt"), "--p", "7"], capsys)
    np.save(tmp_path / "mask.npy", mask)
    rc2, out_bool, _ = run(["compare", str(f), "--train-mask", str(tmp_path / "mask.npy")], capsys)
    assert rc == rc2 == 0 and out_idx == out_bool
    rc, _, err = run(["compare", str(f), "--train-mask", str(tmp_path / "train_pairs.txt")], capsys)
    assert rc == 2 and "give p to read them" in err


def test_compare_train_mask_hostile_files(capsys, tmp_path):
    """--train-mask goes through the log readers' safe layer: a FIFO, a device, a .npy whose header claims
    10^12 elements and a pickled .npy are one-line errors naming the file, read without waiting or allocating."""
    import os
    import time

    f = _user_npz(tmp_path / "run.npz")
    fifo = tmp_path / "mask_fifo.npy"
    os.mkfifo(fifo)
    big = tmp_path / "big.npy"
    with open(big, "wb") as fh:  # a valid header for a (10^6, 10^6) bool array, and 8 bytes of data
        np.lib.format.write_array_header_1_0(fh, {"descr": "|b1", "fortran_order": False, "shape": (10**6, 10**6)})
        fh.write(b"\x00" * 8)
    pick = tmp_path / "pickled.npy"
    np.save(pick, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    for path, words in ((fifo, "not a regular file"), ("/dev/zero", "not a regular file"),
                        (big, "over the limit max_bytes"), (pick, "pickled python objects")):
        t0 = time.monotonic()
        rc, out, err = run(["compare", str(f), "--train-mask", str(path)], capsys)
        assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1, (path, err)
        assert "--train-mask" in err and str(path) in err and words in err.lower(), err
        assert time.monotonic() - t0 < 30, path


def test_compare_errors_exit_2(capsys, tmp_path):
    rc, _, err = run(["compare", str(tmp_path / "missing.npz")], capsys)
    assert rc == 2 and "existing log file" in err
    np.savez(tmp_path / "bad.npz", steps=[0, 1, 2], train_acc=[0, 2, 1])
    rc, _, err = run(["compare", str(tmp_path / "bad.npz")], capsys)
    assert rc == 2 and "[0, 1]" in err and len(err.strip().splitlines()) == 1
    rc, _, err = run(["compare", str(_user_npz(tmp_path / "ok.npz")), "--index", "a,b"], capsys)
    assert rc == 2 and "--index" in err


def test_list(capsys):
    rc, out, _ = run(["list", "kramers"], capsys)
    assert rc == 0 and "kramers:arrhenius  [exact]" in out and "grokclocks.kramers.arrhenius_barrier" in out
    assert "levi:" not in out
    rc, _, err = run(["list", "nopaper"], capsys)
    assert rc == 2 and "unknown paper" in err


def test_python_dash_m_and_parser():
    assert build_parser().prog == "grokclocks"
    r = subprocess.run([sys.executable, "-m", "grokclocks", "time", "--lam", "0.5", "--eps", "1e-3"],
                       capture_output=True, text=True)
    assert r.returncode == 0 and "431.3" in r.stdout
    r = subprocess.run([sys.executable, "-m", "grokclocks", "cite", "no:such-id"], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and r.stderr.startswith("grokclocks: error:")


def _slice(directory: Path, k: int, n: int, scale: str = "gpu", commit: str = "abc123") -> None:
    from grokclocks.verification import Report, write_report

    rep = Report(scale)
    rep.current_test = f"verify/s{k}.py::test_{k}"
    rep.check("levi:eq8", predicted=1.0, measured=1.0, rtol=0.01, source="demo", what=f"slice {k}")
    write_report(rep.rows, directory, scale, 5.0, tests=[{"test": rep.current_test, "outcome": "passed", "wall_s": 5.0}],
                 meta={"commit": commit, "shard": [k, n], "plan": {"a": 1}}, stem=f"verify-{scale}-shard-{k}-of-{n}")


def test_verify_merge(capsys, tmp_path):
    _slice(tmp_path / "s1", 1, 2)
    _slice(tmp_path / "s2", 2, 2)
    out = tmp_path / "out"
    rc, text, err = run(["verify", "--merge", str(tmp_path / "s1"), str(tmp_path / "s2"), "--report-dir", str(out)], capsys)
    assert rc == 0 and err == "" and "merged 2 slices: 2 rows, 0 failed" in text
    data = json.loads((out / "verify-gpu.json").read_text())
    assert [r["what"] for r in data["rows"]] == ["slice 1", "slice 2"] and (out / "verify-gpu.md").is_file()
    # an existing certificate is replaced only with --overwrite
    rc, _, err = run(["verify", "--merge", str(tmp_path / "s1"), str(tmp_path / "s2"), "--report-dir", str(out)], capsys)
    assert rc == 2 and "already exists; pass --overwrite" in err and len(err.strip().splitlines()) == 1
    rc, _, _ = run(["verify", "--merge", str(tmp_path / "s1"), str(tmp_path / "s2"), "--report-dir", str(out),
                    "--overwrite"], capsys)
    assert rc == 0


def _unverdicted(d: Path) -> None:
    """Two slices, the first's row without its verdict (was `grokclocks: error: verdict`, a bare KeyError)."""
    _slice(d, 1, 2)
    _slice(d, 2, 2)
    js = d / "verify-gpu-shard-1-of-2.json"
    data = json.loads(js.read_text())
    del data["rows"][0]["verdict"]
    js.write_text(json.dumps(data))


@pytest.mark.parametrize(("setup", "message"), [
    (lambda d: _slice(d, 2, 3), "missing slice(s) 1, 3 of 3"),
    (_unverdicted, "verify-gpu-shard-1-of-2.json: rows[0] lacks the field(s) verdict"),
    (lambda d: (_slice(d, 1, 2), _slice(d, 2, 2, commit="other")), "commit differs"),
    (lambda d: (_slice(d, 1, 2), _slice(d, 2, 2, scale="cpu")), "scale differs"),
])
def test_verify_merge_errors_are_one_line(capsys, tmp_path, setup, message):
    setup(tmp_path)
    rc, _, err = run(["verify", "--merge", str(tmp_path), "--report-dir", str(tmp_path / "out")], capsys)
    assert rc == 2 and err.startswith("grokclocks: error: ") and len(err.strip().splitlines()) == 1
    assert message in err


def test_verify_shard_and_report_dir_checks(capsys, tmp_path):
    rc, out, _ = run(["verify", "--scale", "gpu", "--shard", "2/3", "--report-dir", str(tmp_path / "new"), "--dry-run"],
                     capsys)
    args = shlex.split(out.strip().split(" && ", 1)[1])
    assert rc == 0 and args[args.index("--shard") + 1] == "2/3" and (tmp_path / "new").is_dir()
    f = tmp_path / "file"
    f.write_text("x")
    for argv, message in ((["verify", "--shard", "4/3", "--dry-run"], "--shard must be K/N"),
                          (["verify", "--report-dir", str(f), "--dry-run"], "exists and is not a directory"),
                          (["verify", "--merge", str(tmp_path), "--shard", "1/2"], "--merge combines")):
        rc, _, err = run(argv, capsys)
        assert rc == 2 and message in err and len(err.strip().splitlines()) == 1
    with pytest.raises(SystemExit) as exc:  # argparse errors of the verify command: one line too
        main(["verify", "--scale", "tpu"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and len(err.strip().splitlines()) == 1 and "invalid choice: 'tpu'" in err


# ----------------------------------------------------- what a stranger's name, a closed pipe or a full disk does


def _grokclocks(*argv: str, cwd: Path | None = None, **kw) -> subprocess.CompletedProcess:
    env = dict(__import__("os").environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "grokclocks", *argv], capture_output=True, text=True, cwd=cwd,
                          env=env, **kw)


def test_cite_never_imports_a_module_named_by_the_user(tmp_path):
    """`cite this.x` printed the Zen of Python and `cite evilmod.x` ran ./evilmod.py: names are now looked up in
    grokclocks only, and an unknown one is one line naming the nearest known names."""
    marker = tmp_path / "PWNED"
    (tmp_path / "evilmod.py").write_text(f"open({str(marker)!r}, 'w').close()\nx = print\n")
    r = _grokclocks("cite", "this.x", "evilmod.x", cwd=tmp_path)
    assert not marker.exists() and "Zen of Python" not in r.stdout + r.stderr
    assert r.returncode == 2 and r.stdout == "" and r.stderr.count("\n") == 1
    assert r.stderr.startswith("grokclocks: error: 'this.x' is neither a spec ID, a paper key nor a grokclocks")
    rc_out_err = _grokclocks("cite", "grok_tim", cwd=tmp_path)
    assert rc_out_err.returncode == 2 and "nearest: grok_time" in rc_out_err.stderr


def test_a_closed_pipe_ends_the_command_quietly():
    """`grokclocks cite ... | head` ended in a BrokenPipeError traceback: now exit status 141, nothing on stderr."""
    import os

    r, w = os.pipe()
    os.close(r)  # the reader is gone before the first byte
    try:
        p = subprocess.run([sys.executable, "-m", "grokclocks", "cite", "levi", "clocks", "repulsion"], stdout=w,
                           stderr=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONPATH=str(REPO)))
    finally:
        os.close(w)
    assert p.returncode == 141 and p.stderr == "", p.stderr


def test_a_terminal_that_cannot_show_a_name_gets_its_escape(tmp_path):
    """A run folder named `séed0` (and one whose name is not UTF-8) on a terminal whose encoding is ASCII
    (`LANG=C` shells, `PYTHONIOENCODING=ascii`): the table is printed with `\\xe9` for the letter; before, the
    command stopped half-way with "'ascii' codec can't encode character" and exit status 2."""
    import os
    import shutil

    for name in (b"s\xc3\xa9ed0", b"seed\xff1"):
        d = os.path.join(bytes(tmp_path), b"runs", name)
        os.makedirs(d)
        shutil.copy(FIX / "metrics.csv", os.path.join(d, b"metrics.csv"))
    p = subprocess.run([sys.executable, "-m", "grokclocks", "compare", str(tmp_path / "runs")], capture_output=True,
                       env=dict(os.environ, PYTHONPATH=str(REPO), PYTHONIOENCODING="ascii"))
    assert p.returncode == 0, p.stderr
    out = p.stdout.decode("ascii")
    assert out.startswith("run: 2 seeds: ") and "s\\xe9ed0" in out and "seed\\udcff1" in out, out[:300]


def test_compare_plot_is_checked_before_any_work(capsys, tmp_path, monkeypatch):
    f = _user_npz(tmp_path / "run.npz")
    for name in ("old.png", "old.pdf"):  # an existing file: refused (no table printed), kept; --overwrite replaces
        old = tmp_path / name
        old.write_bytes(b"keep me")
        rc, out, err = run(["compare", str(f), "--plot", str(old)], capsys)
        assert rc == 2 and out == "" and old.read_bytes() == b"keep me" and len(err.strip().splitlines()) == 1
        assert f"--plot: {old} already exists; pass --overwrite" in err
    pytest.importorskip("matplotlib")
    rc, out, err = run(["compare", str(f), "--plot", str(tmp_path / "old.pdf"), "--overwrite"], capsys)
    assert rc == 0 and out.startswith("run: run.npz") and (tmp_path / "old.pdf").read_bytes()[:4] == b"%PDF"
    assert f"figure written to {tmp_path / 'old.pdf'}" in err
    for argv, message in (
            (["--plot", str(tmp_path / "missing" / "x.png")], f"the directory {tmp_path / 'missing'} does not exist"),
            (["--plot", str(tmp_path / "adir")], "the file name must end with its format, one of"),
            (["--plot", str(tmp_path / "x.nope")], "(e.g. x.nope.png)"),
            (["--plot", str(tmp_path)], "is a directory"),
            (["--plot", str(f), "--overwrite"], "is one of the files being read")):
        rc, out, err = run(["compare", str(f), *argv], capsys)
        assert rc == 2 and out == "" and message in err and len(err.strip().splitlines()) == 1, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.pdf", "old.png", "run.npz"]  # no adir.png
    monkeypatch.setitem(sys.modules, "matplotlib.backend_bases", None)  # as under pip install -e ".[test]" before
    rc, out, err = run(["compare", str(f), "--plot", str(tmp_path / "new.png")], capsys)
    assert rc == 2 and out == "" and 'needs matplotlib, which is not installed: pip install "grokclocks[plots]"' in err


def test_forecast_plot_follows_the_writer_rules(capsys, tmp_path):
    """`forecast --plot` replaced an existing file, wrote through a symbolic link (notes.txt became a PNG), wrote
    out.png for `--plot out` while reporting "out", and called a dangling link a file that "appeared while the
    command ran".  Now each is one line before any work, --overwrite replaces a regular file only, and several
    runs write PATH's stem with -run0, -run1 (each checked before anything is printed)."""
    pytest.importorskip("matplotlib")
    f = _user_npz(tmp_path / "run.npz")
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes")
    (tmp_path / "existing.png").write_bytes(b"keep me")
    (tmp_path / "l.png").symlink_to(notes)
    (tmp_path / "dangling.png").symlink_to(tmp_path / "nowhere.png")
    for name, message in (("existing.png", "existing.png already exists; pass --overwrite to replace it"),
                          ("l.png", "l.png is a symbolic link (to "),
                          ("dangling.png", "dangling.png is a symbolic link (to "),
                          ("out", "the file name must end with its format, one of")):
        for extra in ([], ["--overwrite"]):
            if name == "existing.png" and extra:
                continue
            rc, out, err = run(["forecast", str(f), "--plot", str(tmp_path / name), *extra], capsys)
            assert rc == 2 and out == "" and message in err and err.count("\n") == 1, err
    assert notes.read_text() == "my notes" and (tmp_path / "existing.png").read_bytes() == b"keep me"
    assert not (tmp_path / "nowhere.png").exists() and not (tmp_path / "out.png").exists()
    g = _user_npz(tmp_path / "run2.npz")
    (tmp_path / "fig-run1.png").write_bytes(b"keep me too")
    rc, out, err = run(["forecast", str(f), str(g), "--plot", str(tmp_path / "fig.png")], capsys)
    assert rc == 2 and out == "" and "fig-run1.png already exists" in err  # checked before the tables print
    assert not (tmp_path / "fig-run0.png").exists()
    rc, out, err = run(["forecast", str(f), str(g), "--plot", str(tmp_path / "fig.png"), "--overwrite"], capsys)
    assert rc == 0 and err.splitlines() == [f"figure written to {tmp_path / 'fig-run0.png'}",
                                            f"figure written to {tmp_path / 'fig-run1.png'}"]
    assert (tmp_path / "fig-run1.png").read_bytes()[:4] == b"\x89PNG"  # --overwrite replaced the regular file
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".png") == [
        "dangling.png", "existing.png", "fig-run0.png", "fig-run1.png", "l.png"]


def test_compare_plot_write_error_is_one_line_and_keeps_the_old_file(capsys, tmp_path, monkeypatch):
    """A figure whose write fails half-way (a full disk) leaves the previous file and no temporary file."""
    import errno

    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    f = _user_npz(tmp_path / "run.npz")
    old = tmp_path / "fig.png"
    old.write_bytes(b"keep me")

    def full_disk(self, fh, **kw):
        fh.write(b"half a figure")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Figure, "savefig", full_disk)
    rc, _, err = run(["compare", str(f), "--plot", str(old), "--overwrite"], capsys)
    assert rc == 2 and err.startswith(f"grokclocks: error: --plot: cannot write {old}: no space left on the device "
                                      "(ENOSPC); fig.png is as it was") and err.count("\n") == 1, err
    assert old.read_bytes() == b"keep me" and sorted(p.name for p in tmp_path.iterdir()) == ["fig.png", "run.npz"]


def test_grid_errors_name_the_index_option_as_typed(capsys, tmp_path):
    from grokclocks import runfile

    t = np.arange(0, 101, 10)
    acc = np.stack([np.tile(np.minimum(t / 30, 1), (2, 1)), np.tile(np.minimum(t / 50, 1), (2, 1))])
    grid = runfile.save_trajectory(runfile.Trajectory(times=t, metrics={"acc_train": acc, "acc_test": acc}),
                                   tmp_path / "grid")
    for extra, message in (([], "pick one point with --index I[,J...] (e.g. --index 0)"),
                           (["--index", "5"], "--index must be 1 integer(s) within the grid shape (2,) (got --index 5)"),
                           (["--index", "0,1"], "(got --index 0,1)")):
        rc, out, err = run(["compare", str(grid), *extra], capsys)
        assert rc == 2 and out == "" and message in err and "index=" not in err, err
    rc, out, _ = run(["compare", str(grid), "--index", "1"], capsys)
    assert rc == 0 and "t_test (test acc >= 0.99)" in out


def test_compare_fits_the_terminal_and_wide_gives_one_line_per_row(monkeypatch, capsys):
    """`grokclocks compare` wraps to COLUMNS (the fixture's longest line was 262 characters at any width);
    `--wide` keeps one line per row; `--markdown` and `--json` do not depend on the width."""
    log = str(REPO / "tests" / "fixtures" / "logs" / "metrics.csv")
    out = {}
    for cols in ("100", "200"):
        monkeypatch.setenv("COLUMNS", cols)
        rc, text, _ = run(["compare", log], capsys)
        assert rc == 0 and max(len(line) for line in text.splitlines()) <= int(cols)
        rc, out[cols, "wide"], _ = run(["compare", log, "--wide"], capsys)
        rc, out[cols, "md"], _ = run(["compare", log, "--markdown"], capsys)
        rc, out[cols, "json"], _ = run(["compare", log, "--json"], capsys)
    wide = out["100", "wide"].splitlines()
    assert max(len(line) for line in wide) > 200 and out["100", "wide"] == out["200", "wide"]
    assert [line.split()[1] for line in wide if line.startswith("levi ")] == [
        "lambda", "delta_t", "delta_t_linear", "lambda_star"]
    assert out["100", "md"] == out["200", "md"] and out["100", "json"] == out["200", "json"]


def test_json_of_a_run_whose_name_is_not_utf8_is_strict_json(tmp_path, capsys):
    """A run folder named with the byte 0xff: `compare --json` and `forecast --json` name it `seed\\udcff1` (the
    terminal's escape, as six characters); before, the JSON held the lone surrogate escape `\\udcff`, which Rust's
    serde_json refuses and jq turns into U+FFFD (Python reads it back as a string no UTF-8 can hold)."""
    import os
    import shutil

    for name in (b"seed0", b"seed\xff1"):
        d = os.path.join(bytes(tmp_path), b"runs", name)
        os.makedirs(d)
        shutil.copy(FIX / "metrics.csv", os.path.join(d, b"metrics.csv"))
    for command in ("compare", "forecast"):
        rc, out, err = run([command, str(tmp_path / "runs"), "--json"], capsys)
        assert rc == 0, err
        assert out.isascii() and "\\udcff" not in out.replace("\\\\udcff", "")
        data = json.loads(out)
        assert data["run_names"] == ["seed0", "seed\\udcff1"]
        json.dumps(data, ensure_ascii=False).encode("utf-8")  # raises on a lone surrogate
