"""Theorem vs simulation for spec ``levi`` (Levi, Beck, Bar-Sinai: grokking in linear estimators).

Every check computes its prediction with :mod:`grokclocks.linear` / :mod:`grokclocks.rmt`, measures
the same quantity on JAX simulations from :mod:`grokclocks.sim.linear` (explicit GD through the one
engine, or the exact GD iterates in the eigenbasis), records a row with ``report.check`` and shows the
check can fail with ``report.reject`` on a plausible wrong variant (factor 2 in the rate, the paper's
uncorrected form, the wrong exponent).

Conventions (spec ``levi:conv-time``): time = GD steps with ``eta = 0.01``, formulas evaluated at
``eta0 = eta``; accuracy threshold ``eps = 1e-3``; level ``erf(sqrt 2)`` unless stated; seeds
``0..n-1`` with keys ``PRNGKey(1000 d_in + seed)``.

Tolerances are the spec's (section 7.2/7.3) or measured here (stated in ``source=``):
"sd" below is the per-seed standard deviation measured with these JAX seeds; seed-mean tolerances are
about 3 sd / sqrt(n_seeds).  ``--scale gpu`` runs the configurations of the spec's GPU column
(d_in = 4000, 16-64 seeds, drawn in chunks of seeds); its tolerances are the spec's projections.
"""

from __future__ import annotations

import functools
import math

import jax.numpy as jnp
import numpy as np
import pytest
from scipy import optimize, special

from grokclocks import linear as L
from grokclocks import rmt
from grokclocks.sim import linear as SL

ETA = 0.01
EPS = 1e-3


# ------------------------------------------------------------------------------------------ helpers


def _pick(scale: str, cpu, gpu):
    return gpu if scale == "gpu" else cpu


# Size caps for a cheap CPU smoke run of the GPU code paths (None = the GPU configuration as written);
# set by a test harness only, e.g. ``_D_CAP = 300`` -- the tolerances are then not expected to hold.
_D_CAP: int | None = None
_N_CAP: int | None = None
_NGEN_CAP: int | None = None


def _gd(d: int) -> int:
    """GPU-scale d_in (capped for smoke runs)."""
    return d if _D_CAP is None else min(d, _D_CAP)


def _gn(n: int) -> int:
    """GPU-scale number of seeds (capped for smoke runs)."""
    return n if _N_CAP is None else min(n, _N_CAP)


@functools.lru_cache(maxsize=8)
def _draw_cached(d, lam, d_out, seeds, init_scale, sigma2):
    return SL.draw_teacher_student(d, lam, d_out, seeds=list(seeds), init_scale=init_scale, sigma2=sigma2)


def _draw(d, lam, d_out, seeds, *, init_scale=1.0, sigma2=0.0):
    """Teacher-student draws for ``seeds``; small draws are cached (several checks share them)."""
    seeds = tuple(int(s) for s in seeds)
    if d * len(seeds) <= 8000:
        return _draw_cached(d, lam, d_out, seeds, float(init_scale), float(sigma2))
    return SL.draw_teacher_student(d, lam, d_out, seeds=list(seeds), init_scale=init_scale, sigma2=sigma2)


# One eigh of Sigma_tr per (d_in, lam, seed) serves every check at that (d_in, lam): the draws' inputs X do
# not depend on d_out, and the student scale and the label-noise variance only rescale projections
# (SL.spectral_draws / SpectralDraws.variant).  At d_in = 4000 that is 3 lam x 64 seeds = 192
# eigendecompositions for the whole module instead of ~1000 (one per check and chunk).
_BANK: dict = {}
def _bank_chunk(d):
    """Seeds per batched eigh: 8 at d_in >= 2000 (X of 8 seeds at d_in = 4000, lam = 0.3 is 3.4 GB), else 4 (the
    CPU checks use 4 or 8 seeds)."""
    return 8 if d >= 2000 else 4
_DOUT_SWEEP = (1, 5, 20, 100, 500)


def _bank_douts(d, lam):
    """Output dimensions projected at (d_in, lam): the d_out sweep's configurations (test_dout_nonmonotone at
    d_in = 500 / 2000, lam = 0.5) need all of _DOUT_SWEEP, every other configuration d_out in (1, 5)."""
    return _DOUT_SWEEP if lam == 0.5 and d in (500, _gd(2000)) else (1, 5)


