"""Theorem vs simulation for the networks of spec ``levi``: the two-layer linear network (eqs. 16-18,
39-42, Fig. 4), its tanh version, and the appendix-G modular-addition MLP (Fig. 8).

Every check computes the prediction with :mod:`grokclocks.linear`, runs the JAX simulation of
:mod:`grokclocks.sim`, records a row with ``report.check`` and shows with ``report.reject`` that the
same simulation rejects a plausible wrong variant (the paper's uncorrected form where an erratum
exists).  Tolerances are spreads measured over seeds at exactly the configuration run (numbers in
each ``source=``).  Where the spec's tolerance was narrower than the spread we measured, the
measured one is used and the reason is stated.

Two-layer predictions (``levi:eq18`` = eq. 42), all with the frozen ``h`` of the reduced dynamics:

* *paper form* (with the corrected ``1/d_out`` prefactor, erratum levi-7):
  ``loss_two_layer(t, lam, eta, d_out, |D0|^2)``, Marchenko-Pastur (MP) average, ``h = 1/2``;
* *kappa-refined* (the spec's refinement): the same with ``kappa`` / ``proj_sq`` from the realised
  ``S1(0)`` and ``D0``;
* *kappa-refined, realised spectrum*: the kappa-refined form with the realised eigenpairs
  ``(nu_i, v_i)`` of ``Sigma_tr`` in place of the MP law,
  ``sum_j loss_*_finite(t, nu, |v_i^T D0 u_j|^2, eta * kappa_j, d_out=d_out)``.  It removes the
  finite-size fluctuation of the spectrum, which dominates the per-seed spread of both MP forms at
  these sizes, and so isolates the two-layer approximation itself (frozen ``S1``, dropped
  ``S0 S0^T Sigma D`` term): it holds to a few per cent on every seed.

Ratios measured/predicted are taken at ``t in {0.1, 0.3, 1} x T`` for the train and the
generalisation loss; tolerances are on ``|log(ratio)|`` (``logtol``); a row shows the worst element.

Seeds are ``0..n-1`` (keys ``PRNGKey(1000 d_in + seed)`` for the teacher-student draws,
``PRNGKey(seed)`` for modular addition).  ``--scale gpu`` runs the spec's GPU column (d_in = 1000,
3e4 steps; p = 48, d_h = 400); the configurations live in ``CONFIG`` so that a harness can shrink
them for a cheap smoke run of the GPU code paths (the tolerances are then not expected to hold).
"""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np

from grokclocks import linear
from grokclocks.sim.linear import draw_two_layer, run_two_layer
from grokclocks.sim.modular import run_modular_addition

LAM = 0.5
D_OUT = 5
ETA = 0.01
CHECKPOINTS = (0.1, 0.3, 1.0)  # fractions of the run length T

# -- tolerances of the per-seed two-layer rows: |log(measured/predicted)| over t in {0.1,0.3,1} T, train and gen
_TOL_CPU = {"paper": 0.40, "kappa": 0.18, "realised": 0.06}
_SRC_CPU = {
    "paper": ("measured, d_in=200, d_h=100, T=5000: max over 64 seeds (linear) 0.333 (ratio 0.755-1.395) and 32 "
              "seeds (tanh) 0.364; sd 0.04/0.08/0.14 at t=0.1/0.3/1 T (finite-size spectrum: see the realised-"
              "spectrum row); the spec's [0.85, 1.25] (2 seeds) is narrower than this per-seed spread"),
    "kappa": ("measured, d_in=200, d_h=100, T=5000: max over 64 seeds (linear) 0.158 (ratio 0.854-1.135) and 32 "
              "seeds (tanh) 0.129; the spec's [0.9, 1.1] (2 seeds) is narrower than this per-seed spread"),
    "realised": ("measured, d_in=200, d_h=100, T=5000: max over 64 seeds (linear) 0.047 (ratio 0.954-0.991; sd "
                 "<= 0.007, bias -1..-3 % from the dropped S0 S0^T Sigma D term) and 32 seeds (tanh) 0.037"),
}
# GPU configuration (d_in=1000, d_h=200, T=3e4), measured here: explicit GD of seeds 0..7 on the CPU (linear; it
# reproduces the 2026-11-24 H100 numbers, paper-form max 0.4434 on seed 3), and the realised-spectrum form -- which
# the simulation follows within 0.025 (max over those 8 seeds; mean -0.018 at t=T from the dropped S0 S0^T Sigma D
# term) -- on seeds 0..63 with no GD.  |log(realised/form)| over seeds 0..63: paper max 0.461 (mean +0.027/+0.052/
# +0.158 at t=0.1/0.3/1 T, sd 0.077/0.11/0.19 for L_tr), kappa max 0.184 (mean <= 0.012 in magnitude, sd <= 0.071).
# The 2026-11-24 tolerance (0.40) was the d_in=200, T=5000 spread, which does not carry over: the paper form's
# error grows with t (see _bias_rows) and the d_in=200 source was not measured at this configuration.
#
# Out of sample, the maxima do not hold: on seeds 64..191 (128 more draws, the realised form, no GD; measured here)
# the per-seed max |log(realised/form)| is 0.550 (paper) and 0.188 (kappa), so the former tolerances 0.49 / 0.21
# (the 0..63 maxima + 0.025) would fail on new seeds.  The tolerances now come from the measured spread of the worst
# element, t = T (seeds 64..191: paper L_tr mean +0.137, sd 0.157; L_gen +0.110, 0.147; kappa L_gen +0.013, 0.081;
# L_tr +0.010, 0.071): |mean| + z sd with z the two-sided normal quantile at 1e-2 / (4 n) for n seeds (n seeds x train
# and gen at t = T: a 1 % family-wise probability of failing a correct simulation; 3.78 at 32 seeds, 4.05 at 96),
# + 0.025 for the simulation's deviation from the realised form.  The GPU run uses seeds 192..223 and 448..511 (the
# linear net; see _BIAS_POWER for why 96) and 192..223 (tanh), which set nothing.
GPU_HOLDOUT_SEEDS = tuple(range(192, 224))
GPU_BIAS_SEEDS = GPU_HOLDOUT_SEEDS + tuple(range(448, 512))
_SPREAD_T = {"paper": (0.137, 0.157), "kappa": (0.013, 0.081)}  # (|mean|, sd) of the worst element at t = T


def _z_family(n):
    from scipy.stats import norm

    return float(norm.isf(1e-2 / (4 * n)))


def _tol_gpu(n):
    z = _z_family(n)
    tol = {k: round(m + z * sd + 0.025, 2) for k, (m, sd) in _SPREAD_T.items()} | {"realised": 0.05}
    src = {
        "paper": (f"measured at this config (realised-spectrum form, seeds 64..191): |log(realised/paper form)| at t=T "
                  f"mean +0.137, sd 0.157 -> 0.137 + {z:.2f} sd (1 % family-wise over {n} seeds x 2) + 0.025 (simulation "
                  f"vs realised form, explicit GD of seeds 0..7) = {tol['paper']:.2f}; per-seed max over seeds 0..63 "
                  "0.461, over 64..191 0.550 (the former 0.49 was the 0..63 max + 0.025); 2026-11-24 H100: 0.443 "
                  "(seeds 0..7)"),
        "kappa": (f"measured at this config (seeds 64..191): |log(realised/kappa-refined)| at t=T mean +0.013, sd 0.081 "
                  f"-> 0.013 + {z:.2f} sd + 0.025 = {tol['kappa']:.2f}; per-seed max over seeds 0..63 0.184, over "
                  "64..191 0.188; explicit GD of seeds 0..7: max 0.115"),
        "realised": ("measured at this config, explicit GD of seeds 0..7 (CPU): max 0.025 (mean -0.018 at t=T, a bias "
                     "of the dropped S0 S0^T Sigma D term, seed spread ~0.004); d_in=200: 0.047"),
    }
    return tol, src


