r"""The forecaster's statistical model: a censored accelerated-failure-time regression of the remaining time.

At the issue step τ (a run that fits its training set and has not reached the test level), the remaining
time is R = t_test − τ > 0 and the model is

.. math::

    \log\frac{R}{\tau}=\mu(x)+\sigma(x)\,W,\qquad \mu(x)=\beta_0+\sum_j\beta_j\tilde x_j,\qquad
    \log\sigma(x)=\gamma_0+\sum_k\gamma_k\tilde z_k,

where x̃ are the standardised signals read off the run up to τ, and W is a standard normal (the "lognormal"
family), a standard logistic variable (the "loglogistic" family: heavier tails than the normal), or a standard
minimum-Gumbel variable (the "weibull" family: R is Weibull with shape 1/σ; at σ = 1 it is the exponential
waiting time of a memoryless activated escape, spec `kramers:eq15`).  Runs that had not
grokked by the end of their budget enter the likelihood as right-censored at log((H − τ)/τ).

The model's probabilities then pass through a recalibration map G (`AFTModel.calibration`): G(u) is the
share of out-of-fold fitting rows, the folds being whole configurations, whose outcome had model probability
at most u (Kaplan–Meier over the censored rows; quantile recalibration, Kuleshov et al. 2018, ICML).  Where
the model is calibrated on configurations it has not seen, G is the identity; where it is too sure, G widens
every interval.  Everything the forecast reports follows from the one calibrated distribution: the median,
the quantiles and P(t_test ≤ H) = G(F((log((H − τ)/τ) − μ)/σ)).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy import optimize, special

from .._validate import DomainError

__all__ = ["FAMILIES", "AFTModel", "fit_aft"]

FAMILIES: tuple[str, ...] = ("lognormal", "loglogistic", "weibull", "exponential")
"""The distribution families of the standardised log remaining time W: normal ("lognormal"), logistic
("loglogistic"), minimum-Gumbel ("weibull": the remaining time is Weibull) and minimum-Gumbel with σ = 1
("exponential": a memoryless escape)."""

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


def _loglik_terms(family: str, z: np.ndarray, log_sigma: np.ndarray, censored: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-row log-likelihood and its derivatives in μ and in log σ (z = (y − μ)/σ)."""
    sigma = np.exp(log_sigma)
    ll = np.empty_like(z)
    d_mu = np.empty_like(z)
    d_ls = np.empty_like(z)
    obs = ~censored
    if family == "lognormal":
        zo = z[obs]
        ll[obs] = -0.5 * zo * zo - log_sigma[obs] - _LOG_SQRT_2PI
        d_mu[obs] = zo / sigma[obs]
        d_ls[obs] = zo * zo - 1.0
        zc = z[censored]
        logsf = special.log_ndtr(-zc)
        ll[censored] = logsf
        hazard = np.exp(-0.5 * zc * zc - _LOG_SQRT_2PI - logsf)  # φ(z) / (1 − Φ(z))
        d_mu[censored] = hazard / sigma[censored]
        d_ls[censored] = hazard * zc
    elif family == "loglogistic":  # W standard logistic: log f = −w − 2 log(1 + e^−w), log S = −log(1 + e^w)
        zo = z[obs]
        ll[obs] = -np.abs(zo) - 2.0 * np.log1p(np.exp(-np.abs(zo))) - log_sigma[obs]
        cdf = special.expit(zo)
        d_mu[obs] = (2.0 * cdf - 1.0) / sigma[obs]
        d_ls[obs] = (2.0 * cdf - 1.0) * zo - 1.0
        zc = z[censored]
        ll[censored] = -np.logaddexp(0.0, zc)
        cdf = special.expit(zc)
        d_mu[censored] = cdf / sigma[censored]
        d_ls[censored] = cdf * zc
    else:  # weibull / exponential: W standard minimum-Gumbel, log f = w − e^w, log S = −e^w
        zo = z[obs]
        ez = np.exp(np.minimum(zo, 700.0))
        ll[obs] = zo - ez - log_sigma[obs]
        d_mu[obs] = -(1.0 - ez) / sigma[obs]
        d_ls[obs] = -(1.0 - ez) * zo - 1.0
        zc = z[censored]
        ezc = np.exp(np.minimum(zc, 700.0))
        ll[censored] = -ezc
        d_mu[censored] = ezc / sigma[censored]
        d_ls[censored] = ezc * zc
    return ll, d_mu, d_ls


