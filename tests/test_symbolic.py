"""grokclocks.symbolic: one source of truth, checked both ways.

Every formula with a numerical function is evaluated from its sympy expression in mpmath at 30 digits
(`sympy.lambdify(..., "mpmath")`; Marcum's Q by its mpmath series, integrals by mpmath quadrature) at random
points of its domain and compared with the function:

* ``numeric == "closed form"``: relative error <= 1e-12 (the function evaluates the same closed form in
  float64, often in a cancellation-free rearrangement);
* quadrature (``numeric`` names it): relative error <= 1e-10 (the function integrates the MP law with an
  adaptive rule; the expression's integral is mpmath's tanh-sinh at 30 digits);
* an implicit result (an ``Eq``, e.g. a crossing time found by root finding): the function's value must be
  a root, i.e. the residual changes sign between value * (1 - 1e-11) and value * (1 + 1e-11).

A disagreement is a finding: the failing side is identified by mpmath (the expression is evaluated at 30
digits) and reported, not tolerated.  The registry's bookkeeping (keys, spec IDs, functions that exist and
cite the spec ID, lazy import, LaTeX) is checked here too; the errata derivations are in
tests/test_symbolic_errata.py and the series of the numerical code in tests/test_symbolic_series.py.
"""

from __future__ import annotations

import importlib
import math
from pathlib import Path
import subprocess
import sys

import mpmath
import numpy as np
import pytest
import sympy as sp

from grokclocks import DomainError
from grokclocks.citations import SPEC, citations_of
from grokclocks.symbolic import Formula, formula, formula_record, formulas, latex
from grokclocks.symbolic._api import _registry
from grokclocks.symbolic._symbols import MPMATH_FUNCTIONS

RNG_SEED = 20261126
N_POINTS = 4
DPS = 30