_TOL_GPU, _SRC_GPU = _tol_gpu(len(GPU_BIAS_SEEDS))
_TOL_GPU32, _SRC_GPU32 = _tol_gpu(len(GPU_HOLDOUT_SEEDS))
# Power of the bias rows' negative control (_bias_rows: "paper form unbiased at t = T" rejected when both the train
# and the gen seed mean of log(measured/paper) lie beyond 3 standard errors): bootstrap of n of the 128 per-seed
# values of seeds 64..191 (log(realised/paper) - 0.018 +- 0.004 for GD; verify/levi/_bias_power.py, data in
# verify/levi/data/), 20 000 samples: it rejects w.p. 0.65 / 0.85 / 0.95 / 0.996 at n = 32 / 48 / 64 / 96 (the
# 2026-11-27 H100 run passed at 32 seeds by 0.118 against 0.111).  Rule, fixed before the numbers: the reject is a
# check where its power is >= 0.99; a net whose seeds cannot be raised to that within +30 s of GPU time reports it.
# So the linear net runs 96 seeds (cheap: a 1000 x 200 x 5 linear net) and the tanh net (32 seeds, ~2 s per
# seed-3e4-steps on the H100) reports it.  The "kappa-refined unbiased" check passes w.p. > 0.9999 at every n.
_BIAS_POWER = {32: 0.65, 48: 0.85, 64: 0.95, 96: 0.996}
_BIAS_REJECT_MIN_SEEDS = 96
# tanh at the GPU configuration: not yet measured (no GPU run since).  Its tolerances are the linear ones plus an
# allowance derived from what differs: L_gen (and the prefactor, the measured L_gen(0)) is a Monte-Carlo mean over
# 4096 fresh inputs of |5 Gaussian components|^2, relative sd sqrt(2/5)/64 = 0.99 % each, sqrt(2) x that in their
# ratio = 0.014, and 3.3 sd of it (the largest of ~100 per-seed gen values) = 0.046; tanh departs from linear by
# O(pre-activation variance 1/(2 d_h)) = 0.0025.  So + 0.05 (the 2026-11-24 H100 run, seeds 0..7: tanh paper-form
# max 0.466 against 0.443 for the linear net on the same draws).
_TANH_ALLOWANCE = 0.05
_TOL_GPU_TANH = {k: v + _TANH_ALLOWANCE for k, v in _TOL_GPU32.items()}
_SRC_GPU_TANH = {k: v + f"; tanh (not yet measured at this configuration): + {_TANH_ALLOWANCE} derived -- 3.3 sd of the "
                 "Monte-Carlo L_gen ratio (two 4096-input means, sd 0.014) + 0.0025 (tanh vs linear at pre-activation "
                 "variance 1/(2 d_h)); 2026-11-24 H100 tanh paper-form max 0.466 (linear 0.443, same draws)"
                 for k, v in _SRC_GPU32.items()}

# levi:fig4 at the GPU configuration (linear, d_in = 1000, d_h = 50, d_out = 5, T = 3e4; erratum levi-22).  Measured
# by explicit GD in float64 on the CPU (verify/levi/_fig4_spread.py: GD in the eigenbasis of Sigma_tr, equal to
# run_two_layer to 1e-16; seeds 0-15 reproduce the 2026-11-27 H100 numbers exactly), per seed and checkpoint,
# r = log(measured / kappa-refined) and log(measured / paper form), train and gen (verify/levi/data/).  On the fit
# seeds 256-319 (64 seeds; mean, sd over seeds; train / gen):
#   kappa, t = 0.1 T: mean +0.019 / +0.005, sd 0.011 / 0.018;  0.3 T: mean -0.008 / -0.001, sd 0.027 / 0.034;
#   kappa, t = T: mean -0.112 / -0.088, sd 0.088 / 0.087 (per seed, L_tr: -0.39..+0.04);
#   paper, t = T: mean +0.437 / +0.337, sd 0.258 / 0.228.
# The kappa-refined form holds while S1 ~ S1(0) (t <= 0.3 T) and drifts by t = T: it freezes S1 at S1(0) and drops
# the S0 S0^T Sigma D term of the reduced dynamics (alone -0.14 at T, sd 0.014: the frozen-kernel recursion against
# the realised-spectrum form), the weights' evolution (h grows 2-6 %) partly compensating (+0.04, sd 0.07).  The
# spec's "kappa-refined 0.95-1.02 per seed" at d_h = 50 does not reproduce.  Rows (z = 3.3, two-sided 1e-3 per
# value): the kappa form at 0.1 T and 0.3 T within |fit mean| + z sd sqrt(1/n_fit + 1/n) of 0; at T, the seed
# mean equal to the fit mean within z sd sqrt(1/n_fit + 1/n) (the drift, reproduced on other seeds), and
# "kappa-refined unbiased at T" and "paper form unbiased at T" rejected at z sd / sqrt(n) (sd of the fit).
# Checked out of sample on the CPU with the rules above at their n: seeds 320-351 (32; fresh): early max |mean|
# 0.018 <= 0.027, drift -0.109 / -0.072 within 0.063 of the fit, rejects 0.072 > 0.051 and 0.34 > 0.15; seeds 0-15
# (the 2026-11-27 GPU seeds): 0.015 <= 0.033, -0.114 / -0.080 within 0.081, 0.080 > 0.072, 0.39 > 0.21.
_FIG4_FIT = dict(seeds="256-319", n=64,  # per time: ((mean train, mean gen), (sd train, sd gen))
                 kappa={0.1: ((0.0191, 0.005), (0.0113, 0.0179)), 0.3: ((-0.0079, -0.001), (0.027, 0.0337)),
                        1.0: ((-0.1124, -0.0879), (0.0877, 0.0871))},
                 paper={1.0: ((0.437, 0.3368), (0.2578, 0.2284))})
_Z_FIG4 = 3.3