def family_cdf(family: str, w: float) -> float:
    """P(W ≤ w) of the standardised variable W of a family of `FAMILIES`."""
    if family == "lognormal":
        return float(special.ndtr(w))
    if family == "loglogistic":
        return float(special.expit(w))
    return float(-np.expm1(-math.exp(min(w, 700.0))))


def family_cdf_array(family: str, w: np.ndarray) -> np.ndarray:
    """P(W ≤ w) elementwise for an array of w (as `family_cdf`)."""
    w = np.asarray(w, dtype=np.float64)
    if family == "lognormal":
        return special.ndtr(w)
    if family == "loglogistic":
        return special.expit(w)
    return -np.expm1(-np.exp(np.minimum(w, 700.0)))


def family_ppf(family: str, q: float) -> float:
    """The q-quantile of the standardised variable W of a family of `FAMILIES`, q in (0, 1)."""
    if family == "lognormal":
        return float(special.ndtri(q))
    if family == "loglogistic":
        return math.log(q / (1.0 - q))
    return math.log(-math.log1p(-q))


_RANGE_QUANTILES = (0.001, 0.999)  # the fitting range: these quantiles of the fitting rows ...
_RANGE_MARGIN = 0.05               # ... widened by this share of their distance on each side


def calibrate(knots: Sequence[tuple[float, float]], u: float) -> float:
    """G(u): the calibrated probability of the model's own probability u (identity without knots).

    Parameters
    ----------
    knots : sequence of (float, float)
        Increasing (u, G(u)) pairs from (0, 0) to (1, 1), as `AFTModel.calibration` holds them.
    u : float
        The model's probability P(W ≤ w), in [0, 1].

    Returns
    -------
    float
        G(u), by linear interpolation between the knots.
    """
    if not knots:
        return float(u)
    return float(np.interp(u, [k[0] for k in knots], [k[1] for k in knots]))


def uncalibrate(knots: Sequence[tuple[float, float]], q: float) -> float:
    """G⁻¹(q): the model probability u whose calibrated probability is q (the inverse of `calibrate`).

    Parameters
    ----------
    knots : sequence of (float, float)
        Increasing (u, G(u)) pairs from (0, 0) to (1, 1).
    q : float
        A calibrated probability in [0, 1].

    Returns
    -------
    float
        The smallest u with G(u) = q on the interpolated map; 1 where the map stays below q until u = 1.
    """
    if not knots:
        return float(q)
    us = np.array([k[0] for k in knots])
    gs = np.array([k[1] for k in knots])
    j = int(np.searchsorted(gs, q, side="left"))
    if j <= 0:
        return float(us[0])
    if j >= gs.size:
        return 1.0
    g0, g1 = gs[j - 1], gs[j]
    return float(us[j - 1] + (us[j] - us[j - 1]) * ((q - g0) / (g1 - g0) if g1 > g0 else 1.0))


