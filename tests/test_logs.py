"""grokclocks.logs: every reader on a fixture in its tool's real layout, and on bad variants of it.

The fixtures in tests/fixtures/logs/ are one PyTorch run of modular addition (p = 31, seed 0) written by
each tool's own writer (tests/fixtures/logs/make_fixtures.py).  Every good file must give the numbers of the
.npz path; every bad variant must give one clear error naming the file, the column, the row and its step.
"""

from __future__ import annotations

import csv
import json
import shutil
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from grokclocks import DomainError
from grokclocks.compare import compare_run, load_run
from grokclocks.logs import LogError, LogWarning, canonical_name, merge_seeds, parse_columns, read_log

FIX = Path(__file__).resolve().parent / "fixtures" / "logs"
IDS = ("t_train", "t_test", "t_cls", "t_cls_sustained", "delta_t", "delay_ratio", "barrier", "clock_order")


@pytest.fixture(scope="module")
def reference():
    """The .npz path: arrays and the comparison every other format must reproduce."""
    with np.load(FIX / "run.npz") as f:
        arrays = {k: f[k] for k in f.files}
    return arrays, compare_run(FIX / "run.npz")


def _quiet_load(path, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LogWarning)
        return load_run(path, **kw)


def _same_as_reference(rd, reference, *, rtol=0.0, drop=(), missing_first=()):
    arrays, ref = reference
    np.testing.assert_array_equal(rd.steps, arrays["steps"])
    for name in ("train_acc", "test_acc", "train_loss", "test_loss"):
        if name in drop:
            assert getattr(rd, name) is None
            continue
        want = arrays[name].copy()
        if name in missing_first:
            want[0] = np.nan
        np.testing.assert_allclose(getattr(rd, name)[0], want, rtol=rtol, atol=0, equal_nan=True)
    c = compare_run(rd)
    needs_train_acc = ("t_train", "delta_t", "delay_ratio", "barrier", "clock_order")
    for i in IDS:
        if "train_acc" in drop and i in needs_train_acc:
            continue
        assert c[i].formatted() == ref[i].formatted(), i
    return c


def test_reference_run_groks(reference):
    _, ref = reference
    assert (ref.value("t_train"), ref.value("t_test"), ref.value("t_cls")) == (50.0, 1450.0, 430.0)
    assert ref.verdict("clocks").verdict == "consistent"


@pytest.mark.parametrize("path, fmt", [
    ("metrics.csv", "csv"), ("metrics.tsv", "tsv"), ("wandb_history.jsonl", "jsonl"),
    ("lightning/version_0/metrics.csv", "csv"), ("lightning", "csv"), ("torch_log.pt", "torch"),
])
def test_good_fixture_gives_the_npz_numbers(path, fmt, reference):
    if fmt == "torch":
        pytest.importorskip("torch", reason="torch is not installed: the torch.save reader is tested where it is")
    log = read_log(FIX / path) if fmt != "jsonl" else None
    if fmt == "jsonl":
        with pytest.warns(LogWarning, match=r"ignored columns .*'_runtime', '_timestamp', 'lr'"):
            log = read_log(FIX / path)
    assert log.format == fmt
    assert log.columns["test_acc"] in ("val_acc", "val/acc") and log.columns["train_acc"] in ("train_acc", "train/acc")
    _same_as_reference(_quiet_load(FIX / path), reference)


def test_hugging_face_trainer_state(reference):
    with pytest.warns(LogWarning, match="grad_norm"):
        log = read_log(FIX / "hf" / "trainer_state.json")
    assert log.format == "hf" and log.columns == {"test_acc": "eval_accuracy", "test_loss": "eval_loss",
                                                   "train_loss": "loss"}
    assert any("skipped 1 closing summary" in n for n in log.notes)  # the mean train_loss is not a curve
    # HF logs no train accuracy, and its first training log is after step 0
    _same_as_reference(_quiet_load(FIX / "hf"), reference, drop=("train_acc",), missing_first=("train_loss",))


@pytest.mark.parametrize("step_key", ["trainer/global_step", "train/global_step"])
def test_wandb_history_uses_the_logged_training_step_not_the_log_call_counter(step_key, tmp_path, reference):
    # Lightning's WandbLogger (trainer/global_step) and the Hugging Face WandbCallback (train/global_step) log the
    # training step beside W&B's _step, which counts wandb.log calls: train and val logs get _step 0, 1, 2, ...
    out, calls = [], 0
    for rec in map(json.loads, (FIX / "wandb_history.jsonl").read_text().splitlines()):
        for split in ("train/", "val/"):
            part = {k: v for k, v in rec.items() if k.startswith(split)}
            if part:
                out.append({"_step": calls, step_key: rec["_step"], **part})
                calls += 1
    p = tmp_path / "history.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in out))
    log = read_log(p)
    assert any(n.startswith(f"steps from {step_key!r} (also present: '_step')") for n in log.notes)
    _same_as_reference(_quiet_load(p), reference)


