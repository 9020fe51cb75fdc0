"""grokclocks.logs: the formats of MLflow, DVCLive, Sacred, Aim, Keras, W&B chart exports and text logs.

Each fixture in tests/fixtures/logs/ was written by its tool's own writer from seeds 0 and 1 of the one
PyTorch run of (a + b) mod 31 (tests/fixtures/logs/make_fixtures.py --more, and --aim for the Aim
repository aim_repo.tar.gz, whose tests need Aim: skipped, with the reason, where it is not installed):
seed 0 gives t_train 50, t_test 1450, t_cls 430 (the numbers of run.npz), seed 1 t_test 850.  Every case of the issue "every log a
researcher has" is here: the DVCLive file read as the wrong role, the series files taken for seeds, the
duplicate --columns target, and each message that did not lead to the fix.
"""

from __future__ import annotations

import gzip
import os
import shutil
import tarfile
import warnings
from pathlib import Path

import numpy as np
import pytest

from grokclocks import DomainError, OutputExistsError
from grokclocks.compare import compare_run, load_run
from grokclocks.logs import LogError, LogWarning, parse_columns, read_log, read_logs

FIX = Path(__file__).resolve().parent / "fixtures" / "logs"
DVC = FIX / "dvclive" / "seed0" / "dvclive" / "plots" / "metrics"


def _load(path, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LogWarning)
        return load_run(path, **kw)


def _clocks(rd):
    c = compare_run(rd)
    return {k: c[k].formatted() for k in ("t_train", "t_test", "t_cls") if c[k].state != "n/a"}


SEED0 = {"t_train": "50", "t_test": "1450", "t_cls": "430"}
SEEDS01 = {"t_train": "50 (2/2)", "t_test": "1150 [850, 1450] (2/2)", "t_cls": "430 (2/2)"}


def _experiment():
    return next(d for d in (FIX / "mlruns").iterdir() if (d / "meta.yaml").is_file() and d.name != "0")


def _run_dir(name):
    exp = _experiment()
    return next(d for d in exp.iterdir() if d.is_dir() and (d / "tags" / "mlflow.runName").read_text() == name)


# ============================================================================================ roles from paths


def test_dvclive_file_alone_takes_its_role_from_its_folder():
    # before: read as train_acc <- 'acc' (the role is only in the folder), t_train = never
    log = read_log(DVC / "val" / "acc.tsv")
    assert log.format == "dvclive" and log.columns == {"test_acc": "val/acc"}
    assert _clocks(_load(DVC / "val" / "acc.tsv")) == {"t_test": "1450"}


def test_dvclive_train_and_val_files_of_one_run_are_one_run_not_two_seeds():
    # before: "2 seeds: train, val", both read as train_acc
    rd = _load([DVC / "val" / "acc.tsv", DVC / "train" / "acc.tsv"])
    assert rd.n_runs == 1 and rd.train_acc is not None and rd.test_acc is not None
    assert _clocks(rd) == {"t_train": "50", "t_test": "1450"}
    assert any("2 files of run 'seed0' joined" in n for n in rd.input_notes)


def test_columns_cannot_turn_a_train_file_into_a_test_series():
    # before: --columns test_acc=acc read both files as test accuracy: t_test = [30, 2050]
    with pytest.raises(LogError, match=r"columns maps test_acc to 'acc', which is not a column \(columns: "
                                       r"\['val/acc', 'train/acc'\]\)"):
        load_run([DVC / "val" / "acc.tsv", DVC / "train" / "acc.tsv"], columns={"test_acc": "acc"})


