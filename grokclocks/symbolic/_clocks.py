"""Tan, Gai & Zhang (2026), *Two training clocks*: the classifier clock, the KL representation clock and
the spectral identities of the deep linear theory (`grokclocks.clocks`, `grokclocks.spectral`) as sympy.

Most inline formulas of this paper were lost in extraction; the forms here are the reconstructed ones the
library implements (status `reconstructed` / `exact` in `grokclocks.citations.SPEC`).  Singular values are
an indexed family σ₁ ≥ σ₂ ≥ … ≥ σ_r (index from 1, as in the paper).
"""

from __future__ import annotations

import sympy as sp
from sympy import Eq, Interval, Max, Piecewise, Rational, Sum, Tuple, ceiling, exp, log, sqrt

from . import _symbols as S
from ._record import Formula

__all__: list[str] = []

CL, SPC = "grokclocks.clocks.", "grokclocks.spectral."
_T1 = "tests/test_symbolic_errata.py::"

K = sp.Symbol("K", integer=True, positive=True)  # number of classes
gap = sp.Symbol("gamma", real=True)  # a logit gap
eps = sp.Symbol("epsilon", positive=True)  # loss target
c = sp.Symbol("c", positive=True)  # gap growth rate
t, t0 = sp.Symbol("t", real=True), sp.Symbol("t_0", real=True)
gamma0 = sp.Symbol("gamma_0", real=True)
B = sp.Symbol("B", nonnegative=True)  # feature bound
m = sp.Symbol("m", real=True)  # a binary margin
n = sp.Symbol("n", positive=True, integer=True)  # number of samples
rho = sp.Symbol("rho", positive=True)
loss0 = sp.Symbol("L_0", positive=True)
k0 = sp.Symbol("k_0", integer=True, nonnegative=True)
theta = sp.Symbol("theta", positive=True)  # KL exponent in (1/2, 1)
gap0, delta = sp.Symbol("Delta_0", positive=True), sp.Symbol("delta", positive=True)
Delta = sp.Symbol("Delta", nonnegative=True)  # an energy gap
a = sp.Symbol("a", positive=True)  # KL rate constant
c_kl, C_kl = sp.Symbol("c_KL", positive=True), sp.Symbol("C_KL", positive=True)
T = sp.Symbol("T", real=True)
m_G, M_G = sp.Symbol("m_G", positive=True), sp.Symbol("M_G", positive=True)
q = sp.Symbol("q", positive=True)  # power of a flat bottom |x|^q
depth = sp.Symbol("L", integer=True, positive=True)
mdirs = sp.Symbol("m_dirs", integer=True, positive=True)  # number of decaying directions
mu, lam, p = sp.Symbol("mu", nonnegative=True), sp.Symbol("lambda", nonnegative=True), sp.Symbol("p", positive=True)
f_perp = sp.Symbol("F_perp", nonnegative=True)
sigma0 = sp.Symbol("sigma_0", nonnegative=True)
D0 = sp.Symbol("D_0", real=True)
r = sp.Symbol("r", integer=True, positive=True)  # number of singular values
kk = sp.Symbol("k", integer=True, nonnegative=True)
i = sp.Idx("i")
sigma = sp.IndexedBase("sigma")
R_, rr = sp.Symbol("R", positive=True), sp.Symbol("r_c", positive=True)  # ball radius, cover radius
kdim = sp.Symbol("k", integer=True, positive=True)
eps_rob, n_cells = sp.Symbol("epsilon_rob", nonnegative=True), sp.Symbol("N", positive=True, integer=True)
M_loss, fail = sp.Symbol("M", positive=True), sp.Symbol("delta_f", positive=True)
srank, eta = sp.Symbol("r_s", positive=True), sp.Symbol("eta", positive=True)
loss_value = sp.Symbol("L_W", real=True)

LATEX = {gamma0: r"\gamma_0", gap0: r"\Delta_0", c_kl: r"c_{\rm KL}", C_kl: r"C_{\rm KL}", m_G: r"m_G",
         M_G: r"M_G", f_perp: r"\lVert F_\perp\rVert_2", eps_rob: r"\epsilon_{\rm rob}", fail: r"\delta_f",
         srank: r"r_s", mdirs: "m", loss_value: r"\mathcal L(W)", rr: "r", loss0: r"\mathcal L_{k_0}"}

LATEX_NAMES = LATEX  # typeset names of this paper's symbols
UNIT_HALF = Interval.open(Rational(1, 2), 1)
ell = sp.Function("ell")
SING = ("sigma", "singular_values")


