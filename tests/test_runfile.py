"""The run-file reader and writer without JAX (grokclocks.runfile, re-exported by grokclocks.sim.train).

tests/test_run_files.py covers every failure mode through the engine; this file checks that the format
works from the pure core alone: a numpy-only trajectory round-trips, a truncated or damaged file raises
RunFileError (never zipfile.BadZipFile, EOFError or a numpy error), and none of it imports JAX.
"""

from __future__ import annotations

import subprocess
import sys
import zipfile

import numpy as np
import pytest

from grokclocks import DomainError
from grokclocks import runfile as R


@pytest.fixture()
def saved(tmp_path):
    traj = R.Trajectory(times=np.arange(0, 50, 10), metrics={"loss": np.linspace(1.0, 0.1, 10).reshape(2, 5)},
                        extras={"seed": np.array([0, 1])})
    return traj, R.save_trajectory(traj, tmp_path / "run")


def test_round_trip(saved):
    traj, npz = saved
    back = R.load_trajectory(npz)
    np.testing.assert_array_equal(back.times, traj.times)
    np.testing.assert_array_equal(back["loss"], traj["loss"])
    np.testing.assert_array_equal(back["seed"], traj["seed"])
    assert back.config is None


@pytest.mark.parametrize("keep", [0.1, 0.5, 0.9, -1])
def test_truncated_file_raises_run_file_error(saved, tmp_path, keep):
    _, npz = saved
    data = npz.read_bytes()
    bad = tmp_path / "cut.npz"
    bad.write_bytes(data[: len(data) - 1 if keep == -1 else int(len(data) * keep)])
    with pytest.raises(zipfile.BadZipFile):  # what numpy alone says about such a file
        np.load(bad, allow_pickle=False)
    with pytest.raises(R.RunFileError, match="cut.npz") as info:
        R.load_trajectory(bad)
    assert isinstance(info.value, DomainError)
    assert not isinstance(info.value, zipfile.BadZipFile)


def test_corrupted_entry_raises_run_file_error(saved, tmp_path):
    """A byte changed inside an array: the checksum (or zip CRC) catches it, as a RunFileError."""
    _, npz = saved
    data = bytearray(npz.read_bytes())
    with zipfile.ZipFile(npz) as z:
        info = z.getinfo("metric:loss.npy")
    at = info.header_offset + 30 + len(info.filename) + len(info.extra) + info.compress_size - 3  # in the data
    data[at] ^= 0xFF
    bad = tmp_path / "flip.npz"
    bad.write_bytes(bytes(data))
    with pytest.raises(R.RunFileError, match="flip.npz"):
        R.load_trajectory(bad)


def test_sim_train_reexports_the_run_file_names():
    pytest.importorskip("jax")
    from grokclocks.sim import train

    for name in R.__all__:
        assert getattr(train, name) is getattr(R, name), name


JAX_FREE = """
import sys, tempfile, pathlib
import numpy as np
from grokclocks import runfile as R
d = pathlib.Path(tempfile.mkdtemp())
npz = R.save_trajectory(R.Trajectory(times=np.arange(3), metrics={"m": np.ones(3)}), d / "r")
R.load_trajectory(npz)
npz.write_bytes(npz.read_bytes()[:100])
try:
    R.load_trajectory(npz)
except R.RunFileError:
    pass
print(" ".join(sorted(m for m in sys.modules if m.split(".")[0] in ("jax", "jaxlib", "optax"))))
"""


def test_runfile_needs_no_jax():
    out = subprocess.run([sys.executable, "-c", JAX_FREE], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