# sampling box of each symbol (by name): (low, high, "log" | "lin" | "int" | tuple of choices)
BOX: dict[str, tuple] = {
    "lambda": (0.05, 4.0, "log"), "t": (1.0, 3e4, "log"), "eta_0": (1e-3, 0.1, "log"), "d_out": ((1, 2, 5),),
    "s": (1e-3, 60.0, "log"), "w": (1e-3, 10.0, "log"), "gamma": (1e-3, 0.1, "log"), "epsilon": (1e-6, 1e-2, "log"),
    "ell": (0.5, 0.99, "lin"), "L": (1e-4, 1.0, "log"), "alpha": (-3.0, 3.0, "lin"), "sigma2": (1e-3, 0.1, "log"),
    "h": (0.2, 1.0, "lin"), "D0_sq": (0.01, 2.0, "log"), "p": ((5, 23, 97),), "k": ((1, 2, 3, 6, 11),),
}
# symbols of the clocks paper whose name means something else there (keyed "<paper>:<name>")
BOX.update({
    "clocks:gamma": (-5.0, 30.0, "lin"), "clocks:K": ((2, 3, 10, 97),), "clocks:epsilon": (1e-8, 0.5, "log"),
    "clocks:c": (0.05, 3.0, "log"), "clocks:t_0": (0.0, 50.0, "lin"), "clocks:gamma_0": (-3.0, 5.0, "lin"),
    "clocks:t": (50.0, 200.0, "lin"), "clocks:B": (0.1, 10.0, "log"), "clocks:m": (-30.0, 60.0, "lin"),
    "clocks:n": ((1, 7, 1000),), "clocks:rho": (0.01, 0.9, "log"), "clocks:L_0": (0.5, 5.0, "log"),
    "clocks:k_0": ((0, 3, 50),), "clocks:theta": (0.55, 0.95, "lin"), "clocks:Delta_0": (0.1, 10.0, "log"),
    "clocks:Delta": (1e-3, 10.0, "log"), "clocks:delta": (1e-6, 1e-2, "log"), "clocks:a": (0.1, 20.0, "log"),
    "clocks:c_KL": (0.2, 1.0, "lin"), "clocks:C_KL": (1.0, 3.0, "lin"), "clocks:T": (0.0, 10.0, "lin"),
    "clocks:m_G": (0.5, 1.0, "lin"), "clocks:M_G": (1.0, 2.0, "lin"), "clocks:q": (2.1, 8.0, "lin"),
    "clocks:L": ((2, 3, 4, 7),), "clocks:m_dirs": ((1, 2, 5),), "clocks:mu": (0.01, 1.0, "log"), "clocks:F_perp": (0.0, 0.01, "lin"),
    "clocks:lambda": (0.01, 2.0, "log"), "clocks:p": (0.2, 1.9, "lin"), "clocks:sigma_0": (0.01, 5.0, "log"),
    "clocks:D_0": (-3.0, 3.0, "lin"), "clocks:L_W": (0.0, 5.0, "lin"), "clocks:R": (0.5, 5.0, "log"),
    "clocks:r_c": (0.05, 0.5, "log"), "clocks:k": ((1, 2, 3),), "clocks:epsilon_rob": (0.0, 0.1, "lin"),
    "clocks:N": ((1, 20, 1000),), "clocks:M": (0.5, 3.0, "lin"), "clocks:delta_f": (0.01, 0.2, "log"),
    "clocks:r_s": (1.0, 6.0, "lin"), "clocks:eta": (0.05, 1.0, "lin"),
})
BOX.update({
    "kramers:lambda": (1e-3, 1.0, "log"), "kramers:Delta_F": (0.5, 5.0, "lin"), "kramers:T": (0.1, 2.0, "log"),
    "kramers:kappa_m": (0.5, 10.0, "log"), "kramers:kappa_s": (-10.0, -0.5, "lin"), "kramers:F3_m": (-5.0, 5.0, "lin"),
    "kramers:F4_m": (-5.0, 30.0, "lin"), "kramers:F3_s": (-5.0, 5.0, "lin"), "kramers:F4_s": (-5.0, 30.0, "lin"),
    "kramers:R": (1.0, 1e4, "log"), "kramers:R_0": (0.1, 10.0, "log"), "kramers:eta": (1e-3, 0.3, "log"),
    "kramers:tr_Sigma": (0.0, 10.0, "lin"), "kramers:B": ((1, 8, 64),), "kramers:P": ((1, 8, 1000),),
    "kramers:sigma2": (0.0, 5.0, "lin"), "kramers:h": (0.1, 5.0, "log"), "kramers:tr_H": (-5.0, 50.0, "lin"),
    "kramers:c": (-2.0, 2.0, "lin"), "kramers:s": (1.5, 1e4, "log"), "kramers:N_perp": (1.0, 100.0, "log"),
    "kramers:epsilon": (1e-3, 0.4, "log"), "kramers:kappa": (0.0, 10.0, "lin"), "kramers:y": (-3.0, 3.0, "lin"),
    "kramers:r_0": (-3.0, 3.0, "lin"), "kramers:t": (0.0, 20.0, "lin"), "kramers:phi": (-3.0, 3.0, "lin"),
    "kramers:theta_0": (-3.0, 3.0, "lin"), "kramers:N": ((1, 64, 4096),), "kramers:p": ((2, 11, 97),),
    "kramers:alpha": (0.0, 0.5, "lin"),
})
BOX.update({"uniformity:p": ((11, 23, 97, 193),), "uniformity:n": ((1, 2, 3, 4),), "uniformity:m": (0.0, 0.4, "lin"),
            "uniformity:c": (0.0, 10.0, "lin"), "uniformity:R": (0.1, 10.0, "log")})
# a value drawn from others: m is a number of training points, a fraction of the p^2 grid
DEPENDENT = {"uniformity:m": lambda v: int(v["m"] * v["p"] ** 2)}
# indexed families (finite spectra, singular values): drawn as arrays, indices from 1
ARRAYS: dict[str, tuple] = {"nu": (0.0, 4.0), "w": (0.0, 0.01), "sigma": (0.05, 3.0), "mu_m": (0.2, 5.0),
                             "mu_s": (0.2, 5.0), "mu": (0.05, 5.0)}
