"""Registry data of spec ``kramers`` (escape-rate theory of the grokking delay): IDs, modules, errata.

Status tags: the spec's ``derived-here`` results are registered as "V" (exact, pinned numerically),
its ``heuristic`` ones as "A" with "heuristic estimate" in the title (no dedicated tag yet), and the
``erratum`` ones whose corrected form is implemented as "V-corr".
"""

from __future__ import annotations

from . import Erratum

SPEC_IDS: dict[str, tuple[str, str]] = {
    "kramers:eq1": ("V", "alpha-parameterised two-layer ReLU network"),
    "kramers:params": ("V", "parameter count N(2p + C)"),
    "kramers:init": ("V", "initialisation w ~ N(0, I/d), a ~ N(0, 1/N)"),
    "kramers:task": ("V", "modular addition on concatenated one-hots and the train/test split"),
    "kramers:milestones": ("V", "t_mem and t_grok at accuracy thresholds (derived here; paper section 1.4 empty)"),
    "kramers:eq2": ("V", "regularised objective; weight-decay convention switch (penalty)"),
    "kramers:eq3": ("V", "gradient flow with weight decay (GD approximation)"),
    "kramers:jacobian": ("V", "explicit Jacobian of the two-layer net"),
    "kramers:eq4": ("V", "NTK = readout part + feature part"),
    "kramers:nngp": ("V", "infinite-width ReLU kernels on one-hot pairs (derived here)"),
    "kramers:nngp-spectrum": ("V", "closed-form kernel spectrum on the full p^2 grid (derived here)"),
    "kramers:eq5": ("V-corr", "readout residual with weight decay (corrected: tends to the ridge residual)"),
    "kramers:lln": ("A", "LLN kernel norms ||K_a|| ~ N^(1-2 alpha) lambda_top"),
    "kramers:eq6": ("A", "readout timescale 1/lambda(K_a) ~ N^(2 alpha - 1)"),
    "kramers:feature-speed": ("A", "per-neuron feature speed N^(-1/2-alpha) (heuristic estimate, exponent verified)"),
    "kramers:eq8": ("P", "paper's feature timescale N^(2 alpha)/(eta ||grad_w K||) (heuristic; table only)"),
    "kramers:sep": ("V-corr", "separation ratio: measured exponents 3/2-alpha, 2-alpha, 2-2alpha, not N^(2 alpha)"),
    "kramers:lyu": ("A", "implicit-bias switching time ln(s)/gamma (heuristic estimate, slope verified)"),
    "kramers:ridge-gf": ("V", "ridge regression: exact gradient-flow solution"),
    "kramers:ridge-gd": ("V", "ridge regression: exact discrete GD iterate"),
    "kramers:ridge-loss": ("V", "ridge regression: train and test losses along the flow"),
    "kramers:ridge-rates": ("V", "ridge regression: row-space and null-space rates"),
    "kramers:ridge-delay": ("V-corr", "ridge delay: exact first passages; ratio mu_min/gamma (not 1/(lambda lambda_min))"),
    "kramers:rf-norm": ("V-corr", "random-feature interpolant norm shrinks like N^(alpha - 1/2)"),
    "kramers:barrier": ("P", "extensive barrier Delta F = Omega(P) (asserted, not derived; table only)"),
    "kramers:eq17": ("V", "overdamped Langevin dynamics and its Euler-Maruyama discretisation"),
    "kramers:eyring": ("A", "Eyring-Kramers mean transition time with Hessian-determinant prefactor"),
    "kramers:eyring-1d": ("A", "one-dimensional Kramers time"),
    "kramers:mfpt-1d": ("V", "exact 1-D mean first-passage time by quadrature"),
    "kramers:test-potentials": ("V", "benchmark landscapes double_well_1d and saddle_2d"),
    "kramers:fpt-criterion": ("V", "first-passage criterion: other minimum (tau_EK) vs saddle (tau_EK/2)"),
    "kramers:eq15": ("A", "grokking time ~ exp(Delta F / T_eff) (heuristic estimate via Eyring-Kramers)"),
    "kramers:eq16": ("P", "delay ratio exp(Omega(P/T_eff))/poly(N) (heuristic; table only)"),
    "kramers:arrhenius": ("V", "Arrhenius inversion Delta F/T = ln(t_grok/tau_0) (exact algebra, heuristic use)"),
    "kramers:teff-sgd": ("V-corr", "SGD temperature eta tr(Sigma)/(2 B P) per coordinate (paper: sum over modes)"),
    "kramers:teff-gd": ("P", "full-batch temperature eta^2 tr(Hessian) (unsupported heuristic)"),
    "kramers:spectral": ("V", "spectral-asymmetry delay ratio (exact for a quadratic)"),
    "kramers:table": ("A", "summary of delay scalings (heuristic estimates, corrected)"),
    "kramers:headline": ("E", "headline run alpha=0, lambda=1, N=512, p=97 (reproduced with AdamW)"),
}