def test_a_file_whose_role_cannot_be_known_is_refused(tmp_path):
    (tmp_path / "run").mkdir()
    shutil.copy(DVC / "val" / "acc.tsv", tmp_path / "run" / "acc.tsv")  # out of its folder: no role anywhere
    with pytest.raises(LogError, match=r"cannot tell whether 'acc' \(acc.tsv\) is a training or a test "
                                       r"series.*--columns train_acc=acc or test_acc=acc"):
        read_log(tmp_path / "run" / "acc.tsv")
    assert read_log(tmp_path / "run" / "acc.tsv", columns={"test_acc": "acc"}).columns == {"test_acc": "acc"}
    metrics = tmp_path / "r" / "metrics"  # an MLflow metric 'acc' given alone
    metrics.mkdir(parents=True)
    shutil.copy(_run_dir("seed0") / "metrics" / "val_acc", metrics / "acc")
    with pytest.raises(LogError, match=r"cannot tell whether 'acc' \(metrics/acc\)"):
        read_log(metrics / "acc")
    # beside its test twin (Keras' loss / val_loss), a name without a role word is the training series
    shutil.copy(_run_dir("seed0") / "metrics" / "val_acc", metrics / "val_acc")
    assert read_logs([metrics / "acc", metrics / "val_acc"]).columns == {"train_acc": "acc", "test_acc": "val_acc"}


def test_columns_naming_one_target_twice_is_an_error():
    # before: "test_acc=A,test_acc=B" kept B without a word
    with pytest.raises(DomainError, match=r"columns names test_acc twice \(test_acc=val/acc and test_acc=val/top1\)"):
        parse_columns("test_acc=val/acc,test_acc=val/top1")


# ============================================================================================ MLflow


def test_mlflow_file_store_experiment_run_metrics_folder_and_metric_file():
    exp, run = _experiment(), _run_dir("seed0")
    for path in (FIX / "mlruns", exp):
        rd = _load(path)
        assert rd.run_names == ("seed0", "seed1") and _clocks(rd) == SEEDS01
    for path in (run, run / "metrics"):
        assert _clocks(_load(path)) == SEED0
    # before: the first data line was read as a header: columns: ['1795768853650 0.04675324633717537 0']
    log = read_log(run / "metrics" / "val_acc")
    assert log.format == "mlflow" and log.columns == {"test_acc": "val_acc"}
    assert _clocks(_load([run / "metrics" / "val_acc", run / "metrics" / "train_acc"])) == {"t_train": "50",
                                                                                              "t_test": "1450"}


def test_mlflow_metric_file_read_as_csv_says_what_it_is():
    path = _run_dir("seed0") / "metrics" / "val_acc"
    with pytest.raises(LogError, match=r"val_acc: the first line .* is data, not column names: it looks like an "
                                       r"MLflow metric file .* --format mlflow"):
        read_log(path, format="csv")


def test_mlflow_sqlite_store(tmp_path):
    # before: "'utf-8' codec can't decode byte 0xbc in position 27", no file named
    db = tmp_path / "mlflow.db"
    with gzip.open(FIX / "mlflow.db.gz") as src, open(db, "wb") as dst:
        shutil.copyfileobj(src, dst)
    log = read_log(db)
    assert log.format == "mlflow-db" and log.run_names == ("seed0", "seed1")
    rd = _load(db)
    assert _clocks(rd) == SEEDS01
    np.testing.assert_array_equal(rd.test_acc, _load(_experiment()).test_acc)  # the same values as the file store
    (tmp_path / "other.db").write_bytes(b"SQLite format 3\x00" + bytes(100))
    with pytest.raises(LogError, match=r"other.db: .*(SQLite|MLflow)"):
        read_log(tmp_path / "other.db")


def _mlflow_run(exp: Path, folder: str, name: str, start: int | None, acc: float) -> None:
    run = exp / folder
    (run / "metrics").mkdir(parents=True)
    (run / "tags").mkdir()
    (run / "tags" / "mlflow.runName").write_text(name)
    (run / "meta.yaml").write_text(f"run_name: {name}\n" + (f"start_time: {start}\n" if start is not None else "")
                                   + "lifecycle_stage: active\n")
    (run / "metrics" / "train_acc").write_text("".join(f"17000000000{s:02d} {acc} {s}\n" for s in (0, 10, 20)))


