"""Theorem vs simulation for spec ``kramers`` at GPU widths: the timescale-separation exponents (kramers:eq6,
:feature-speed, :sep) from widths N = 4096..262144 with 16 seeds -- a factor 64 in N.

A suite of its own so that each suite fits one GPU window: est. 111 s (initial timescales: host numpy, 192 calls
of the core's initial_timescales) and ~260 s (GD of 16 seeds per width in one program, then 192 (N, seed, alpha)
kernel changes on the host), split by alpha into two tests so that none is over 240 s, on the H100 machine, from
the 2026-11-24 run of the same configuration (upper bounds: that run shared the machine). At CPU scale the suite is skipped; verify/kramers runs the same checks at
N = 1024..16384 with 3 seeds.

On 2026-11-24 (H100, this configuration) the slopes over 4096..262144 were within 0.003 of the predictions,
against tolerances 0.02-0.05.
"""

from __future__ import annotations

import pytest
from kramers._separation import (
    budget_sep_gd,
    initial_velocity_rows,
    integrated_kernel_rows,
)

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(
    "config.getoption('--scale') != 'gpu'",
    reason="GPU configuration only (N up to 262144); verify/kramers runs these checks at N = 1024..16384")]

WIDTHS = (4096, 16384, 65536, 262144)
NOTE = " (N=4096..262144, 16 seeds)"


def test_sep_initial_velocity_exponents(report):
    """tau_r, tau_W/tau_r, tau_K/tau_r and the feature speed vs N: derived exponents vs the paper's N^(2 alpha)."""
    initial_velocity_rows(report, list(WIDTHS), 16, (0.02, 0.05), NOTE)


def test_sep_integrated_kernel_change(report):
    """1/Delta_K(20 tau_r) vs N from GD runs (lazy-training kernel movement) vs 2 - 2 alpha, alpha = 0 and 0.25."""
    integrated_kernel_rows(report, WIDTHS, tuple(range(16)), (0.0, 0.25), NOTE)


def test_sep_integrated_kernel_change_alpha_half(report):
    """The same at alpha = 0.5 (pre-asymptotic: its own tolerance); a test of its own so that no test of the GPU
    tier is estimated over 240 s (the three alphas together: ~260 s)."""
    integrated_kernel_rows(report, WIDTHS, tuple(range(16)), (0.5,), NOTE)


# ------------------------------------------------------------------------------------------ GPU time budget
# Host numpy: the 2026-11-24 log, 111 s for test_sep_initial_velocity_exponents at these four widths (one of
# several processes on the machine: an upper bound); the integrated-change test does initial_timescales plus two
# ntk_decomposition calls per (N, seed, alpha), 1.9 x the first test's host work (the two NTK calls cost 0.9 of
# one initial_timescales, measured at N = 65536 and 262144).

_INIT_HOST_S = 111.0


def _gpu_budget():
    from grokclocks.verification import BudgetItem as B

    items = [B("test_sep_initial_velocity_exponents", None, 16, 1, 16, 1, host_s=_INIT_HOST_S,
               config="numpy initial_timescales: N = 4096..262144, 16 seeds, 3 alphas (192 calls)",
               note="host numpy (the core function under test); 2026-11-24 log 111 s (upper bound under contention)")]
    for test, n_alpha in (("test_sep_integrated_kernel_change", 2), ("test_sep_integrated_kernel_change_alpha_half", 1)):
        for N in WIDTHS:
            small = N <= 65536  # the widest program measured at 1 seed x 100 steps (extrapolated by FLOPs)
            note = ("CPU measurement: the same program's, for verify/kramers (2026-11-25)" if small else
                    "CPU measurement: the N=65536 program's (2026-11-25) x4 in N (its FLOPs are linear in N)")
            items.append(B(test, budget_sep_gd(N), 16, 400, 2 if small else 1, 400 if small else 100, calls=n_alpha,
                           config=f"GD of 16 seeds at N={N} in one program, ~400 steps, {n_alpha} alpha(s)",
                           precision="float64", note=note))
        items.append(B(test, None, 16, 1, 16, 1, host_s=_INIT_HOST_S * 1.9 * n_alpha / 3,
                       config=f"numpy: initial_timescales + 2 NTK per (N, seed, alpha), {64 * n_alpha} (N, seed, alpha)",
                       note="host numpy; 1.9 x test_sep_initial_velocity_exponents per alpha (two ntk_decomposition "
                            "calls cost 0.9 of one initial_timescales, measured at N=65536 and 262144)"))
    return items


GPU_BUDGET = _gpu_budget()