# per-formula changes of the box, with the reason
OVERRIDE: dict[str, dict[str, tuple]] = {
    # eq. 25 is undefined (NaN) where log z_tr <= 0: small eps and lambda away from 1 keep it defined
    "levi:eq25": {"epsilon": (1e-9, 1e-5, "log"), "lambda": (0.05, 0.6, "lin")},
    # late-time forms: the functions need t > 0 only; moderate x keeps e^-x a normal double for the reference
    "levi:eq21": {"t": (10.0, 3e3, "log")}, "levi:eq21/order-1": {"t": (10.0, 3e3, "log")},
    "levi:eq22": {"t": (10.0, 3e3, "log")}, "levi:eq10": {"t": (10.0, 3e3, "log")},
    # small-gamma forms are the functions' closed forms at any gamma; quadrature needs a moderate range
    "levi:eq14/train": {"t": (1.0, 2e3, "log"), "d_out": ((1, 2),)},
    "levi:eq14/gen": {"t": (1.0, 2e3, "log"), "d_out": ((1, 2),)},
}


def _draw(name: str, box: tuple, rng: np.random.Generator):
    if len(box) == 1:
        return int(rng.choice(box[0]))
    lo, hi, kind = box
    if kind == "log":
        return float(math.exp(rng.uniform(math.log(lo), math.log(hi))))
    return float(rng.uniform(lo, hi))


def _in_domain(f: Formula, values: dict) -> bool:
    for name, dom in f.domain:
        if name in values and not bool(dom.contains(sp.Float(values[name]) if not isinstance(values[name], int)
                                                   else sp.Integer(values[name]))):
            return False
    if "lambda" in values and abs(values["lambda"] - 1.0) < 0.05:  # every lambda = 1 is a branch point somewhere
        return False
    return True


def _indexed(f: Formula) -> set[str]:
    return {str(b.label) for b in f.expr.atoms(sp.IndexedBase)}


def _points(f: Formula, n: int, rng: np.random.Generator) -> list[dict]:
    """`n` points of the formula's domain: each argument drawn from its box, rejected outside the domain."""
    names = [sym for sym, _ in f.arguments]
    paper = f.spec_id.split(":")[0]
    box = {**BOX, **{k.split(":", 1)[1]: v for k, v in BOX.items() if k.startswith(paper + ":")},
           **OVERRIDE.get(f.key, {})}
    arrays = _indexed(f)
    out = []
    for _ in range(1000):
        size = int(rng.choice([3, 5, 8]))
        values = {name: _draw(name, box[name], rng) for name in names if name in box and name not in arrays}
        for name in arrays:  # descending, as singular values are numbered
            lo, hi = ARRAYS[name]
            values[name] = sorted(rng.uniform(lo, hi, size).tolist(), reverse=True)
        for name in list(values):
            if f"{paper}:{name}" in DEPENDENT:
                values[name] = DEPENDENT[f"{paper}:{name}"](values)
        if "mu_s" in values:  # a saddle: its first Hessian eigenvalue is the one negative one
            values["mu_s"] = values["mu_s"][: len(values["mu_m"])]
            values["mu_s"][0] = -values["mu_s"][0]
        if f.key == "levi:eq6/density":  # inside the support
            lm, lp = (1 - values["lambda"] ** 0.5) ** 2, (1 + values["lambda"] ** 0.5) ** 2
            values["nu"] = lm + rng.uniform(0.02, 0.98) * (lp - lm)
        if _in_domain(f, values):
            out.append(values)
        if len(out) == n:
            return out
    raise AssertionError(f"{f.key}: no point of the domain in the sampling box")


def _function(f: Formula):
    module, name = f.function.rsplit(".", 1)
    return getattr(importlib.import_module(module), name)


def _matrix(singular_values: list[float], rng: np.random.Generator) -> np.ndarray:
    """A random 10 x 9 matrix with the given singular values."""
    u, _ = np.linalg.qr(rng.standard_normal((10, len(singular_values))))
    v, _ = np.linalg.qr(rng.standard_normal((9, len(singular_values))))
    return (u * np.asarray(singular_values)) @ v.T


def _symmetric(eigenvalues: list[float], rng: np.random.Generator) -> np.ndarray:
    q, _ = np.linalg.qr(rng.standard_normal((len(eigenvalues), len(eigenvalues))))
    return (q * np.asarray(eigenvalues)) @ q.T