CONFIG = {
    "cpu": {
        "eq17": dict(d_in=200, d_h=50, seeds=(0, 1, 2)),
        "eq18": dict(d_in=200, d_h=100, steps=5000, seeds=(0, 1, 2, 3), tol=_TOL_CPU, src=_SRC_CPU),
        "fig4": dict(d_in=200, d_h=25, steps=5000, seeds=tuple(range(16)), tol=0.08,
                     src="measured, d_in=200, d_h=25, 64 seeds, L_tr(T): kappa-refined mean log ratio -0.024, sd "
                         "0.050 (16-seed means -0.035..-0.002); paper form +0.335, sd 0.23 (16-seed means 0.30-0.39)"),
        "tanh": dict(d_in=200, d_h=100, steps=5000, seeds=(0, 1), tol=_TOL_CPU, src=_SRC_CPU),
        "tanh_side": None,
        "appG": dict(p=23, d_h=100, alphas=(0.7, 0.8, 0.9), eta=500.0, seeds=(0, 1),
                     # last test-accuracy crossing over seeds 0..11: step 8280 (mean MSE), 347 (summed MSE)
                     # (run_modular_addition through train_modular: numpy splits, init key PRNGKey(seed))
                     steps_mean=9000, steps_sum=400,
                     # spec 7.3 smoke test, mean-over-classes MSE, "seed 0" of the spec's own RNG
                     spec_dt=(3350.0, 1900.0, 1150.0),
                     # per-seed sd of log(dt), our engine, mean MSE, seeds 0..11 (1.2e4 steps): dt = 2550..4990 /
                     # 1640..2670 / 1120..2280, geometric means 3327 / 1888 / 1403 (the engine's earlier jax
                     # splits gave sd 0.166 / 0.088 / 0.071, geometric means 3381 / 1950 / 1398)
                     sd_log_dt=(0.185, 0.140, 0.181)),
    },
    "gpu": {
        "eq17": dict(d_in=1000, d_h=50, seeds=tuple(range(8))),  # the spec's own measurement used d_in=1000
        # 96 seeds (cheap under vmap: 30000 steps of a 1000 x 200 x 5 linear net): the seed mean resolves the paper
        # form's late-time bias (power of its reject: _BIAS_POWER).  Seeds 192..223 and 448..511: not the seeds
        # 0..191 the per-seed tolerances were measured on (_TOL_GPU), so the check is out of sample
        "eq18": dict(d_in=1000, d_h=200, steps=30_000, seeds=GPU_BIAS_SEEDS, tol=_TOL_GPU, src=_SRC_GPU),
        # 64 seeds 384-447: none of them the seeds 256-319 of _FIG4_FIT, nor 0-15 (the 2026-11-27 run)
        "fig4": dict(d_in=1000, d_h=50, steps=30_000, seeds=tuple(range(384, 448)), fit="_FIG4_FIT"),
        # the same 32 hold-out draws as eq18 (the bias rows of _bias_rows are checks from 16 seeds on)
        "tanh": dict(d_in=1000, d_h=200, steps=30_000, seeds=GPU_HOLDOUT_SEEDS, tol=_TOL_GPU_TANH, src=_SRC_GPU_TANH),
        # report-only: no measured spread of the tanh net at d_h = 50 (the spec's "0.95-1.02" of the kappa form does
        # not hold for the linear net there, see _FIG4_FIT)
        "tanh_side": dict(d_in=1000, d_h=50, steps=30_000, seeds=tuple(range(16))),
        # steps: 8000, not the spec's 2e4 -- on the H100 (2026-11-24, 2e4 steps, 411 s) the seed-mean dt was at most
        # 1950 (alpha = 0.5) and the per-seed sd of log dt is <= 0.17 (p = 23), so every summed run groks before
        # ~3000 steps; the mean-MSE runs need p t_test(sum) ~ 5e4-1e5 steps and do not grok in 8000 either (the
        # prediction of that row uses the step budget actually run)
        "appG": dict(p=48, d_h=400, alphas=(0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.9), eta=500.0,
                     seeds=(0, 1, 2, 3), steps=8_000, mean_alphas=(0.5, 0.7, 0.9), mean_seeds=(0, 1),
                     # spec 7.3, summed MSE, 2-seed means (H100)
                     spec_dt=(2320.0, 1645.0, 1235.0, 1050.0, 890.0, 765.0, 680.0, 550.0)),
    },
}


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------


def _numpy_draws(data):
    """The draws as numpy arrays (one transfer), with the teacher product T = T0 T1."""
    X, S0, S1, T0, T1 = (np.asarray(a) for a in (data.X, data.S0, data.S1, data.T0, data.T1))
    return X, S0, S1, T0 @ T1


def _spectra(X):
    """Eigenpairs of Sigma_tr = X^T X / N for a batch of draws (one batched JAX call: numpy's threaded
    eigh is slow on a busy 2-core box)."""
    Xj = jnp.asarray(X)
    nu, V = jnp.linalg.eigh(jnp.einsum("sni,snj->sij", Xj, Xj) / X.shape[1])
    return np.clip(np.asarray(nu), 0.0, None), np.asarray(V)


def _forms(nu, V, S0, S1, T, ts, pref_sq):
    """Predicted two-layer losses of one draw at times ``ts``: dict name -> (2, n_t) (train, gen).

    ``nu``, ``V``: eigenpairs of the draw's Sigma_tr; ``S0``, ``S1``: student at t = 0; ``T = T0 T1``;
    ``pref_sq``: the ||D0||^2 of the prefactor, i.e. the realised ||S0 S1 - T0 T1||^2 (linear) or
    d_out x the measured L_gen(0) (tanh, spec levi:tanh); the kappa projections are rescaled to it.
    """
    d_out = S1.shape[1]
    D0 = S0 @ S1 - T
    kappa, U = np.linalg.eigh(S1.T @ S1)
    P = (V.T @ D0 @ U) ** 2 * (pref_sq / float(np.sum(D0 * D0)))  # |v_i^T D0 u_j|^2
    out: dict[str, list] = {}
    for which, finite in (("train", linear.loss_train_finite), ("gen", linear.loss_gen_finite)):

        def realised(rate):
            return sum(finite(ts, nu, P[:, j], rate * ETA * kappa[j], d_out=d_out) for j in range(d_out))

        paper = linear.loss_two_layer(ts, LAM, ETA, d_out, pref_sq, which)
        kap = linear.loss_two_layer(ts, LAM, ETA, d_out, pref_sq, which, kappa=kappa, proj_sq=P.sum(axis=0))
        vals = {
            "paper": paper,
            "paper_literal": d_out * paper,  # eq. 18 as printed: prefactor |D0|^2, no 1/d_out (erratum levi-7)
            "kappa": kap,
            "kappa_literal": d_out * kap,
            "realised": realised(1.0),
            "realised_rate2": realised(2.0),  # the rate 4 eta0 kappa -> 8 eta0 kappa (factor 2)
        }
        for name, v in vals.items():
            out.setdefault(name, []).append(np.asarray(v, dtype=float))
    return {name: np.stack(v) for name, v in out.items()}


def _two_layer_run(d_in, d_h, steps, seeds, activation):
    """Explicit GD on (S0, S1); returns (measured, forms), arrays of shape (n_seeds, 2, n_checkpoints),
    axis 1 = (train, gen)."""
    data = draw_two_layer(d_in, LAM, d_h, D_OUT, seeds=seeds)
    rec = steps // 10
    tr = run_two_layer(data, ETA, steps, activation=activation, record_every=rec)
    idx = [int(round(c * steps / rec)) for c in CHECKPOINTS]
    ts = np.asarray(tr.times, dtype=float)[idx]
    meas = np.stack([tr["loss_train"][:, idx], tr["loss_gen"][:, idx]], axis=1)
    X, S0, S1, T = _numpy_draws(data)
    nu, V = _spectra(X)
    per_seed = []
    for i in range(len(seeds)):
        if activation == "tanh":
            pref_sq = D_OUT * float(tr["loss_gen"][i, 0])
        else:
            pref_sq = float(np.sum((S0[i] @ S1[i] - T[i]) ** 2))
        per_seed.append(_forms(nu[i], V[i], S0[i], S1[i], T[i], ts, pref_sq))
    forms = {name: np.stack([f[name] for f in per_seed]) for name in per_seed[0]}
    return meas, forms


