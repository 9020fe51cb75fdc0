"""Levi et al.: figure and table reproductions, and the vectorised grokking-time grid (Fig. 7)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .. import _mpgrid
from .. import _validate as V
from .._constants import ERF_SQRT2
from ..citations import cites
from ._approx import grok_time_asymptotic
from ._conventions import _d_out, _eps, _eta0, _lam_not_one, _level
from ._crossing._times import _delay_from_crossings, _t_star_flat
from ._late import loss_gen_late, loss_gen_late_simple, loss_train_late
from ._losses import loss_gen, loss_train

_TINY = float(np.finfo(np.float64).tiny)  # smallest normal double, 2.2e-308


_T1_LAMS = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99)
_T3_DOUTS = (1, 5, 20, 50, 100, 200, 500, 700, 1000, 1500)
_T4_GAMMAS = (0.0, 1e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1)


def _times_grid(lams, epss, eta0, d_outs, gammas, level):
    """t_tr, t_gen, dt over the outer product of the given 1-d parameter lists (in that order), vectorised
    per d_out (the crossing-time engine `_times`; dt with the small-λ delay as in `grok_time`)."""
    shape = (len(lams), len(epss), len(d_outs), len(gammas))
    ttr, tgen, dt = np.empty(shape), np.empty(shape), np.empty(shape)
    la, e, g = (np.broadcast_to(np.asarray(v, dtype=np.float64).reshape(sh), (shape[0], shape[1], shape[3])).reshape(-1)
                for v, sh in ((lams, (-1, 1, 1)), (epss, (1, -1, 1)), (gammas, (1, 1, -1))))
    one = np.ones(la.shape)
    sub = (shape[0], shape[1], shape[3])
    for k, d in enumerate(d_outs):
        args = (la, e, eta0 * one, float(d), g, level * one, one)
        tt, tg = _t_star_flat("train", *args, False), _t_star_flat("gen", *args, False)
        ttr[:, :, k, :], tgen[:, :, k, :] = tt.reshape(sub), tg.reshape(sub)
        dt[:, :, k, :] = _delay_from_crossings(tt, tg, la, eta0 * one, float(d), g, False).reshape(sub)
    return ttr, tgen, dt


def _list(x, name, check):
    return [float(v) for v in check(x, name).reshape(-1)]


def _int_list(x, name):
    if isinstance(x, (str, bytes)) or not np.iterable(x) or len(x) == 0:
        raise V.DomainError(f"{name} must be a non-empty sequence of integers >= 1 (got {V.show(x)})")
    return [V.integer_at_least(d, name, 1) for d in x]


@cites("levi:fig1")
def fig1_table(lams=_T1_LAMS, epss=(1e-2, 1e-3, 1e-4), eta0=0.01, *, level=ERF_SQRT2):
    r"""Table T1 / Fig. 1 (right): exact crossing and grokking times versus λ, and eq. 11.

    .. math:: t^*_{\rm tr},\ t^*_{\rm gen},\ \Delta t=t^*_{\rm gen}-t^*_{\rm tr}\quad(d_{\rm out}=1,\ \gamma=0)

    In words: `t_star` for both accuracies and their difference `grok_time` at d_out = 1 without weight decay,
    on the grid `lams` × `epss`, with the ε → 0 limit `grok_time_asymptotic` (eq. 11) beside them.

    Parameters
    ----------
    lams : sequence of float
        Aspect ratios λ = d_in/N_tr > 0, the rows; default the 12 values of the spec's table T1 (0.05 to
        0.99).
    epss : sequence of float
        Error thresholds ε > 0, the columns; default 10⁻², 10⁻³, 10⁻⁴.
    eta0 : float
        η₀, the gradient-descent learning rate (step size), a scalar > 0; default 0.01, the paper's.
    level : float
        Accuracy level ℓ in (0, 1): a crossing time is where the accuracy reaches ℓ. Default `ERF_SQRT2` =
        erf(√2) ≈ 0.9545, the paper's "95 %", for which L* = ε/4 exactly at d_out = 1. This is the level
        of the paper's Fig. 1.

    Returns
    -------
    dict of ndarray
        `lam`, `eps`, and `t_train`, `t_gen`, `grok_time` of shape (len(lams), len(epss)) in GD steps, and
        `eq11` (`grok_time_asymptotic`, NaN for λ ≥ 1 where eq. 11 is undefined).

    References
    ----------
    Levi et al., Fig. 1; spec `levi:fig1` (table T1).
    """
    ls = _list(lams, "lams", V.positive)
    es = _list(epss, "epss", V.positive)
    et = V.scalar(_eta0(eta0), "eta0")
    lv = V.scalar(_level(level), "level")
    ttr, tgen, dt = _times_grid(ls, es, et, [1], [0.0], lv)
    eq11 = np.array([grok_time_asymptotic(la, et) if la < 1 else np.nan for la in ls])
    return {"lam": np.array(ls), "eps": np.array(es), "t_train": ttr[:, :, 0, 0], "t_gen": tgen[:, :, 0, 0],
            "grok_time": dt[:, :, 0, 0], "eq11": eq11}


@cites("levi:fig2", "levi:eq12-loss")
def fig2_table(d_outs=_T3_DOUTS, lams=(0.5, 0.7, 0.9), eps=1e-3, eta0=0.01, *, level=0.95):
    r"""Table T3 / Fig. 2 (right): exact crossing and grokking times versus the output dimension d_out.

    .. math:: \mathcal L^{(d_{\rm out})}(t)=\frac{1}{d_{\rm out}}\mathcal L^{(1)}(\eta_0/d_{\rm out},t),\qquad
        \mathcal L^*=\frac{d_{\rm out}\epsilon}{2P^{-1}(d_{\rm out}/2,\ell)}

    In words: `t_star` and `grok_time` (γ = 0) on the grid `d_outs` × `lams`; the loss at d_out is the d_out =
    1 loss at learning rate η₀/d_out divided by d_out, and the threshold L* is that of `loss_threshold`.

    Parameters
    ----------
    d_outs : sequence of int
        Output dimensions d_out ≥ 1, the rows; default the 10 values of the spec's table T3 (1 to 1500).
    lams : sequence of float
        Aspect ratios λ = d_in/N_tr > 0, the columns; default 0.5, 0.7, 0.9.
    eps : float
        ε, the threshold on a sample's squared error (averaged over the d_out outputs) below which the
        sample counts as correct; ε > 0, a scalar; default 10⁻³, the paper's.
    eta0 : float
        η₀, the gradient-descent learning rate (step size), a scalar > 0; default 0.01, the paper's.
    level : float
        Accuracy level ℓ in (0, 1). Default 0.95, the level of the paper's figure (its "95 %" is 0.95 in
        Figs. 2 and 7 but erf(√2) in §3.1.3 and App. B, spec `levi:conv-acc`), so that the table
        reproduces the figure; every non-figure function of `grokclocks.linear` defaults to `ERF_SQRT2` =
        erf(√2) ≈ 0.9545 instead. Pass `level=ERF_SQRT2` to compare with them.

    Returns
    -------
    dict of ndarray
        `d_out`, `lam`, and `t_train`, `t_gen`, `grok_time` of shape (len(d_outs), len(lams)) in GD steps
        (`inf` where an accuracy never reaches the level, `grok_time` NaN where neither does).

    References
    ----------
    Levi et al., Fig. 2; spec `levi:fig2` (table T3), `levi:eq12-loss`, `levi:conv-acc`.
    """
    ds = _int_list(d_outs, "d_outs")
    ls = _list(lams, "lams", V.positive)
    e = V.scalar(_eps(eps), "eps")
    et = V.scalar(_eta0(eta0), "eta0")
    lv = V.scalar(_level(level), "level")
    ttr, tgen, dt = _times_grid(ls, [e], et, ds, [0.0], lv)
    tr = lambda a: a[:, 0, :, 0].T  # noqa: E731
    return {"d_out": np.array(ds), "lam": np.array(ls), "t_train": tr(ttr), "t_gen": tr(tgen), "grok_time": tr(dt)}


@cites("levi:fig3", "levi:eq14")
def fig3_table(gammas=_T4_GAMMAS, lams=(0.3, 0.5, 0.7, 0.9, 1.5), eps=1e-3, eta0=0.01, *, level=ERF_SQRT2,
               d_out=1):
    r"""Table T4 / Fig. 3 (right): exact crossing and grokking times versus the weight decay γ.

    .. math:: t^*\ \text{from eq. 14},\qquad \infty\ \text{where}\ \mathcal L(\infty;\gamma)\ge\mathcal L^*

    In words: `t_star` and `grok_time` with the weight-decay losses of eq. 14 on the grid `gammas` × `lams`; a
    crossing is `inf` where the loss's asymptote stays at or above L*.

    Parameters
    ----------
    gammas : sequence of float
        Weight decays γ ≥ 0 in the paper convention, the rows; default the 7 values of the spec's table T4
        (0 to 0.1).
    lams : sequence of float
        Aspect ratios λ = d_in/N_tr > 0, the columns; default 0.3, 0.5, 0.7, 0.9, 1.5.
    eps : float
        ε, the threshold on a sample's squared error (averaged over the d_out outputs) below which the
        sample counts as correct; ε > 0, a scalar; default 10⁻³, the paper's.
    eta0 : float
        η₀, the gradient-descent learning rate (step size), a scalar > 0; default 0.01, the paper's.
    level : float
        Accuracy level ℓ in (0, 1): a crossing time is where the accuracy reaches ℓ. Default `ERF_SQRT2` =
        erf(√2) ≈ 0.9545, the paper's "95 %", for which L* = ε/4 exactly at d_out = 1. This is the level
        of the spec's table T4.
    d_out : int
        d_out, the output dimension (number of teacher outputs); an integer ≥ 1. Default 1.

    Returns
    -------
    dict of ndarray
        `gamma`, `lam`, and `t_train`, `t_gen`, `grok_time` of shape (len(gammas), len(lams)) in GD steps
        (`inf` = never; `grok_time` NaN when both never).

    References
    ----------
    Levi et al., Fig. 3; spec `levi:fig3` (table T4), `levi:eq14`.
    """
    gs = _list(gammas, "gammas", V.nonnegative)
    ls = _list(lams, "lams", V.positive)
    e = V.scalar(_eps(eps), "eps")
    et = V.scalar(_eta0(eta0), "eta0")
    lv = V.scalar(_level(level), "level")
    d = _d_out(d_out)
    ttr, tgen, dt = _times_grid(ls, [e], et, [d], gs, lv)
    tr = lambda a: a[:, 0, 0, :].T  # noqa: E731
    return {"gamma": np.array(gs), "lam": np.array(ls), "t_train": tr(ttr), "t_gen": tr(tgen), "grok_time": tr(dt)}


@cites("levi:fig5", "levi:eq21", "levi:eq22", "levi:eq10")
def fig5_table(eta0_t=(1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0), lam=0.9, eta0=0.01):
    r"""Fig. 5: exact losses and the late-time approximations eq. 21, eq. 22 and eq. 10, with their relative errors.

    .. math:: \mathrm{err}=\frac{\mathcal L^{\rm approx}}{\mathcal L^{\rm exact}}-1

    In words: `loss_train` and `loss_gen` against `loss_train_late` (eq. 21), `loss_gen_late` (eq. 22) and
    `loss_gen_late_simple` (eq. 10) at d_out = 1, and the ratio of each approximation to the exact loss minus
    1.

    Parameters
    ----------
    eta0_t : sequence of float
        The products η₀t > 0 at which to evaluate (the paper's time axis); default 1 to 1000.
    lam : float
        λ = d_in/N_tr, the input dimension over the number of training samples (aspect ratio of the
        training data); λ > 0, λ ≠ 1; default 0.9, as in the paper's figure.
    eta0 : float
        η₀, the gradient-descent learning rate (step size), a scalar > 0; default 0.01, the paper's.

    Returns
    -------
    dict of ndarray
        `t` (GD steps, η₀t/η₀), `train_exact`, `gen_exact`, `train_eq21`, `gen_eq22`, `gen_eq10` and the
        relative errors `err_eq21`, `err_eq22`, `err_eq10`, each of the length of `eta0_t`.

    Raises
    ------
    DomainError
        Where an exact loss is below the smallest normal double (2.2·10⁻³⁰⁸), e.g. 4η₀t(1 − √λ)² ≳ 700:
        the relative error is then not defined in float64 (it was NaN = 0/0 at λ = η₀ = 10³⁰⁰), besides
        invalid arguments.

    References
    ----------
    Levi et al., Fig. 5, eqs. (10), (21), (22); spec `levi:fig5`.
    """
    x = V.positive(eta0_t, "eta0_t").reshape(-1)
    la = V.scalar(_lam_not_one(lam, "the late-time expansions"), "lam")
    et = V.scalar(_eta0(eta0), "eta0")
    t = x / et
    tr = np.asarray(loss_train(t, la, et))
    ge = np.asarray(loss_gen(t, la, et))
    a21 = np.asarray(loss_train_late(t, la, et))
    a22 = np.asarray(loss_gen_late(t, la, et))
    a10 = np.asarray(loss_gen_late_simple(t, la, et))
    for name, exact in (("train", tr), ("gen", ge)):
        if np.any(exact < _TINY):
            k = int(np.argmax(exact < _TINY))
            raise V.DomainError(
                f"fig5_table: the exact {name} loss {float(exact[k])!r} at eta0_t={float(x[k])!r}, lam={float(la)!r} is below the smallest "
                "normal double (2.2e-308), so the relative errors of the late-time forms are not defined in float64; "
                "valid where 4 eta0_t (1 - sqrt(lam))^2 is below ~700")
    return {"t": t, "train_exact": tr, "gen_exact": ge, "train_eq21": a21, "gen_eq22": a22, "gen_eq10": a10,
            "err_eq21": a21 / tr - 1.0, "err_eq22": a22 / ge - 1.0, "err_eq10": a10 / ge - 1.0}


@cites("levi:fig7", "levi:eq14", "levi:eq12-loss")
def fig7_tables(eps=1e-3, eta0=0.01, *, level=0.95, lam_a=0.5, gammas=(0.0, 1e-3, 1e-2, 3e-2),
                d_outs=(1, 5, 20, 100, 300, 700), lams=(0.1, 0.3, 0.5, 0.7, 0.9, 1.2), parts=("a", "b", "c")):
    r"""Table T5 / Fig. 7: phase diagrams of the exact grokking time.

    .. math::
        \text{(a)}\ \Delta t(\gamma,d_{\rm out})\ \text{at}\ \lambda=\lambda_a;\quad
        \text{(b)}\ \Delta t(\gamma,\lambda)\ \text{at}\ d_{\rm out}=1;\quad
        \text{(c)}\ \Delta t(d_{\rm out},\lambda)\ \text{at}\ \gamma=0

    In words: `grok_time` on three grids: (a) weight decay × output dimension at λ = `lam_a`, (b) weight decay
    × λ at d_out = 1, (c) output dimension × λ without weight decay. `inf` or NaN = the generalisation
    accuracy never reaches the level ("none" in the spec). (a) and (b) need the quadrature of eq. 14: seconds.

    Parameters
    ----------
    eps : float
        ε, the threshold on a sample's squared error (averaged over the d_out outputs) below which the
        sample counts as correct; ε > 0, a scalar; default 10⁻³, the paper's.
    eta0 : float
        η₀, the gradient-descent learning rate (step size), a scalar > 0; default 0.01, the paper's.
    level : float
        Accuracy level ℓ in (0, 1). Default 0.95, the level of the paper's figure (its "95 %" is 0.95 in
        Figs. 2 and 7 but erf(√2) in §3.1.3 and App. B, spec `levi:conv-acc`), so that the table
        reproduces the figure; every non-figure function of `grokclocks.linear` defaults to `ERF_SQRT2` =
        erf(√2) ≈ 0.9545 instead. Pass `level=ERF_SQRT2` to compare with them.
    lam_a : float
        The aspect ratio λ > 0 of panel (a); default 0.5 (the paper does not state it: an assumption).
    gammas : sequence of float
        Weight decays γ ≥ 0 in the paper convention: the rows of (a) and (b); default 0, 10⁻³, 10⁻²,
        3·10⁻².
    d_outs : sequence of int
        Output dimensions d_out ≥ 1: the columns of (a) and the rows of (c); default 1, 5, 20, 100, 300,
        700.
    lams : sequence of float
        Aspect ratios λ > 0: the columns of (b) and (c); default 0.1 to 1.2.
    parts : sequence of {"a", "b", "c"}
        The panels to compute; default all three.

    Returns
    -------
    dict of ndarray
        Keys among "a" (shape (len(gammas), len(d_outs))), "b" ((len(gammas), len(lams))), "c"
        ((len(d_outs), len(lams))), grokking times in GD steps, plus the grids `gamma`, `d_out`, `lam`.

    References
    ----------
    Levi et al., Fig. 7; spec `levi:fig7` (table T5), `levi:eq14`, `levi:eq12-loss`, `levi:conv-acc`.
    """
    e = V.scalar(_eps(eps), "eps")
    et = V.scalar(_eta0(eta0), "eta0")
    lv = V.scalar(_level(level), "level")
    la_a = V.positive(lam_a, "lam_a", scalar=True)
    gs = _list(gammas, "gammas", V.nonnegative)
    ds = _int_list(d_outs, "d_outs")
    ls = _list(lams, "lams", V.positive)
    out: dict[str, np.ndarray] = {"gamma": np.array(gs), "d_out": np.array(ds), "lam": np.array(ls)}
    parts = V.sequence(parts, "parts", min_len=0, what='a sequence of "a", "b", "c"') if not isinstance(
        parts, str) else list(parts)
    for p in parts:
        V.choice(p, "parts", ("a", "b", "c"))
    if "a" in parts:
        out["a"] = _times_grid([la_a], [e], et, ds, gs, lv)[2][0, 0, :, :].T
    if "b" in parts:
        out["b"] = _times_grid(ls, [e], et, [1], gs, lv)[2][:, 0, 0, :].T
    if "c" in parts:
        out["c"] = _times_grid(ls, [e], et, ds, [0.0], lv)[2][:, 0, :, 0].T
    return out


class GrokTimes(NamedTuple):
    r"""Result of `grok_time_grid`: the crossing times `t_tr`, `t_gen` and the grokking time `dt`, in GD steps."""

    t_tr: float | np.ndarray
    """The train crossing time t*_tr in GD steps (`inf` where it is never reached)."""
    t_gen: float | np.ndarray
    """The generalisation crossing time t*_gen in GD steps (`inf` where it is never reached)."""
    dt: float | np.ndarray
    """The grokking time Δt = t*_gen − t*_tr in GD steps (NaN where neither crossing is reached)."""


@cites("levi:tstar", "levi:grok-def", "levi:eq14", "levi:eq8", "levi:fig7")
@V.broadcasting()
def grok_time_grid(lam, gamma, eps, eta0, *, d_out=1, level=ERF_SQRT2):
    r"""Exact crossing and grokking times over a whole grid at once: (t_tr, t_gen, dt).

    The same quantities as `t_star` and `grok_time` (exact Marchenko–Pastur losses, eq. 14 with weight decay,
    eq. 8 without; conventions of spec `levi:grok-def`), vectorised with numpy broadcasting over `lam`,
    `gamma`, `eps`, `eta0`, `d_out` and `level`, for phase diagrams such as Fig. 7.

    .. math::
        \Delta t_{\rm grok}=t^*_{\rm gen}-t^*_{\rm tr},\qquad
        \mathcal L_{\rm tr/gen}(t^*)=\mathcal L^*=\frac{d_{\rm out}\epsilon}{2P^{-1}(d_{\rm out}/2,\ell)}

    In words: each crossing time is where the loss equals L* of `loss_threshold`, and Δt is their difference.
    Method: a fixed Gauss–Jacobi rule in a log-mapped spectral variable (which removes the 1/ν near-pole at λ
    → 1 and follows the Laplace peak at large s) and a safeguarded Newton iteration on log L for all grid
    points at once. Accuracy, measured against mpmath and against the spec's QAWS quadrature: losses to
    2.3·10⁻¹³ relative, crossing times to 4.2·10⁻¹⁵, including λ = 1 ± 10⁻¹⁶.

    Parameters
    ----------
    lam : float or array_like
        λ = d_in/N_tr, the input dimension over the number of training samples (aspect ratio of the
        training data); λ > 0.
    gamma : float or array_like
        Weight decay γ ≥ 0, in the paper convention only (0 = none).
    eps : float or array_like
        ε, the threshold on a sample's squared error (averaged over the d_out outputs) below which the
        sample counts as correct; ε > 0.
    eta0 : float or array_like
        η₀, the gradient-descent learning rate (step size); η₀ > 0. Time enters the losses only through s
        = 4η₀t/d_out.
    d_out : float or array_like
        d_out, the output dimension, > 0; non-integer values are allowed for scans. Default 1.
    level : float or array_like
        Accuracy level ℓ in (0, 1): a crossing time is where the accuracy reaches ℓ. Default `ERF_SQRT2` =
        erf(√2) ≈ 0.9545, the paper's "95 %", for which L* = ε/4 exactly at d_out = 1. The paper's Fig. 7
        uses 0.95.

    Returns
    -------
    t_tr, t_gen, dt : float or ndarray
        A `GrokTimes` named tuple of the broadcast shape of the arguments, in GD steps; it unpacks like a
        plain tuple. `inf` where a loss never reaches L*; `dt` is NaN where neither does.

    References
    ----------
    Levi et al., Fig. 7; spec `levi:tstar`, `levi:grok-def`, `levi:eq14`, `levi:eq8`, `levi:fig7`.
    """
    t_tr, t_gen = _mpgrid._train_gen_crossings(lam, gamma, eps, eta0, d_out, level)
    # lam <= 1e-2, gamma = 0: the delay as its own root (_delay), not the difference of two crossing times that
    # agree to ~lam relative (measured: 2e-8 relative error at lam = 1e-8 before)
    lam_b, gamma_b, eta0_b, d_b = (np.broadcast_to(np.asarray(x, dtype=np.float64), np.shape(t_tr)).reshape(-1)
                                   for x in (lam, gamma, eta0, d_out))
    dt = _delay_from_crossings(np.reshape(t_tr, -1), np.reshape(t_gen, -1), lam_b, eta0_b, d_b, gamma_b,
                               False).reshape(np.shape(t_tr))
    return GrokTimes(V.scalar_or_array(t_tr), V.scalar_or_array(t_gen), V.scalar_or_array(dt))