# functions whose arguments are not one value per symbol: how the test calls them, and what it reads back
CALL = {
    "kramers:eyring-1d/correction": lambda v: dict(derivs_min=(v["kappa_m"], v["F3_m"], v["F4_m"]),
                                                    derivs_saddle=(v["kappa_s"], v["F3_s"], v["F4_s"]), T=v["T"]),
    "kramers:eq5": lambda v: dict(K_a=[[v["kappa"]]], y=[v["y"]], r0=[v["r_0"]], lam=v["lambda"], t=v["t"]),
    "kramers:ridge-gf": lambda v: dict(Phi=[[v["phi"]]], y=[v["y"]], lam=v["lambda"], theta0=[v["theta_0"]], t=v["t"]),
}
OUTPUT = {
    "kramers:eq5": lambda out: float(np.ravel(out)[0]),
    "kramers:ridge-gf": lambda out: float(np.ravel(out)[0]),
    "kramers:nngp-spectrum": lambda out: (out["top"], out["mid"], out["bottom"]),
}


def _call(f: Formula, values: dict, extra: dict | None = None):
    rng = np.random.default_rng(0)
    if f.key in CALL:
        return OUTPUT.get(f.key, lambda x: x)(_function(f)(**CALL[f.key](values), **dict(f.fixed)))
    kwargs = {param: (_matrix(values[sym], rng) if param == "W" else
                      _symmetric(values[sym], rng) if param.startswith("hess_") else
                      np.asarray(values[sym]) if isinstance(values[sym], list) else values[sym])
              for sym, param in f.arguments if sym in values}
    kwargs.update(dict(f.fixed))
    kwargs.update(extra or {})
    return OUTPUT.get(f.key, lambda x: x)(_function(f)(**kwargs))


def _reference(expr, values: dict):
    """`expr` at `values` in mpmath at DPS digits (a tuple for a sympy Tuple).  An indexed family is a list
    (index 1 first); the upper limit of a sum over it is the list's length."""
    values = dict(values)
    sizes = {}
    for total in expr.atoms(sp.Sum, sp.Product):  # a sum or product over a whole family: its length
        (_, _, hi), = total.limits
        arrays = [str(b.label) for b in total.atoms(sp.IndexedBase)]
        if isinstance(hi, sp.Symbol) and arrays:
            sizes[hi] = len(values[arrays[0]])
    for el in expr.atoms(sp.Indexed):  # an element named by the family's length (mu_r)
        for idx in el.indices:
            if isinstance(idx, sp.Symbol) and not isinstance(idx, sp.Idx):
                sizes[idx] = len(values[str(el.base.label)])
    if sizes:  # written out term by term (the mpmath printer has no Product)
        expr = expr.subs(sizes).replace(lambda e: isinstance(e, (sp.Sum, sp.Product)), lambda e: e.doit())
        values.update({str(k): v for k, v in sizes.items()})
    for name, v in list(values.items()):
        if isinstance(v, list):
            values[name] = [mpmath.nan] + [mpmath.mpf(x) for x in v]
    bases = sorted(expr.atoms(sp.IndexedBase), key=str)
    labels = {str(b.label) for b in bases} | {"i"}
    symbols = sorted((x for x in expr.free_symbols if not isinstance(x, sp.Indexed) and str(x) not in labels),
                     key=str) + bases
    missing = [str(x) for x in symbols if str(x) not in values]
    assert not missing, f"no value for {missing}"
    fn = sp.lambdify(symbols, expr, modules=[MPMATH_FUNCTIONS, "mpmath"])
    with mpmath.workdps(DPS):
        args = [mpmath.mpf(values[str(x)]) if isinstance(values[str(x)], float) else values[str(x)]
                for x in symbols]
        out = fn(*args)
        outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        # tanh-sinh nodes rounded onto an end of the MP support give sqrt(-1e-31): an imaginary part at the
        # working precision's rounding level, dropped; a larger one would be a wrong branch
        outs = tuple(mpmath.re(x) if abs(mpmath.im(x)) <= 1e-20 * abs(x) else x for x in outs)
        return outs if isinstance(out, (tuple, list)) else outs[0]