def _two_layer_rows(report, spec_id, cfg, activation):
    """Per-seed rows of the three forms, each with its wrong variant."""
    meas, forms = _two_layer_run(cfg["d_in"], cfg["d_h"], cfg["steps"], cfg["seeds"], activation)
    tol, src = cfg["tol"], cfg["src"]
    label = f"{activation} d_in={cfg['d_in']} d_h={cfg['d_h']} T={cfg['steps']}"
    report.check(spec_id, predicted=forms["paper"], measured=meas, logtol=tol["paper"], source=src["paper"],
                 what=f"{label}: paper form (1/d_out corrected, MP, h=1/2), per seed")
    report.reject(spec_id, wrong=forms["paper_literal"], measured=meas, logtol=tol["paper"], source=src["paper"],
                  what=f"{label}: literal eq. 18 prefactor |D0|^2 (no 1/d_out, erratum levi-7)")
    report.check(spec_id, predicted=forms["kappa"], measured=meas, logtol=tol["kappa"], source=src["kappa"],
                 what=f"{label}: kappa-refined (MP), per seed")
    report.reject(spec_id, wrong=forms["kappa_literal"], measured=meas, logtol=tol["kappa"], source=src["kappa"],
                  what=f"{label}: kappa-refined with the literal eq. 18 prefactor (no 1/d_out)")
    report.check(spec_id, predicted=forms["realised"], measured=meas, logtol=tol["realised"],
                 source=src["realised"], what=f"{label}: kappa-refined, realised spectrum of Sigma, per seed")
    report.reject(spec_id, wrong=forms["realised_rate2"], measured=meas, logtol=tol["realised"],
                  source=src["realised"], what=f"{label}: realised-spectrum form with the rate x2 (4 eta0 -> 8 eta0)")
    _bias_rows(report, spec_id, label, meas, forms)


def _bias_rows(report, spec_id, label, meas, forms):
    """Seed means of log(measured/predicted) at t = T (train; gen in the details).

    The paper form freezes S1^T S1 at h/d_out I; its eigenvalues kappa_j spread by ~2 sqrt(d_out/d_h) around the
    mean and enter the exponent 4 eta0 kappa_j nu t/d_out, so the late-time loss, a mixture of slower and faster
    decays, lies above the single-rate form (Jensen): a positive bias growing with t, absent from the kappa-refined
    form.  Reported at every size; with >= 16 seeds the bias is also tested (3 standard errors of the seed mean).
    """
    n = meas.shape[0]
    out = {}
    for name in ("paper", "kappa"):
        r = np.log(meas[:, :, -1] / forms[name][:, :, -1])  # (seed, train/gen)
        out[name] = (r.mean(axis=0), r.std(axis=0, ddof=1) if n > 1 else np.full(2, np.nan))
        m, sd = out[name]
        report.observe(spec_id, measured=float(m[0]), what=f"{label}: {name} form, seed-mean log(measured/predicted) "
                                                          f"of L_tr at t=T, {n} seeds",
                       source="no error estimate in the paper; the frozen isotropic kernel (paper form) neglects the "
                              "spread of the eigenvalues of S1^T S1, which biases the late-time loss up (Jensen)",
                       details={"mean_train_gen": m.tolist(), "sd_train_gen": sd.tolist(), "n_seeds": n})
    if n >= 16:
        (mp, sp), (mk, sk) = out["paper"], out["kappa"]
        se_k = 3 * float(np.max(sk)) / math.sqrt(n)
        src = (f"3 standard errors of the {n}-seed mean (per-seed sd measured in this run) + 0.025, the realised "
               "form's own late-time bias (-0.018, dropped S0 S0^T Sigma D term)")
        report.check(spec_id, predicted=np.zeros(2), measured=mk, atol=se_k + 0.025, source=src,
                     what=f"{label}: kappa-refined form unbiased at t=T (seed-mean log ratio, train and gen)")
        what = f"{label}: paper form unbiased at t=T (finding: biased by the kappa spread, erratum levi-22)"
        power = f"power at this configuration: {_BIAS_POWER} (n seeds -> P(reject); _BIAS_POWER)"
        if n >= _BIAS_REJECT_MIN_SEEDS:
            report.reject(spec_id, wrong=np.zeros(2), measured=mp, atol=3 * float(np.max(sp)) / math.sqrt(n),
                          source=f"3 standard errors of the {n}-seed mean (per-seed sd measured in this run); {power}",
                          what=what)
        else:
            report.observe(spec_id, measured=mp, what=what + f" -- reported: {n} seeds",
                           source=f"report-only below {_BIAS_REJECT_MIN_SEEDS} seeds, where the reject's power is < 0.99 "
                                  f"({power}); 3 standard errors here: {3 * float(np.max(sp)) / math.sqrt(n):.3f}",
                           details={"mean_train_gen": mp.tolist(), "sd_train_gen": sp.tolist(), "n_seeds": n})


def _both_sides(report, spec_id, cfg, activation):
    """d_h not >> d_out: the paper form fails (spread of kappa ~ sqrt(d_out/d_h)); the kappa-refined form holds at
    the CPU configuration (d_in = 200, d_h = 25, T = 5000).  At the GPU configuration see `_fig4_rows`; the tanh net
    at d_h = 50 is reported (`tol` None: no measured spread).

    Statistic: seed-mean of log(measured/predicted) of the train loss at t = T, compared as geometric
    means so that ``logtol`` acts on it; the per-seed log ratios are in the details.
    """
    meas, forms = _two_layer_run(cfg["d_in"], cfg["d_h"], cfg["steps"], cfg["seeds"], activation)
    r_k = np.log(meas[:, 0, -1] / forms["kappa"][:, 0, -1])
    r_p = np.log(meas[:, 0, -1] / forms["paper"][:, 0, -1])
    m = math.exp(float(np.mean(np.log(meas[:, 0, -1]))))
    k = math.exp(float(np.mean(np.log(forms["kappa"][:, 0, -1]))))
    p = math.exp(float(np.mean(np.log(forms["paper"][:, 0, -1]))))
    label = f"{activation} d_in={cfg['d_in']} d_h={cfg['d_h']}, {len(cfg['seeds'])} seeds, L_tr(T)"
    details = {"seeds": list(cfg["seeds"]), "per_seed_log_measured_over_kappa": np.round(r_k, 4).tolist(),
               "per_seed_log_measured_over_paper": np.round(r_p, 4).tolist()}
    if cfg.get("tol") is None:
        why = ("no prediction: no measured spread of this net at d_h = 50; for the linear net there the kappa-refined "
               "form drifts by t = T (erratum levi-22, test_eq18_two_layer)")
        report.observe(spec_id, measured=float(np.mean(r_k)), source=why, details=details,
                       what=f"{label}: kappa-refined, seed-mean log(measured/predicted)")
        report.observe(spec_id, measured=float(np.mean(r_p)), source=why, details=details,
                       what=f"{label}: paper form, seed-mean log(measured/predicted)")
        return
    report.check(spec_id, predicted=k, measured=m, logtol=cfg["tol"], source=cfg["src"], details=details,
                 what=f"{label}: d_h not >> d_out, kappa-refined holds (seed-mean)")
    report.reject(spec_id, wrong=p, measured=m, logtol=cfg["tol"], source=cfg["src"],
                  what=f"{label}: paper form fails where d_h >> d_out fails")