def _bank(d, lam, d_out, n, *, init_scale=1.0, sigma2=0.0):
    """Eigen-projected draws of seeds 0..n-1 at (d_in, lam, d_out), computed once per chunk of seeds."""
    douts = _bank_douts(d, lam)
    assert d_out in douts, f"d_out={d_out} is not projected at (d={d}, lam={lam}): add it to _bank_douts"
    parts = []
    size = _bank_chunk(d)
    for c in range(-(-n // size)):
        key = (d, float(lam), c)
        if key not in _BANK:
            _BANK[key] = SL.spectral_draws(d, lam, douts, seeds=range(c * size, (c + 1) * size))
        parts.append(_BANK[key][d_out])
    draws = parts[0] if len(parts) == 1 else SL.SpectralDraws.concatenate(parts)
    return draws.take(n).variant(init_scale=init_scale, sigma2=sigma2)


@pytest.fixture(scope="module", autouse=True)
def _free_bank():
    """Release the eigen-projections after this module (the rest of the tier needs the device memory)."""
    yield
    _BANK.clear()


def _spectral(d, lam, d_out, n, ts, *, gamma=0.0, init_scale=1.0, sigma2=0.0, wd_convention="paper"):
    """Exact GD losses (run_gd_spectral) at times ``ts`` for seeds 0..n-1: dict of (n, len(ts)) arrays."""
    draws = _bank(d, lam, d_out, n, init_scale=init_scale, sigma2=sigma2)
    tr = SL.run_gd_spectral(draws, ETA, np.asarray(ts, dtype=float), gamma=gamma, wd_convention=wd_convention)
    return {k: np.asarray(tr[k]) for k in ("loss_train", "loss_gen")}


def _crossings(d, lam, d_out, n, loss_star, *, gamma=0.0):
    """Loss-crossing times (crossing_times) for seeds 0..n-1: (t_train, t_gen, grok_time) arrays."""
    ct = SL.crossing_times(_bank(d, lam, d_out, n), ETA, loss_star, gamma=gamma)
    tt, tg = np.asarray(ct.t_train), np.asarray(ct.t_gen)
    return tt, tg, tg - tt


def _bank_spectrum(d, lam, d_out, i):
    """Eigenvalues nu of Sigma_tr and projections w = ||(V^T D0)_i||^2 of seed ``i`` (init_scale 1), from the bank."""
    b = _bank(d, lam, d_out, i + 1)
    D0b = np.asarray(b.Sb[i]) - np.asarray(b.Tb[i])
    return np.asarray(b.nu[i]), np.sum(D0b * D0b, axis=1)


def _spectrum(data, i=0):
    """Eigenvalues of Sigma_tr = X^T X / N and projections w_i = ||(V^T D0)_i||^2 of draw ``i`` (numpy)."""
    X = np.asarray(data.X[i])
    sigma = X.T @ X / X.shape[0]
    nu, V = np.linalg.eigh(0.5 * (sigma + sigma.T))
    D0 = np.asarray(data.S0[i]) - np.asarray(data.T[i])
    return nu, np.sum((V.T @ D0) ** 2, axis=1)


def _geo_mean(x, axis=0):
    return np.exp(np.mean(np.log(x), axis=axis))


# ------------------------------------------------------------------------------------------ eq. 6


def test_eq6_mp_law(report, scale):
    """levi:eq6 -- spectrum of Sigma_tr: Marchenko-Pastur continuous part (KS) and the atom at 0."""
    d = _pick(scale, 500, _gd(4000))
    ks_tol = _pick(scale, 0.02, 0.003)
    ks_src = _pick(scale, "spec §7.3: d=500, 1 seed, KS <= 0.02 (achieved 0.0072/0.0083)",
                   "spec §7.3 GPU: KS ~ 1/d, d=2000 achieved 0.0018/0.0023 -> d=4000 <= 0.003")
    for lam in (0.3, 1.5):
        data = _draw(d, lam, 1, (0,))
        n_tr = data.n_train
        X = data.X[0]
        nu = np.asarray(jnp.linalg.eigvalsh(X.T @ X / n_tr))  # on the device (a host eigvalsh of 4000 is slow)
        zero = nu < 1e-10
        frac = float(np.mean(zero))
        exact_frac = max(d - n_tr, 0) / d
        report.check("levi:eq6", predicted=exact_frac, measured=frac, atol=1e-12,
                     source="exact: rank X = min(N, d) almost surely, so #(nu < 1e-10) = (d-N)^+",
                     what=f"atom fraction = (d-N)/d, lam={lam}, d={d}")
        report.check("levi:eq6", predicted=rmt.mp_atom(lam), measured=frac, atol=0.5 / d,
                     source="N = round(d/lam): |(d-N)/d - (1-1/lam)^+| <= 0.5/d",
                     what=f"atom fraction vs mp_atom, lam={lam}")
        if lam > 1:
            report.reject("levi:eq6", wrong=0.0, measured=frac, atol=0.5 / d,
                          source="N = round(d/lam): |(d-N)/d - (1-1/lam)^+| <= 0.5/d",
                          what=f"MP law without the atom (mass 0 at nu=0), lam={lam}")

        x = np.sort(nu[~zero])
        n = x.size
        lo, hi = np.arange(0, n) / n, np.arange(1, n + 1) / n

        def ks_cont(lam_law):
            F = (np.asarray(rmt.mp_cdf(x, lam_law)) - rmt.mp_atom(lam_law)) / min(1.0, 1.0 / lam_law)
            return float(max(np.max(hi - F), np.max(F - lo)))

        ks = ks_cont(lam)
        report.check("levi:eq6", predicted=0.0, measured=ks, atol=ks_tol, source=ks_src,
                     what=f"KS distance, continuous part vs mp_cdf, lam={lam}, d={d}")
        ks_wrong = ks_cont(1.3 * lam)
        report.reject("levi:eq6", wrong=0.0, measured=ks_wrong, atol=ks_tol, source=ks_src,
                      what=f"MP law at 1.3*lam (KS to the wrong law), lam={lam}")
        if lam > 1:
            # the whole law: the atom included (correct) vs a continuous law renormalised to mass 1 (no atom);
            # the empirical CDF jumps by the zero fraction at 0, then rises through the continuous part
            k0 = int(np.sum(zero))
            hia, loa = (k0 + np.arange(1, n + 1)) / d, (k0 + np.arange(0, n)) / d
            Fa = np.asarray(rmt.mp_cdf(x, lam))
            ks_full = float(max(abs(frac - rmt.mp_atom(lam)), np.max(hia - Fa), np.max(Fa - loa)))
            report.check("levi:eq6", predicted=0.0, measured=ks_full, atol=ks_tol, source=ks_src,
                         what=f"KS distance, whole law (atom + continuous), lam={lam}")
            Fw = (Fa - rmt.mp_atom(lam)) / (1.0 / lam)
            ks_noatom = float(max(frac, np.max(hia - Fw), np.max(Fw - loa)))
            report.reject("levi:eq6", wrong=0.0, measured=ks_noatom, atol=ks_tol, source=ks_src,
                          what=f"whole law without the atom (continuous part renormalised), lam={lam}")


# ------------------------------------------------------------------------------------------ eq. 5


def test_eq5_finite_sample_exact(report, scale):
    """levi:eq5 / levi:gd-exact / levi:eq33 -- scan GD == spectral GD == finite-spectrum formula (exact)."""
    d, lam, steps = 300, 0.5, 500
    src = "spec §7.3: exact identity in float64, rel <= 1e-10 (achieved 1.2e-14); d=300, 500 steps"
    for d_out in (1, 5):
        data = _draw(d, lam, d_out, (0,))
        nu, w = _spectrum(data)
        for gamma in (0.0, 1e-2):
            traj = SL.run_gd(data, ETA, steps, gamma=gamma, record_every=10)
            t = np.asarray(traj.times, dtype=float)
            spec = SL.run_gd_spectral(data, ETA, t, gamma=gamma)
            scan = np.concatenate([traj["loss_train"][0], traj["loss_gen"][0]])
            closed = np.concatenate([spec["loss_train"][0], spec["loss_gen"][0]])
            report.check("levi:eq5" if gamma == 0 else "levi:eq33", predicted=closed, measured=scan, rtol=1e-10,
                         source=src, what=f"run_gd (scan) vs run_gd_spectral, d_out={d_out}, gamma={gamma}")
            if gamma:
                continue
            pred = np.concatenate([L.loss_train_finite(t, nu, w, ETA, d_out=d_out, discrete=True),
                                   L.loss_gen_finite(t, nu, w, ETA, d_out=d_out, discrete=True)])
            report.check("levi:gd-exact", predicted=pred, measured=scan, rtol=1e-10, source=src,
                         what=f"run_gd vs loss_*_finite(discrete=True) on the realised spectrum, d_out={d_out}")
            tp = t[t > 0]
            scan_p = np.concatenate([traj["loss_train"][0][t > 0], traj["loss_gen"][0][t > 0]])
            paper = np.concatenate([L.loss_train_finite(2 * tp, nu, w, ETA, d_out=d_out),
                                    L.loss_gen_finite(2 * tp, nu, w, ETA, d_out=d_out)])
            report.reject("levi:eq28", wrong=paper, measured=scan_p, rtol=1e-10, source=src,
                          what=f"paper eq. 28 rate D=exp(-4 eta0 Sigma t) D0 (twice the rate), d_out={d_out}")
            flow = np.concatenate([L.loss_train_finite(tp, nu, w, ETA, d_out=d_out),
                                   L.loss_gen_finite(tp, nu, w, ETA, d_out=d_out)])
            report.reject("levi:eq5", wrong=flow, measured=scan_p, rtol=1e-10, source=src,
                          what=f"gradient-flow eq. 5 (discrete=False) taken as exact for GD, d_out={d_out}")


# ------------------------------------------------------------------------------------------ eq. 8


def test_eq8_losses(report, scale):
    """levi:eq8 / levi:eq12-loss -- MP losses vs seed-mean of exact GD at t*_tr/2, t*_tr, t*_gen."""
    d, n = _pick(scale, (500, 8), (_gd(4000), _gn(64)))
    configs = _pick(scale,
                    [(0.3, 1, 0.15), (0.3, 5, 0.15), (0.5, 5, 0.15), (0.9, 5, 0.15), (0.9, 1, 0.3)],
                    [(0.3, 1, 0.04), (0.3, 5, 0.04), (0.5, 5, 0.04), (0.9, 5, 0.1), (0.9, 1, 0.1)])
    src = _pick(scale, "spec §7.3: d=500, 8 seeds, |seed-mean log ratio| <= 0.15 ((0.9,1): 0.3); measured here: "
                       "per-seed sd of log ratio up to 0.29 (lam=0.9, d_out=1, at t*_gen)",
                "spec §7.3 GPU (projected): d=4000, 64 seeds, <= 0.04 (lam<=0.5), <= 0.1 (lam=0.9)")
    for lam, d_out, tol in configs:
        ttr = L.t_star("train", lam, EPS, ETA, d_out=d_out)
        tg = L.t_star("gen", lam, EPS, ETA, d_out=d_out)
        ts = np.array([ttr / 2, ttr, tg])
        sim = _spectral(d, lam, d_out, n, ts)
        sid = "levi:eq8" if d_out == 1 else "levi:eq12-loss"
        for which, f in (("train", L.loss_train), ("gen", L.loss_gen)):
            meas = _geo_mean(sim[f"loss_{which}"])
            pred = f(ts, lam, ETA, d_out=d_out)
            sd = np.std(np.log(sim[f"loss_{which}"] / pred), axis=0, ddof=1)
            report.check(sid, predicted=pred, measured=meas, logtol=tol, source=src,
                         what=f"L_{which} at t*_tr/2,t*_tr,t*_gen; lam={lam} d_out={d_out} d={d} {n} seeds",
                         details={"times": ts.tolist(), "per_seed_sd_log": sd.tolist()})
            report.reject(sid, wrong=f(2 * ts, lam, ETA, d_out=d_out), measured=meas, logtol=tol, source=src,
                          what=f"L_{which} with twice the rate (4 eta0 -> 8 eta0); lam={lam} d_out={d_out}")


# ------------------------------------------------------------------------------------------ crossing times


def test_tstar_crossing_times(report, scale):
    """levi:tstar / levi:grok-def / levi:fig1 -- loss-crossing times of GD vs the exact MP roots."""
    d, n = _pick(scale, (500, 8), (_gd(4000), _gn(64)))
    configs = _pick(scale,
                    [(0.3, 1, (0.05, 0.05, 0.08)), (0.9, 5, (0.06, 0.15, 0.15))],
                    [(0.3, 1, (0.015, 0.015, 0.015)), (0.9, 5, (0.03, 0.03, 0.03))])
    src = _pick(scale, "spec §7.3: d=500, 8 seeds; per-seed sd §7.2 (lam=0.3: 2.9/3.4/7.7 %; lam=0.9,d_out=5: "
                       "4/12/12 %); measured here 4.0/4.7/7.7 % and 3.5/15/16 %",
                "spec §7.3 GPU: d=4000, 64 seeds: 0.015 (lam=0.3), 0.03 (lam=0.9) (achieved <= 0.9 % with 16 seeds)")
    for lam, d_out, (tol_tr, tol_gen, tol_dt) in configs:
        lstar = L.loss_threshold(EPS, d_out)
        t_tr, t_gen, dt = _crossings(d, lam, d_out, n, lstar)
        p_tr = L.t_star("train", lam, EPS, ETA, d_out=d_out)
        p_gen = L.t_star("gen", lam, EPS, ETA, d_out=d_out)
        p_dt = L.grok_time(lam, EPS, ETA, d_out=d_out)
        tag = f"lam={lam} d_out={d_out} d={d} {n} seeds"
        rows = (("levi:tstar", "t*_tr", p_tr, t_tr, tol_tr), ("levi:tstar", "t*_gen", p_gen, t_gen, tol_gen),
                ("levi:grok-def", "Delta t", p_dt, dt, tol_dt))
        for sid, name, pred, meas, tol in rows:
            report.check(sid, predicted=pred, measured=float(np.mean(meas)), rtol=tol, source=src,
                         what=f"seed-mean {name} ({tag})",
                         details={"per_seed_sd_rel": float(np.std(meas / pred, ddof=1))})
            # factor 2 in the rate: every crossing time halves
            wrong = {"t*_tr": L.t_star("train", lam, EPS, 2 * ETA, d_out=d_out),
                     "t*_gen": L.t_star("gen", lam, EPS, 2 * ETA, d_out=d_out),
                     "Delta t": L.grok_time(lam, EPS, 2 * ETA, d_out=d_out)}[name]
            report.reject(sid, wrong=wrong, measured=float(np.mean(meas)), rtol=tol, source=src,
                          what=f"{name} with twice the rate ({tag})")
        # eq. 11 (epsilon -> 0 limit, with the d_out rule eta0 -> eta0/d_out) as a predictor of Delta t
        report.reject("levi:eq11", wrong=L.grok_time_asymptotic(lam, ETA / d_out), measured=float(np.mean(dt)),
                      rtol=tol_dt, source=src, what=f"eq. 11 Delta t (erratum levi-14) ({tag})")
        if lam == 0.3 and d_out == 1:
            # table T1 (Fig. 1 right, eps=1e-3): 441 / 561 / 120
            t1 = np.array([441.0, 561.0, 120.0])
            report.check("levi:fig1", predicted=t1, measured=np.array([p_tr, p_gen, p_dt]), atol=0.5,
                         source="spec table T1 (rounded to whole steps)",
                         what="t_star/grok_time reproduce T1 at lam=0.3, eps=1e-3")
            report.check("levi:fig1", predicted=t1[2], measured=float(np.mean(dt)), rtol=tol_dt, source=src,
                         what=f"simulated Delta t vs T1 entry 120 ({tag})")


# ------------------------------------------------------------------------------------------ accuracy map


def _gaussian_error_accuracy(C, eps):
    """P(|r|^2 / d_out < eps) for Gaussian errors r ~ N(0, C) (d_out x d_out covariance): Ruben's series.

    With c_j the eigenvalues of C and beta = min c_j, |r|^2 = sum_j c_j z_j^2 has
    P(|r|^2 < x) = sum_k a_k P(chi^2_{d_out + 2k} < x / beta), a_0 = prod (beta/c_j)^(1/2),
    a_k = (1/2k) sum_{r<k} g_{k-r} a_r, g_k = sum_j (1 - beta/c_j)^k; all a_k >= 0 and sum a_k = 1, so the
    truncation error is below 1 - sum a_k (stopped at 1e-13).  Isotropic C = L I gives the paper's map
    P(d_out/2, d_out eps/(2L)) (``accuracy_from_loss``) exactly.
    """
    c = np.linalg.eigvalsh(np.asarray(C, dtype=float))
    d = c.size
    x = d * eps
    beta = float(c.min())
    q = 1.0 - beta / c
    a = [float(np.prod(np.sqrt(beta / c)))]
    g: list[float] = []
    val = a[0] * special.gammainc(d / 2.0, x / (2.0 * beta))
    while 1.0 - sum(a) > 1e-13:
        k = len(a)
        assert k < 100_000, "Ruben series did not converge"
        g.append(float(np.sum(q**k)))
        a.append(sum(g[k - r - 1] * a[r] for r in range(k)) / (2.0 * k))
        val += a[-1] * special.gammainc(d / 2.0 + k, x / (2.0 * beta))
    return float(val)


# measured at the GPU configuration (d_in = 1000, lam = 0.5, d_out = 5, gen accuracy at the 4 times of the theory
# levels 0.1/0.5/0.9/0.99), seeds 0..63: _gaussian_error_accuracy(D_t^T D_t) - accuracy_from_loss(L_gen(t))
_ISO_BIAS_1000 = dict(mean=(0.0037, 0.0078, -0.0044, -0.0039), sd=(0.0012, 0.0029, 0.0015, 0.0019), max=0.0135,
                      seed0=(0.0033, 0.0062, -0.0038, -0.0028))


def test_accuracy_map(report, scale):
    """levi:eq9 / levi:eq12-acc -- empirical accuracies of GD vs accuracy_from_loss(measured loss).

    The generalisation errors r = x^T D_t of fresh inputs are exactly Gaussian with covariance D_t^T D_t, so the
    measured gen accuracy is also compared with the accuracy of that realised covariance
    (_gaussian_error_accuracy, within binomial noise).  The paper's map assumes isotropic errors
    (D^T D = L_gen I); at d_in = 1000 the realised D_t^T D_t has eigenvalues 0.6-1.6 of their mean, which biases
    the isotropic map for d_out = 5 by up to +0.0078 on average (measured over 64 seeds): resolved at
    N_gen = 1e6 (the wrong-variant row), within the per-seed spread of that bias (the eq. 12 row).
    """
    d, lam = 1000, 0.5
    n_gen = _pick(scale, 20_000, 1_000_000 if _NGEN_CAP is None else _NGEN_CAP)
    tol_tr = 0.03  # the training set (N = 2000) is the same at both scales
    src_tr = "spec §7.3: d=1000, lam=0.5, abs <= 0.03 (achieved 0.015); binomial sd on N_tr=2000 is 0.011"
    levels = (0.1, 0.5, 0.9, 0.99)
    for d_out in (1, 5):
        sid = "levi:eq9" if d_out == 1 else "levi:eq12-acc"
        targets = {w: np.array([L.t_star(w, lam, EPS, ETA, d_out=d_out, level=lv) for lv in levels])
                   for w in ("train", "gen")}
        steps = int(math.ceil(targets["gen"].max() / 10.0)) * 10 + 10
        data = _draw(d, lam, d_out, (0,))
        traj = SL.run_gd(data, ETA, steps, record_every=10, eps=EPS, n_gen=n_gen)
        times = np.asarray(traj.times, dtype=float)
        # the exact covariance of the gen errors at the recorded times, from the same draw's eigen-projections
        b = _bank(d, lam, d_out, 1)
        nu, D0b = np.asarray(b.nu[0]), np.asarray(b.Sb[0]) - np.asarray(b.Tb[0])
        rho = 1.0 - ETA * 2.0 * nu / d_out
        for which in ("train", "gen"):
            idx = [int(np.argmin(np.abs(times - t))) for t in targets[which]]
            loss = np.asarray(traj[f"loss_{which}"][0, idx], dtype=float)
            acc = np.asarray(traj[f"acc_{which}"][0, idx], dtype=float)
            pred = L.accuracy_from_loss(loss, EPS, d_out)
            what = f"{which} accuracy at t={times[idx].astype(int).tolist()} (theory level 0.1-0.99), d_out={d_out}"
            if which == "train":
                tol, src = tol_tr, src_tr
            else:
                covs = [(rho**t)[:, None] * D0b for t in times[idx]]
                exact = np.array([_gaussian_error_accuracy(Db.T @ Db, EPS) for Db in covs])
                assert np.allclose([np.trace(Db.T @ Db) / d_out for Db in covs], loss, rtol=1e-8), \
                    "the eigen-projections must reproduce the recorded L_gen"
                bino = float(np.max(4.0 * np.sqrt(exact * (1.0 - exact) / n_gen)))
                src_b = (f"4 binomial sd of the empirical accuracy on N_gen={n_gen:.0e} fresh inputs (8 comparisons "
                         "per run); the errors x^T D are exactly Gaussian with covariance D^T D")
                report.check(sid, predicted=exact, measured=acc, atol=bino, source=src_b,
                             what=f"gen accuracy vs the Gaussian-error accuracy of the realised covariance D_t^T D_t, "
                                  f"d_out={d_out}", details={"isotropic_map": pred.tolist()})
                if d_out == 1:  # one output: the map is exact, the tolerance is the binomial one at both sizes
                    tol = _pick(scale, 0.03, bino)
                    src = _pick(scale, "spec §7.3: d=1000, lam=0.5, N_gen=2e4, abs <= 0.03 (achieved 0.015); binomial "
                                       "sd 0.0035", src_b + " (d_out = 1: the paper's map is exact)")
                else:
                    tol = _pick(scale, 0.03, _ISO_BIAS_1000["max"] + bino)
                    src = _pick(scale, "spec §7.3: d=1000, lam=0.5, N_gen=2e4, abs <= 0.03 (achieved 0.015); binomial "
                                       "sd 0.0035",
                                "measured at this config (d_in=1000, lam=0.5, d_out=5), seeds 0..63: the isotropic map "
                                "minus the realised-covariance accuracy, mean -0.0037/-0.0078/+0.0044/+0.0039 at the 4 "
                                "times (sd <= 0.0029), max |.| 0.0135; + 4 binomial sd (spec's 0.005 was a projection)")
                    if scale == "gpu" and _NGEN_CAP is None:
                        report.reject(sid, wrong=pred, measured=acc, atol=bino, source=src_b,
                                      what="isotropic map taken as exact at d_in=1000, d_out=5 (D^T D is anisotropic: "
                                           "finite-d_in bias resolved at N_gen=1e6)",
                                      details={"realised_minus_isotropic": (exact - pred).tolist()})
            report.check(sid, predicted=pred, measured=acc, atol=tol, source=src, what=what)
            # erratum levi-10: L read as the standard deviation -> P(d/2, d eps/(2 L^2)); near accuracy 1 both
            # readings give ~1, so the variant is compared at the levels 0.1, 0.5, 0.9
            sd_reading = special.gammainc(d_out / 2.0, d_out * EPS / (2.0 * loss**2))
            report.reject(sid, wrong=sd_reading[:3], measured=acc[:3], atol=tol, source=src,
                          what=f"'standard deviation' reading (erratum levi-10), {which}, d_out={d_out}")
            report.reject(sid, wrong=2.0 * pred, measured=acc, atol=tol, source=src,
                          what=f"A = 2 Pr(|z| <= sqrt eps) as printed (erratum levi-10), {which}, d_out={d_out}")
    # the series itself: isotropic covariance -> the paper's map; one output -> erf
    assert abs(_gaussian_error_accuracy(np.eye(5) * 2e-3, EPS) - L.accuracy_from_loss(2e-3, EPS, 5)) < 1e-12
    assert abs(_gaussian_error_accuracy([[3e-3]], EPS) - L.accuracy_from_loss(3e-3, EPS, 1)) < 1e-12


# ------------------------------------------------------------------------------------------ eq. 20


def test_eq20_gd_identity(report, scale):
    """levi:eq20 -- L_gen(t+1) - L_gen(t) = -(4 eta/d_out) L_tr(t) + (4 eta^2/d_out^3) Tr(D^T Sigma^2 D), exact for GD."""
    d, lam, steps = 300, 0.5, 500
    src = "exact algebraic identity of one GD step; float64 round-off (spec §7.3: rel <= 1e-10)"
    for d_out in (1, 5):
        data = _draw(d, lam, d_out, (0,))
        traj = SL.run_gd(data, ETA, steps, record_every=1)
        l_tr = np.asarray(traj["loss_train"][0], dtype=float)
        l_gen = np.asarray(traj["loss_gen"][0], dtype=float)
        t = np.arange(steps, dtype=float)
        nu, w = _spectrum(data)
        rho = 1.0 - 2.0 * ETA * nu / d_out
        tr_sigma2 = np.sum(w * nu**2 * rho[None, :] ** (2 * t[:, None]), axis=1)  # Tr(D_t^T Sigma^2 D_t)
        meas = np.diff(l_gen)
        pred = -(4 * ETA / d_out) * l_tr[:-1] + (4 * ETA**2 / d_out**3) * tr_sigma2
        report.check("levi:eq20", predicted=pred, measured=meas, rtol=1e-10, source=src,
                     what=f"GD step identity, t=0..{steps - 1}, d_out={d_out}")
        report.reject("levi:eq20", wrong=-(4 * ETA / d_out) * l_tr[:-1], measured=meas, rtol=1e-10, source=src,
                      what=f"gradient-flow identity without the O(eta^2) GD term, d_out={d_out}")
        if d_out > 1:
            wrong = -(4 * ETA) * l_tr[:-1] + (4 * ETA**2 / d_out**3) * tr_sigma2
            report.reject("levi:eq20", wrong=wrong, measured=meas, rtol=1e-10, source=src,
                          what=f"paper's -4 eta0 L_tr without 1/d_out (erratum levi-17), d_out={d_out}")


# ------------------------------------------------------------------------------------------ GD vs flow


def _finite_root(which, loss_star, nu, w, d_out, discrete, guess):
    f = L.loss_train_finite if which == "train" else L.loss_gen_finite

    def g(t):
        return math.log(float(f(t, nu, w, ETA, d_out=d_out, discrete=discrete))) - math.log(loss_star)

    return optimize.brentq(g, 0.8 * guess, 1.25 * guess, xtol=1e-12, rtol=1e-15, maxiter=200)


def test_gd_exact_discretisation(report, scale):
    """levi:gd-exact / levi:conv-time -- exact-GD MP crossing times vs gradient flow, and which one GD follows."""
    # (a) the MP integrals: GD-exact vs gradient-flow t* differ by <= 0.32 % (spec levi:conv-time)
    flow, disc = [], []
    for lam in (0.3, 0.5, 0.9, 1.5):
        for d_out in (1, 5):
            for gamma in (0.0, 1e-2):
                for which in ("train", "gen"):
                    tf = L.t_star(which, lam, EPS, ETA, d_out=d_out, gamma=gamma)
                    if not math.isfinite(tf):
                        continue
                    flow.append(tf)
                    disc.append(L.t_star(which, lam, EPS, ETA, d_out=d_out, gamma=gamma, discrete=True))
    flow, disc = np.array(flow), np.array(disc)
    shift = flow - disc
    report.check("levi:conv-time", predicted=flow, measured=disc, rtol=0.0032,
                 source="spec levi:conv-time: GD-exact and gradient-flow t* differ by <= 0.32 % (eta0=0.01)",
                 what=f"t*(discrete=True) vs t*(flow), {len(flow)} (lam,d_out,gamma,which) finite cases",
                 details={"gd_earlier_by_steps_min": float(shift.min()), "gd_earlier_by_steps_max": float(shift.max())})
    assert np.all(shift > 0), "GD must cross earlier than gradient flow (each mode decays faster per step)"

    # (b) the same draws: the GD crossing equals the discrete finite-spectrum root, not the flow root
    d, n = _pick(scale, (500, 8), (_gd(2000), _gn(32)))
    lam, d_out = 0.3, 1
    lstar = L.loss_threshold(EPS, d_out)
    t_tr, t_gen, _ = _crossings(d, lam, d_out, n, lstar)
    r_disc, r_flow, meas = [], [], []
    for i in range(min(n, 8)):
        nu, w = _bank_spectrum(d, lam, d_out, i)
        for which, tm in (("train", t_tr[i]), ("gen", t_gen[i])):
            r_disc.append(_finite_root(which, lstar, nu, w, d_out, True, tm))
            r_flow.append(_finite_root(which, lstar, nu, w, d_out, False, tm))
            meas.append(tm)
    r_disc, r_flow, meas = np.array(r_disc), np.array(r_flow), np.array(meas)
    src = "bisection to float64 resolution vs brentq xtol 1e-12: exact up to ~1e-12 relative"
    report.check("levi:gd-exact", predicted=r_disc, measured=meas, rtol=1e-8, source=src,
                 what=f"GD crossings (crossing_times) vs roots of loss_*_finite(discrete=True), same draws, lam={lam}")
    report.reject("levi:gd-exact", wrong=r_flow, measured=meas, rtol=1e-8, source=src,
                  what="gradient-flow roots of the same finite spectra (GD is not gradient flow)",
                  details={"flow_minus_gd_steps": (r_flow - meas).tolist()})

    # (c) seed means vs the MP GD-exact and gradient-flow times: both are reported; the seed noise
    # (sd 4 %) is larger than their 0.3 % difference, which (b) resolves draw by draw
    tol = _pick(scale, 0.05, 0.015)
    srcc = _pick(scale, "spec §7.3 (levi:tstar): d=500, 8 seeds, lam=0.3: 0.05", "spec §7.3 GPU (projected): 0.015")
    for which, tm in (("train", t_tr), ("gen", t_gen)):
        pd = L.t_star(which, lam, EPS, ETA, d_out=d_out, discrete=True)
        pf = L.t_star(which, lam, EPS, ETA, d_out=d_out)
        m = float(np.mean(tm))
        report.check("levi:gd-exact", predicted=pd, measured=m, rtol=tol, source=srcc,
                     what=f"seed-mean t*_{which} vs MP GD-exact (rel {m / pd - 1:+.4f}; vs flow {m / pf - 1:+.4f})",
                     details={"rel_to_gd_exact": m / pd - 1, "rel_to_flow": m / pf - 1})


# ------------------------------------------------------------------------------------------ weight decay


def test_eq14_weight_decay_losses(report, scale):
    """levi:eq14 -- weight-decay losses vs exact GD (seed-mean log ratio), with the late-time plateau approach."""
    d, n = _pick(scale, (500, 8), (_gd(4000), _gn(64)))
    tol = _pick(scale, 0.15, 0.05)
    src = _pick(scale, "spec §7.3: d=500, 8 seeds, |seed-mean log ratio| <= 0.15; measured here: per-seed sd of the "
                       "log ratio <= 0.28 (lam=0.5, gamma=1e-3, L_gen at t*_gen)",
                "spec §7.3 GPU (projected): d=4000, <= 0.05")
    configs = [(0.3, 1, 1e-3), (0.3, 1, 1e-2), (0.5, 1, 1e-3), (0.5, 1, 1e-2), (0.5, 5, 1e-2)]
    for lam, d_out, gamma in configs:
        ttr = L.t_star("train", lam, EPS, ETA, d_out=d_out, gamma=gamma)
        tg = L.t_star("gen", lam, EPS, ETA, d_out=d_out, gamma=gamma)
        ts = np.array([ttr / 2, ttr, tg, 3 * tg, 10 * tg])
        sim = _spectral(d, lam, d_out, n, ts, gamma=gamma)
        meas = np.concatenate([_geo_mean(sim["loss_train"]), _geo_mean(sim["loss_gen"])])

        def pred_of(**kw):
            return np.concatenate([L.loss_train(ts, lam, ETA, d_out=d_out, **kw),
                                   L.loss_gen(ts, lam, ETA, d_out=d_out, **kw)])

        pred = pred_of(gamma=gamma)
        tag = f"lam={lam} d_out={d_out} gamma={gamma}"
        report.check("levi:eq14", predicted=pred, measured=meas, logtol=tol, source=src,
                     what=f"L_tr, L_gen at t*_tr/2, t*_tr, t*_gen, 3t*_gen, 10t*_gen ({tag})",
                     details={"times": ts.tolist()})
        late = np.array([False, False, False, True, True] * 2)
        report.reject("levi:eq14", wrong=pred_of(gamma=0.0)[late], measured=meas[late], logtol=tol, source=src,
                      what=f"gamma=0 prediction at 3t*_gen, 10t*_gen ({tag})")
        if d_out > 1:
            report.reject("levi:conv-wd", wrong=pred_of(gamma=gamma, wd_convention="torch")[late],
                          measured=meas[late], logtol=tol, source=src,
                          what=f"torch/paper convention mix-up (gamma_paper = d_out gamma) at late times ({tag})")


def test_eq15_wd_asymptotes(report, scale):
    """levi:eq15 -- converged GD plateaus with weight decay vs the exact Stieltjes asymptotes (gamma^2/8, not /4)."""
    d, n = _pick(scale, (1000, 8), (_gd(4000), _gn(16)))
    lam, gamma = 0.3, 1e-2
    tol = _pick(scale, 0.05, 0.02)
    src = _pick(scale, "spec §7.3: d=1000, 8 seeds, seed-mean rel <= 0.05; measured here per-seed sd 6 % (tr), "
                       "8 % (gen), single seeds -11..+6 % / -15..+12 %",
                "spec §7.3 GPU (projected): d=4000, <= 0.02")
    sim = _spectral(d, lam, 1, n, np.array([5e5, 1e6]), gamma=gamma)
    report.check("levi:eq15", predicted=np.concatenate([sim["loss_train"][:, 0], sim["loss_gen"][:, 0]]),
                 measured=np.concatenate([sim["loss_train"][:, 1], sim["loss_gen"][:, 1]]), rtol=1e-9,
                 source="slowest mode: rho^(5e5) <= exp(-2e3), so L(5e5) = L(1e6) to round-off",
                 what="GD converged: L(1e6) = L(5e5)")
    meas = np.array([np.mean(sim["loss_train"][:, 1]), np.mean(sim["loss_gen"][:, 1])])
    pred = np.array(L.wd_asymptotes(lam, gamma))
    report.check("levi:eq15", predicted=pred, measured=meas, rtol=tol, source=src,
                 what=f"seed-mean (L_tr, L_gen)(t=1e6) vs wd_asymptotes, lam={lam}, gamma={gamma}, d={d}",
                 details={"small_gamma_corrected": list(L.wd_asymptotes_small_gamma(lam, gamma))})
    paper = np.array(L.wd_asymptotes_small_gamma(lam, gamma, convention="paper"))
    report.reject("levi:eq15", wrong=paper, measured=meas, rtol=tol, source=src,
                  what="paper's gamma^2/(4(1-lam)), gamma^2/(4(1-lam)^3) (erratum levi-1)")
    assert np.all(paper / meas > 1.7), "spec §7.3: the paper's values are off by more than 1.7x"


def test_wd_grok_time(report, scale):
    """levi:fig3 / levi:eq15-dt -- simulated Delta t grows with weight decay as exact eq. 14 says."""
    d, n = _pick(scale, (1000, 8), (_gd(4000), _gn(16)))
    lam = 0.5
    gammas = (0.0, 1e-3, 1e-2)
    tol = _pick(scale, 0.07, 0.03)
    tol_inc = _pick(scale, 0.21, 0.08)
    src = _pick(scale, "spec §7.2: per-seed sd of Delta t 6.6 % (d=1000, lam=0.5) -> 3 sd/sqrt(8) = 0.07; "
                       "measured here 6.7-7.9 %",
                "projected from d=1000 with sd ~ d^-1/2 (spec §7.2): 3 x 3.3 %/sqrt(16) = 0.025 -> 0.03")
    src_inc = _pick(scale, "measured here: per-seed sd of the paired increment ratio Delta t(gamma)-Delta t(0) "
                           "over its prediction 0.17-0.21 (d=1000, 8 seeds) -> 3 sd/sqrt(8) = 0.21",
                    "projected: per-seed sd ~0.1 at d=4000 -> 3 x 0.1/sqrt(16) = 0.08")
    lstar = L.loss_threshold(EPS)
    dts = {g: _crossings(d, lam, 1, n, lstar, gamma=g)[2] for g in gammas}
    pred = np.array([L.grok_time(lam, EPS, ETA, gamma=g) for g in gammas])
    meas = np.array([np.mean(dts[g]) for g in gammas])
    report.check("levi:fig3", predicted=np.array([431.0, 439.0, 596.0]), measured=pred, atol=0.5,
                 source="spec table T4 (rounded to whole steps)", what="grok_time(gamma) reproduces T4 at lam=0.5")
    report.check("levi:fig3", predicted=pred, measured=meas, rtol=tol, source=src,
                 what=f"seed-mean Delta t at gamma = 0, 1e-3, 1e-2 (lam={lam}, d={d}, {n} seeds)")
    inc_pred = pred[1:] - pred[0]
    inc_meas = np.array([np.mean(dts[g] - dts[0.0]) for g in gammas[1:]])
    report.check("levi:eq15-dt", predicted=inc_pred, measured=inc_meas, rtol=tol_inc, source=src_inc,
                 what="paired increase Delta t(gamma) - Delta t(0), gamma = 1e-3, 1e-2 (same draws)")
    report.reject("levi:eq15-dt", wrong=np.zeros(2), measured=inc_meas, rtol=tol_inc, source=src_inc,
                  what="weight decay leaves Delta t unchanged (increment 0)")
    report.reject("levi:eq15-dt", wrong=L.grok_time_wd_paper(lam, ETA), measured=meas[2], rtol=tol, source=src,
                  what="paper's WD grokking time log(1+sqrt lam)/(2 eta0 (1-sqrt lam)^2) = 312 (erratum levi-2)")


# ------------------------------------------------------------------------------------------ init scale


def test_init_rescale(report, scale):
    """levi:init-rescale -- S0 -> alpha S0 multiplies both losses by (1+alpha^2)/2 (not 'unchanged')."""
    d, n = _pick(scale, (500, 8), (_gd(4000), _gn(64)))
    lam = 0.5
    tol = _pick(scale, 0.12, 0.03)
    src = _pick(scale, "spec §7.3: d=500, 8 seeds, rel <= 0.12 (achieved <= 0.09 with 4 seeds); measured here "
                       "per-seed sd of the ratio/c_alpha up to 0.25 (alpha=2, t*_tr)",
                "spec §7.3 GPU (projected): <= 0.03")
    ttr = L.t_star("train", lam, EPS, ETA)
    ts = np.array([0.0, ttr])
    base = np.concatenate([L.loss_train(ts, lam, ETA), L.loss_gen(ts, lam, ETA)])
    for alpha in (0.0, 0.5, 2.0):
        sim = _spectral(d, lam, 1, n, ts, init_scale=alpha)
        meas = np.concatenate([np.mean(sim["loss_train"], axis=0), np.mean(sim["loss_gen"], axis=0)]) / base
        pred = np.concatenate([L.loss_train(ts, lam, ETA, init_scale=alpha),
                               L.loss_gen(ts, lam, ETA, init_scale=alpha)]) / base
        assert np.allclose(pred, L.init_scale_factor(alpha), rtol=1e-12)
        report.check("levi:init-rescale", predicted=pred, measured=meas, rtol=tol, source=src,
                     what=f"seed-mean L(alpha)/L_th(alpha=1), train+gen at t=0, t*_tr; alpha={alpha}")
        report.reject("levi:init-rescale", wrong=np.ones_like(meas), measured=meas, rtol=tol, source=src,
                      what=f"'rescaling leaves the results unchanged' (ratio 1, erratum levi-18); alpha={alpha}")


# ------------------------------------------------------------------------------------------ label noise


def test_label_noise_fixed(report, scale):
    """levi:eq26 / eq27 / eq28 -- fixed noisy labels: GD fits the noise; plateaus sigma^2(1-lam), sigma^2 lam/(1-lam)."""
    d, n = _pick(scale, (1000, 4), (_gd(4000), _gn(8)))
    sigma2 = 0.01
    tols = _pick(scale, {0.5: 0.06, 0.9: 0.2}, {0.5: 0.02, 0.9: 0.08})
    src = _pick(scale, "spec §7.3: d=1000, 4 seeds: lam=0.5 <= 0.06 (achieved <= 3 %), lam=0.9 <= 0.2; measured here "
                       "per-seed sd 5 % / 2 % (lam=0.5 tr/gen), 23 % / 17 % (lam=0.9)",
                "spec §7.3 GPU (projected): d=4000: <= 0.02 (lam=0.5) / 0.08 (lam=0.9)")
    t_inf = 1e6
    for lam in (0.5, 0.9):
        tol = tols[lam]
        ts = np.array([300.0, 1000.0, 3000.0, t_inf])
        sim = _spectral(d, lam, 1, n, ts, sigma2=sigma2)
        m_tr, m_gen = np.mean(sim["loss_train"], axis=0), np.mean(sim["loss_gen"], axis=0)
        p_tr = L.loss_train_label_noise(t_inf, lam, ETA, sigma2, mode="fixed")
        p_gen = L.loss_gen_label_noise(t_inf, lam, ETA, sigma2, mode="fixed")
        report.check("levi:eq26", predicted=p_tr, measured=m_tr[-1], rtol=tol, source=src,
                     what=f"train plateau sigma^2(1-lam), t=1e6, lam={lam}, sigma^2={sigma2}",
                     details={"per_seed": sim["loss_train"][:, -1].tolist()})
        report.check("levi:eq27", predicted=p_gen, measured=m_gen[-1], rtol=tol, source=src,
                     what=f"gen plateau sigma^2 lam/(1-lam), t=1e6, lam={lam}",
                     details={"per_seed": sim["loss_gen"][:, -1].tolist()})
        w_tr = L.loss_train_label_noise(t_inf, lam, ETA, sigma2, mode="paper")
        w_gen = L.loss_gen_label_noise(t_inf, lam, ETA, sigma2, mode="paper")
        report.reject("levi:eq26", wrong=w_tr, measured=m_tr[-1], rtol=tol, source=src,
                      what=f"paper eq. 26: train floor sigma^2 (erratum levi-4), lam={lam}")
        report.reject("levi:eq27", wrong=w_gen, measured=m_gen[-1], rtol=tol, source=src,
                      what=f"paper eq. 27: gen -> 0 (erratum levi-4), lam={lam}")
        if lam == 0.5:
            # the corrected time-dependent solution (eq. 28 with the noise fit) at intermediate times
            tm = ts[:3]
            tol_t = _pick(scale, 0.1, 0.04)
            src_t = _pick(scale, "measured here: per-seed sd <= 6.4 % at t in {300,1000,3000}, 4 seeds -> 3 sd/2 = 0.1",
                          "projected: sd ~ d^-1/2 -> 0.04 with 8 seeds at d=4000")
            pred_t = L.loss_gen_label_noise(tm, lam, ETA, sigma2, mode="fixed")
            report.check("levi:eq28", predicted=pred_t, measured=m_gen[:3], rtol=tol_t, source=src_t,
                         what=f"L_gen(t) with fixed noise at t = 300, 1000, 3000, lam={lam}")
            report.reject("levi:eq28", wrong=L.loss_gen_label_noise(tm, lam, ETA, sigma2, mode="paper"),
                          measured=m_gen[:3], rtol=tol_t, source=src_t,
                          what="paper: clean dynamics, noise does not enter L_gen (erratum levi-4)")


def test_noise_fresh(report, scale):
    """levi:noise-fresh -- label noise redrawn every step: stationary gen floor ~ eta sigma^2 min(lam,1)/d_out."""
    d, n = _pick(scale, (500, 3), (_gd(2000), _gn(16)))
    lam, sigma2, steps, window = 0.5, 0.01, 50_000, 10_000
    tol = _pick(scale, 0.05, 0.01)
    src = _pick(scale, "spec §7.3: d=500, 3 seeds, 5e4 steps, last 1e4 steps within 5 % (achieved <= 2 %); "
                       "measured here <= 0.5 %",
                "spec §7.3 GPU (projected): many seeds, 1 %")
    traj = SL.run_gd_fresh_noise(_draw(d, lam, 1, range(n)), ETA, steps, sigma2=sigma2, record_every=10)
    late = np.asarray(traj.times) > steps - window
    lg = np.mean(np.asarray(traj["loss_gen"])[:, late], axis=1)
    ltr = np.mean(np.asarray(traj["loss_train"])[:, late], axis=1)
    p_gen = L.loss_gen_label_noise(float(steps), lam, ETA, sigma2, mode="fresh")
    report.check("levi:noise-fresh", predicted=p_gen, measured=float(np.mean(lg)), rtol=tol, source=src,
                 what=f"time-averaged L_gen over the last 1e4 of 5e4 steps (floor ~ eta sigma^2 lam), d={d}, {n} seeds",
                 details={"per_seed": lg.tolist()})
    report.reject("levi:noise-fresh", wrong=L.loss_gen_label_noise(float(steps), lam, ETA, sigma2, mode="fixed"),
                  measured=float(np.mean(lg)), rtol=tol, source=src,
                  what="fixed-noise floor sigma^2 lam/(1-lam) (labels drawn once)")
    report.reject("levi:noise-fresh", wrong=L.loss_gen_label_noise(float(steps), lam, ETA, sigma2, mode="paper"),
                  measured=float(np.mean(lg)), rtol=tol, source=src, what="paper: L_gen -> 0")
    # train loss on the current noisy labels.  The spec's form L0_tr + sigma^2 omits the O(eta) part of
    # the injected noise that GD fits; the core (mode="fresh") includes it:
    # E L_tr = L0_tr + sigma^2 + (eta sigma^2 lam/d_out) E[nu (1 - rho^{2t})/(1 - eta nu/d_out); nu > 0].
    p_tr = L.loss_train_label_noise(float(steps), lam, ETA, sigma2, mode="fresh")
    spec_form = L.loss_train(float(steps), lam, ETA) + sigma2
    tol_tr = _pick(scale, 0.0015, 0.0005)
    src_tr = _pick(scale, "measured here: per-seed sd of the window-averaged L_tr 0.08 % -> 3 sd/sqrt(3) = 0.15 %",
                   "projected: 3 x 0.04 %/sqrt(16) -> 0.05 %")
    report.check("levi:noise-fresh", predicted=p_tr, measured=float(np.mean(ltr)), rtol=tol_tr, source=src_tr,
                 what="time-averaged L_tr (current noisy labels) vs core, incl. the O(eta sigma^2 lam) fit term",
                 details={"per_seed": ltr.tolist()})
    report.reject("levi:noise-fresh", wrong=spec_form, measured=float(np.mean(ltr)), rtol=tol_tr, source=src_tr,
                  what="spec form L0_tr + sigma^2 (omits the O(eta) term; finding of this check)")


# ------------------------------------------------------------------------------------------ d_out


def test_dout_nonmonotone(report, scale):
    """levi:fig2 / levi:dout-max -- Delta t(d_out) rises then falls (eps=1e-3, level 0.95, lam=0.5)."""
    d, n = _pick(scale, (500, 4), (_gd(2000), _gn(16)))
    lam, level = 0.5, 0.95
    d_outs = (1, 5, 20, 100, 500)
    # per-seed sd of Delta t/prediction at d_in=500 (spec §7.2 for d_out=1, 5 at level erf sqrt 2; measured
    # here with 8 seeds for 20, 100, 500): 10.8, 7.0, 3.1, 1.7, 1.7 %
    sd500 = {1: 0.108, 5: 0.070, 20: 0.031, 100: 0.017, 500: 0.017}
    pred = np.array([L.grok_time(lam, EPS, ETA, d_out=k, level=level) for k in d_outs])
    report.check("levi:fig2", predicted=np.array([430.0, 1626.0, 4187.0, 7984.0, 5201.0]), measured=pred, atol=0.5,
                 source="spec table T3 (rounded to whole steps)", what="grok_time(d_out) reproduces T3 at lam=0.5")
    meas = []
    for k, p in zip(d_outs, pred):
        dt = _crossings(d, lam, k, n, L.loss_threshold(EPS, k, level))[2]
        m = float(np.mean(dt))
        meas.append(m)
        tol = max(3 * sd500[k] * math.sqrt(500 / d) / math.sqrt(n), 0.01)
        src = (f"3 sd/sqrt({n}) with per-seed sd {100 * sd500[k]:.1f} % at d_in=500 (spec §7.2 / measured here, 8 seeds)"
               + ("" if d == 500 else f", scaled by (500/{d})^1/2, floor 1 % (projected)"))
        report.check("levi:fig2", predicted=p, measured=m, rtol=tol, source=src,
                     what=f"seed-mean Delta t, d_out={k} (d_in={d}, {n} seeds)")
        if k > 1:
            report.reject("levi:fig2", wrong=k * pred[0], measured=m, rtol=tol, source=src,
                          what=f"time rescaling only, Delta t = d_out * Delta t(1) (monotone), d_out={k}")
    meas = np.array(meas)
    k_pred, k_meas = d_outs[int(np.argmax(pred))], d_outs[int(np.argmax(meas))]
    report.check("levi:dout-max", predicted=k_pred, measured=k_meas, rtol=1e-12,
                 source="grid argmax; the gaps between grid values (>= 25 %) exceed the seed-mean tolerances",
                 what=f"argmax over d_out in {d_outs} of Delta t (rise then fall)",
                 details={"dout_max_continuous": list(L.dout_max(lam, EPS, ETA, level=level))})
    report.reject("levi:dout-max", wrong=d_outs[-1], measured=k_meas, rtol=1e-12,
                  source="grid argmax", what="monotone increase in d_out (argmax at the largest d_out)")


# ------------------------------------------------------------------------------------------ asymptotics


# spec table T2 (relative errors vs the exact Delta t, eps = 1e-2, 1e-3, 1e-4, 1e-6, 1e-12)
_T2_EPS = (1e-2, 1e-3, 1e-4, 1e-6, 1e-12)
_T2 = {
    0.3: {"exact": (94.5, 120.1, 136.4, 155.0, 174.8), "W": (30, 19, 14, 9, 4), "eq25": (14, 19, 16, 10, 5),
          "eq11": (105, 62, 42, 25, 11)},
    0.5: {"exact": (319.2, 431.3, 501.5, 577.1, 651.4), "W": (23, 14, 10, 6, 3), "eq25": (-50, 9, 11, 8, 3),
          "eq11": (124, 66, 43, 24, 10)},
    0.9: {"exact": (9417, 20481, 30858, 42649, 51321), "W": (32, 12, 6, 3, 1),
          "eq25": (np.nan, np.nan, np.nan, 4, 2), "eq11": (499, 175, 83, 32, 10)},
}


def test_asymptotic_forms_vs_exact(report, scale):
    """levi:eq21 / eq22 / eq10 / eq23 / eq24 / eq25 / eq11 -- asymptotic forms vs the exact reference (no simulation)."""
    # --- late-time losses vs exact eq. 8, as a function of eta0 t (and x = 4 eta0 t (1-sqrt lam)^2)
    for lam in (0.3, 0.9):
        errs21, errs22 = [], []
        for e0t in (10.0, 30.0, 100.0):
            t = e0t / ETA
            bound = 2 * 3 / (64 * e0t * math.sqrt(lam))
            src = f"spec §7.3: rel <= 2*3/(64 eta0 t sqrt lam) = {bound:.2g} for eta0 t >= 10"
            ex_tr, ex_gen = L.loss_train(t, lam, ETA), L.loss_gen(t, lam, ETA)
            late_tr, late_gen = L.loss_train_late(t, lam, ETA), L.loss_gen_late(t, lam, ETA)
            report.check("levi:eq21", predicted=ex_tr, measured=late_tr, rtol=bound, source=src,
                         what=f"late-time L_tr (leading term) vs exact, lam={lam}, eta0 t={e0t:g}")
            report.check("levi:eq22", predicted=ex_gen, measured=late_gen, rtol=bound, source=src,
                         what=f"late-time L_gen vs exact, lam={lam}, eta0 t={e0t:g}")
            errs21.append(abs(late_tr / ex_tr - 1))
            errs22.append(abs(late_gen / ex_gen - 1))
        # the error shrinks like 1/(eta0 t): ratio 10 between eta0 t = 10 and 100 (next order ~1/(eta0 t)^2)
        ratio = errs21[0] / errs21[2]
        src = "next-order correction O((eta0 t)^-1) relative to the error: <= 2*3/(64*10*sqrt lam) ~ 2-3 %, x2"
        report.check("levi:eq21", predicted=10.0, measured=ratio, rtol=0.06, source=src,
                     what=f"error(eta0 t=10)/error(100) = 10 (error ~ 3/(64 eta0 t sqrt lam)), lam={lam}")
        report.reject("levi:eq21", wrong=math.sqrt(10.0), measured=ratio, rtol=0.06, source=src,
                      what=f"error ~ (eta0 t)^-1/2 (wrong exponent), lam={lam}")
        a = (1 - math.sqrt(lam)) ** 2
        errs10 = []
        for x in (10.0, 30.0, 100.0):
            t = x / (4 * ETA * a)
            ex = L.loss_gen(t, lam, ETA)
            simple = L.loss_gen_late_simple(t, lam, ETA)
            report.check("levi:eq10", predicted=ex, measured=simple, rtol=2 * 1.5 / x,
                         source=f"spec §7.3: eq10-gen rel <= 2*1.5/x = {3 / x:.2g} for x >= 10",
                         what=f"L_gen = L_tr/(1-sqrt lam)^2 vs exact, lam={lam}, x=4 eta0 t a={x:g}")
            errs10.append(abs(simple / ex - 1))
        ratio10 = errs10[0] / errs10[2]
        src10 = "next order of the gen relation: error = 1.5/x (1 + O(1/x)), O(1/x) <= 10 % at x=10"
        report.check("levi:eq10", predicted=10.0, measured=ratio10, rtol=0.1, source=src10,
                     what=f"error(x=10)/error(x=100) = 10 (error ~ 1.5/x), lam={lam}")
        report.reject("levi:eq10", wrong=math.sqrt(10.0), measured=ratio10, rtol=0.1, source=src10,
                      what=f"error ~ x^-1/2 (wrong exponent), lam={lam}")

    # --- grokking-time approximations vs the exact Delta t: spec table T2, within 1 % (percentage points)
    src_t2 = "spec table T2 (relative errors rounded to 1 %): reproduce each entry within 1 % (abs 0.01)"
    for lam, row in _T2.items():
        exact = np.array([L.grok_time(lam, e, ETA) for e in _T2_EPS])
        report.check("levi:tstar", predicted=np.array(row["exact"]), measured=exact, rtol=0.01,
                     source="spec table T2 exact Delta t (4 significant digits), within 1 %",
                     what=f"exact Delta t at eps=1e-2..1e-12, lam={lam}")
        forms = {"W": ("levi:eq23", np.array([L.grok_time_lambertw(lam, e, ETA) for e in _T2_EPS])),
                 "eq25": ("levi:eq25", np.array([L.grok_time_eq25(lam, e, ETA) for e in _T2_EPS])),
                 "eq11": ("levi:eq11", np.full(len(_T2_EPS), L.grok_time_asymptotic(lam, ETA)))}
        for key, (sid, approx) in forms.items():
            ref = np.array(row[key], dtype=float) / 100.0
            err = approx / exact - 1.0
            defined = np.isfinite(ref)
            assert np.array_equal(np.isnan(err), ~defined), f"{key} must be NaN exactly where T2 says (lam={lam})"
            report.check(sid, predicted=ref[defined], measured=err[defined], atol=0.01, source=src_t2,
                         what=f"T2 row: rel. error of {key} vs exact Delta t at eps=1e-2..1e-12, lam={lam}")
    # eq. 11 at lam = 0.5: the error shrinks only like 1/log(1/eps) (one row per eps)
    lam = 0.5
    ex = np.array([L.grok_time(lam, e, ETA) for e in _T2_EPS])
    dt11 = L.grok_time_asymptotic(lam, ETA)
    for e, x, ref in zip(_T2_EPS, ex, _T2[lam]["eq11"]):
        report.check("levi:eq11", predicted=ref / 100.0, measured=dt11 / x - 1.0, atol=0.01, source=src_t2,
                     what=f"eq. 11 rel. error vs exact Delta t, lam=0.5, eps={e:g} (T2: +{ref} %)")
    assert np.all(np.diff(dt11 / ex - 1.0) < 0), "eq. 11's error must shrink monotonically as eps -> 0"
    report.reject("levi:eq11", wrong=dt11, measured=ex[1], rtol=0.08,
                  source="the Delta t tolerance of the simulation check (spec §7.3 levi:tstar, 0.08)",
                  what="'eq. 11 agrees with the numerics at eps=1e-3' (erratum levi-14), lam=0.5")


# ------------------------------------------------------------------------------------------ GPU time budget
# The dominant device programs of the GPU configuration, for verify/budget.py (docs/verification/gpu-budget.md).


def _budget_bank(d, lam, douts=(1, 5)):
    """One chunk of the eigen-projection bank: draws of n seeds, eigh of Sigma_tr, projections (spectral_draws)."""

    def build(n, _steps):
        import jax

        def make_inputs():
            keys = jax.numpy.stack([jax.random.PRNGKey(1000 * d + s) for s in range(n)])
            draws = [SL.make_teacher_student(keys, d, lam, k, init_scale=1.0, sigma2=1.0) for k in douts]
            return (draws[0].X, tuple(x.T for x in draws), tuple(x.S0 for x in draws), tuple(x.delta for x in draws))

        return SL._project_fn(len(douts)), make_inputs

    return build


def _budget_eval(d, d_out, n_t, crossing=False):
    """Exact-GD losses at n_t times (or the bisection crossing times) of n seeds from their projections."""

    def build(n, _steps):
        import jax
        import jax.numpy as jnp

        def make_inputs():
            k = jax.random.split(jax.random.PRNGKey(0), 5)
            shape = (n, d, d_out)
            args = (jnp.abs(jax.random.normal(k[0], (n, d))), jax.random.normal(k[1], shape),
                    jax.random.normal(k[2], shape), jax.random.normal(k[3], shape), jnp.ones(n), jnp.ones(n),
                    jnp.zeros(n), jnp.full(n, ETA), jnp.zeros(n))
            return args + ((jnp.full((n,), 1e-4),) if crossing else (jnp.ones((n, n_t)),))

        def program(*args):
            dec = SL._projected_fn(1)(*args[:9])
            return SL._crossing_fn(1)(dec, args[9]) if crossing else SL._spectral_fns(1)[1](dec, args[9])

        return program, make_inputs

    return build


def _budget_draw_eigvalsh(d, lam):
    def build(_n, _steps):
        import jax
        import jax.numpy as jnp

        def make_inputs():
            return (jax.random.normal(jax.random.PRNGKey(0), (int(round(d / lam)), d), dtype=jnp.float64),)

        return (lambda X: jnp.linalg.eigvalsh(X.T @ X / X.shape[0])), make_inputs

    return build


def _budget_run_gd(d, lam, d_out, record_every, n_gen_unit=0, eps=EPS):
    """run_gd's engine program (explicit GD, losses and, with n_gen, accuracies on fresh inputs).
    ``n`` = seeds, or with ``n_gen_unit`` the number of fresh inputs in units of n_gen_unit."""

    def build(n, steps):
        import jax
        import jax.numpy as jnp

        from budget import engine_program
        from grokclocks.sim.train import optax_init, sgd_weight_decay

        seeds = 1 if n_gen_unit else n

        def make_inputs():
            data = SL.draw_teacher_student(d, lam, d_out, seeds=list(range(seeds)))
            inputs = dict(SL._gram(data.X, data.delta, 1), T=data.T, eta=jnp.asarray(ETA), decay=jnp.asarray(0.0))
            if n_gen_unit:
                inputs.update(X=data.X, delta=data.delta, eps=jnp.asarray(eps),
                              X_gen=jax.random.normal(jax.random.PRNGKey(1), (1, n * n_gen_unit, d)))
            axes = SL._batch_axes(inputs, ("eta", "decay"), 0, 1, shared=("eps",))
            return optax_init(sgd_weight_decay, data.S0, inputs, axes), inputs

        inputs_abs = jax.eval_shape(make_inputs)[1]
        axes = SL._batch_axes(inputs_abs, ("eta", "decay"), 0, 1, shared=("eps",))
        return engine_program(SL._LINEAR_STEP, SL._linear_metrics, record_every, steps // record_every, axes), make_inputs

    return build


def _budget_fresh(d, lam, record_every=10):
    """run_gd_fresh_noise: per step one Gaussian kick per mode (eigenbasis), metrics every record."""

    def build(n, steps):
        import jax
        import jax.numpy as jnp

        from budget import engine_program

        def make_inputs():
            data = SL.draw_teacher_student(d, lam, 1, seeds=list(range(n)))
            f = lambda x: jnp.full((n,), x)  # noqa: E731
            D0b, inp = SL._fresh_prep_fn(1)(data.X, data.T, data.S0, data.key, f(ETA), f(0.0), f(0.1), f(0))
            return (D0b, jnp.zeros((n,), jnp.int32)), inp

        n_rest = (int(round(d / lam)) - d)
        return engine_program(SL._fresh_step, SL._fresh_metrics(n_rest), record_every, steps // record_every,
                              [0]), make_inputs

    return build


def _gpu_budget():
    from grokclocks.verification import BudgetItem as B

    f64 = dict(precision="float64")
    items = [B("test_eq6_mp_law", _budget_draw_eigvalsh(4000, lam), 1, 1, 1, 1, config=f"d_in=4000, lam={lam}: "
               "eigvalsh of Sigma_tr (no vectors)", **f64) for lam in (0.3, 1.5)]
    items.append(B("test_eq5_finite_sample_exact", _budget_run_gd(300, 0.5, 5, 10), 1, 500, 1, 500, calls=4,
                   config="d_in=300, 500 GD steps, (d_out, gamma) in {1,5} x {0,1e-2} (same as CPU)", **f64))
    for lam in (0.3, 0.5, 0.9):  # the bank: the first test to need (d, lam) pays; test_eq8_losses needs all three
        items.append(B("test_eq8_losses", _budget_bank(4000, lam), 8, 1, 1, 1, calls=8,
                       config=f"bank: d_in=4000, lam={lam}, 64 seeds in chunks of 8, eigh + projections for d_out 1, 5",
                       note="shared by eq8, tstar, eq14, eq15, wd, init, label noise", **f64))
    items.append(B("test_eq8_losses", _budget_eval(4000, 5, 3), 64, 1, 8, 1, calls=10,
                   config="exact-GD losses of 64 seeds at 3 times from the projections", **f64))
    items.append(B("test_tstar_crossing_times", _budget_eval(4000, 5, 0, crossing=True), 64, 1, 8, 1, calls=2,
                   config="bisection crossing times, 64 seeds, d_in=4000", **f64))
    for d_out, steps in ((1, 1280), (5, 3800)):
        items.append(B("test_accuracy_map", _budget_run_gd(1000, 0.5, d_out, 10, n_gen_unit=10_000), 100, steps, 2, 200,
                       config=f"d_in=1000, d_out={d_out}, {steps} GD steps, accuracies every 10 steps on N_gen=1e6 "
                              "fresh inputs (seeds axis = N_gen/1e4)", **f64))
    items.append(B("test_eq20_gd_identity", _budget_run_gd(300, 0.5, 5, 1), 1, 500, 1, 500, calls=2,
                   config="d_in=300, 500 GD steps recorded every step (same as CPU)", **f64))
    items.append(B("test_gd_exact_discretisation", _budget_bank(2000, 0.3), 8, 1, 1, 1, calls=4,
                   config="bank: d_in=2000, lam=0.3, 32 seeds", **f64))
    items.append(B("test_eq14_weight_decay_losses", _budget_eval(4000, 5, 5), 64, 1, 8, 1, calls=10,
                   config="5 (lam, d_out, gamma) configs x 2, 64 seeds, 5 times, from the bank", **f64))
    items.append(B("test_eq15_wd_asymptotes", _budget_eval(4000, 1, 2), 16, 1, 8, 1,
                   config="16 seeds from the bank", **f64))
    items.append(B("test_wd_grok_time", _budget_eval(4000, 1, 0, crossing=True), 16, 1, 8, 1, calls=3,
                   config="crossings at 3 gammas, 16 seeds, from the bank", **f64))
    items.append(B("test_init_rescale", _budget_eval(4000, 1, 2), 64, 1, 8, 1, calls=3,
                   config="3 student scales, 64 seeds, from the bank", **f64))
    items.append(B("test_label_noise_fixed", _budget_eval(4000, 1, 4), 8, 1, 8, 1, calls=2,
                   config="lam 0.5, 0.9 with sigma2=0.01, 8 seeds, from the bank", **f64))
    items.append(B("test_noise_fresh", _budget_fresh(2000, 0.5), 16, 50_000, 2, 2000,
                   config="d_in=2000, 16 seeds, 5e4 steps with fresh label noise (eigenbasis)", **f64))
    items.append(B("test_dout_nonmonotone", _budget_bank(2000, 0.5, _DOUT_SWEEP), 8, 1, 1, 1, calls=2,
                   config="bank: d_in=2000, lam=0.5, 16 seeds, d_out 1..500", **f64))
    items.append(B("test_asymptotic_forms_vs_exact", None, 1, 1, 1, 1, host_s=0.6, config="host only (core formulas)",
                   note="wall time of the CPU tier on 2 shared cores"))
    return items


GPU_BUDGET = _gpu_budget()