def _rtol(f: Formula) -> float:
    return 1e-12 if f.numeric.startswith("closed form") else 1e-10


SCALAR = [f for f in _registry().values() if f.function and not isinstance(f.expr, sp.Eq)
          and not any(isinstance(x, sp.MatrixSymbol) for x in sp.preorder_traversal(f.expr))
          and f.key != "repulsion:sign-rule"]  # its function returns the terms; see test_sign_rule_terms_...
IMPLICIT = [f for f in _registry().values() if f.function and isinstance(f.expr, sp.Eq)]


@pytest.mark.parametrize("f", SCALAR, ids=lambda f: f.key)
def test_expression_matches_its_function(f):
    rng = np.random.default_rng(RNG_SEED + sum(map(ord, f.key)))
    worst = 0.0
    for values in _points(f, N_POINTS, rng):
        ref = _reference(f.expr, values)
        got = _call(f, values)
        refs = ref if isinstance(ref, tuple) else (ref,)
        gots = tuple(got) if isinstance(ref, tuple) else (got,)
        for r, g in zip(refs, gots):
            r = float(r)
            err = abs(float(g) - r) / abs(r) if r != 0 else abs(float(g))
            worst = max(worst, err)
            assert err <= _rtol(f), f"{f.key} at {values}: function {float(g)!r}, expression {r!r} (rel. {err:.2e})"


@pytest.mark.parametrize("f", IMPLICIT, ids=lambda f: f.key)
def test_function_solves_its_equation(f):
    rng = np.random.default_rng(RNG_SEED + sum(map(ord, f.key)))
    residual = f.expr.lhs - f.expr.rhs
    for values in _points(f, N_POINTS, rng):
        root = float(_call(f, values))
        assert math.isfinite(root) and root > 0, (f.key, values, root)
        signs = []
        for factor in (1 - 1e-11, 1 + 1e-11):
            r = _reference(residual, {**values, f.unknown: root * factor})
            signs.append(mpmath.sign(r))
        assert signs[0] * signs[1] <= 0, f"{f.key} at {values}: {root!r} is not a root to 1e-11 (residual signs {signs})"


MATRIX = [f for f in _registry().values() if f.function
          and any(isinstance(x, sp.MatrixSymbol) for x in sp.preorder_traversal(f.expr))]
# exact rational features (n samples x K units) and weight decays, the small one in the erratum's regime
MATRIX_CASES = [(4, 3, sp.Rational(1, 3)), (3, 5, sp.Integer(2)), (5, 4, sp.Rational(1, 5000)), (2, 6, sp.Integer(1))]


def _exact(expr, F: sp.Matrix, eta):
    """`expr` (a matrix expression in a matrix symbol F or Ftilde, n, K, eta) in exact rational arithmetic."""
    (msym,) = [x for x in expr.free_symbols if isinstance(x, sp.MatrixSymbol)]
    n, K = msym.shape
    subs = {msym: sp.ImmutableMatrix(F), n: F.shape[0], K: F.shape[1]}
    subs.update({x: eta for x in expr.free_symbols if str(x) == "eta"})
    out = expr.xreplace(subs)
    out = out.replace(lambda e: isinstance(e, (sp.Identity, sp.OneMatrix)), lambda e: sp.ImmutableMatrix(e.as_explicit()))
    out = out.doit()
    return sp.Matrix(out if isinstance(out, sp.MatrixBase) else out.as_explicit())