def _fig4_rows(report, spec_id, cfg):
    """levi:fig4 at the GPU configuration (linear, d_h = 50): the kappa-refined form holds early and drifts by T.

    Rows from `_FIG4_FIT` (fitted on seeds 256-319, run here on other seeds): the seed-mean log(measured/kappa) at
    0.1 T and 0.3 T (train, gen) within |fit mean| + z sd sqrt(1/n_fit + 1/n) of 0; at T equal to the fit's mean
    drift within z sd sqrt(1/n_fit + 1/n), per-seed ratios in the details; "kappa-refined unbiased at T" and
    "paper form unbiased at T" rejected at z sd_fit / sqrt(n).
    """
    fit = _FIG4_FIT
    meas, forms = _two_layer_run(cfg["d_in"], cfg["d_h"], cfg["steps"], cfg["seeds"], "linear")
    n, n_fit = len(cfg["seeds"]), fit["n"]
    r_k = np.log(meas / forms["kappa"])  # (seed, train/gen, checkpoint 0.1/0.3/1 T)
    r_p = np.log(meas / forms["paper"])
    label = f"linear d_in={cfg['d_in']} d_h={cfg['d_h']} T={cfg['steps']}, {n} seeds"
    both = math.sqrt(1 / n_fit + 1 / n)
    src_fit = (f"measured on seeds {fit['seeds']} ({n_fit}, explicit GD in float64, CPU), not the seeds run here; "
               f"z = {_Z_FIG4} (two-sided 1e-3 per value)")
    early = np.stack([r_k[:, :, j].mean(axis=0) for j in (0, 1)])  # (t, train/gen)
    tol_early = max(abs(fit["kappa"][c][0][w]) + _Z_FIG4 * fit["kappa"][c][1][w] * both for c in (0.1, 0.3)
                    for w in (0, 1))
    report.check(spec_id, predicted=np.zeros_like(early), measured=early, atol=tol_early,
                 source=f"{src_fit}: |fit mean| + z sd sqrt(1/n_fit + 1/n), the largest over 0.1 T / 0.3 T x train / gen",
                 what=f"{label}: kappa-refined holds early (seed-mean log(measured/predicted) at 0.1 T and 0.3 T, "
                      "train and gen)")
    late = r_k[:, :, 2].mean(axis=0)
    mean_fit, sd_fit = (np.asarray(x) for x in fit["kappa"][1.0])
    tol_late = float(np.max(_Z_FIG4 * sd_fit * both))
    details = {"seeds": list(cfg["seeds"]),
               "per_seed_log_measured_over_kappa_(train, gen)_at_T": np.round(r_k[:, :, 2], 4).tolist(),
               "per_seed_log_measured_over_paper_(train, gen)_at_T": np.round(r_p[:, :, 2], 4).tolist(),
               "seed_sd_(train, gen)_at_T": r_k[:, :, 2].std(axis=0, ddof=1).tolist()}
    report.check(spec_id, predicted=mean_fit, measured=late, atol=tol_late, details=details,
                 source=f"{src_fit}: the fit's mean drift (train, gen) {np.round(mean_fit, 3).tolist()}, tolerance "
                        "z sd sqrt(1/n_fit + 1/n) (erratum levi-22: S1 frozen at S1(0), S0 S0^T Sigma D dropped)",
                 what=f"{label}: kappa-refined drifts by t = T (seed-mean log(measured/predicted), train and gen)")
    tol0 = float(np.max(_Z_FIG4 * sd_fit / math.sqrt(n)))
    report.reject(spec_id, wrong=np.zeros(2), measured=late, atol=tol0,
                  source=f"z sd_fit / sqrt(n) ({src_fit})",
                  what=f"{label}: kappa-refined unbiased at t = T (the spec's 'kappa-refined 0.95-1.02 per seed')")
    sd_p = np.asarray(fit["paper"][1.0][1])
    report.reject(spec_id, wrong=np.zeros(2), measured=r_p[:, :, 2].mean(axis=0),
                  atol=float(np.max(_Z_FIG4 * sd_p / math.sqrt(n))), source=f"z sd_fit / sqrt(n) ({src_fit})",
                  what=f"{label}: paper form unbiased at t = T (d_h not >> d_out)")


# ---------------------------------------------------------------------------------------------
# levi:eq17 / eq41 (h-dot), levi:eq16 / eq40 (model and its gradient flow)
# ---------------------------------------------------------------------------------------------


def test_eq17_hdot_one_step(report, scale):
    """One GD step of the two-layer linear net: the change of h = (|S0|^2 + |S1|^2)/2."""
    cfg = CONFIG[scale]["eq17"]
    data = draw_two_layer(cfg["d_in"], LAM, cfg["d_h"], D_OUT, seeds=cfg["seeds"])
    tr = run_two_layer(data, ETA, 1, record_every=1)
    dh = tr["h"][:, 1] - tr["h"][:, 0]

    Xs, S0s, S1s, Ts = _numpy_draws(data)
    first, second = [], []
    for X, S0, S1, T in zip(Xs, S0s, S1s, Ts):
        Sig = X.T @ X / X.shape[0]
        D = S0 @ S1 - T
        first.append(float(np.trace((S0 @ S1).T @ Sig @ D)))  # Tr[(T + D)^T Sigma D]
        g0 = Sig @ D @ S1.T  # eq. 40: dS0/dt = -(2 eta0/d_out) Sigma D S1^T
        g1 = S0.T @ Sig @ D  # eq. 40: dS1/dt = -(2 eta0/d_out) S0^T Sigma D
        second.append(float(np.sum(g0 * g0) + np.sum(g1 * g1)))
    first, second = np.asarray(first), np.asarray(second)
    label = f"d_in={cfg['d_in']} d_h={cfg['d_h']} d_out={D_OUT}, eta={ETA}"

    # eq. 40 (gradient flow of the eq. 16 network): one GD step is its Euler step, so h changes by
    # exactly -(4 eta/d_out) Tr[(T+D)^T Sigma D] + (1/2) |(2 eta/d_out) g|^2.
    exact = -(4 * ETA / D_OUT) * first + 0.5 * (2 * ETA / D_OUT) ** 2 * second
    no_dout = -(4 * ETA) * first + 0.5 * (2 * ETA) ** 2 * second  # gradients of a loss without the 1/d_out
    src = "exact one-step identity; float64 rounding of h ~ 0.5 against dh ~ 4e-5 (measured ~1e-12)"
    report.check("levi:eq40", predicted=exact, measured=dh, rtol=1e-8, source=src,
                 what=f"{label}: dh of one GD step = Euler step of eq. 40 incl. |dS|^2/2 (exact)")
    report.reject("levi:eq40", wrong=no_dout, measured=dh, rtol=1e-8, source=src,
                  what="eq. 40 gradients without the 1/d_out of the loss")

    # eq. 17 / 41, corrected: dh/dt = -(4 eta0/d_out) Tr[(T+D)^T Sigma D]; one GD step differs from it
    # by the relative O(eta) term |dS|^2/2.
    pred = -(4 * ETA / D_OUT) * first
    paper = -8 * ETA * first  # the paper's -8 eta0 (T+D)^T Sigma D (erratum levi-6)
    src = ("spec 7.3: rel <= 1e-2 (achieved 3e-4, residual O(eta)); measured here 2.9e-4..3.6e-4 "
           "(seeds 0-2, eta=0.01), 1.4e-4..1.8e-4 at eta=0.005")
    report.check("levi:eq17", predicted=pred, measured=dh, rtol=1e-2, source=src,
                 what=f"{label}: dh/dt = -(4 eta0/d_out) Tr[(T+D)^T Sigma D] (eq. 17 = eq. 41, corrected)")
    report.reject("levi:eq17", wrong=paper, measured=dh, rtol=1e-2, source=src,
                  what="paper eq. 17/41: dh/dt = -8 eta0 (T+D)^T Sigma D (erratum levi-6)")


