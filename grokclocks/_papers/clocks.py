"""Registry data of spec ``clocks`` (two training clocks, 2026; authors not stated in the source): IDs, modules, errata.

Status mapping from the spec's tags (the library has no "reconstructed" status yet): every result
whose mathematics was verified (spec [P], [R-*] and [D] items) is ``"V"`` -- the title says
``[R-high]``/``[R-med]``/``[R-low]`` (reconstructed from stripped formulas, with the spec's confidence
that it is what the paper printed) or ``[D]`` (derived in the spec, not in the paper); definitions,
assumptions and estimator conventions are ``"C"``; linearisations are ``"A"``; the modular-addition
protocol is ``"E"``.
"""

from __future__ import annotations

from . import Erratum

SPEC_IDS: dict[str, tuple[str, str]] = {
    # §1 the two clocks and spectral preliminaries
    "clocks:eq2.1": ("C", "classifier clock t_cls(eps) = inf{t: L(W(t)) <= eps} [R-high]"),
    "clocks:eq2.2": ("C", "representation clock t_rep(delta) = inf{t: G(t) <= delta} [R-high]"),
    "clocks:eq2.3": ("V", "stable rank srank(W) = |W|_F^2 / |W|_2^2, 1 <= srank <= rank"),
    "clocks:eq2.4": ("C", "modular addition task (a, b) -> (a + b) mod p"),
    "clocks:eq2.5": ("V", "characters of Z_p, chi_k(a) = exp(2 pi i k a / p) [R-high]"),
    "clocks:eq2.6": ("V", "Schatten-p quasi-norm and penalty"),
    "clocks:eq2.7": ("V", "layerwise weight decay = L |W|_{S_{2/L}}^{2/L}, lambda = mu L / 2 [R-high, constants pinned]"),
    "clocks:appF2-balance": ("V", "layer imbalance D_l decays as exp(-2 mu t) under gradient flow [D]"),
    "clocks:def2.1": ("C", "(N, eps)-robustness (Xu & Mannor 2012) [R-high]"),
    "clocks:thm2.2": ("V", "robust generalization bound eps + M sqrt((2N ln2 + 2 ln(1/delta))/n) [R-high]"),
    # §2 fast classifier clock
    "clocks:eq3.1": ("V", "logit gaps gamma_ik = z_{i,y_i} - z_ik"),
    "clocks:eq3.2": ("V", "cross-entropy in gap form log(1 + sum_k exp(-gamma_ik))"),
    "clocks:lem3.1": ("V", "tail bound L <= log(1 + (K-1) e^{-gamma}) <= (K-1) e^{-gamma}"),
    "clocks:lem3.2": ("V", "global smoothness constant beta = B^2/2 (sharp) [R-high, constant derived]"),
    "clocks:lem3.3": ("V", "a fixed margin gives no PL inequality: l'(m)^2/l(m) ~ e^{-m} [R-high]"),
    "clocks:asm3.4": ("C", "assumption: post-margin linear gap growth gamma >= gamma0 + c (t - t0) [R-high]"),
    "clocks:thm3.5": ("V", "fast classifier clock t_cls <= t0 + [log((K-1)/eps) - gamma0]_+ / c [R-high]"),
    "clocks:prop3.6": ("V", "one-step tail contraction clock k0 + ceil(log(L_k0/eps)/rho) [R-high]"),
    "clocks:appF1-acc-order": ("V", "L <= eps < ln2/n implies all training points correct [D]"),
    # §3 conditional ReLU reduction
    "clocks:prop4.1": ("V", "frozen gates: the ReLU net is an affine map A_i x + c_i [R-high]"),
    "clocks:prop4.2": ("V", "head vs hidden vs embedding gradient identities and bounds [R-high]"),
    "clocks:appF3-gate-margin": ("V", "gate margin sufficient condition for frozen gates [R-med]"),
    # §4 slow representation clock
    "clocks:eq4.1": ("C", "end-to-end map W = W_L ... W_1 [R-high]"),
    "clocks:eq4.2": ("C", "energy E(W) = L(W) + lambda sum sigma_i^p, p = 2/L [R-high]"),
    "clocks:thmD.1": ("V", "gradient of the Schatten penalty p U Sigma^{p-1} V^T on a fixed-rank stratum [R-high]"),
    "clocks:eq4.3": ("V", "singular-value drift sigma_dot = F_i - lambda p sigma^{p-1} (end-to-end flow) [R-high]"),
    "clocks:prop4.3": ("V", "finite-time collapse of a free direction for p < 1 [R-high]"),
    "clocks:appF2-balanced-drift": ("V", "factorized-network drift L sigma^{2-2/L} F - mu L sigma [D]"),
    "clocks:thm4.4": ("V", "stable rank of the limit lies in [1, r]"),
    "clocks:asm4.5": ("C", "assumption: sharp two-sided KL inequality with theta in (1/2, 1) [R-high]"),
    "clocks:lem4.6": ("V", "energy dissipation dE/dt = -|dW/dt|^2"),
    "clocks:thm4.8": ("V", "KL differential inequality c^2 D^{2theta} <= -D' <= C^2 D^{2theta} [R-high]"),
    "clocks:thm4.9": ("V", "polynomial representation clock Delta ~ t^{-1/(2theta-1)}, t_rep ~ delta^{-(2theta-1)} [R-high rate, R-med display]"),
    "clocks:appF2-kl-examples": ("V", "landscapes with known KL exponent (power bottom, depth, critical decay) [D]"),
    "clocks:appF2-wd-rate": ("A", "weight decay alone: exponential spectral tail, rate 4(mu-|F|) (L=2) or 2 mu L [D, linearised]"),
    # §5 low effective dimension -> generalization
    "clocks:prop5.1": ("V", "covering numbers of a ball (R/r)^k <= N <= (1 + 2R/r)^k <= (3R/r)^k [R-med constant]"),
    "clocks:thm5.2": ("V", "Eckart-Young: k = ceil(srank/eta^2) gives |W - W_k|_2 <= eta |W|_2 [R-high]"),
    "clocks:prop5.3": ("V", "cover of the projected representation [R-high]"),
    "clocks:def5.4": ("C", "projected-embedding robustness [R-med]"),
    "clocks:thm5.5": ("V", "generalization bound through the stable rank [R-med]"),
    "clocks:thm5.6": ("V", "temporal mismatch t_rep - t_cls lower bound [R-high structure, R-med display]"),
    "clocks:cor5.7": ("E", "conditional ReLU version of the two clocks (no formula; modular-addition report)"),
    # §6 empirical clock estimators
    "clocks:appF4-cls-estimator": ("C", "first and sustained (window) classifier-clock estimators [R-high]"),
    "clocks:appF4-min-gap": ("V", "empirical minimum logit gap"),
    "clocks:appF4-srank-stat": ("C", "stable-rank structural statistic (excess / distance to the late value) [R-med]"),
    "clocks:appF4-tail": ("V", "rank-k spectral tail tau_k [R-high]"),
    "clocks:appF4-scale": ("V", "scale invariance of srank and tau_k"),
    "clocks:appF4-persist": ("C", "sustained representation-clock estimator [R-high]"),
    "clocks:appF4-opt-time": ("C", "accumulated optimizer time tau_k = sum_j eta_j [R-high]"),
    "clocks:appF4-acc-clock": ("C", "zero-one (accuracy) clock [R-high]"),
    "clocks:appF4-sep-ratio": ("C", "separation ratio t_rep / t_cls [R-high]"),
    "clocks:appF4-class-sep": ("C", "class-separation ratio (within / between) [R-med]"),
    "clocks:appF4-fourier": ("C", "Fourier energy outside a frequency set [R-med]"),
    # §7 experimental setting
    "clocks:appB": ("E", "modular-addition MLP protocol (AdamW, p = 97) [R-low for the stripped numbers]"),
}