@pytest.mark.parametrize("f", MATRIX, ids=lambda f: f.key)
def test_matrix_expression_matches_its_function(f):
    """Matrix identities in exact rational arithmetic against the float64 functions: relative to the largest
    entry <= 1e-12 for eta of order 1, <= 1e-8 at eta = 2e-4 with K > n (F~^T F~ singular, B ~ 1/eta: its
    float64 inverse carries cond ~ 1e5 times the rounding)."""
    rng = np.random.default_rng(RNG_SEED + sum(map(ord, f.key)))
    for n, K, eta in MATRIX_CASES:
        F = sp.Matrix(n, K, [sp.Rational(int(x), 7) for x in rng.integers(-9, 10, n * K)])
        exact = _exact(f.expr, F, eta)
        Fn = np.array(F.evalf(20).tolist(), dtype=float)
        args = {param: (Fn if sym in ("F", "Ftilde") else float(eta)) for sym, param in f.arguments}
        ref = np.array(exact.evalf(30).tolist(), dtype=float)
        if f.key == "repulsion:full-projector":  # the function takes off-diagonal pairs (j != l)
            jj, ll = np.nonzero(~np.eye(K, dtype=bool))
            got, ref = _function(f)(**args, j=jj, l=ll), ref[jj, ll]
        else:
            got = _function(f)(**args, **dict(f.fixed))
        tol = 1e-8 if eta < 1e-3 else 1e-12
        err = np.max(np.abs(got - ref)) / np.max(np.abs(ref))
        assert err <= tol, f"{f.key} (n={n}, K={K}, eta={eta}): max error {err:.2e} of the largest entry"


def test_sign_rule_terms_satisfy_the_identity():
    """sign_rule_terms returns B_jl from the inverse and (c, alpha, beta) from the leave-two-out projector;
    the formula -c/(alpha beta - c^2) ties them, and B_jl is the exact (F~^T F~ + eta I)^-1 entry."""
    f = formula_record("repulsion:sign-rule")
    fn = _function(f)
    rng = np.random.default_rng(RNG_SEED)
    B = formula_record("repulsion:woodbury").expr
    for n, K, eta in MATRIX_CASES:
        F = sp.Matrix(n, K, [sp.Rational(int(x), 7) for x in rng.integers(-9, 10, n * K)])
        exact = _exact(B, F, eta)
        Fn = np.array(F.evalf(20).tolist(), dtype=float)
        for j, l in [(0, 1), (1, K - 1), (K - 1, 0)]:
            terms = fn(Fn, float(eta), j, l)
            ref = float(_reference(f.expr, {"c": float(terms.c), "alpha": float(terms.alpha),
                                            "beta": float(terms.beta)}))
            scale = float(max(abs(x) for x in exact))
            assert abs(terms.B_jl - ref) <= 1e-9 * scale, (n, K, eta, j, l, terms.B_jl, ref)
            assert abs(terms.B_jl - float(exact[j, l])) <= 1e-9 * scale, (n, K, eta, j, l)
            assert terms.alpha * terms.beta - terms.c**2 > 0


# ------------------------------------------------------------------ registry bookkeeping


def test_at_least_forty_results_with_a_function():
    checked = {f.spec_id for f in _registry().values() if f.function}
    assert len(_registry()) >= 40 and len(checked) >= 40, (len(_registry()), len(checked))


def test_every_formula_names_a_function_citing_its_spec_id_or_a_test():
    for f in _registry().values():
        assert f.spec_id in SPEC, f.key
        assert f.key == f.spec_id or f.key.startswith(f.spec_id + "/"), f.key
        if f.function is None:
            path, _, test = f.checked_by.partition("::")
            assert path.startswith("tests/") and test, f.key
            source = (Path(__file__).resolve().parents[1] / path).read_text()
            assert f"def {test}(" in source, f"{f.key}: {f.checked_by} does not exist"
            continue
        fn = _function(f)
        assert f.spec_id in citations_of(fn), f"{f.key}: {f.function} does not cite {f.spec_id}"
        free = {str(x) for x in f.expr.free_symbols if not isinstance(x, sp.Indexed)} - {f.unknown, "i"}
        mapped = {sym for sym, _ in f.arguments}
        sizes = {str(hi) for total in f.expr.atoms(sp.Sum, sp.Product) for (_, _, hi) in total.limits if hi.is_Symbol}
        sizes |= {str(x) for el in f.expr.atoms(sp.Indexed) for x in el.indices if x.is_Symbol}
        sizes |= {str(x) for msym in f.expr.atoms(sp.MatrixSymbol) for x in msym.shape if x.is_Symbol}
        assert free <= mapped | {str(b) for b in f.expr.atoms(sp.IndexedBase)} | sizes, (f.key, free - mapped)