# ---------------------------------------------------------------------------------------------
# levi:eq18 / eq42, levi:fig4 -- linear two-layer network
# ---------------------------------------------------------------------------------------------


def test_eq18_two_layer(report, scale):
    """Explicit GD on (S0, S1) of the linear two-layer net vs the corrected eq. 18 and its refinements."""
    _two_layer_rows(report, "levi:eq18", CONFIG[scale]["eq18"], "linear")
    # Fig. 4: where the assumption d_h >> d_out fails, the paper form fails; the refinement holds at the CPU size and,
    # at the GPU size (d_h = 50, T = 3e4), early only (erratum levi-22)
    if "fit" in CONFIG[scale]["fig4"]:
        _fig4_rows(report, "levi:fig4", CONFIG[scale]["fig4"])
    else:
        _both_sides(report, "levi:fig4", CONFIG[scale]["fig4"], "linear")
    mine = [r for r in report.rows if r.test == report.current_test]
    assert mine and all(r.passed for r in mine)


# ---------------------------------------------------------------------------------------------
# levi:tanh -- the same network with sigma = tanh
# ---------------------------------------------------------------------------------------------


def test_tanh(report, scale):
    """tanh hidden layer vs the linear two-layer formulas with the measured L_gen(0) as prefactor.

    The kappa-refined forms use the linearised D0 = S0 S1 - T0 T1 (pre-activations have variance
    ~ 1/(2 d_h), so tanh is almost linear), rescaled to the measured L_gen(0); the tanh L_gen is
    sampled on 4096 fresh inputs.
    """
    _two_layer_rows(report, "levi:tanh", CONFIG[scale]["tanh"], "tanh")
    if CONFIG[scale]["tanh_side"] is not None:
        _both_sides(report, "levi:tanh", CONFIG[scale]["tanh_side"], "tanh")
    mine = [r for r in report.rows if r.test == report.current_test]
    assert mine and all(r.passed for r in mine)


# ---------------------------------------------------------------------------------------------
# levi:appG / levi:fig8 -- modular addition with the mean-field quadratic MLP
# ---------------------------------------------------------------------------------------------


def _lambda_rows(report, res, p, alphas):
    """lambda = d_in / N_tr of the split vs linear.modular_lambda = 2/(alpha p)."""
    n_train = np.asarray(res["n_train"], dtype=float)
    measured = 2 * p / n_train
    tol = 0.5 / float(n_train.min())  # N_tr = round(alpha p^2)
    src = f"N_tr = round(alpha p^2): rounding bound 0.5/N_tr = {tol:.2g}"
    report.check("levi:appG", predicted=linear.modular_lambda(np.asarray(alphas), p), measured=measured, rtol=tol,
                 source=src, what=f"lambda = d_in/N_tr of the split = 2/(alpha p), p={p}")
    report.reject("levi:appG", wrong=1.0 / (np.asarray(alphas) * p), measured=measured, rtol=tol, source=src,
                  what="lambda = 1/(alpha p) (d_in = p: one one-hot instead of two)")


def _monotone_rows(report, dts, label, src):
    """Fraction of consecutive alpha pairs (last axis = alpha) with dt strictly decreasing; none may fail."""
    d = np.diff(np.asarray(dts, dtype=float), axis=-1)
    frac = float(np.mean(d < 0))
    tol = 0.5 / d.size
    report.check("levi:appG", predicted=1.0, measured=frac, atol=tol, source=src,
                 what=f"{label}: fraction of alpha pairs with dt decreasing in alpha ({d.size} pairs)")
    report.reject("levi:appG", wrong=0.0, measured=frac, atol=tol, source=src,
                  what=f"{label}: dt non-decreasing in alpha")