@dataclasses.dataclass(frozen=True)
class AFTModel:
    """A fitted accelerated-failure-time model of the log remaining time (one profile of signals).

    For a row of signals x read at the issue step τ, log((t_test − τ)/τ) = μ(x) + σ(x) W with
    μ = β₀ + Σ β_j x̃_j on the standardised signals x̃ of `features`, log σ = γ₀ + Σ γ_k x̃_k on those of
    `scale_features`, and W the standard variable of `family`; probabilities P(W ≤ w) then pass through the
    recalibration map G of `calibration`.  The profile applies only to rows whose every signal lies in its
    `fit_range` (`in_range`); nothing is clipped.  `location_scale` gives (μ, σ), `cdf` and `ppf` read W's
    calibrated law, `contributions` each signal's share of μ; `as_dict` and `from_dict` convert to and from
    a JSON-ready dict.
    """

    family: str
    """Distribution family of W: "lognormal", "loglogistic", "weibull" or "exponential" (the Weibull family
    with σ fixed to 1: a memoryless escape); one of `grokclocks.forecast.FAMILIES`."""
    features: tuple[str, ...]
    """Names of the signals in the location μ, in the order of `beta[1:]`."""
    beta: tuple[float, ...]
    """Intercept β₀ and coefficients β_j of μ on the standardised signals, len(features) + 1 values."""
    scale_features: tuple[str, ...]
    """Names of the signals in log σ, in the order of `gamma[1:]` (each also in `features`)."""
    gamma: tuple[float, ...]
    """Intercept γ₀ and coefficients γ_k of log σ on the standardised signals, len(scale_features) + 1
    values."""
    mean: tuple[float, ...]
    """Mean of each signal of `features` on the fitting set (standardisation: x̃ = (x − mean)/scale)."""
    scale: tuple[float, ...]
    """Standard deviation (> 0) of each signal of `features` on the fitting set (standardisation)."""
    fit_range: tuple[tuple[float, float], ...]
    """Range (low, high) of each signal of `features` over which the model was fitted: the 0.1 % and 99.9 %
    quantiles of the fitting rows, widened by 5 % of their distance on each side.  The fitting rows are
    winsorised to it; a row with a signal outside it is not forecast by this profile."""
    n_rows: int = 0
    """Number of (run, issue step) rows the model was fitted on; 0 (default) when not recorded."""
    n_censored: int = 0
    """How many of those rows had not grokked by the end of their run (right-censored); 0 (default) when not
    recorded."""
    calibration: tuple[tuple[float, float], ...] = ()
    """The recalibration map G as increasing knots (u, G(u)) from (0, 0) to (1, 1): the share of out-of-fold
    fitting rows (folds = configurations) whose outcome had model probability ≤ u, by Kaplan–Meier over the
    censored rows; P(t_test ≤ t) = G(F(t)).  () (default): no recalibration (G = identity).  This is the map
    of all rows; `calibration_strata` refines it by the time since t_train."""
    calibration_edges: tuple[float, ...] = ()
    """Increasing edges of the elapsed signal log(τ / t_train) between the strata of `calibration_strata`
    (e.g. (log 3, log 6): before 3 t_train, 3-6 t_train, after); () (default): one stratum."""
    calibration_strata: tuple[tuple[tuple[float, float], ...], ...] = ()
    """One recalibration map per elapsed stratum (len(calibration_edges) + 1 of them, each as `calibration`),
    estimated on that stratum's out-of-fold rows: how sure the model may be depends on how long the run has
    been waiting.  () (default): `calibration` for every row."""

    def standardise(self, x: Mapping[str, float]) -> np.ndarray:
        """The model's signals of one row, standardised (not clipped: see `in_range`).

        Parameters
        ----------
        x : mapping of str to float
            Signal name to value; every name of `features` must be present.

        Returns
        -------
        numpy.ndarray
            The standardised signals x̃ = (x − mean)/scale, float64 of shape (len(features),).
        """
        v = np.array([float(x[f]) for f in self.features], dtype=np.float64)
        return (v - np.asarray(self.mean)) / np.asarray(self.scale)

    def in_range(self, x: Mapping[str, float]) -> dict[str, bool]:
        """Whether each signal of `features` is finite and inside `fit_range`.

        Parameters
        ----------
        x : mapping of str to float
            Signal name to value (a missing name counts as NaN).

        Returns
        -------
        dict of str to bool
            Feature name to True when it is finite and in [low, high].
        """
        out = {}
        for f, (lo, hi) in zip(self.features, self.fit_range):
            v = float(x.get(f, math.nan))
            out[f] = math.isfinite(v) and lo <= v <= hi
        return out

    def location_scale(self, x: Mapping[str, float]) -> tuple[float, float]:
        """(μ, σ) of the log remaining fraction log((t_test − τ)/τ) for one row of signals.

        Parameters
        ----------
        x : mapping of str to float
            Signal name to value; every name of `features` must be present.

        Returns
        -------
        tuple of float
            The location μ and the spread σ > 0 (log σ clipped to [−10, 5]).
        """
        xs = self.standardise(x)
        mu = float(self.beta[0] + np.dot(self.beta[1:], xs))
        idx = [self.features.index(f) for f in self.scale_features]
        log_sigma = float(self.gamma[0] + np.dot(self.gamma[1:], xs[idx])) if idx else float(self.gamma[0])
        return mu, math.exp(min(max(log_sigma, -10.0), 5.0))

    def contributions(self, x: Mapping[str, float]) -> dict[str, float]:
        """Each signal's share of μ relative to the fitting set's mean run: β_j x̃_j (in log remaining time).

        Parameters
        ----------
        x : mapping of str to float
            Signal name to value; every name of `features` must be present.

        Returns
        -------
        dict of str to float
            Signal name to β_j x̃_j; their sum is μ − β₀.
        """
        xs = self.standardise(x)
        return {f: float(b * v) for f, b, v in zip(self.features, self.beta[1:], xs)}

    def knots(self, elapsed: float | None = None) -> tuple[tuple[float, float], ...]:
        """The recalibration map of a row whose elapsed signal log(τ / t_train) is `elapsed`.

        Parameters
        ----------
        elapsed : float or None
            log(τ / t_train); None: the map of all rows (`calibration`).

        Returns
        -------
        tuple of (float, float)
            The knots (u, G(u)) of the row's stratum (`calibration_strata`), or `calibration`.
        """
        if elapsed is None or not self.calibration_strata or not math.isfinite(elapsed):
            return self.calibration
        return self.calibration_strata[int(np.searchsorted(self.calibration_edges, elapsed, side="right"))]

    def cdf(self, w: float, elapsed: float | None = None) -> float:
        """Calibrated P(W ≤ w): G(F(w)) with F the law of this model's family and G its recalibration map.

        Parameters
        ----------
        w : float
            A value of the standardised log remaining time, (log(R/τ) − μ)/σ.
        elapsed : float or None
            The row's log(τ / t_train), which picks the map (`knots`); None: the map of all rows.

        Returns
        -------
        float
            The probability, in [0, 1].
        """
        return calibrate(self.knots(elapsed), family_cdf(self.family, w))

    def ppf(self, q: float, elapsed: float | None = None) -> float:
        """The calibrated q-quantile of the standardised variable W: F⁻¹(G⁻¹(q)).

        Parameters
        ----------
        q : float
            A probability in (0, 1).
        elapsed : float or None
            The row's log(τ / t_train), which picks the map (`knots`); None: the map of all rows.

        Returns
        -------
        float
            The quantile w with G(F(w)) = q; `math.inf` where the map leaves q above every finite w (the
            outcome may lie beyond anything the fitting runs showed), `-math.inf` below.
        """
        u = uncalibrate(self.knots(elapsed), q)
        if u >= 1.0:
            return math.inf
        if u <= 0.0:
            return -math.inf
        return family_ppf(self.family, u)

    def as_dict(self) -> dict[str, Any]:
        """The model as a JSON-ready dict (the form `from_dict` reads).

        Returns
        -------
        dict
            Every field, tuples as lists.
        """
        d = dataclasses.asdict(self)
        d["fit_range"] = [list(c) for c in self.fit_range]
        d["calibration"] = [list(c) for c in self.calibration]
        d["calibration_edges"] = list(self.calibration_edges)
        d["calibration_strata"] = [[list(c) for c in k] for k in self.calibration_strata]
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> AFTModel:
        """A model from the dict of `as_dict` (every field checked: a malformed dict is a `DomainError`).

        Parameters
        ----------
        d : mapping
            The fields of `AFTModel` (the form `as_dict` writes).

        Returns
        -------
        AFTModel
            The model.

        Raises
        ------
        DomainError
            A missing or non-numeric field, an unknown family, lengths that do not match the features, a
            non-finite coefficient or scale ≤ 0, or a calibration map that is not increasing from (0, 0) to
            (1, 1).
        """
        try:
            family = str(d["family"])
            features = tuple(str(f) for f in d["features"])
            scale_features = tuple(str(f) for f in d["scale_features"])
            arrays = {k: tuple(float(v) for v in d[k]) for k in ("beta", "gamma", "mean", "scale")}
            fit_range = tuple((float(a), float(b)) for a, b in d["fit_range" if "fit_range" in d else "clip"])
            knots = tuple((float(a), float(b)) for a, b in d.get("calibration", ()))
            edges = tuple(float(e) for e in d.get("calibration_edges", ()))
            strata = tuple(tuple((float(a), float(b)) for a, b in k) for k in d.get("calibration_strata", ()))
            n_rows, n_cens = int(d.get("n_rows", 0)), int(d.get("n_censored", 0))
        except (KeyError, TypeError, ValueError) as exc:
            raise DomainError(f"model must be a dict of AFTModel.as_dict ({type(exc).__name__}: {exc})") from None
        if family not in FAMILIES:
            raise DomainError(f"model family must be one of {FAMILIES} (got {family!r})")
        k = len(features)
        if (len(arrays["beta"]) != k + 1 or len(arrays["mean"]) != k or len(arrays["scale"]) != k
                or len(fit_range) != k or len(arrays["gamma"]) != len(scale_features) + 1
                or not set(scale_features) <= set(features)):
            raise DomainError("model: beta, mean, scale, fit_range and gamma do not match its features")
        vals = [v for a in arrays.values() for v in a] + [v for c in fit_range for v in c]
        if not all(math.isfinite(v) for v in vals) or min(arrays["scale"], default=1.0) <= 0:
            raise DomainError("model: every coefficient must be finite and every scale > 0")
        if any(lo > hi for lo, hi in fit_range):
            raise DomainError("model: every fit_range must have low <= high")
        for k in (knots,) + strata:
            u = [a for a, _ in k]
            g = [b for _, b in k]
            if k and (k[0] != (0.0, 0.0) or k[-1] != (1.0, 1.0) or any(b <= a for a, b in zip(u, u[1:]))
                      or any(b < a for a, b in zip(g, g[1:]))):
                raise DomainError("model: calibration must be knots (u, G) from (0, 0) to (1, 1), u increasing "
                                  "and G non-decreasing")
        if strata and (len(strata) != len(edges) + 1 or any(b <= a for a, b in zip(edges, edges[1:]))
                       or not all(math.isfinite(e) for e in edges)):
            raise DomainError("model: calibration_strata needs one map more than calibration_edges, which must be "
                              "finite and increasing")
        return cls(family, features, arrays["beta"], scale_features, arrays["gamma"], arrays["mean"], arrays["scale"],
                   fit_range, n_rows, n_cens, knots, edges if strata else (), strata)