MODULES: tuple[str, ...] = ("grokclocks.kramers", "grokclocks.sim.langevin", "grokclocks.sim.kramers")

# Where each registered result stands in the paper (ASCII, no TeX specials: it goes into BibTeX notes).  The IDs
# of NOT_IN_PAPER are not results of the paper: "own" (derived or built for grokclocks) or the key of the
# textbook in grokclocks.citations.REFERENCES that states them.
WHERE: dict[str, str] = {
    "kramers:eq1": "eq. (1), Sec. 1.1",
    "kramers:params": "Sec. 1.1 (parameter count)",
    "kramers:init": "Sec. 2.2-2.3 (initialization)",
    "kramers:task": "Sec. 1.2 (modular addition)",
    "kramers:eq2": "eq. (2), Sec. 1.3",
    "kramers:eq3": "eq. (3), Sec. 1.3",
    "kramers:jacobian": "Sec. 2.1 (the derivatives in eq. (4))",
    "kramers:eq4": "eq. (4), Sec. 2.1",
    "kramers:eq5": "eq. (5) (numbering inferred: the readout ODE of Sec. 2.2)",
    "kramers:lln": "Sec. 2.2 (law of large numbers for the kernel)",
    "kramers:eq6": "eq. (6), Sec. 2.2",
    "kramers:feature-speed": "Sec. 2.3 (feature dynamics)",
    "kramers:eq8": "eq. (8), Sec. 2.3 (display missing from the source)",
    "kramers:sep": "Sec. 2.4 (timescale separation theorem)",
    "kramers:lyu": "Sec. 2.5 (implicit bias dichotomy, after Lyu et al. 2024)",
    "kramers:ridge-rates": "Sec. 2.6 (ridge regression)",
    "kramers:ridge-delay": "Sec. 2.6 and Sec. 5.1 (ridge regression delay)",
    "kramers:rf-norm": "Sec. 3.1 (random-feature interpolant norm)",
    "kramers:barrier": "Sec. 3.2 (extensive barrier)",
    "kramers:eq17": "eq. (17), Sec. 3.3",
    "kramers:eyring": "Sec. 3.3 (Kramers formula)",
    "kramers:eyring-1d": "Sec. 3.3 (Kramers formula, one dimension)",
    "kramers:eq15": "eq. (15), Sec. 3.3 (display missing from the source)",
    "kramers:eq16": "eq. (16), Sec. 3.3 (display missing from the source)",
    "kramers:arrhenius": "Sec. 4.2 (Delta F / T = ln 73)",
    "kramers:teff-sgd": "Sec. 3.3 (SGD temperature)",
    "kramers:teff-gd": "Sec. 3.3 and Sec. 5.2 (full-batch temperature)",
    "kramers:spectral": "Sec. 4.3 (spectral asymmetry)",
    "kramers:table": "Sec. 5.1 (summary of delay scalings)",
    "kramers:headline": "Sec. 4.1 (observed grokking delay)",
}

NOT_IN_PAPER: dict[str, tuple[str, str]] = {
    "kramers:milestones": ("own", "memorization and grokking times at accuracy thresholds (Sec. 1.4 of the paper is "
                           "empty)"),
    "kramers:nngp": ("own", "infinite-width ReLU kernels on one-hot pairs, derived for grokclocks"),
    "kramers:nngp-spectrum": ("own", "closed-form spectrum of the infinite-width kernel on the full p x p grid, derived "
                              "for grokclocks"),
    "kramers:ridge-gf": ("own", "exact gradient flow of the ridge model of Sec. 2.6"),
    "kramers:ridge-gd": ("own", "exact discrete gradient-descent iterate of the ridge model of Sec. 2.6"),
    "kramers:ridge-loss": ("own", "train and test losses along the exact ridge flow of Sec. 2.6"),
    "kramers:mfpt-1d": ("gardiner2009stochastic", "exact mean first-passage time of a one-dimensional diffusion, "
                        "the reference for the Kramers law of Sec. 3.3"),
    "kramers:test-potentials": ("own", "benchmark landscapes with known critical points"),
    "kramers:fpt-criterion": ("own", "first-passage criterion: the other minimum versus the saddle"),
}

_T = "tests/test_kramers.py"
_V = "verify/kramers/test_kramers.py"