def test_appG_modular_addition(report, scale):
    """Appendix G: grokking delay of modular addition vs the training fraction alpha (lambda = 2/(alpha p))."""
    if scale == "gpu":
        _appG_gpu(report, CONFIG["gpu"]["appG"])
        return
    cfg = CONFIG["cpu"]["appG"]
    p, d_h, alphas, eta, seeds = cfg["p"], cfg["d_h"], cfg["alphas"], cfg["eta"], cfg["seeds"]
    # mean over classes (PyTorch MSELoss): the loss of the spec's smoke test
    mean = run_modular_addition(p, alphas, d_h, eta, cfg["steps_mean"], seeds=seeds, loss="mean", record_every=10)
    # summed over classes (the loss erratum levi-20 prescribes at p = 48)
    summ = run_modular_addition(p, alphas, d_h, eta, cfg["steps_sum"], seeds=seeds, loss="sum", record_every=1)
    dt_mean = np.asarray(mean["grok_time"], dtype=float)  # (n_alpha, n_seeds)
    dt_sum = np.asarray(summ["grok_time"], dtype=float)
    assert np.all(np.isfinite(dt_mean)) and np.all(np.isfinite(dt_sum)), "a run did not reach 95 % accuracy"

    _lambda_rows(report, mean, p, alphas)

    # dt decreases monotonically in alpha, for every seed and both normalisations
    _monotone_rows(report, np.concatenate([dt_mean.T, dt_sum.T]), f"p={p}, mean and summed MSE, seeds {seeds}",
                   "measured, seeds 0..11, both losses: 0 violations in 48 pairs (spec 7.3: monotone decrease)")

    # The spec's smoke-test numbers (one seed of its own RNG) vs our seed mean: tolerance
    # 3 sd sqrt(1 + 1/n), sd = per-seed sd of log(dt) measured over 12 seeds.
    geo_mean = np.exp(np.mean(np.log(dt_mean), axis=1))
    geo_sum = np.exp(np.mean(np.log(dt_sum), axis=1))
    for a, spec_dt, sd, g, gs in zip(alphas, cfg["spec_dt"], cfg["sd_log_dt"], geo_mean, geo_sum):
        tol = 3 * sd * math.sqrt(1 + 1 / len(seeds))
        src = (f"measured: per-seed sd of log dt {sd} (seeds 0..11); 3 sd sqrt(1+1/{len(seeds)}) for one spec "
               "seed vs our seed mean")
        report.check("levi:appG", predicted=spec_dt, measured=float(g), logtol=tol, source=src,
                     what=f"spec smoke-test dt, alpha={a}, p={p}, mean-over-classes MSE (geometric seed mean)")
        report.reject("levi:appG", wrong=spec_dt, measured=float(gs), logtol=tol, source=src,
                      what=f"spec dt at alpha={a} against the summed-over-classes MSE run (other normalisation)")

    # Erratum levi-20 explained: the mean-over-classes loss is the summed one divided by p, so GD on it
    # with eta is GD on the summed loss with eta/p -- the same gradient flow run p times slower:
    # dt(mean) = p dt(sum) up to the discretisation difference of the two step sizes.
    # Tolerance: the former 0.11 was the maximum over seeds 0..11 (|log| 0.109), exceeded out of sample (alpha =
    # (0.7, 0.8) in one call: 0.119).  Measured on seeds 12..35 (x the 3 alphas in one call, as here; 72 values):
    # log(dt_mean/(p dt_sum)) mean -0.021, sd 0.028, max |log| 0.133; the spread is alpha = 0.7's (mean -0.033, sd
    # 0.046; 0.8 and 0.9: sd 0.008).  |mean| + 3.14 sd at alpha = 0.7 (a 1 % family-wise false-fail probability over
    # the 6 elements compared) = 0.18.  Seeds 0, 1 (run here) did not set it.
    tol = round(0.033 + 3.14 * 0.046, 2)
    src = ("measured out of sample, seeds 12..35 x alphas 0.7/0.8/0.9 (72 values): log(dt_mean/(p dt_sum)) mean -0.021, "
           "sd 0.028, max |log| 0.133; alpha = 0.7 mean -0.033, sd 0.046 (0.8, 0.9: sd 0.008) -> |mean| + 3.14 sd "
           f"(1 % family-wise over 6 elements) = {tol}; recorded every 10 / 1 steps (the former 0.11 was the maximum "
           "over seeds 0..11)")
    report.check("levi:appG", predicted=p * dt_sum, measured=dt_mean, logtol=tol, source=src,
                 what=f"dt(mean MSE) = p dt(summed MSE), p={p}: eta -> eta/p rescales time by p")
    report.reject("levi:appG", wrong=dt_sum, measured=dt_mean, logtol=tol, source=src,
                  what="the normalisation does not rescale time: dt(mean) = dt(summed)")


def _appG_gpu(report, cfg):
    """Spec 7.3 GPU column: p=48, d_h=400, alpha in 0.5..0.9, >= 2 seeds, 2e4 steps, summed MSE (Fig. 8)."""
    p, d_h, alphas, eta, seeds, steps = cfg["p"], cfg["d_h"], cfg["alphas"], cfg["eta"], cfg["seeds"], cfg["steps"]
    summ = run_modular_addition(p, alphas, d_h, eta, steps, seeds=seeds, loss="sum", record_every=10)
    dt = np.asarray(summ["grok_time"], dtype=float)  # (n_alpha, n_seeds)
    assert np.all(np.isfinite(dt)), "a summed-MSE run did not grok within the step budget"
    _lambda_rows(report, summ, p, alphas)
    report.rows[-1].details.update(t_test=np.asarray(summ["t_test"], dtype=float).tolist(), dt=dt.tolist(),
                                   steps=steps)
    dt_mean = dt.mean(axis=1)
    _monotone_rows(report, dt_mean, f"p={p}, summed MSE, seed-mean dt",
                   "spec 7.3 (2 seeds, H100): seed-mean dt monotone decreasing, 2320..550")

    lams = np.asarray(linear.modular_lambda(np.asarray(alphas), p))
    C, lam_star = linear.fit_inverse_square(lams, dt_mean)
    src = "spec 7.3: lambda* in [0.10, 0.15] (its fit of 2 seeds: 0.121, C = 3.28)"
    report.check("levi:fig8", predicted=0.125, measured=lam_star, atol=0.025, source=src,
                 what="inverse-square fit dt = C (lambda* - lambda)^-2: lambda* (interval midpoint +- half-width)")
    report.reject("levi:fig8", wrong=1.0, measured=lam_star, atol=0.025, source=src,
                  what="lambda* = 1 (the linear estimator's critical ratio)")
    src = "spec 7.3: fit residuals <= 15 % (achieved <= 8 % with 2 seeds)"
    report.check("levi:fig8", predicted=C * (lam_star - lams) ** -2.0, measured=dt_mean, rtol=0.15, source=src,
                 what="inverse-square fit residuals, seed-mean dt")
    # the same law with the linear-estimator pole lambda* = 1 predicts an almost flat dt(alpha)
    span = float(dt_mean[0] / dt_mean[-1])
    report.reject("levi:fig8", wrong=float(((1 - lams[-1]) / (1 - lams[0])) ** 2), measured=span, rtol=0.15,
                  source=src, what=f"dt(alpha={alphas[0]})/dt(alpha={alphas[-1]}) with the pole lambda* = 1")
    sd = max(CONFIG["cpu"]["appG"]["sd_log_dt"])
    tol = 3 * sd * math.sqrt(1 / 2 + 1 / 4)
    src = (f"spec 7.3 2-seed means vs our 4-seed means: 3 sd sqrt(1/2 + 1/4) = {tol:.2f} with the largest per-seed sd "
           f"of log dt measured at p=23 ({sd}, seeds 0..11)")
    report.check("levi:fig8", predicted=np.asarray(cfg["spec_dt"]), measured=dt_mean, logtol=tol, source=src,
                 what="Fig. 8 dt(alpha) vs the spec's H100 numbers")
    report.reject("levi:fig8", wrong=np.asarray(cfg["spec_dt"]) * p, measured=dt_mean, logtol=tol, source=src,
                  what="dt of the mean-over-classes MSE (time x p, erratum levi-20)")

    # Erratum levi-20: with the mean-over-classes MSE (time slower by p) the runs do not grok within the
    # budget; predicted from the summed runs (CPU: dt(mean) = p dt(sum) within 14 %): a mean run groks iff
    # p t_test(sum) <= steps.
    sub, sub_seeds = cfg["mean_alphas"], cfg["mean_seeds"]
    mean = run_modular_addition(p, sub, d_h, eta, steps, seeds=sub_seeds, loss="mean", record_every=10)
    t_sum = np.asarray(summ["t_test"], dtype=float)[[alphas.index(a) for a in sub]]
    t_sum = t_sum[:, [seeds.index(s) for s in sub_seeds]]
    pred = float(np.mean(p * t_sum <= steps))
    meas = float(np.mean(np.isfinite(np.asarray(mean["t_test"], dtype=float))))
    tol = 0.5 / t_sum.size
    src = ("spec erratum levi-20 (H100: nothing trains in 6e4 steps); prediction from the time rescaling "
           "dt(mean) = p dt(sum) measured on CPU (within 14 %: max |log| 0.133 over 72 runs, seeds 12..35)")
    report.check("levi:appG", predicted=pred, measured=meas, atol=tol, source=src,
                 what=f"fraction of mean-MSE runs grokking within {steps} steps, p={p}")
    report.reject("levi:appG", wrong=1.0, measured=meas, atol=tol, source=src,
                  what="normalisation irrelevant: mean-MSE runs grok like the summed ones")


