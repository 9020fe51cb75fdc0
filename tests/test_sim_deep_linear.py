"""grokclocks.sim.deep_linear.run_deep_linear: a sequence of weight decays is a grid axis of one program."""

from __future__ import annotations

import numpy as np
import pytest

from grokclocks import DomainError
from grokclocks.sim import deep_linear as DL


@pytest.fixture(scope="module")
def setup():
    seeds = (0, 1)
    data = DL.make_regression_data(seeds, 4, 3, 10, rank=2, noise=0.3)
    return data, DL.init_factors(seeds, (4, 5, 3))


def test_mu_grid_equals_separate_runs(setup):
    data, fs = setup
    grid = DL.run_deep_linear(data, fs, mu=(0.05, 0.2), eta=0.01, steps=200, record_every=50)
    assert grid.config.mu == (0.05, 0.2)
    for i, mu in enumerate((0.05, 0.2)):
        one = DL.run_deep_linear(data, fs, mu=mu, eta=0.01, steps=200, record_every=50)
        for k, v in one.metrics.items():
            assert grid.metrics[k].shape == (2,) + v.shape
            np.testing.assert_allclose(grid.metrics[k][i], v, rtol=1e-12, atol=1e-14, err_msg=k)
        for g, f in zip(grid.final_state, one.final_state):
            np.testing.assert_allclose(np.asarray(g)[i], np.asarray(f), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("mu", [(), [[0.1, 0.2]], (0.1, -0.2)])
def test_mu_grid_rejects_bad_values(setup, mu):
    data, fs = setup
    with pytest.raises(DomainError, match="mu"):
        DL.run_deep_linear(data, fs, mu=mu, eta=0.01, steps=10, record_every=10)