MODULES: tuple[str, ...] = (
    "grokclocks.clocks",
    "grokclocks.spectral",
    "grokclocks.sim.landscapes",
    "grokclocks.sim.deep_linear",
)

# Where each registered result stands in the paper (ASCII, no TeX specials: it goes into BibTeX notes).  The
# spec's [D] results are not results of the paper: NOT_IN_PAPER ("own": derived for grokclocks).
WHERE: dict[str, str] = {
    "clocks:eq2.1": "eq. (2.1), Sec. 2.1",
    "clocks:eq2.2": "eq. (2.2), Sec. 2.1",
    "clocks:eq2.3": "eq. (2.3), Sec. 2.2",
    "clocks:eq2.4": "eq. (2.4), Sec. 2.3",
    "clocks:eq2.5": "eq. (2.5), Sec. 2.3",
    "clocks:eq2.6": "eq. (2.6), Sec. 2.4",
    "clocks:eq2.7": "eq. (2.7), Sec. 2.4 (after Shang et al. 2020)",
    "clocks:def2.1": "Definition 2.1",
    "clocks:thm2.2": "Theorem 2.2 (after Xu and Mannor 2012)",
    "clocks:eq3.1": "eq. (3.1), Sec. 3.1",
    "clocks:eq3.2": "eq. (3.2), Sec. 3.1",
    "clocks:lem3.1": "Lemma 3.1",
    "clocks:lem3.2": "Lemma 3.2",
    "clocks:lem3.3": "Lemma 3.3",
    "clocks:asm3.4": "Assumption 3.4, eq. (3.4)",
    "clocks:thm3.5": "Theorem 3.5",
    "clocks:prop3.6": "Proposition 3.6",
    "clocks:prop4.1": "Proposition 4.1",
    "clocks:prop4.2": "Proposition 4.2",
    "clocks:appF3-gate-margin": "App. F.3 (frozen gates)",
    "clocks:eq4.1": "eq. (4.1), Sec. 4.3",
    "clocks:eq4.2": "eq. (4.2), Sec. 4.3",
    "clocks:thmD.1": "Theorem D.1, App. D.3",
    "clocks:eq4.3": "eq. (4.3), Sec. 4.4",
    "clocks:prop4.3": "Proposition 4.3",
    "clocks:thm4.4": "Theorem 4.4",
    "clocks:asm4.5": "Assumption 4.5, eq. (4.4)",
    "clocks:lem4.6": "Lemma 4.6",
    "clocks:thm4.8": "Theorem 4.8",
    "clocks:thm4.9": "Theorem 4.9",
    "clocks:prop5.1": "Proposition 5.1",
    "clocks:thm5.2": "Theorem 5.2",
    "clocks:prop5.3": "Proposition 5.3",
    "clocks:def5.4": "Definition 5.4",
    "clocks:thm5.5": "Theorem 5.5",
    "clocks:thm5.6": "Theorem 5.6",
    "clocks:cor5.7": "Corollary 5.7",
    "clocks:appF4-cls-estimator": "App. F.4 (classifier-side estimator)",
    "clocks:appF4-min-gap": "App. F.4 (empirical minimum gap)",
    "clocks:appF4-srank-stat": "App. F.4 (representation-side estimator)",
    "clocks:appF4-tail": "App. F.4 (spectral-tail statistic)",
    "clocks:appF4-scale": "App. F.4 (scale and normalization)",
    "clocks:appF4-persist": "App. F.4 (persistence windows)",
    "clocks:appF4-opt-time": "App. F.4 (time parametrization)",
    "clocks:appF4-acc-clock": "App. F.4 (accuracy versus loss-tail clocks)",
    "clocks:appF4-sep-ratio": "App. F.4 (separation ratio)",
    "clocks:appF4-class-sep": "App. F.4 (class-separation gap)",
    "clocks:appF4-fourier": "App. F.4 (Fourier-subspace energy)",
    "clocks:appB": "App. B (experimental settings)",
}