def test_formula_lookup_by_key_spec_id_and_function():
    from grokclocks.linear import grok_time_asymptotic, loss_train
    from grokclocks.rmt import mp_edges

    assert formula("levi:eq11") == formula(grok_time_asymptotic) == formula("linear.grok_time_asymptotic")
    assert formula("grok_time_asymptotic") == formula("grokclocks.linear.grok_time_asymptotic")
    assert isinstance(formula(mp_edges), sp.Tuple)
    assert formula_record(loss_train).key == "levi:eq8/train"  # the function's first formula
    assert formula_record("levi:eq19").key == "levi:eq19"
    with pytest.raises(DomainError, match="target 'levi:eq6' \\(a spec ID\\) has 3 formulas: levi:eq6/density, levi:eq6/edges"):
        formula("levi:eq6")
    with pytest.raises(KeyError, match="nearest: levi:eq11"):
        formula("levi:eq111")
    with pytest.raises(KeyError, match="no closed form"):
        formula("grok_time")  # root finding
    with pytest.raises(KeyError, match="target must be"):
        formula(3)
    assert set(formulas()) == set(_registry())


def test_latex_carries_the_paper_equation_number_and_bibkey():
    text = latex("levi:eq11")
    assert text.startswith("% eq. (11) of \\cite{levi2024grokking}; grokclocks levi:eq11\n\\begin{equation}")
    assert "\\tag{11}" in text and text.endswith("\\end{equation}")
    assert "\\tag" not in latex("levi:gen-closed")
    for key in _registry():  # every formula typesets, with balanced braces
        body = latex(key)
        assert body.count("{") == body.count("}"), key


def test_import_costs_nothing_until_a_formula_is_asked_for():
    code = ("import sys, grokclocks, grokclocks.linear, grokclocks.rmt, grokclocks.clocks, grokclocks.spectral, "
            "grokclocks.kramers, grokclocks.coverage, grokclocks.repulsion, grokclocks.symbolic\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'sympy'}))\n"
            "grokclocks.symbolic.formula('levi:eq11')\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'sympy'}))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:2] == ["[]", "['sympy']"], out.stdout


# ------------------------------------------------------------------ for papers: the CLI and the theory pages


def test_cite_latex_prints_the_equations_then_the_bibtex(capsys):
    from grokclocks.citations import cite
    from grokclocks.cli import main

    assert main(["cite", "grok_time_asymptotic", "--latex"]) == 0
    out = capsys.readouterr().out
    eq, _, bib = out.partition("\n\n@")
    assert eq.strip() == latex("levi:eq11") and "@" + bib.strip() == cite("levi:eq11").strip()
    assert main(["cite", "levi:eq6", "mp_edges", "--latex", "--format", "text"]) == 0
    out = capsys.readouterr().out
    assert out.count("\\begin{equation}") == 3 and "[levi:eq6 (eq. (6)" in out.rstrip().splitlines()[-1]  # eq6's parts, once each
    assert main(["cite", "loss_train", "--latex"]) == 0  # a function with two formulas: eq. 8 and eq. 14
    out = capsys.readouterr().out
    assert "grokclocks levi:eq8/train" in out and "grokclocks levi:eq14/train" in out
    assert main(["cite", "grok_time"]) == 0  # without --latex a root-finding function cites as before
    capsys.readouterr()
    rc = main(["cite", "grok_time", "--latex"])
    err = capsys.readouterr().err
    assert rc == 2 and "no closed form" in err and "without --latex" in err


def test_theory_pages_show_the_generated_equations():
    """docs/theory/*.md are current with docs/gen_theory.py, and every spec ID with a formula of the paper
    appears there through a marker (no formula of the registry is typed on those pages)."""
    import importlib.util
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location("gen_theory", root / "docs" / "gen_theory.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    for page in sorted((root / "docs" / "theory").glob("*.md")):
        text = page.read_text()
        assert gen.render(text) == text, f"{page.name} is out of date: run python docs/gen_theory.py"
    on_pages = gen.keys_on_pages()
    for key in set().union(*on_pages.values()):
        formula_record(key)  # every marker names a formula
    shown = {formula_record(k).spec_id for keys in on_pages.values() for k in keys}
    missing = sorted({f.spec_id for f in _registry().values()} - shown)
    assert not missing, f"spec IDs with formulas that no theory page shows: {missing}"