def test_mlflow_runs_are_in_the_order_they_started_not_the_folders_hash_order(tmp_path):
    """Run folders are random hashes: the runs are ordered by meta.yaml's start_time, then by name in natural
    order (seed2 before seed10); before, by folder name (seed1 before seed0 where the hashes fell so)."""
    exp = tmp_path / "exp"
    exp.mkdir()
    (exp / "meta.yaml").write_text("name: e\n")
    _mlflow_run(exp, "0a", "seed1", 2000, 0.2)
    _mlflow_run(exp, "1b", "seed0", 1000, 0.1)
    log = read_log(exp)
    assert log.run_names == ("seed0", "seed1")
    assert log.arrays["train_acc"][:, 0].tolist() == [0.1, 0.2]  # the values follow their runs
    exp2 = tmp_path / "exp2"
    exp2.mkdir()
    (exp2 / "meta.yaml").write_text("name: e\n")
    for folder, name in (("a", "seed10"), ("b", "seed2"), ("c", "seed1")):  # no start_time: natural name order
        _mlflow_run(exp2, folder, name, None, 0.5)
    assert read_log(exp2).run_names == ("seed1", "seed2", "seed10")


def _mlflow_db(path: Path, runs: list[tuple[str, str, int]], rows: list[tuple]) -> Path:
    import sqlite3

    con = sqlite3.connect(path)
    con.executescript("""
        CREATE TABLE experiments (experiment_id INTEGER, name TEXT, lifecycle_stage TEXT);
        CREATE TABLE runs (run_uuid TEXT, name TEXT, experiment_id INTEGER, lifecycle_stage TEXT, start_time INTEGER);
        CREATE TABLE metrics (key TEXT, value REAL, timestamp INTEGER, step INTEGER, is_nan INTEGER, run_uuid TEXT);
        INSERT INTO experiments VALUES (0, 'e', 'active');""")
    con.executemany("INSERT INTO runs VALUES (?, ?, 0, 'active', ?)", runs)
    con.executemany("INSERT INTO metrics VALUES (?, ?, ?, ?, ?, ?)", rows)
    con.commit()
    con.close()
    return path


def test_mlflow_sqlite_runs_in_start_order_and_a_nan_is_nan_not_zero(tmp_path):
    rows = [(k, v, s, s, 0, u) for u, v in (("aaa", 0.2), ("bbb", 0.1)) for s in (0, 10, 20)
            for k in ("train_acc", "val_acc")]
    db = _mlflow_db(tmp_path / "m.db", [("aaa", "seed1", 2000), ("bbb", "seed0", 1000)], rows)
    log = read_log(db)
    assert log.run_names == ("seed0", "seed1") and log.arrays["train_acc"][:, 0].tolist() == [0.1, 0.2]
    # MLflow stores a NaN as value 0 with is_nan = 1: it is a NaN (refused in a log: did the run diverge?), not 0.0
    nan = _mlflow_db(tmp_path / "nan.db", [("aaa", "run", 1)],
                     [("train_acc", 0.5, 0, 0, 0, "aaa"), ("train_acc", 0.0, 1, 10, 1, "aaa"),
                      ("train_acc", 1.0, 2, 20, 0, "aaa")])
    with pytest.raises(LogError, match=r"column 'train_acc' record 1 of train_acc \(step 10\) is NaN \(did the run "
                                       r"diverge\?"):
        read_log(nan)


# ============================================================================================ DVCLive, Sacred


def test_dvclive_folders():
    assert _clocks(_load(FIX / "dvclive" / "seed0")) == SEED0
    assert _clocks(_load(DVC.parent.parent)) == SEED0  # the dvclive/ folder itself
    rd = _load(FIX / "dvclive")  # a folder of runs
    assert rd.run_names == ("seed0", "seed1") and _clocks(rd) == SEEDS01