# ---------------------------------------------------------------------------------------------
# GPU time budget: the dominant programs of the GPU configuration, for verify/budget.py
# ---------------------------------------------------------------------------------------------


def _budget_two_layer(d_in, d_h, activation, n_gen=4096):
    def build(n, steps):
        import jax

        from budget import engine_program
        from grokclocks.sim import linear as SLm
        from grokclocks.sim.train import optax_init, sgd_weight_decay

        def make_inputs():
            data = draw_two_layer(d_in, LAM, d_h, D_OUT, seeds=tuple(range(n)))
            inputs = {"T": data.T0 @ data.T1}
            if activation == "linear":
                inputs["Sigma"] = SLm._gram(data.X, jnp.zeros(data.X.shape[:-1] + (1,)), 1)["Sigma"]
            else:
                xg = jax.random.normal(jax.random.PRNGKey(1), (n, n_gen, d_in), jnp.float64)
                inputs.update(X=data.X, Y=jnp.tanh(data.X @ data.T0) @ data.T1, X_gen=xg,
                              Y_gen=jnp.tanh(xg @ data.T0) @ data.T1)
            inputs.update(eta=jnp.asarray(ETA), decay=jnp.asarray(0.0))
            axes = SLm._batch_axes(inputs, ("eta", "decay"), 0, 1)
            return optax_init(sgd_weight_decay, {"S0": data.S0, "S1": data.S1}, inputs, axes), inputs

        axes = SLm._batch_axes(jax.eval_shape(make_inputs)[1], ("eta", "decay"), 0, 1)
        step, metrics = SLm._TWO_LAYER[activation]
        return engine_program(step, metrics, steps // 10, 10, axes), make_inputs

    return build


def _budget_modular(p, d_h, n_alpha, loss):
    def build(n, steps):
        import jax

        from budget import engine_program
        from grokclocks.sim import modular as M
        from grokclocks.sim.train import optax_init, sgd_weight_decay

        def make_inputs():
            keys = jax.numpy.stack([jax.random.PRNGKey(s) for s in range(n)])
            split, init = jax.vmap(jax.random.split, out_axes=1)(keys)
            datas = [M.make_modular_addition(split, p, a) for a in np.linspace(0.5, 0.9, n_alpha)]
            n_idx, m_idx = jnp.divmod(jnp.arange(p * p), p)
            inputs = {"hot": jnp.stack([n_idx, p + m_idx], axis=1), "Y": datas[0].Y, "labels": datas[0].labels,
                      "mask": jnp.stack([d.train_mask for d in datas]).astype(jnp.float64),
                      "eta": jnp.asarray(500.0), "decay": jnp.asarray(0.0)}
            prm = jax.vmap(lambda k: {"W1": jax.random.normal(k, (d_h, 2 * p), jnp.float64),
                                      "W2": jax.random.normal(k, (p, d_h), jnp.float64)})(init)
            prm = jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (n_alpha,) + x.shape), prm)
            return optax_init(sgd_weight_decay, prm, inputs, _axes(inputs)), inputs

        def _axes(inputs):
            shared = {k: None for k in inputs}
            return [dict(shared, mask=0)] * 2

        axes = _axes(jax.eval_shape(make_inputs)[1])
        return engine_program(M._STEPS[loss], M._METRICS[loss], 10, steps // 10, axes), make_inputs

    return build


# H100 seconds per run-step of the appendix-G MLP, 2026-11-24: 411 s for 2e4 steps of 38 runs (8 alphas x 4 seeds
# summed + 3 x 2 mean), one process among 14 on the GPU (an upper bound).  The FLOP count gives 50x less: the
# gradient of the one-hot gather W1.T[hot] is a scatter-add of p^2 x 2 rows per run-step (float64 atomics).
_APPG_RATE = 411.0 / (20_000 * 38)
_APPG_NOTE = "H100 rate of the 2026-11-24 run (one of 14 processes; the FLOP model gives 50x less)"


def _gpu_budget():
    from grokclocks.verification import BudgetItem as B

    g = CONFIG["gpu"]
    f64 = dict(precision="float64")
    e18, tanh, fig4, side, ag = g["eq18"], g["tanh"], g["fig4"], g["tanh_side"], g["appG"]
    return [
        B("test_eq17_hdot_one_step", _budget_two_layer(1000, 50, "linear"), 8, 10, 8, 10,
          config="d_in=1000, d_h=50, 8 seeds, one GD step (budgeted as 10)", **f64),
        B("test_eq18_two_layer", _budget_two_layer(e18["d_in"], e18["d_h"], "linear"), len(e18["seeds"]), e18["steps"],
          2, 1000, config=f"linear, d_in=1000, d_h=200, {len(e18['seeds'])} seeds, 3e4 steps", **f64,
          host_s=5.0, note="host: eigh of 8 x 1000 x 1000 and the forms (5 kappa x 3 times)"),
        B("test_eq18_two_layer", _budget_two_layer(fig4["d_in"], fig4["d_h"], "linear"), len(fig4["seeds"]),
          fig4["steps"], 2, 1000, config=f"fig4: linear, d_h=50, {len(fig4['seeds'])} seeds, 3e4 steps", **f64),
        B("test_tanh", _budget_two_layer(tanh["d_in"], tanh["d_h"], "tanh"), len(tanh["seeds"]), tanh["steps"], 1, 100,
          config=f"tanh, d_in=1000, d_h=200, N=2000, {len(tanh['seeds'])} seeds, 3e4 steps, L_gen on 4096 inputs", **f64,
          note="CPU measurement: the 8-seed configuration's (2026-11-25) x4 in seeds (its FLOPs are linear in seeds)"),
        B("test_tanh", _budget_two_layer(side["d_in"], side["d_h"], "tanh"), len(side["seeds"]), side["steps"], 1, 100,
          config="tanh, d_h=50, 16 seeds, 3e4 steps", **f64),
        B("test_appG_modular_addition", _budget_modular(ag["p"], ag["d_h"], len(ag["alphas"]), "sum"), len(ag["seeds"]),
          ag["steps"], 1, 200, config=f"p=48, d_h=400, 8 alphas x 4 seeds, {ag['steps']} steps, summed MSE, float64",
          gpu_rate=_APPG_RATE * len(ag["alphas"]), note=_APPG_NOTE, **f64),
        B("test_appG_modular_addition", _budget_modular(ag["p"], ag["d_h"], len(ag["mean_alphas"]), "mean"),
          len(ag["mean_seeds"]), ag["steps"], 1, 200, gpu_rate=_APPG_RATE * len(ag["mean_alphas"]), note=_APPG_NOTE,
          config=f"3 alphas x 2 seeds, {ag['steps']} steps, mean-over-classes MSE", **f64),
    ]


GPU_BUDGET = _gpu_budget()