NOT_IN_PAPER: dict[str, tuple[str, str]] = {
    "clocks:appF2-balance": ("own", "decay of the layer imbalance under layerwise weight decay, derived for "
                             "grokclocks"),
    "clocks:appF1-acc-order": ("own", "a training loss below ln(2)/n classifies every training point, derived for "
                               "grokclocks"),
    "clocks:appF2-balanced-drift": ("own", "singular-value drift of a layer-trained balanced network, derived for "
                                    "grokclocks (erratum clocks-6)"),
    "clocks:appF2-kl-examples": ("own", "landscapes with a known KL exponent, derived for grokclocks"),
    "clocks:appF2-wd-rate": ("own", "exponential spectral tail under weight decay alone, derived for grokclocks "
                             "(erratum clocks-2)"),
}

_T = "tests/test_clocks.py"
_V = "verify/clocks/test_clock_landscapes.py"

ERRATA: tuple[Erratum, ...] = (
    Erratum(
        "clocks-1", ("clocks:asm3.4", "clocks:thm3.5"), "Assumption 3.4 / Theorem 3.5 (section 3)",
        "after the margin, the logit gaps grow linearly under gradient training, so t_cls(eps) = O(log 1/eps)",
        "plain gradient descent on separable softmax regression violates (3.4): the minimum gap grows like log t "
        "and the loss like 1/t, so t_cls(eps) ~ 1/eps; the logarithmic clock needs linear gap growth "
        "(normalized GD, sign GD, Adam)",
        "K=4, d=10, n=40 separable data, float64: plain GD lr 0.5 gives a log-log slope of t_cls vs 1/eps of "
        "1.043 (eps = 1e-2 ... 1e-4; spec: 0.989) and a log-clock extrapolation to eps=1e-4 is off by 7.6x; "
        "normalized GD eta=0.01 satisfies (3.4): dt_cls/dlog(1/eps) = 1.333 vs 1/c_late = 1.344 (0.8 %), "
        "Adam lr 0.01: 20.04 vs 20.07 (0.1 %); the Theorem 3.5 bound holds at all 17 + 9 levels",
        (f"{_V}::test_fast_clock_plain_gd_is_polynomial", f"{_V}::test_fast_clock_normalized_gd"),
    ),
    Erratum(
        "clocks-2", ("clocks:thm4.9", "clocks:appF2-wd-rate"), "section 4.3-4.5 (scope of Theorem 4.9)",
        "layerwise weight decay induces the Schatten-2/L geometry whose late-time KL exponent gives a "
        "polynomial representation clock",
        "in the factorized network the weight-decay shrinkage of a singular value is linear (mu L sigma), so "
        "weight decay alone gives an exponential spectral tail with rate 4(mu - |F_perp|) (L=2) or 2 mu L "
        "(L>=3); polynomial tails need degenerate geometry (depth without decay, theta = 1 - 1/(2L), or "
        "critical decay, theta = 3/4). A scope caveat: the paper states the KL exponent as an assumption",
        "factorized CE net, K=4 circle data, mu=0.01, GD lr 0.05: fitted exponential rate of tau_2 = 0.06002 vs "
        "2 mu L = 0.06 (L=3), 0.02791 vs 4(mu-|F_perp|) = 0.02755 (L=2, 1.3 %); power-law exponents of the same "
        "tail on the two halves of the window differ (11.3 vs 36.5), so no polynomial clock",
        (f"{_V}::test_weight_decay_tail_is_exponential",),
    ),
    Erratum(
        "clocks-3", ("clocks:thm4.9",), "end of Theorem 4.9",
        "'with theta = ... this exponent becomes ...' (value stripped in the available text)",
        "the value cannot be recovered; grokclocks uses theta = 3/4 (quartic flat bottom) as the worked "
        "example: Delta ~ t^{-2}, t_rep ~ delta^{-1/2}",
        "kl_gap_solution(10, 1, 16, 0.75) = 81^{-2} = 1.52416e-4 and kl_clock_time(1e-4, 1, 16, 0.75) = 12.375 "
        "(closed forms, checked against an ODE solve); GD on |x|^4 decays with fitted exponent 2",
        (f"{_T}::test_kl_examples_from_spec", f"{_V}::test_kl_power_landscapes"),
    ),
    Erratum(
        "clocks-4", ("clocks:lem3.2",), "Lemma 3.2 (App. C.2 / F.1)",
        "the smoothness constant of the mean cross-entropy (stripped; B^2/4 and B^2 are the usual candidates)",
        "beta = B^2/2, and it is attained (K=2, pi = (1/2, 1/2), one sample: lambda_max = |x|^2/2)",
        "max eigenvalue of diag(pi) - pi pi^T over 8000 random probability vectors (K=2,3,5,10) <= 1/2, attained at "
        "K=2 uniform; the finite-difference W-Hessian at W=0, K=2, one sample has lambda_max = |x|^2/2 to 1e-6 "
        "relative, twice the B^2/4 variant",
        (f"{_T}::test_smoothness_constant_is_sharp",),
    ),
    Erratum(
        "clocks-5", ("clocks:eq3.2",), "section 3 / App. F.4 (loss logging)",
        "the classifier clock is read from the logged training cross-entropy",
        "log the loss in gap form log(1 + sum_k e^{-gamma_k}); the textbook logsumexp(z) - z_y cancels and "
        "returns exactly 0 once min gamma >~ 37 (float64) or ~16 (float32), which makes small-eps clocks meaningless",
        "float64, K=4, gaps = 40: gap form 1.27e-17 (relative error < 1e-15 vs mpmath), naive form 0.0",
        (f"{_T}::test_cross_entropy_gap_form_vs_naive",),
    ),
    Erratum(
        "clocks-6", ("clocks:eq4.3", "clocks:appF2-balanced-drift"), "Prop. 4.3 / eq. 4.3 (section 4.4), App. F.2",
        "the singular-value drift sigma_i' = F_i - lambda p sigma_i^{p-1} (end-to-end flow of L + lambda |W|_Sp^p) "
        "describes the trained deep linear network",
        "it holds for the end-to-end flow only; a layer-trained balanced network (GD/flow on the factors with layerwise "
        "decay mu) follows sigma_i' = L sigma_i^{2-2/L} (F_i - lambda p sigma_i^{p-1}) with lambda = mu L/2, p = 2/L: "
        "same stationary points, per-direction time rescaled by L sigma^{2-2/L}",
        "RK4 dt=1e-3, CE, K=4, d=5, n=40, 3 seeds: end-to-end flow matches eq. 4.3 to 7e-8 of max|sigma'| (p = 1, 2/3, 1/2); "
        "layer-trained net from a balanced start (mu=0.1) matches the rescaled drift to 1.6e-8 (L=2) and 1.1e-7 (L=3), "
        "while the end-to-end formula applied to it is off by 0.48 (L=2) and 0.64 (L=3) of max|sigma'|",
        ("tests/test_spectral.py::test_balanced_drift_vs_layer_velocity",
         "verify/clocks/test_deep_linear.py::test_balanced_singular_value_drift",
         "verify/clocks/test_deep_linear.py::test_end_to_end_singular_value_drift"),
    ),
)