def test_tensorboard_event_file_and_run_directory(reference):
    pytest.importorskip("tensorboard", reason="tensorboard is not installed (pip install 'grokclocks[logs]')")
    event = next((FIX / "tb").glob("events.out.tfevents.*"))
    for src in (FIX / "tb", event):
        log = read_log(src)
        assert log.format == "tensorboard" and log.columns["test_acc"] == "val/acc"
        _same_as_reference(load_run(src), reference, rtol=1e-7)  # event files store float32 scalars


def test_several_files_are_several_seeds():
    paths = sorted(FIX.glob("seeds/seed*/metrics.csv"))
    rd = load_run(paths)
    assert rd.n_runs == 3 and rd.run_names == ("seed0", "seed1", "seed2") and rd.source.startswith("3 seeds")
    c = compare_run(paths)
    singles = [compare_run(p) for p in paths]
    assert c["t_test"].per_run == tuple(s.value("t_test") for s in singles) == (1450.0, 850.0, 1500.0)
    assert c["t_cls"].per_run == tuple(s.value("t_cls") for s in singles)


def test_dataframe_and_to_dict_list(reference):
    pd = pytest.importorskip("pandas")
    df = pd.read_csv(FIX / "lightning" / "version_0" / "metrics.csv")  # NaN where a row holds the other split
    _same_as_reference(compare_run(df).run, reference)
    _same_as_reference(compare_run(df.to_dict("list")).run, reference)
    indexed = pd.read_csv(FIX / "metrics.csv").set_index("step")
    _same_as_reference(compare_run(indexed).run, reference)
    # two val_acc columns side by side (pd.concat(axis=1)): df["val_acc"] is a (rows, 2) block, which was read as
    # 2 runs with rows and columns swapped when there were 2 rows
    twice = pd.DataFrame([[0, 0.1, 0.9], [10, 0.2, 0.95]], columns=["step", "val_acc", "val_acc"])
    with pytest.raises(LogError, match=r"DataFrame: the columns repeat the name\(s\) \['val_acc'\]"):
        read_log(twice)