def _negloglik(theta: np.ndarray, family: str, X: np.ndarray, Z: np.ndarray, y: np.ndarray, cens: np.ndarray,
               ridge: float, w: np.ndarray) -> tuple[float, np.ndarray]:
    k = X.shape[1]
    beta = theta[:k]
    gamma = theta[k:] if family != "exponential" else np.zeros(Z.shape[1])
    mu = X @ beta
    log_sigma = np.clip(Z @ gamma, -10.0, 5.0)
    z = (y - mu) / np.exp(log_sigma)
    ll, d_mu, d_ls = _loglik_terms(family, z, log_sigma, cens)
    val = -float(np.dot(w, ll)) + ridge * (float(beta[1:] @ beta[1:]) + float(gamma[1:] @ gamma[1:]))
    g_beta = -(X.T @ (w * d_mu))
    g_beta[1:] += 2.0 * ridge * beta[1:]
    if family == "exponential":
        return val, g_beta
    g_gamma = -(Z.T @ (w * d_ls))
    g_gamma[1:] += 2.0 * ridge * gamma[1:]
    return val, np.concatenate([g_beta, g_gamma])


def _matrix(rows: Any, feats: Sequence[str], n: int) -> np.ndarray:
    """(n, k) float64 matrix of the signals `feats` from a sequence of row mappings or a mapping of columns."""
    try:
        if isinstance(rows, Mapping):
            cols = [np.asarray(rows[f], dtype=np.float64).reshape(-1) for f in feats]
            return np.column_stack(cols) if cols else np.zeros((n, 0))
        return np.array([[float(r[f]) for f in feats] for r in rows], dtype=np.float64).reshape(n, len(feats))
    except KeyError as exc:
        raise DomainError(f"every row needs the signal {exc.args[0]!r}") from None