ERRATA: tuple[Erratum, ...] = (
    Erratum(
        "kramers-1", ("kramers:eq1", "kramers:params"), "eq. 1 / eq. 2 / section 4.1",
        "scalar output f(x) trained with p-class cross-entropy; P = N(d+1)",
        "a p-way readout A (N x p) is needed for p-class cross-entropy; P = N(2p + p) = 148 992 at N=512, p=97",
        "param_count(512, 97) = 99 840 (scalar) vs param_count(512, 97, n_out=97) = 148 992",
        (f"{_T}::test_param_count",),
    ),
    Erratum(
        "kramers-2", ("kramers:eq5",), "section 2.2 (readout ODE)",
        "dr/dt = -K r - 2 lambda r, converging to 0 at rate lambda_min(K) + 2 lambda",
        "dr/dt = -(K + 2 lambda) r - 2 lambda y; r -> r* = -2 lambda (K + 2 lambda)^-1 y, not 0",
        "readout-only GD (p=11, N=512, lambda=0.05) matches the corrected form to 1e-2 c (c = eta lambda_max); "
        "the paper's r -> 0 misses the late residual ||r*||/||y|| ~ 0.03",
        (f"{_T}::test_readout_residual_vs_mpmath_expm", f"{_V}::test_eq5_readout_residual"),
    ),
    Erratum(
        "kramers-3", ("kramers:sep", "kramers:eq8"), "sections 2.3-2.4, 4.2",
        "tau_features / tau_readout = Omega(N^(2 alpha)) (ratio 1 at alpha = 0)",
        "the paper's own algebra gives N/||grad_w K|| (alpha-independent); measured exponents are 3/2 - alpha "
        "(weights), 2 - alpha (kernel velocity), 2 - 2 alpha (integrated kernel change), decreasing in alpha",
        "spec measurements (p=11, N=1024..16384): tau_W/tau_r slopes 1.522/1.250/0.997, tau_K/tau_r 2.061/1.752/1.492 "
        "at alpha = 0/0.25/0.5; 1/Delta_K slopes 1.988/1.471 at alpha = 0/0.25; N^(2 alpha) misses by >= 0.5",
        (f"{_V}::test_sep_initial_velocity_exponents", f"{_V}::test_sep_integrated_kernel_change"),
    ),
    Erratum(
        "kramers-4", ("kramers:eq6", "kramers:eq8"), "eqs. 6, 8 and abstract",
        "eta appears in gradient-flow timescales tau = 1/(eta lambda)",
        "in gradient-flow time tau = 1/lambda; tau/eta is a step count (keyword eta=)",
        "readout_timescale(K, eta=e) == readout_timescale(K)/e",
        (f"{_T}::test_readout_timescale_eta_is_step_count",),
    ),
    Erratum(
        "kramers-5", ("kramers:ridge-delay",), "section 2.6",
        "delay ~ 1/(lambda lambda_min^+)",
        "t_grok ~ ln(||P_perp theta0||^2 / 2 eps)/(2 gamma); ratio t_grok/t_mem ~ lambda_min^+(Phi^T Phi)/(n gamma)",
        "n=40, D=200, gamma=0.01: exact t_mem=2.709, t_grok=474.154, ratio 175 vs mu_min/gamma = 185.7; "
        "paper's 1/(lambda lambda_min) = 1.35 and a null-space rate 2 gamma (t_grok ~ 237) are rejected",
        (f"{_V}::test_ridge_delay",),
    ),
    Erratum(
        "kramers-6", ("kramers:eq2", "kramers:lyu"), "eq. 2 vs sections 2.5-2.6",
        "||theta(t)|| ~ alpha e^(-lambda t) under the eq. (2) penalty lambda ||theta||^2",
        "eq. (2) decays as e^(-2 lambda t) (gamma = 2 lambda); e^(-lambda t) is the lambda/2 convention (penalty='half')",
        "diagonal linear net with eq. (2) penalty: slope of t_grok vs ln s = 25.00 = 1/(2 lambda) at lambda = 0.02, "
        "the 1/lambda variant is rejected",
        (f"{_V}::test_lyu_slope", f"{_T}::test_decay_rate"),
    ),
    Erratum(
        "kramers-7", ("kramers:rf-norm",), "section 3.1",
        "random-feature interpolant norm Theta(sqrt(n/lambda_min(K0))) = O(sqrt N)",
        "lambda_min(K_a) grows like N^(1-2 alpha), so ||a*|| shrinks like N^(alpha - 1/2); Theta(N) of ||theta||^2 comes from ||W||_F^2",
        "slopes of log||a*|| vs log N ~ -0.53/-0.28/-0.03 at alpha = 0/0.25/0.5 (theory alpha - 1/2); the +1/2 variant is rejected",
        (f"{_V}::test_rf_norm_scaling",),
    ),
    Erratum(
        "kramers-8", ("kramers:barrier",), "sections 3.2 and 4.2",
        "Delta F = Omega(P); larger lambda lowers the barrier",
        "no derivation; on the zero-loss manifold F = lambda ||theta||^2, so any barrier there is proportional to lambda",
        "the paper's own Step 4 formula; no function computes Delta F for a network (table entry only)",
        (f"{_T}::test_delay_scaling_table",),
    ),
    Erratum(
        "kramers-9", ("kramers:teff-sgd",), "section 3.3",
        "T_eff = eta tr(Sigma)/(2B)",
        "per-coordinate T = eta tr(Sigma)/(2 B P) (or the directional eta e^T Sigma e/(2B)); the paper's form is the sum over P modes",
        "least squares P=8, B=10, eta=0.01: tr(HC)/P = 1.3306e-4 vs T_coord 1.3143e-4 (+1.2 %) vs T_paper 1.05e-3 (8x)",
        (f"{_V}::test_teff_sgd",),
    ),
    Erratum(
        "kramers-10", ("kramers:headline",), "section 4.1",
        "GD on eq. (2) with eta = 1e-3, lambda = 1 gives t_mem = 200, t_grok = 14 600",
        "GD decays the weights by (1 - 2 eta lambda)^k and collapses; the numbers match AdamW (lr 1e-3, wd 1.0, "
        "beta = (0.9, 0.98), full batch) with a p-way readout",
        "spec: 5 AdamW seeds t_grok(99 %) = 16 860 +- 709, ratio 53-84; CPU smoke (p=23, N=128): memorisation by 400 steps, "
        "test accuracy < 5 % at 2000 steps",
        (f"{_V}::test_headline",),
    ),
    Erratum(
        "kramers-11", ("kramers:eyring",), "eq. for tau (section 3.3)",
        "prefactor 2 pi / omega_s with omega_s undefined",
        "omega_s = |lambda_s|, the unstable Hessian eigenvalue (a rate); sqrt(|lambda_s|) would be wrong by a factor 2 here",
        "Euler-Maruyama simulation vs exact MFPT within 3 sigma + 1.5 %; the sqrt variant is rejected at > 10 sigma",
        (f"{_V}::test_eyring_1d_simulation", f"{_T}::test_eyring_kramers_formula_1d_2d"),
    ),
    Erratum(
        "kramers-12", ("kramers:teff-gd",), "section 3.3",
        "full-batch T_eff proportional to eta^2 tr(Hessian F)",
        "no derivation; dimensionally inconsistent; deterministic GD does not escape strict minima (escape temperature 0)",
        "GD on double_well_1d(1) from x = -1 + 1e-3 with eta in {0.05, 0.2, 0.249} stays at -1 for 10^6 steps",
        (f"{_V}::test_fullbatch_gd_never_escapes",),
    ),
    Erratum(
        "kramers-13", ("kramers:arrhenius",), "section 4.2",
        "Delta F/T_eff ~ ln 73 ~ 4.3 explains the headline delay as a Kramers escape",
        "at Delta F/T ~ 4 the Eyring-Kramers law is 14-40 % off; Kramers escape times have CV ~ 1, grokking times CV ~ 4 %",
        "exact references: tau/tau_EK = 1.1422 (1-D), 1.3994 (2-D) at Delta F/T = 4; simulated escape-time CV ~ 1",
        (f"{_V}::test_eyring_law_vs_exact", f"{_V}::test_escape_time_cv"),
    ),
    Erratum(
        "kramers-14", ("kramers:eq15", "kramers:eq16", "kramers:milestones"), "eqs. 8, 15, 16, section 1.4",
        "equations referenced in the text",
        "the displays are missing from the source; reconstructed from the abstract and section 3.3 (implemented via "
        "Eyring-Kramers and the summary table; milestones defined at 99 % accuracy)",
        "reconstruction documented in the spec; no numerical evidence possible",
        (f"{_T}::test_milestones",),
    ),
    Erratum(
        "kramers-15", ("kramers:lyu", "kramers:eq1"), "eq. 1 vs section 2.5",
        "alpha is both the width exponent (in [0, 1/2]) and Lyu et al.'s initialisation scale (>> 1, log alpha)",
        "separate names: alpha (width exponent) and init_scale; init_scale <= 1 and alpha outside [0, 1/2] raise DomainError",
        "domain errors tested",
        (f"{_T}::test_domain_errors",),
    ),
)
