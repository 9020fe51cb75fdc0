"""Synthetic grokking curves shared by the forecast tests (tests/test_forecast*.py)."""

from __future__ import annotations

import numpy as np


def curves(n_steps: int = 4000, every: int = 20, t_fit: float = 300.0, t_grok: float = 2500.0, width: float = 150.0):
    """A run that fits its training set at ~t_fit and groks near t_grok (test accuracy a logistic in the step)."""
    steps = np.arange(0, n_steps + 1, every, dtype=float)
    train_acc = np.minimum(1.0, 0.05 + steps / t_fit)
    with np.errstate(over="ignore"):  # a run that never groks: exp overflows to inf, the accuracy stays 0.03
        test_acc = 0.03 + 0.97 / (1.0 + np.exp(-(steps - t_grok) / width))
    train_loss = 3.0 * np.exp(-steps / (t_fit / 3)) + 1e-4
    test_loss = 3.0 + 2.0 * np.tanh(steps / t_fit) - 4.9 * (test_acc - 0.03)
    weight_norm = 40.0 * np.exp(-steps / 6000.0) + 5.0
    return dict(steps=steps, train_acc=train_acc, test_acc=test_acc, train_loss=train_loss, test_loss=test_loss,
                weight_norm=weight_norm)