def fit_aft(rows: Any, y: Any, censored: Any, *, features: Sequence[str],
            scale_features: Sequence[str] = (), family: str = "lognormal", ridge: float = 1.0,
            weights: Any = None) -> AFTModel:
    """Fit the censored accelerated-failure-time model of the log remaining fraction by maximum likelihood.

    Parameters
    ----------
    rows : sequence of mapping, or mapping of array_like
        One mapping of signal name to value per (run, issue step) row, or one array per signal name (the
        columns); every name of `features` must be present and finite in every row.
    y : array_like
        log((t_test − τ)/τ) of each row, or, for a censored row, log((H − τ)/τ) with H the last step of the run.
    censored : array_like of bool
        True where the run had not reached the test level by H (right-censored).
    features : sequence of str
        Signals of the location μ.
    scale_features : sequence of str
        Signals of log σ (each one of `features`); empty for a constant σ.
    family : {"lognormal", "loglogistic", "weibull", "exponential"}
        Distribution of the standardised log remaining time; "exponential" is "weibull" with σ fixed to 1.
    ridge : float
        Penalty on the squared coefficients of the standardised signals (not the intercepts), ≥ 0.
    weights : array_like, optional
        Weight of each row in the likelihood, > 0 (default 1 each), e.g. 1/(rows of its run) so that every
        run counts once.

    Returns
    -------
    AFTModel
        The fitted model.

    Raises
    ------
    DomainError
        Wrong lengths, a missing or non-finite signal, an unknown family, or a failed optimisation.
    """
    if family not in FAMILIES:
        raise DomainError(f"family must be one of {FAMILIES} (got {family!r})")
    feats = tuple(features)
    sfeats = tuple(scale_features)
    if not set(sfeats) <= set(feats):
        raise DomainError(f"scale_features must be among features (got {sfeats} for {feats})")
    yy = np.asarray(y, dtype=np.float64)
    cens = np.asarray(censored, dtype=bool)
    n = yy.size
    n_rows = len(next(iter(rows.values()))) if isinstance(rows, Mapping) and rows else len(rows)
    if n_rows != n or cens.size != n or n < len(feats) + 3:
        raise DomainError(f"rows, y and censored must have the same length > number of features + 2 "
                          f"(got {n_rows}, {n}, {cens.size})")
    raw = _matrix(rows, feats, n)
    if not (np.isfinite(raw).all() and np.isfinite(yy).all()):
        raise DomainError("rows and y must be finite")
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)
    if w.shape != (n,) or not (w > 0).all():
        raise DomainError("weights must be > 0, one per row")
    w = w * (n / w.sum())
    qlo, qhi = np.quantile(raw, _RANGE_QUANTILES, axis=0)
    lo, hi = qlo - _RANGE_MARGIN * (qhi - qlo), qhi + _RANGE_MARGIN * (qhi - qlo)
    clipped = np.clip(raw, lo, hi)  # winsorised: the fitting rows outside the range count at its edge
    mean = clipped.mean(axis=0)
    sd = clipped.std(axis=0)
    sd = np.where(sd > 1e-12, sd, 1.0)
    Xs = (clipped - mean) / sd
    X = np.column_stack([np.ones(n), Xs])
    Z = np.column_stack([np.ones(n)] + [Xs[:, feats.index(f)] for f in sfeats])
    k = X.shape[1]
    obs = ~cens
    y0 = float(np.mean(yy[obs])) if obs.any() else float(np.mean(yy)) + 1.0
    s0 = float(np.std(yy[obs])) if obs.sum() > 1 else 1.0
    theta0 = np.zeros(k + (Z.shape[1] if family != "exponential" else 0))
    theta0[0] = y0
    if family != "exponential":
        theta0[k] = math.log(max(s0, 0.05))
    res = optimize.minimize(_negloglik, theta0, args=(family, X, Z, yy, cens, float(ridge), w), jac=True,
                            method="BFGS", options={"maxiter": 2000, "gtol": 1e-6})
    if not np.all(np.isfinite(res.x)):
        raise DomainError(f"the model fit failed ({res.message})")
    beta = res.x[:k]
    gamma = res.x[k:] if family != "exponential" else np.zeros(1)
    sf = sfeats if family != "exponential" else ()
    return AFTModel(family, feats, tuple(float(b) for b in beta), sf, tuple(float(g) for g in gamma[:len(sf) + 1]),
                    tuple(float(m) for m in mean), tuple(float(s) for s in sd),
                    tuple((float(a), float(b)) for a, b in zip(lo, hi)), int(n), int(cens.sum()))


def location_scale_columns(model: AFTModel, rows: Any, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(μ, log σ) of many rows at once (rows as in `fit_aft`), exactly as `AFTModel.location_scale` per row."""
    raw = _matrix(rows, model.features, n)
    xs = (raw - np.asarray(model.mean)) / np.asarray(model.scale)
    mu = model.beta[0] + xs @ np.asarray(model.beta[1:])
    idx = [model.features.index(f) for f in model.scale_features]
    log_sigma = model.gamma[0] + (xs[:, idx] @ np.asarray(model.gamma[1:]) if idx else 0.0)
    return mu, np.clip(log_sigma + np.zeros(n), -10.0, 5.0)


def aft_loglik(model: AFTModel, rows: Any, y: Any, censored: Any) -> np.ndarray:
    """Log-likelihood of each row under a fitted model (for cross-validation)."""
    yy = np.asarray(y, dtype=np.float64)
    cens = np.asarray(censored, dtype=bool)
    mu, log_sigma = location_scale_columns(model, rows, yy.size)
    z = (yy - mu) / np.exp(log_sigma)
    ll, _, _ = _loglik_terms("weibull" if model.family == "exponential" else model.family, z, log_sigma, cens)
    return ll