def test_npy_structured_and_plain(tmp_path, reference):
    arrays, _ = reference
    rec = np.zeros(arrays["steps"].size, dtype=[("step", "f8"), ("train_acc", "f8"), ("val_acc", "f8")])
    rec["step"], rec["train_acc"], rec["val_acc"] = arrays["steps"], arrays["train_acc"], arrays["test_acc"]
    np.save(tmp_path / "log.npy", rec)
    rd = load_run(tmp_path / "log.npy")
    np.testing.assert_array_equal(rd.test_acc[0], arrays["test_acc"])
    np.save(tmp_path / "plain.npy", np.stack([arrays["steps"], arrays["train_acc"]]))
    with pytest.raises(LogError, match="one unnamed array of shape"):
        load_run(tmp_path / "plain.npy")
    np.save(tmp_path / "obj.npy", np.array([{"step": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(LogError, match="Python objects"):
        load_run(tmp_path / "obj.npy")


# ------------------------------------------------------------------------------------------ names


@pytest.mark.parametrize("name, want", [
    ("step", "steps"), ("_step", "steps"), ("global_step", "steps"), ("trainer/global_step", "steps"),
    ("train/global_step", "steps"),
    ("epoch", "steps"), ("Step", "steps"), ("val/acc", "test_acc"), ("eval_accuracy", "test_acc"),
    ("valid_acc", "test_acc"), ("test_loss", "test_loss"), ("validation/epoch_accuracy", "test_acc"),
    ("train/acc", "train_acc"), ("accuracy", "train_acc"), ("loss", "train_loss"), ("train_loss_epoch", "train_loss"),
    ("param_norm", "weight_norm"), ("lr", None), ("grad_norm", None), ("train/acc_top5", None), ("val_step", None),
    ("weights/l2_norm", "weight_norm"), ("global_param_norm", "weight_norm"),
    # gradient norms by their usual names (optax.global_norm(grads), torch clip_grad_norm_'s total_norm): not weights
    ("global_norm", None), ("total_norm", None), ("l2_norm", None), ("global_l2_norm", None),
])
def test_alias_table(name, want):
    assert canonical_name(name) == want


def test_columns_override_conflicts_and_unknown(tmp_path):
    p = tmp_path / "m.csv"
    p.write_text("iteration,train_loss_step,train_loss_epoch,top1_val,junk\n0,1,1,0.1,x\n10,0.5,0.5,0.9,y\n")
    with pytest.raises(LogError, match=r"2 columns read as train_loss \(\['train_loss_step', 'train_loss_epoch'\]\)"):
        read_log(p)
    with pytest.warns(LogWarning, match=r"ignored columns that match no series: \['train_loss_step', 'junk'\]"):
        log = read_log(p, columns=parse_columns("train_loss=train_loss_epoch,test_acc=top1_val"))
    assert log.columns == {"train_loss": "train_loss_epoch", "test_acc": "top1_val"}
    assert log.arrays["steps"].tolist() == [0.0, 10.0]
    with pytest.raises(LogError, match="'nope', which is not a column"):
        read_log(p, columns={"test_acc": "nope", "train_loss": "train_loss_epoch"})
    with pytest.raises(DomainError, match="unknown series"):
        read_log(p, columns={"val_acc": "top1_val"})
    with pytest.raises(DomainError, match="NAME=COLUMN"):
        parse_columns("test_acc")


def test_weight_norm_is_on_the_training_steps_not_a_val_step_list():
    """weight_norm is a training-side series: with a val_step list of the same length beside it, its steps are
    still the step column (read from val_step, every t_rep(weight norm) and lag would move by the eval offset)."""
    run = {"step": [0, 10, 20, 30], "train_acc": [0.2, 0.6, 1.0, 1.0], "weight_norm": [9.0, 7.0, 5.0, 4.0],
           "val_step": [5, 15, 25, 35], "val_acc": [0.1, 0.2, 0.5, 1.0]}
    log = read_log(run)
    steps, wn = log.arrays["steps"], log.arrays["weight_norm"]
    assert steps.tolist() == [0, 5, 10, 15, 20, 25, 30, 35]
    assert steps[~np.isnan(wn)].tolist() == [0, 10, 20, 30] and wn[~np.isnan(wn)].tolist() == [9, 7, 5, 4]
    assert "weight_norm steps from 'val_step'" not in log.notes and "test_acc steps from 'val_step'" in log.notes
    c = compare_run(run, window=1)  # t_rep: first record with |w - w_end| <= 0.1 |w_0 - w_end|, w = 4 at step 30
    assert c["t_rep_weight_norm"].per_run == (30.0,) and c["lag_weight_norm"].per_run == (-5.0,)  # t_test = 35


def test_own_steps_per_series_in_a_mapping():
    log = read_log({"step": [0, 1, 2, 3], "train_acc": [0, 0.5, 1, 1], "val_step": [0, 2], "val_acc": [0.1, 0.9]})
    assert log.arrays["steps"].tolist() == [0, 1, 2, 3]
    assert np.isnan(log.arrays["test_acc"][[1, 3]]).all() and log.arrays["test_acc"][2] == 0.9
    assert log.notes == ("steps from 'step'", "test_acc steps from 'val_step'")
    log2 = read_log({"steps": [0, 1, 2, 3], "train_acc": [0, 0.5, 1, 1], "test_acc": [0.1, 0.9],
                     "test_acc_steps": [1, 3]})
    assert log2.arrays["test_acc"][3] == 0.9
    with pytest.raises(LogError, match="has 2 entries but the steps 'step' have 4"):
        read_log({"step": [0, 1, 2, 3], "train_acc": [0, 0.5, 1, 1], "val_acc": [0.1, 0.9]})



def test_own_steps_of_a_two_d_series(tmp_path):
    # several seeds (n_runs, n_records) with evaluation on its own steps: train every 10 from 0, eval every 10 from 5,
    # the same count; before, the 2-D test_acc was put on the training steps (t_test read 5 steps early)
    train = np.array([[0.1, 0.5, 1.0, 1.0], [0.2, 0.6, 1.0, 1.0]])
    test = np.array([[0.0, 0.2, 0.995, 1.0], [0.0, 0.1, 0.3, 0.999]])
    for key, val_key in (("test_acc_steps", "test_acc"), ("val_step", "val_acc")):
        np.savez(tmp_path / "run.npz", step=[0.0, 10, 20, 30], train_acc=train, **{val_key: test, key: [5.0, 15, 25, 35]})
        rd = load_run(tmp_path / "run.npz")
        assert rd.steps.tolist() == [0, 5, 10, 15, 20, 25, 30, 35]
        np.testing.assert_array_equal(rd.test_acc[:, 1::2], test)
        np.testing.assert_array_equal(rd.train_acc[:, ::2], train)
        assert np.isnan(rd.test_acc[:, ::2]).all() and np.isnan(rd.train_acc[:, 1::2]).all()
        assert compare_run(rd)["t_test"].per_run == (25.0, 35.0)
    with pytest.raises(LogError, match=r"'val_step' entry 2: step 15 repeats step 15 of entry 1"):
        read_log({"step": [0.0, 10, 20], "train_acc": train[:, :3], "val_acc": test[:, :3], "val_step": [5.0, 15, 15]})

def test_snapshots_stay_on_the_log_steps_when_the_series_skip_a_record(tmp_path):
    # embeddings are at the .npz's steps (USER_KEYS); the series' grid drops records where no series was logged
    emb = np.random.default_rng(0).normal(size=(4, 5, 2))
    nan = np.nan
    np.savez(tmp_path / "run.npz", step=[0.0, 10, 20, 30], train_acc=[nan, 0.5, 1, 1], val_acc=[nan, 0.2, 0.9, 1],
             embeddings=emb)
    rd = load_run(tmp_path / "run.npz")  # was: DomainError, 4 snapshots on a 3-record grid
    assert rd.steps.tolist() == [10, 20, 30] and rd.embedding_steps.tolist() == [0, 10, 20, 30]
    np.testing.assert_array_equal(rd.embeddings[0], emb)
    # 3 snapshots for 4 steps, the series at 3 of them: which 3 is not said (was: put on the grid's 3 records)
    np.savez(tmp_path / "run.npz", step=[0.0, 10, 20, 30], train_acc=[0.1, 0.5, 1, nan], val_acc=[0, 0.2, 0.9, nan],
             embeddings=emb[:3])
    with pytest.raises(LogError, match=r"run.npz: embeddings holds 3 snapshots but 'step' 4 steps, and the series "
                                       r"were logged at 3 of them; give the snapshots' steps as embedding_steps"):
        load_run(tmp_path / "run.npz")


# ------------------------------------------------------------------------------------------ bad variants


def _rewrite_csv(src: Path, dst: Path, edit, delimiter=","):
    with open(src, newline="") as f:
        rows = list(csv.reader(f, delimiter=delimiter))
    rows = edit(rows)
    with open(dst, "w", newline="") as f:
        csv.writer(f, delimiter=delimiter).writerows(rows)
    return dst


def _set(rows, line, col, value):
    j = rows[0].index(col)
    rows[line - 1][j] = value
    return rows


def _one_line(exc):
    msg = str(exc.value)
    assert "\n" not in msg and len(msg) < 400, msg
    return msg


CSV_BAD = {
    "missing step column": (lambda r: [row[1:] for row in r], r"no step column"),
    "missing every metric": (lambda r: [row[:1] for row in r], r"no column reads as a series"),
    "explicit NaN": (lambda r: _set(r, 12, "val_acc", "nan"),
                     r"metrics\.csv: column 'val_acc' line 12 \(step 100\) is NaN"),
    "non-monotone steps": (lambda r: r[:5] + [r[6], r[5]] + r[7:],
                           r"column 'train_\w+' line 7: step 40 goes back from step 50 of line 6"),
    "tensor string": (lambda r: _set(r, 9, "train_loss", "tensor(0.0374, grad_fn=<NllLossBackward0>)" * 5),
                      r"line 9 \(step 70\): 'tensor\(0\.0374.*\.\.\. is not a number \(a torch tensor written with "
                      r"str\(\); log float\(x\) or x\.item\(\)\)"),
    "percent accuracy": (lambda r: _set(r, 5, "train_acc", "97.5"), r"= 97\.5 is outside \[0, 1\] \(a percentage"),
    "empty file": (lambda r: [], r"the file is empty"),
    "header only": (lambda r: r[:1], r"no data rows"),
    "ragged row": (lambda r: r[:3] + [r[3][:2]] + r[4:], r"line 4 has 2 fields, the header 5"),
}


@pytest.mark.parametrize("case", list(CSV_BAD))
@pytest.mark.parametrize("src, delim", [("metrics.csv", ","), ("metrics.tsv", "\t")])
def test_bad_csv_and_tsv(case, src, delim, tmp_path):
    edit, match = CSV_BAD[case]
    dst = _rewrite_csv(FIX / src, tmp_path / "metrics.csv", edit, delim)
    with pytest.raises(LogError) as exc:
        _quiet_load(dst)
    assert exc.match(match.replace(r"metrics\.csv", r"metrics\.csv"))
    _one_line(exc)


def test_bad_lightning(tmp_path):
    d = tmp_path / "version_0"
    d.mkdir()
    _rewrite_csv(FIX / "lightning" / "version_0" / "metrics.csv", d / "metrics.csv",
                 lambda r: _set(r, 4, "val_acc", "0.5"))  # a validation value on a train row at step 10
    rd = load_run(tmp_path)
    assert rd.test_acc[0][1] == 0.5  # allowed: it is a logged value at step 10
    _rewrite_csv(FIX / "lightning" / "version_0" / "metrics.csv", d / "metrics.csv",
                 lambda r: _set(r, 6, "step", ""))
    with pytest.raises(LogError, match=r"column 'train_acc' line 6 has a value but no step \('step' is empty there\)"):
        load_run(d / "metrics.csv")


def _jsonl(tmp_path, edit):
    lines = [json.loads(x) for x in (FIX / "wandb_history.jsonl").read_text().splitlines()]
    lines = edit(lines)
    p = tmp_path / "history.jsonl"
    p.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return p


@pytest.mark.parametrize("edit, match", [
    (lambda L: [{k: v for k, v in x.items() if k != "_step"} for x in L], r"no step column"),
    (lambda L: [{k: v for k, v in x.items() if "/" not in k} for x in L], r"no column reads as a series"),
    (lambda L: L[:10] + [dict(L[10], **{"val/acc": float("nan")})] + L[11:],
     r"history\.jsonl: column 'val/acc' line 11 \(step 100\) is NaN"),
    (lambda L: L[:3] + [L[4], L[3]] + L[5:], r"line 5: step 30 goes back from step 40 of line 4"),
    (lambda L: L[:2] + [dict(L[2], **{"train/acc": "tensor(0.4583)"})] + L[3:],
     r"column 'train/acc' line 3 \(step 20\): 'tensor\(0\.4583\)' is not a number \(a torch tensor"),
    (lambda L: [], r"the file is empty"),
    (lambda L: L[:1] + [{k: v for k, v in L[1].items() if k != "_step"}] + L[2:],
     r"line 2 has a value but no step"),
])
def test_bad_jsonl(edit, match, tmp_path):
    with pytest.raises(LogError, match=match) as exc:
        _quiet_load(_jsonl(tmp_path, edit))
    _one_line(exc)


def _hf(tmp_path, edit):
    state = json.loads((FIX / "hf" / "trainer_state.json").read_text())
    edit(state["log_history"])
    p = tmp_path / "trainer_state.json"
    p.write_text(json.dumps(state))
    return p


@pytest.mark.parametrize("edit, match", [
    (lambda h: h.__setitem__(1, dict(h[1], loss=float("nan"))), r"column 'loss' log_history\[1\] \(step 10\) is NaN"),
    (lambda h: h.__setitem__(1, dict(h[1], loss="0.1234 ")) or h.__setitem__(2, dict(h[2], loss="n/a")),
     r"column 'loss' log_history\[2\] \(step 20\): 'n/a' is not a number"),
    (lambda h: h.__setitem__(slice(1, 3), [h[2], h[1]]), r"step 10 goes back from step 20"),
    (lambda h: h.clear(), r"log_history is empty"),
    (lambda h: [r.pop("eval_accuracy", None) for r in h] and [r.pop("eval_loss", None) for r in h]
     and [r.pop("loss", None) for r in h], r"no column reads as a series"),
])
def test_bad_hugging_face(edit, match, tmp_path):
    with pytest.raises(LogError, match=match) as exc:
        _quiet_load(_hf(tmp_path, edit))
    _one_line(exc)


def test_bad_torch(tmp_path):
    torch = pytest.importorskip("torch", reason="torch is not installed: the torch.save reader is tested where it is")
    good = torch.load(FIX / "torch_log.pt", weights_only=True)

    def save(d):
        p = tmp_path / "log.pt"
        torch.save(d, p)
        return p

    cases = [
        ({k: v for k, v in good.items() if k != "step"}, r"no step column"),
        (dict(good, step=good["step"][:5] + good["step"][6:5:-1] + good["step"][5:6] + good["step"][7:]),
         r"column 'train_\w+' row 6: step 50 goes back from step 60 of row 5"),
        (dict(good, train_acc=good["train_acc"][:3] + ["high"] + good["train_acc"][4:]),
         r"column 'train_acc' row 3 \(step 30\): 'high' is not a number"),
        ({}, r"the dict is empty"),
        (dict(good, val_acc=good["val_acc"][:-1]), r"'val_acc' \(test_acc\) has 40 entries but the steps"),
    ]
    for d, match in cases:
        with pytest.raises(LogError, match=match) as exc:
            load_run(save(d))
        _one_line(exc)
    # NaN in an array marks a record that was not logged, it is no error
    rd = load_run(save(dict(good, train_loss=torch.where(torch.arange(201) == 7, float("nan"), good["train_loss"]))))
    assert np.isnan(rd.train_loss[0][7]) and np.isfinite(rd.train_loss[0][8])
    torch.save(torch.zeros(3), tmp_path / "model.pt")
    with pytest.raises(LogError, match="a torch.save log must be a dict of lists or tensors \\(got Tensor\\)"):
        load_run(tmp_path / "model.pt")
    (tmp_path / "corrupt.pt").write_bytes(b"\x80\x04K\x01.")
    with pytest.raises(LogError, match=r"torch.load\(weights_only=True\) refused the file"), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torch's own note on the pickle protocol
        load_run(tmp_path / "corrupt.pt")


def test_bad_npz(tmp_path, reference):
    arrays, _ = reference
    np.savez(tmp_path / "a.npz", steps=arrays["steps"][::-1], train_acc=arrays["train_acc"])
    with pytest.raises(LogError, match=r"a\.npz: column 'train_acc' row 1: step 1990 goes back from step 2000"):
        load_run(tmp_path / "a.npz")
    np.savez(tmp_path / "b.npz", steps=arrays["steps"], train_acc=np.array(["x"] * arrays["steps"].size))
    with pytest.raises(LogError, match=r"column 'train_acc' row 0 \(step 0\): 'x' is not a number"):
        load_run(tmp_path / "b.npz")
    np.savez(tmp_path / "c.npz")
    with pytest.raises(LogError, match="the archive is empty"):
        load_run(tmp_path / "c.npz")
    np.savez(tmp_path / "d.npz", steps=arrays["steps"], lr=arrays["steps"])
    with pytest.raises(LogError, match="no column reads as a series"):
        load_run(tmp_path / "d.npz")
    np.savez(tmp_path / "e.npz", steps=arrays["steps"], test_acc=np.full(arrays["steps"].size, np.nan))
    with pytest.raises(LogError, match=r"column 'test_acc' \(test_acc\) holds no value"):
        load_run(tmp_path / "e.npz")


def test_bad_tensorboard(tmp_path, monkeypatch):
    pytest.importorskip("tensorboard", reason="tensorboard is not installed (pip install 'grokclocks[logs]')")
    (tmp_path / "empty").mkdir()
    with pytest.raises(LogError, match="a directory without a TensorBoard event file"):
        load_run(tmp_path / "empty")
    # tensorboard's own writer (what torch.utils.tensorboard.SummaryWriter wraps), so CI needs no torch
    from tensorboard.compat.proto.event_pb2 import Event
    from tensorboard.compat.proto.summary_pb2 import Summary
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    w = EventFileWriter(str(tmp_path / "dup"))
    for s in (0, 10, 10, 20):
        w.add_event(Event(wall_time=1.0 + s, step=s, summary=Summary(value=[Summary.Value(tag="val/acc", simple_value=0.5)])))
    w.close()
    with pytest.raises(LogError, match=r"column 'val/acc' event 2: step 10 repeats step 10 of event 1"):
        load_run(tmp_path / "dup")
    shutil.copytree(FIX / "tb", tmp_path / "tb")
    monkeypatch.setitem(sys.modules, "tensorboard.backend.event_processing", None)
    with pytest.raises(LogError, match=r'needs the tensorboard package: pip install "grokclocks\[logs\]"') as exc:
        load_run(tmp_path / "tb")
    _one_line(exc)


def test_tensorboard_epoch_tag_is_not_called_the_step_column(tmp_path):
    # Lightning's TensorBoardLogger writes an 'epoch' scalar; every tag has its own steps, so none is read from it
    pytest.importorskip("tensorboard", reason="tensorboard is not installed (pip install 'grokclocks[logs]')")
    from tensorboard.compat.proto.event_pb2 import Event
    from tensorboard.compat.proto.summary_pb2 import Summary
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    w = EventFileWriter(str(tmp_path / "tb"))
    for s in (0, 10, 20):
        w.add_event(Event(wall_time=1.0 + s, step=s, summary=Summary(value=[
            Summary.Value(tag="val_acc", simple_value=s / 20), Summary.Value(tag="epoch", simple_value=s // 20)])))
    w.close()
    log = read_log(tmp_path / "tb")
    assert log.arrays["steps"].tolist() == [0, 10, 20] and log.arrays["test_acc"].tolist() == [0, 0.5, 1]
    assert not any("steps from" in n for n in log.notes), log.notes


def _tensor_event(step: int, tag: str, value: float, shape: tuple[int, ...] = ()):
    """An event as TF2's tf.summary.scalar writes it: a tensor (not a simple_value) with the scalars plugin."""
    from tensorboard.compat.proto import event_pb2, summary_pb2, tensor_pb2, tensor_shape_pb2, types_pb2

    dims = [tensor_shape_pb2.TensorShapeProto.Dim(size=n) for n in shape]
    tensor = tensor_pb2.TensorProto(dtype=types_pb2.DT_FLOAT, tensor_shape=tensor_shape_pb2.TensorShapeProto(dim=dims),
                                    float_val=[value])
    meta = summary_pb2.SummaryMetadata(plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="scalars"))
    return event_pb2.Event(wall_time=1.0 + step, step=step, summary=summary_pb2.Summary(
        value=[summary_pb2.Summary.Value(tag=tag, tensor=tensor, metadata=meta)]))


def test_tensorboard_tf2_tensor_scalars(tmp_path):
    """TF2's tf.summary.scalar logs tensors: read as scalars (an AttributeError before: tensor_util was looked up
    on the event_accumulator module); a tensor of more than one element is not a number, named with its shape."""
    pytest.importorskip("tensorboard", reason="tensorboard is not installed (pip install 'grokclocks[logs]')")
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    w = EventFileWriter(str(tmp_path / "tf2"))
    for s in (0, 10, 20):
        w.add_event(_tensor_event(s, "val_acc", s / 20))
    w.close()
    log = read_log(tmp_path / "tf2")
    assert log.arrays["steps"].tolist() == [0, 10, 20] and log.arrays["test_acc"].tolist() == [0, 0.5, 1]
    w = EventFileWriter(str(tmp_path / "wide"))
    w.add_event(_tensor_event(0, "val_acc", 0.5))
    w.add_event(_tensor_event(10, "val_acc", 0.5, shape=(2, 3)))
    w.close()
    with pytest.raises(LogError, match=r"wide: column 'val_acc' event 1 \(step 10\): 'tensor of shape \(2, 3\)' is "
                                       "not a number"):
        read_log(tmp_path / "wide")


def test_other_files(tmp_path):
    (tmp_path / "log.pkl").write_bytes(b"\x80\x04}\x94.")
    with pytest.raises(LogError, match="pickle files are not read"):
        load_run(tmp_path / "log.pkl")
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(LogError, match="empty.csv: the file is empty"):
        load_run(tmp_path / "empty.csv")
    two = tmp_path / "two"
    for v in ("version_0", "version_1"):
        (two / v).mkdir(parents=True)
        shutil.copy(FIX / "metrics.csv", two / v / "metrics.csv")
    # a folder whose sub-folders are runs is one seed per sub-folder (as two/*/ would be), said in the notes;
    # a forced format reads them too, never one of them alone (before, format="csv" read version_0 without a word)
    for fmt in (None, "csv"):
        rd = _quiet_load(two, format=fmt)
        assert rd.run_names == ("version_0", "version_1") and rd.test_acc.shape[0] == 2
        assert any("a folder of 2 runs (version_0, version_1): one seed per sub-folder" in n for n in rd.input_notes)
    with pytest.raises(LogError, match=r"two: a folder of csv runs, not json"):
        load_run(two, format="json")
    (two / "version_1" / "deeper").mkdir()
    shutil.copy(FIX / "metrics.csv", two / "version_1" / "deeper" / "metrics.csv")
    with pytest.raises(LogError, match=r"several metrics.csv files \(deeper/metrics.csv, metrics.csv\)"):
        load_run(two)
    with pytest.raises(DomainError, match="existing log file or run directory"):
        load_run(tmp_path / "missing.csv")


def test_merge_seeds_rejects_different_series(tmp_path):
    a = read_log({"step": [0, 1], "train_acc": [0, 1]})
    b = read_log({"step": [0, 1], "val_acc": [0, 1]})
    with pytest.raises(LogError, match="different series"):
        merge_seeds([a, b])
    m = merge_seeds([a, read_log({"step": [0, 2], "train_acc": [0.5, 1]})])
    assert m.arrays["steps"].tolist() == [0, 1, 2] and np.isnan(m.arrays["train_acc"][0, 2])


def test_merge_seeds_says_mixed_step_units_and_refuses_snapshot_shapes_and_a_file_twice(tmp_path):
    """Seeds logged on different step columns (step / epoch) were put on one union grid without a word (now a
    LogWarning and a note: the same unit only in full-batch training); snapshots of different shapes raised
    numpy's bare ValueError; the same file given twice counted as two seeds (both now raise)."""
    a = read_log({"step": [0, 100], "train_acc": [0.5, 1.0]})
    b = read_log({"epoch": [0, 1], "train_acc": [0.5, 1.0]})
    with pytest.warns(LogWarning, match=r"different columns .*'step'.*'epoch'.*full-batch"):
        m = merge_seeds([a, b])  # an epoch is a step in full-batch training: said, not refused
    assert any("full-batch training only" in n for n in m.notes)
    assert (a.step_column, b.step_column, m.step_column) == ("step", "epoch", None)
    assert merge_seeds([a, read_log({"step": [0, 50], "train_acc": [0.2, 1.0]})]).arrays["steps"].tolist() == [0, 50, 100]
    assert merge_seeds([a, read_log({"global_step": [0, 50], "train_acc": [0.2, 1.0]})]).arrays["steps"].tolist() == [
        0, 50, 100]  # two names of the same unit
    e1 = read_log({"step": [0, 1], "train_acc": [0.5, 1.0], "embeddings": np.zeros((2, 5, 3))})
    e2 = read_log({"step": [0, 1], "train_acc": [0.5, 1.0], "embeddings": np.zeros((2, 5, 4))})
    with pytest.raises(LogError, match=r"embeddings of different shapes .*\(2, 5, 3\).*\(2, 5, 4\)"):
        merge_seeds([e1, e2])
    shutil.copy(FIX / "metrics.csv", tmp_path / "s0.csv")
    with pytest.raises(DomainError, match="the same file twice"):
        load_run([tmp_path / "s0.csv", tmp_path / "." / "s0.csv"])


def test_notebook_example_runs(capsys):
    """docs/examples/bring_your_own_run.py: from the PyTorch log to the verdicts and the BibTeX."""
    import runpy

    runpy.run_path(str(FIX.parents[2] / "docs" / "examples" / "bring_your_own_run.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "50.0 1450.0 430.0 29.0" in out  # t_train, t_test, t_cls and the delay ratio of the three seeds
    assert "clocks     consistent: t_test / t_cls (min over runs) = 1.977" in out
    assert "kramers    cannot tell:" in out and "have 3" in out
    assert "cannot tell: Ceil(inf) = 1: the split covers every label and token" in out  # the saved splits
    assert "@misc{tan2026twoclocks" in out and "author = {{Anonymous / not stated in the source}}" in out


def test_text_log_pairs_are_found_in_linear_time_as_the_old_pattern_found_them():
    """The key-value scanner finds exactly the pairs of the pattern it replaced (which backtracked quadratically on
    runs of spaces: 16,000 spaces took 30 s), on random short lines, and a line of 16,000 spaces costs nothing."""
    import random
    import re
    import time

    from grokclocks.logs._text import _NUMBER, line_pairs

    old = re.compile(r"(?<![\w/.\-])([A-Za-z_][\w/.\-]*?)\s*(?::\s*|=\s*|\s+)(" + _NUMBER + r")(/\d+)?(?![\w.])",
                     re.IGNORECASE)
    rng = random.Random(0)
    alphabet = "ab_ 1.:=/-e+|,x\tn"
    for _ in range(3000):
        line = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        assert line_pairs(line) == [(m.group(1), m.group(2)) for m in old.finditer(line)], repr(line)
    assert line_pairs("Epoch 3/100 - loss: 0.52 - val_accuracy=0.41") == [("Epoch", "3"), ("loss", "0.52"),
                                                                          ("val_accuracy", "0.41")]
    t0 = time.process_time()
    assert line_pairs("a" + " " * 16_000 + "b:" + " " * 16_000 + "c=" + " " * 16_000 + "x") == []
    assert time.process_time() - t0 < 0.5


def test_natural_order_of_run_names_without_int_conversion():
    """Runs sort by the numbers in their names (seed2 before seed10, leading zeros ignored), compared by their
    digits: a name of 5,000 digits (an MLflow store's run name) sorts in linear time (int() of it raised
    Python's int-conversion limit)."""
    import time

    from grokclocks.logs._table import natural_key

    names = ["seed10", "seed2", "seed002a", "seedx", "seed1", "seed" + "9" * 5000, "seed" + "1" + "0" * 4999]
    t0 = time.process_time()
    order = sorted(names, key=natural_key)
    assert time.process_time() - t0 < 0.5
    assert order == ["seed1", "seed002a", "seed2", "seed10", "seed" + "1" + "0" * 4999, "seed" + "9" * 5000, "seedx"]