def test_sacred_metrics_json():
    # before: "no column reads as a series ...; columns: []"
    log = read_log(FIX / "sacred" / "1" / "metrics.json")
    assert log.format == "sacred" and log.columns["test_acc"] == "val.acc"
    assert _clocks(_load(FIX / "sacred" / "1")) == SEED0
    rd = _load(FIX / "sacred")  # the observer's base folder: one run per sub-folder (_sources/ is not one)
    assert rd.run_names == ("1", "2") and _clocks(rd) == SEEDS01


# ============================================================================================ Aim


def _aim():
    """Aim, or a visible skip naming why (the test extra does not install it: it brings a web stack of its own)."""
    return pytest.importorskip("aim", reason="Aim is not installed (pip install aim; 3.29.1 in a venv of its own "
                                             "wrote the fixture): the repository Aim wrote is not read here")


def _aim_repo(tmp_path):
    """tests/fixtures/logs/aim_repo.tar.gz unpacked: the project folder holding the .aim that Aim 3.29.1 wrote."""
    with tarfile.open(FIX / "aim_repo.tar.gz") as tar:
        tar.extractall(tmp_path, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    return tmp_path / "aim_repo"


def _tree(root):
    """Every path under `root` with its bytes (None for a folder): what reading must leave as it was."""
    return {str(q.relative_to(root)): (q.read_bytes() if q.is_file() else None) for q in sorted(root.rglob("*"))}


def test_aim_repository_written_by_aim_reads_as_its_seeds(tmp_path):
    # before: Repo(path, read_only=True) raised NotImplementedError (Aim 3.29); without read_only,
    # Repo.iter_runs() listed no run (Aim's index is filled by `aim up`, not by aim.Run), and
    # metric.values.sparse_numpy() gives hashes of the steps, not the steps
    _aim()
    root = _aim_repo(tmp_path)
    before = _tree(root)
    csv = read_logs([FIX / "seeds" / "seed0" / "metrics.csv", FIX / "seeds" / "seed1" / "metrics.csv"])
    for path in (root, root / ".aim"):
        with warnings.catch_warnings():
            warnings.simplefilter("error", LogWarning)  # nothing ignored: the four series, no other metric
            log = read_log(path)
        assert log.format == "aim" and log.run_names == ("seed0", "seed1")
        assert log.columns == {"train_acc": "train/acc", "train_loss": "train/loss", "test_acc": "val/acc",
                               "test_loss": "val/loss"}
        for key in ("steps", "train_acc", "test_acc", "train_loss", "test_loss"):  # every value, at its step
            np.testing.assert_array_equal(log.arrays[key], csv.arrays[key])
    assert _clocks(_load(root)) == SEEDS01
    assert _tree(root) == before  # Aim opened a copy: the repository is as it was, byte for byte


def test_aim_role_from_the_context_or_the_name_and_refused_when_neither_says(tmp_path):
    aim = _aim()

    aim.Repo(str(tmp_path / "empty"), init=True).close()  # Aim sets a repository up in ~2.5 s: once

    def write(folder, tracks):
        shutil.copytree(tmp_path / "empty", folder)
        run = aim.Run(repo=str(folder), experiment="grok", system_tracking_interval=None, capture_terminal_logs=False)
        for step in (0, 10, 20):
            for name, context, value in tracks:
                run.track(value, name=name, step=step, context=context)
        run.close()

    write(tmp_path / "a", [("acc", {"subset": "train"}, 1.0), ("val_acc", {}, 0.5), ("__system__cpu", {}, 12.0),
                           ("lr", {}, 0.01)])
    with pytest.warns(LogWarning, match=r"ignored columns that match no series: \['lr'\]"):
        log = read_log(tmp_path / "a")
    assert log.columns == {"train_acc": "train/acc", "test_acc": "val_acc"}
    assert log.arrays["steps"].tolist() == [0, 10, 20] and log.arrays["test_acc"].tolist() == [0.5, 0.5, 0.5]
    assert "Aim's resource metrics skipped (1)" in log.notes[0]
    write(tmp_path / "b", [("acc", {}, 0.5)])  # neither the context nor the name says train or val
    with pytest.raises(LogError, match=r"cannot tell whether 'acc' \(Aim metric 'acc', context \{\}\) is a "
                                       r"training or a test series"):
        read_log(tmp_path / "b")
    assert read_log(tmp_path / "b", columns={"test_acc": "acc"}).columns == {"test_acc": "acc"}
    write(tmp_path / "c", [("acc", {"subset": "val"}, 0.5), ("val/acc", {}, 0.5)])  # two metrics, one name
    with pytest.raises(LogError, match=r"two metrics read as 'val/acc' \(Aim metric 'acc', context \{'subset': 'val'\} "
                                       r"and Aim metric 'val/acc', context \{\}\)"):
        read_log(tmp_path / "c")


def test_aim_without_aim_is_one_line_naming_the_extra(tmp_path):
    try:
        import aim  # noqa: F401
        pytest.skip("aim is installed: the repository is read through its API")
    except ImportError:
        pass
    (tmp_path / "proj" / ".aim").mkdir(parents=True)
    for path in (tmp_path / "proj", tmp_path / "proj" / ".aim"):
        with pytest.raises(LogError, match=r"^(proj|\.aim): an Aim repository; reading it needs Aim: "
                                           r"pip install \"grokclocks\[aim\]\"$"):
            read_log(path)


def test_aim_folder_of_links_devices_or_too_many_bytes_is_refused_before_aim_reads_it(tmp_path):
    # with or without Aim: the .aim folder is checked before Aim is imported
    seqs = tmp_path / "proj" / ".aim" / "seqs"
    seqs.mkdir(parents=True)
    (seqs / "000009.sst").write_bytes(bytes(2000))
    with pytest.raises(LogError, match=r"^proj/\.aim: the folder's files hold at least 2000 bytes .*over the limit "
                                       r"max_bytes = 1000"):
        read_log(tmp_path / "proj", max_bytes=1000)
    os.symlink("/dev/zero", seqs / "000010.log")
    with pytest.raises(LogError, match=r"^proj/\.aim: 'seqs/000010\.log' is a symbolic link; only regular files are "
                                       r"read \(links found inside a folder are not followed\)$"):
        read_log(tmp_path / "proj")
    os.unlink(seqs / "000010.log")
    os.mkfifo(seqs / "000010.log")
    with pytest.raises(LogError, match=r"^proj/\.aim: 'seqs/000010\.log' is a FIFO \(named pipe\)"):
        read_log(tmp_path / "proj")
    os.unlink(seqs / "000010.log")
    (tmp_path / "link").mkdir()
    os.symlink(tmp_path / "proj" / ".aim", tmp_path / "link" / ".aim")  # the repository itself a link
    # inside the folder the user named, the link is refused; named itself, it is followed (the user chose it)
    with pytest.raises(LogError, match=r"^link/\.aim: '\.aim' is a symbolic link inside the folder 'link'"):
        read_log(tmp_path / "link")
    try:
        import aim  # noqa: F401
    except ImportError:
        with pytest.raises(LogError, match=r"^\.aim: an Aim repository; reading it needs Aim"):
            read_log(tmp_path / "link" / ".aim")


# ============================================================================================ CSV dialects


def test_keras_csvlogger_na_cells_are_not_logged():
    # before: "column 'val_accuracy' line 3 (step 1): 'NA' is not a number"
    rd = _load(FIX / "keras_log.csv")
    assert _clocks(rd) == SEED0
    assert any("Keras CSVLogger layout: steps are epochs (0-based); 320 'NA' cells = not logged" in n
               for n in rd.input_notes)


def test_keras_training_log_is_a_csv_with_a_log_name(tmp_path):
    """Keras' CSVLogger writes training.log by default: the content decides before the extension (before: read as
    a key-value text log and refused, without a word about --format csv)."""
    log = tmp_path / "training.log"
    shutil.copy(FIX / "keras_log.csv", log)
    rd = _load(log)
    assert _clocks(rd) == SEED0 and rd.input_notes[0].startswith("read as csv")
    with pytest.raises(LogError, match=r"^training\.log: no line holds a step .*; it reads as a delimited table .*"
                                       r"format='csv' \(CLI: --format csv\)$"):
        read_log(log, format="text")
    text = tmp_path / "train.log"  # a real key-value log with a .log name stays a text log
    text.write_text("".join(f"step {s} | train_acc {min(1, s / 50):.3f} | val_acc {min(1, s / 1450):.3f}\n"
                            for s in range(0, 2001, 50)))
    assert read_log(text).format == "text"


def test_european_csv_semicolon_and_decimal_comma(tmp_path):
    # before: "line 2 has 5 fields, the header 1", with advice to use --columns
    rd = _load(FIX / "metrics_eu.csv")
    assert _clocks(rd) == SEED0
    assert "delimiter ';' (semicolon) (detected), decimal mark ',' (detected)" in rd.input_notes
    ref = _load(FIX / "metrics.csv")
    np.testing.assert_array_equal(rd.test_acc, ref.test_acc)
    forced = _load(FIX / "metrics_eu.csv", delimiter=";", decimal=",")
    assert "delimiter ';' (semicolon) (given), decimal mark ',' (given)" in forced.input_notes
    with pytest.raises(LogError, match=r"metrics_eu.csv: the header 'step;train_acc;.* is one column with the "
                                       r"delimiter '\|' \(pipe\); its names are separated by ';' \(semicolon\)"):
        load_run(FIX / "metrics_eu.csv", delimiter="|")
    bad = tmp_path / "thousands.csv"
    bad.write_text("step;train_acc\n0;0,5\n1.000;0,75\n")
    with pytest.raises(LogError, match=r"thousands.csv: numbers are written with a decimal comma \('0,5'\) and with "
                                       r"a decimal point \('1.000'\)"):
        load_run(bad)
    with pytest.raises(LogError, match=r"thousands.csv: line 3: '1.000' holds a '.' in a file whose decimal mark is"):
        load_run(bad, decimal=",")
    with pytest.raises(DomainError, match="delimiter must be None"):
        read_log(bad, delimiter=":")


def test_a_header_of_numbers_only_says_the_file_has_no_header(tmp_path):
    f = tmp_path / "noheader.csv"
    f.write_text("0,0.1,0.2\n10,0.3,0.4\n")
    with pytest.raises(LogError, match=r"noheader.csv: the first line '0,0.1,0.2' holds only numbers, so the file "
                                       r"has no header"):
        read_log(f)


def test_wandb_chart_exports():
    # before: one seed at a time with --columns; the '<run> - ' prefix was not understood
    log = read_log(FIX / "wandb_chart_val_acc.csv")
    assert log.format == "wandb-chart" and log.run_names == ("seed0", "seed1")
    assert any("4 __MIN / __MAX column(s) ignored" in n for n in log.notes)
    assert _clocks(_load(FIX / "wandb_chart_val_acc.csv")) == {"t_test": "1150 [850, 1450] (2/2)"}
    rd = _load([FIX / "wandb_chart_val_acc.csv", FIX / "wandb_chart_train_acc.csv"])  # two charts: joined by run
    assert rd.run_names == ("seed0", "seed1")
    assert _clocks(rd) == {"t_train": "50 (2/2)", "t_test": "1150 [850, 1450] (2/2)"}


def test_wandb_chart_export_of_groups_or_time_is_refused(tmp_path):
    f = tmp_path / "grouped.csv"
    f.write_text("Step,Group: lr1e-2 - val/acc,Group: lr1e-2 - val/acc__MIN,Group: lr1e-2 - val/acc__MAX\n"
                 "0,0.1,0.05,0.15\n50,0.2,0.1,0.3\n")
    with pytest.raises(LogError, match="is a W&B group's aggregate of its runs"):
        read_log(f)
    f.write_text("Wall Time,seed0 - val/acc\n0,0.1\n50,0.2\n")
    with pytest.raises(LogError, match="x axis is 'Wall Time', not a step"):
        read_log(f)


# ============================================================================================ text logs


def test_key_value_text_log():
    # before: the first line was taken as a header, and --columns could not help
    log = read_log(FIX / "train.log")
    assert log.format == "text"
    assert log.columns == {"train_loss": "train_loss", "train_acc": "train_acc", "test_loss": "val_loss",
                           "test_acc": "val_acc"}
    assert "key-value text log: 201 record lines, 2 other lines skipped" in log.notes
    assert any(n.startswith("values as printed in the log, so known only to its precision: ") and
               "train_acc down to 4 decimals ('0.0312')" in n for n in log.notes)
    assert _clocks(_load(FIX / "train.log")) == SEED0


@pytest.mark.parametrize("lines", [
    ["step 0 | train_loss 3.4 | train_acc 0.03 | val_loss 3.4 | val_acc 0.02",
     "step 10 | train_loss 0.01 | train_acc 1.000 | val_loss 3.21 | val_acc 0.031"],
    ["epoch=0, loss=3.4, accuracy=0.03, val_loss=3.4, val_accuracy=0.02",
     "epoch=10, loss=0.01, accuracy=1.0, val_loss=3.21, val_accuracy=0.031"],
    ["2024-05-01 12:00:00 INFO Epoch 0/100 - loss: 3.4 - accuracy: 0.03 - val_loss: 3.4 - val_accuracy: 0.02",
     "some warning line without values",
     "2024-05-01 12:00:09 INFO Epoch 10/100 - loss: 0.01 - accuracy: 1.0 - val_loss: 3.21 - val_accuracy: 0.031"],
])
def test_text_log_separators(lines, tmp_path):
    f = tmp_path / "out.txt"
    f.write_text("\n".join(lines) + "\n")
    log = read_log(f)
    np.testing.assert_array_equal(log.arrays["steps"], [0, 10])
    np.testing.assert_array_equal(log.arrays["train_acc"], [0.03, 1.0])
    np.testing.assert_array_equal(log.arrays["test_acc"], [0.02, 0.031])


def test_a_log_line_read_as_csv_says_to_read_it_as_text(tmp_path):
    f = tmp_path / "train.csv"
    f.write_text("step 500 | train_loss 0.0012 | train_acc 1.000 | val_loss 3.21 | val_acc 0.031\n"
                 "step 510 | train_loss 0.0011 | train_acc 1.000 | val_loss 3.20 | val_acc 0.032\n")
    assert read_log(f).format == "text"  # found by its content
    with pytest.raises(LogError, match=r"train.csv: the first line .* is a training-log line of 'name value' pairs, "
                                       r"not a header; .* --format text"):
        read_log(f, format="csv", delimiter=",")


# ============================================================================================ folders of runs


def test_tensorboard_parent_folder_of_runs(tmp_path):
    pytest.importorskip("tensorboard", reason="tensorboard is not installed (pip install 'grokclocks[logs]')")
    event = next((FIX / "tb").glob("events.out.tfevents.*"))
    for name in ("May01_12-00-00_host", "May01_12-30-00_host"):  # torch's default runs/<date>_<host>/
        (tmp_path / "runs" / name).mkdir(parents=True)
        shutil.copy(event, tmp_path / "runs" / name / event.name)
    rd = _load(tmp_path / "runs")
    assert rd.run_names == ("May01_12-00-00_host", "May01_12-30-00_host") and rd.n_runs == 2
    assert any("a folder of 2 runs" in n and "one seed per sub-folder, as runs/*/ would be" in n
               for n in rd.input_notes)
    # one run's role sub-folders (Keras' train/ and validation/) stay one run
    (tmp_path / "one" / "train").mkdir(parents=True)
    (tmp_path / "one" / "validation").mkdir()
    shutil.copy(event, tmp_path / "one" / "train" / event.name)
    shutil.copy(event, tmp_path / "one" / "validation" / event.name)
    # (the copies hold train/acc and val/acc each: one table of both folders' tags, not two seeds)
    with pytest.raises(LogError, match=r"^one: no column reads as a series .*'train/val/acc', .*'validation/val/acc'"):
        read_log(tmp_path / "one")


def test_a_folder_without_a_log_is_named(tmp_path, monkeypatch):
    # before: "grokclocks: error: : a directory without ..." (an empty name)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.md").write_text("nothing here")
    with pytest.raises(LogError, match=r"^\.: a directory without a TensorBoard event file.*runs/\*/"):
        load_run(".")


# ============================================================================================ CLI


def test_cli_delimiter_decimal_and_format_options(capsys):
    from grokclocks.cli import main

    rc = main(["compare", str(FIX / "metrics_eu.csv"), "--delimiter", ";", "--decimal", ","])
    out = capsys.readouterr().out
    assert rc == 0 and "delimiter ';' (semicolon) (given), decimal mark ',' (given)" in out
    rc = main(["compare", str(_run_dir("seed0") / "metrics" / "val_acc"), "--format", "mlflow"])
    assert rc == 0 and "test_acc <- 'val_acc'" in capsys.readouterr().out
    rc = main(["compare", str(FIX / "metrics.csv"), "--columns", "test_acc=val_acc,test_acc=val_loss"])
    assert rc == 2 and "columns names test_acc twice" in capsys.readouterr().err


def test_cli_train_mask_per_seed(tmp_path, capsys):
    from grokclocks.cli import main
    from grokclocks.task import random_split_mask

    masks = random_split_mask(31, [0, 1], frac=0.5)
    for s in range(2):
        np.save(tmp_path / f"mask{s}.npy", masks[s])
    np.save(tmp_path / "stack.npy", masks)
    seeds = [str(FIX / "seeds" / f"seed{s}" / "metrics.csv") for s in range(2)]
    outs = []
    for extra in ([str(tmp_path / "mask0.npy"), str(tmp_path / "mask1.npy")], [str(tmp_path / "stack.npy")]):
        rc = main(["compare", *seeds, "--train-mask", *extra, "--json"])
        outs.append(capsys.readouterr().out)
        assert rc == 0
    assert outs[0] == outs[1]
    rd = load_run(seeds)
    from grokclocks.compare import run_data
    one = {k: getattr(rd, k) for k in ("steps", "train_acc", "test_acc", "train_loss", "test_loss")}
    per = run_data(**one, train_mask=[masks[0], masks[1]])
    assert not np.array_equal(per.train_mask[0], per.train_mask[1])  # each seed its own split
    rc = main(["compare", *seeds, "--train-mask", str(tmp_path / "stack.npy"), str(tmp_path / "mask0.npy")])
    assert rc == 2 and "holds a stack of 2 masks" in capsys.readouterr().err
    rc = main(["compare", *seeds, "--train-mask", str(tmp_path / "mask0.npy"), str(tmp_path / "mask1.npy"),
               str(tmp_path / "mask0.npy")])
    assert rc == 2 and "train_mask has 3 runs, the series 2" in capsys.readouterr().err


def test_plot_does_not_overwrite_without_asking(tmp_path):
    pytest.importorskip("matplotlib")
    cmp = compare_run(FIX / "run.npz")
    old = tmp_path / "fig.png"
    old.write_bytes(b"mine")
    with pytest.raises(OutputExistsError, match="already exists"):
        cmp.plot(old)
    assert old.read_bytes() == b"mine"
    cmp.plot(old, overwrite=True)
    assert old.read_bytes()[:4] == b"\x89PNG"