def kl_solution(rate):
    """Solution of dDelta/dt = -rate Delta^(2 theta) from Delta_0 at t_0 (theta in (1/2, 1))."""
    return (gap0 ** (1 - 2 * theta) + rate * (2 * theta - 1) * (t - t0)) ** (-1 / (2 * theta - 1))


def kl_time(level, rate, start):
    """Time at which that solution reaches `level` from Delta_0 at `start`."""
    return start + (level ** (1 - 2 * theta) - gap0 ** (1 - 2 * theta)) / (rate * (2 * theta - 1))


fast_clock = t0 + Max(0, log((K - 1) / eps) - gamma0) / c
rep_lower = T + Max(0, (delta / m_G) ** (1 - 2 * theta) - gap0 ** (1 - 2 * theta)) / (C_kl**2 * (2 * theta - 1))
schatten = Sum(sigma[i] ** p, (i, 1, r))

FORMULAS: tuple[Formula, ...] = (
    Formula("clocks:eq2.3", "clocks:eq2.3", Sum(sigma[i] ** 2, (i, 1, r)) / sigma[1] ** 2,
            r"\operatorname{srank}(W)", "2.3", SPC + "stable_rank_from_singular_values", (("sigma", "sigma"),),
            note="σ₁ the largest singular value"),
    Formula("clocks:eq2.6", "clocks:eq2.6", schatten, r"\lVert W\rVert_{S_p}^p", "2.6", SPC + "schatten_penalty",
            (SING, ("p", "p"))),
    Formula("clocks:eq2.6/norm", "clocks:eq2.6", schatten ** (1 / p), r"\lVert W\rVert_{S_p}", "2.6",
            SPC + "schatten_quasi_norm", (SING, ("p", "p")), note="a quasi-norm for 0 < p < 1"),
    Formula("clocks:eq2.7", "clocks:eq2.7", depth * Sum(sigma[i] ** (2 / depth), (i, 1, r)),
            r"\min_{W_L\cdots W_1=W}\sum_{l=1}^L\lVert W_l\rVert_F^2", "2.7", SPC + "layerwise_decay_penalty",
            (("sigma", "W"), ("L", "depth")), note="attained by the balanced factorisation along the SVD"),
    Formula("clocks:eq2.7/coefficient", "clocks:eq2.7", mu * depth / 2, r"\lambda", "2.7",
            SPC + "weight_decay_to_penalty_coefficient", (("mu", "mu"), ("L", "depth")),
            note="per-layer penalty (μ/2)Σ‖W_l‖²_F becomes λ‖W‖^{2/L}_{S_{2/L}}"),
    Formula("clocks:appF2-balance", "clocks:appF2-balance", D0 * exp(-2 * mu * t), r"D_l(t)", None,
            SPC + "imbalance_decay", (("D_0", "D0"), ("mu", "mu"), ("t", "t")),
            domain=(("t", Interval(0, sp.oo)),), note="D_l = W_{l+1}ᵀW_{l+1} - W_lW_lᵀ under gradient flow"),
    Formula("clocks:eq4.2", "clocks:eq4.2", loss_value + lam * schatten, r"\mathcal E(W)", "4.2",
            SPC + "end_to_end_energy", (("L_W", "loss_value"), ("sigma", "W"), ("lambda", "lam"), ("p", "p"))),
    Formula("clocks:eq4.3", "clocks:eq4.3", sigma0 ** (2 - p) / (lam * p * (2 - p)), r"t_0", "4.3",
            SPC + "free_direction_collapse_time", (("sigma_0", "sigma0"), ("lambda", "lam"), ("p", "p")),
            domain=(("p", Interval.open(0, 2)), ("lambda", Interval.open(0, sp.oo))),
            note="a direction with zero data force reaches 0 in finite time: σ^{2-p}(t) = σ₀^{2-p} - λp(2-p)t"),
    Formula("clocks:lem3.1", "clocks:lem3.1", log(1 + (K - 1) * exp(-gap)), r"\mathcal L(W)\le", "Lemma 3.1",
            CL + "ce_tail_bound", (("gamma", "gamma"), ("K", "n_classes"))),
    Formula("clocks:lem3.1/linear", "clocks:lem3.1", (K - 1) * exp(-gap), r"\mathcal L(W)\le", "Lemma 3.1",
            CL + "ce_tail_bound_linear", (("gamma", "gamma"), ("K", "n_classes"))),
    Formula("clocks:lem3.1/gap", "clocks:lem3.1", log((K - 1) / eps), r"\gamma", "Lemma 3.1", CL + "gap_for_loss_level",
            (("epsilon", "eps"), ("K", "n_classes")), note="a uniform gap this large gives L ≤ ε"),
    Formula("clocks:lem3.1/gap-sharp", "clocks:lem3.1", log((K - 1) / (exp(eps) - 1)), r"\gamma", "Lemma 3.1",
            CL + "gap_for_loss_level", (("epsilon", "eps"), ("K", "n_classes")), (("sharp", True),)),
    Formula("clocks:lem3.2", "clocks:lem3.2", B**2 / 2, r"\beta", "Lemma 3.2", CL + "ce_smoothness_constant",
            (("B", "B"),), note="sharp: attained at K = 2, π = (1/2, 1/2) (erratum clocks-4)"),
    Formula("clocks:lem3.3", "clocks:lem3.3", None, r"\frac{\ell'(m)^2}{\ell(m)}", "Lemma 3.3", CL + "binary_pl_ratio",
            (("m", "margin"),), display=sp.Derivative(ell(m), m) ** 2 / ell(m), defs=((ell(m), log(1 + exp(-m))),),
            note="→ 0 like e^{-m}: no PL inequality at a fixed margin"),
    Formula("clocks:lem3.3/log", "clocks:lem3.3", None, r"\log\frac{\ell'(m)^2}{\ell(m)}", "Lemma 3.3",
            CL + "log_binary_pl_ratio", (("m", "margin"),),
            display=log(sp.Derivative(ell(m), m) ** 2 / ell(m)), defs=((ell(m), log(1 + exp(-m))),)),
    Formula("clocks:appF1-acc-order", "clocks:appF1-acc-order", log(2) / n, r"\epsilon", None,
            CL + "zero_one_loss_threshold", (("n", "n"),),
            note="L ≤ ε < ln2/n classifies every training point correctly"),
    Formula("clocks:thm3.5", "clocks:thm3.5", fast_clock, r"t_{\rm cls}(\epsilon)\le", "Theorem 3.5",
            CL + "fast_clock_bound", (("epsilon", "eps"), ("K", "n_classes"), ("c", "rate"), ("t_0", "t0"),
                                      ("gamma_0", "gamma0")), domain=(("t_0", Interval(0, sp.oo)),)),
    Formula("clocks:thm3.5/sharp", "clocks:thm3.5", fast_clock.subs(eps, exp(eps) - 1), r"t_{\rm cls}(\epsilon)\le",
            "Theorem 3.5", CL + "fast_clock_bound", (("epsilon", "eps"), ("K", "n_classes"), ("c", "rate"), ("t_0", "t0"),
                                             ("gamma_0", "gamma0")), (("sharp", True),),
            domain=(("t_0", Interval(0, sp.oo)),)),
    Formula("clocks:thm3.5/loss", "clocks:thm3.5", (K - 1) * exp(-gamma0 - c * (t - t0)), r"\mathcal L(W(t))\le",
            "Theorem 3.5", CL + "fast_clock_loss_bound", (("t", "t"), ("K", "n_classes"), ("c", "rate"), ("t_0", "t0"),
                                                  ("gamma_0", "gamma0")), domain=(("t_0", Interval(0, sp.oo)),)),
    Formula("clocks:thm3.5/loss-log", "clocks:thm3.5", log(1 + (K - 1) * exp(-gamma0 - c * (t - t0))),
            r"\mathcal L(W(t))\le", "Theorem 3.5", CL + "fast_clock_loss_bound",
            (("t", "t"), ("K", "n_classes"), ("c", "rate"), ("t_0", "t0"), ("gamma_0", "gamma0")),
            (("linear", False),), domain=(("t_0", Interval(0, sp.oo)),)),
    Formula("clocks:prop3.6", "clocks:prop3.6", k0 + ceiling(log(loss0 / eps) / rho), r"t_{\rm cls}(\epsilon)\le",
            "Proposition 3.6", CL + "contraction_clock_bound", (("epsilon", "eps"), ("L_0", "loss0"), ("rho", "rho"),
                                                    ("k_0", "k0")), domain=(("rho", Interval.open(0, 1)),),
            note="for ε < L_{k0} (else k0)"),
    Formula("clocks:prop3.6/exact", "clocks:prop3.6", k0 + ceiling(log(loss0 / eps) / -log(1 - rho)),
            r"t_{\rm cls}(\epsilon)\le", "Proposition 3.6", CL + "contraction_clock_bound",
            (("epsilon", "eps"), ("L_0", "loss0"), ("rho", "rho"), ("k_0", "k0")), (("exact", True),),
            domain=(("rho", Interval.open(0, 1)),)),
    Formula("clocks:thm4.8", "clocks:thm4.8", Tuple(c_kl**2 * Delta ** (2 * theta), C_kl**2 * Delta ** (2 * theta)),
            r"\big(\text{lower},\ \text{upper}\big)\ \text{of}\ -\dot\Delta", "Theorem 4.8", CL + "kl_differential_bounds",
            (("Delta", "gap"), ("c_KL", "c_kl"), ("C_KL", "C_kl"), ("theta", "theta")),
            domain=(("theta", UNIT_HALF),)),
    Formula("clocks:thm4.9", "clocks:thm4.9", kl_solution(a), r"\Delta(t)", "Theorem 4.9", CL + "kl_gap_solution",
            (("t", "t"), ("Delta_0", "gap0"), ("a", "a"), ("theta", "theta"), ("t_0", "t0")),
            domain=(("theta", UNIT_HALF),), note="solution of dΔ/dt = -aΔ^{2θ}; Δ ~ t^{-1/(2θ-1)}"),
    Formula("clocks:thm4.9/log", "clocks:thm4.9", log(kl_solution(a)), r"\log\Delta(t)", "Theorem 4.9",
            CL + "log_kl_gap_solution", (("t", "t"), ("Delta_0", "gap0"), ("a", "a"), ("theta", "theta"),
                                         ("t_0", "t0")), domain=(("theta", UNIT_HALF),)),
    Formula("clocks:thm4.9/pl", "clocks:thm4.9", gap0 * exp(-a * (t - t0)), r"\Delta(t)", None,
            CL + "kl_gap_solution_pl", (("t", "t"), ("Delta_0", "gap0"), ("a", "a"), ("t_0", "t0")),
            note="the θ → 1/2 (PL) limit of the KL solution"),
    Formula("clocks:thm4.9/bounds", "clocks:thm4.9", Tuple(kl_solution(C_kl**2), kl_solution(c_kl**2)),
            r"\big(\text{lower},\ \text{upper}\big)\ \text{of}\ \Delta(t)", "Theorem 4.9", CL + "kl_gap_bounds",
            (("t", "t"), ("Delta_0", "gap0"), ("c_KL", "c_kl"), ("C_KL", "C_kl"), ("theta", "theta"),
             ("t_0", "t0")), domain=(("theta", UNIT_HALF),)),
    Formula("clocks:thm4.9/clock", "clocks:thm4.9", kl_time(delta, a, t0), r"t_{\rm rep}(\delta)", "Theorem 4.9",
            CL + "kl_clock_time", (("delta", "delta"), ("Delta_0", "gap0"), ("a", "a"), ("theta", "theta"),
                                   ("t_0", "t0")), domain=(("theta", UNIT_HALF),), note="for δ < Δ₀ (else t₀)"),
    Formula("clocks:thm4.9/clock-bounds", "clocks:thm4.9",
            Tuple(rep_lower, T + Max(0, (delta / M_G) ** (1 - 2 * theta) - gap0 ** (1 - 2 * theta))
                  / (c_kl**2 * (2 * theta - 1))),
            r"\big(\text{lower},\ \text{upper}\big)\ \text{of}\ t_{\rm rep}(\delta)", "Theorem 4.9",
            CL + "representation_clock_bounds",
            (("delta", "delta"), ("Delta_0", "gap0"), ("c_KL", "c_kl"), ("C_KL", "C_kl"), ("theta", "theta"),
             ("T", "T"), ("m_G", "m_G"), ("M_G", "M_G")), domain=(("theta", UNIT_HALF),)),
    Formula("clocks:thm4.9/exponent", "clocks:thm4.9", 1 / (2 * theta - 1), r"\Delta(t)\sim t^{-\kappa},\ \kappa",
            "Theorem 4.9", CL + "kl_decay_exponent", (("theta", "theta"),), domain=(("theta", UNIT_HALF),)),
    Formula("clocks:thm4.9/clock-exponent", "clocks:thm4.9", 2 * theta - 1,
            r"t_{\rm rep}(\delta)\sim\delta^{-\kappa},\ \kappa", "Theorem 4.9", CL + "representation_clock_exponent",
            (("theta", "theta"),), domain=(("theta", UNIT_HALF),)),
    Formula("clocks:appF2-kl-examples/power", "clocks:appF2-kl-examples", 1 - 1 / q, r"\theta", None,
            CL + "kl_exponent_power", (("q", "q"),), domain=(("q", Interval.open(2, sp.oo)),),
            note="f = ‖x‖^q: ‖∇f‖ = q f^{1-1/q}"),
    Formula("clocks:appF2-kl-examples/power-rate", "clocks:appF2-kl-examples", q**2, r"a", None,
            CL + "kl_rate_power", (("q", "q"),), domain=(("q", Interval.open(2, sp.oo)),)),
    Formula("clocks:appF2-kl-examples/depth", "clocks:appF2-kl-examples", 1 - 1 / (2 * depth), r"\theta", None,
            CL + "kl_exponent_depth", (("L", "depth"),), domain=(("L", Interval(2, sp.oo)),)),
    Formula("clocks:appF2-kl-examples/depth-rate", "clocks:appF2-kl-examples",
            mdirs * depth * (2 / mdirs) ** (2 - 1 / depth), r"a", None, CL + "kl_rate_depth",
            (("L", "depth"), ("m_dirs", "n_directions")), domain=(("L", Interval(2, sp.oo)),),
            note="m zero-target directions of a balanced depth-L net, no weight decay"),
    Formula("clocks:appF2-wd-rate", "clocks:appF2-wd-rate",
            Piecewise((4 * (mu - f_perp), Eq(depth, 2)), (2 * mu * depth, True)), r"r", None,
            CL + "weight_decay_tail_rate", (("mu", "mu"), ("L", "depth"), ("F_perp", "f_perp_norm")),
            domain=(("L", Interval(2, sp.oo)),),
            note="weight decay alone gives an exponential tail τ_k ∝ e^{-rt} (erratum clocks-2)"),
    Formula("clocks:thm5.6", "clocks:thm5.6", rep_lower.subs({m_G: 1}) - fast_clock,
            r"t_{\rm rep}(\delta)-t_{\rm cls}(\epsilon)\ge", "Theorem 5.6", CL + "clock_mismatch_lower_bound",
            (("epsilon", "eps"), ("delta", "delta"), ("K", "n_classes"), ("c", "rate"), ("t_0", "t0"),
             ("gamma_0", "gamma0"), ("C_KL", "C_kl"), ("theta", "theta"), ("Delta_0", "gap0"), ("T", "T")),
            domain=(("theta", UNIT_HALF), ("t_0", Interval(0, sp.oo))),
            note="not clipped: a negative value means the bound is inconclusive"),
    Formula("clocks:thm2.2", "clocks:thm2.2", eps_rob + M_loss * sqrt((2 * n_cells * log(2) + 2 * log(1 / fail)) / n),
            r"\big|\mathcal L_{\rm pop}-\mathcal L_{\rm emp}\big|\le", "Theorem 2.2", SPC + "robust_generalization_bound",
            (("epsilon_rob", "eps_rob"), ("N", "n_cells"), ("n", "n"), ("M", "loss_bound"), ("delta_f", "fail_prob")),
            domain=(("delta_f", Interval.open(0, 1)),)),
    Formula("clocks:prop5.1", "clocks:prop5.1", Tuple((R_ / rr) ** kdim, (1 + 2 * R_ / rr) ** kdim),
            r"\big(\text{lower},\ \text{upper}\big)\ \text{of}\ N(B_R^k,r)", "Proposition 5.1",
            SPC + "covering_number_ball_bounds", (("R", "R"), ("r_c", "r"), ("k", "k"))),
    Formula("clocks:prop5.1/log", "clocks:prop5.1", Tuple(kdim * log(R_ / rr), kdim * log(1 + 2 * R_ / rr)),
            r"\big(\text{lower},\ \text{upper}\big)\ \text{of}\ \log N(B_R^k,r)", "Proposition 5.1",
            SPC + "log_covering_number_ball_bounds", (("R", "R"), ("r_c", "r"), ("k", "k"))),
    Formula("clocks:prop5.1/3R", "clocks:prop5.1", Tuple((R_ / rr) ** kdim, (3 * R_ / rr) ** kdim),
            r"\big(\text{lower},\ \text{upper}\big)\ \text{of}\ N(B_R^k,r)", "Proposition 5.1",
            SPC + "covering_number_ball_bounds", (("R", "R"), ("r_c", "r"), ("k", "k")), (("upper", "3R"),),
            note="the printed form; needs r ≤ R"),
    Formula("clocks:thm5.2", "clocks:thm5.2", ceiling(srank / eta**2), r"k", "Theorem 5.2", SPC + "eckart_young_rank",
            (("r_s", "srank"), ("eta", "eta")), domain=(("eta", Interval.Lopen(0, 1)),)),
    Formula("clocks:appF4-tail", "clocks:appF4-tail", Sum(sigma[i] ** 2, (i, kk + 1, r)) / Sum(sigma[i] ** 2, (i, 1, r)),
            r"\tau_k(W)", None, SPC + "spectral_tail", (("sigma", "W"), ("k", "k"))),
)
