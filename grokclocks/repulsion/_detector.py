"""Repulsion: the rolling update Gram, its eigengap and the slope detector (eq. 6)."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .. import _pointwise as P
from .. import _validate as V
from ..citations import cites
from ._args import DomainError, _series


@cites("repulsion:rolling-gram")
def lagged_inner_products(deltas: Any, window: int = 20, chunk: int = 64) -> np.ndarray:
    r"""Lagged inner products L[s, d] = ⟨ΔW_{s+1}, ΔW_{s+1−d}⟩ of consecutive weight updates, for 0 ≤ d < w.

    These w numbers per step are all that the rolling Gram needs (a training loop can log them online
    from a ring buffer at O(w·P) per step).  Computed in float64 in row chunks, so a float32 input is
    not copied whole.

    Parameters
    ----------
    deltas : array_like
        The updates, a finite 2-D array of shape (T, P): row s is ΔW_{s+1}, the whole optimiser update
        of step s + 1, flattened.
    window : int, optional
        The window length w, an integer in [2, T] (default 20).
    chunk : int, optional
        Rows processed at a time, an integer ≥ 1 (default 64); affects memory only, not the result.

    Returns
    -------
    numpy.ndarray
        float64 array of shape (T, w): entry [s, d] is ⟨ΔW_{s+1}, ΔW_{s+1−d}⟩, NaN for s < d.

    Raises
    ------
    DomainError
        If `deltas` is not a finite, non-empty 2-D array, or `window` or `chunk` is out of range.

    References
    ----------
    Spec ID `repulsion:rolling-gram` (paper eq. 5).
    """
    window = V.integer_at_least(window, "window", 2)
    D = np.asarray(deltas)
    if D.ndim != 2 or D.size == 0:
        raise DomainError(f"deltas must be a non-empty 2-D array (T, P) (got shape {D.shape})")
    if not np.issubdtype(D.dtype, np.floating):
        D = V.as_float_array(D, "deltas")
    T = D.shape[0]
    if window > T:
        raise DomainError(f"window must be <= the number of deltas T = {T} (history shorter than one window; got {window})")
    chunk = V.integer_at_least(chunk, "chunk", 1)
    L = np.full((T, window), np.nan)
    for r0 in range(0, T, chunk):
        r1 = min(T, r0 + chunk)
        lo = max(0, r0 - window + 1)
        blk = np.asarray(D[lo:r1], dtype=np.float64)
        if not np.all(np.isfinite(blk)):
            raise DomainError("deltas must be finite (got a NaN or infinity)")
        for d in range(window):
            s0 = max(r0, d)
            if s0 >= r1:
                continue
            a = blk[s0 - lo:r1 - lo]
            b = blk[s0 - d - lo:r1 - d - lo]
            L[s0:r1, d] = np.einsum("ij,ij->i", a, b)
    return L


@cites("repulsion:rolling-gram")
def rolling_gram_from_lagged(lagged: Any, k: int = 5) -> np.ndarray:
    r"""Rolling-window Gram eigenvalues from lagged inner products (see `lagged_inner_products`).

    Row t = 0, …, T (epoch, logged before step t) holds the top-`k` eigenvalues, in descending order,
    of the m × m Gram matrix of ΔW_{t−m+1}, …, ΔW_t with m = min(t, w); NaN for rows 0 and 1 and for
    orders > m.  Batched `eigh` on w × w matrices: O(w³) per row.

    Parameters
    ----------
    lagged : array_like
        Lagged inner products, a 2-D array of shape (T, w) with w ≥ 2 and w ≤ T; entry [s, d] must be
        finite for s ≥ d (NaN elsewhere is ignored).
    k : int, optional
        Number of eigenvalues per row, an integer in [1, w] (default 5).

    Returns
    -------
    numpy.ndarray
        float64 array of shape (T + 1, k), the eigenvalues σ_1(t) ≥ … ≥ σ_k(t) of each row.

    Raises
    ------
    DomainError
        If `lagged` is not 2-D of shape (T, w) with 2 ≤ w ≤ T, a needed entry is not finite, an entry is
        infinite, or `k` is out of range.

    References
    ----------
    Spec ID `repulsion:rolling-gram` (paper eq. 5; the authors' code `EigengapTracker`).
    """
    L = _series(lagged, "lagged", ndim=(2,))
    if L.ndim != 2 or L.shape[1] < 2 or L.shape[0] < 1:
        raise DomainError(f"lagged must be a 2-D array (T, window >= 2) (got shape {L.shape})")
    T, w = L.shape
    if w > T:
        raise DomainError(f"window must be <= the number of deltas T = {T} (got {w})")
    k = V.integer_at_least(k, "k", 1)
    if k > w:
        raise DomainError(f"k must be in [1, window] = [1, {w}] (got {k})")
    valid = np.zeros_like(L, dtype=bool)
    for d in range(w):
        valid[d:, d] = True
    if np.any(~np.isfinite(L[valid])):
        raise DomainError("lagged must be finite where s >= d")
    out = np.full((T + 1, k), np.nan)
    a = np.arange(w)
    dd = np.abs(a[:, None] - a[None, :])
    mx = np.maximum(a[:, None], a[None, :])
    # full windows: rows t = w..T; deltas s = t-w .. t-1; G[a, b] = L[t-w+max(a,b), |a-b|]
    if T >= w:
        t = np.arange(w, T + 1)
        G = L[(t - w)[:, None, None] + mx[None], dd[None]]
        ev = np.linalg.eigvalsh(G)[:, ::-1]
        out[w:, :k] = ev[:, :k]
    # partial windows: rows t = 2 .. min(w-1, T)
    for t in range(2, min(w - 1, T) + 1):
        m = t
        G = L[mx[:m, :m], dd[:m, :m]]
        ev = np.linalg.eigvalsh(G)[::-1]
        kk = min(k, m)
        out[t, :kk] = ev[:kk]
    return out


@cites("repulsion:rolling-gram")
def rolling_gram_eigenvalues(deltas: Any, window: int = 20, k: int = 5) -> np.ndarray:
    r"""Top-`k` eigenvalues σ_k(t) of the rolling w × w Gram matrix of the weight updates (eq. 5).

    .. math::

        \Delta(t)=[\Delta W_{t-w+1},\dots,\Delta W_t]\in\mathbb R^{P\times w},\qquad
        \sigma_k(t)=\lambda_k\big(\Delta(t)^\top\Delta(t)\big)

    In words: σ_k(t) is the k-th eigenvalue of Δ(t)ᵀ·Δ(t), Δ(t) the last w updates side by side (the
    squared singular values of Δ), with the authors' epoch alignment: row t uses the last min(t, w)
    updates; rows 0, 1 and orders > min(t, w) are NaN.

    Parameters
    ----------
    deltas : array_like
        The updates, a finite 2-D array of shape (T, P): row s is ΔW_{s+1}, the whole optimiser update
        of step s + 1, flattened.
    window : int, optional
        The window length w, an integer in [2, T] (default 20).
    k : int, optional
        Number of eigenvalues per row, an integer in [1, w] (default 5).

    Returns
    -------
    numpy.ndarray
        float64 array of shape (T + 1, k), row t the eigenvalues σ_1(t) ≥ … ≥ σ_k(t) (NaN as above).

    Raises
    ------
    DomainError
        If `deltas` is not a finite, non-empty 2-D array, or `window` or `k` is out of range.

    References
    ----------
    Spec ID `repulsion:rolling-gram` (paper eq. 5).
    """
    window = V.integer_at_least(window, "window", 2)
    k = V.integer_at_least(k, "k", 1)
    if k > window:
        raise DomainError(f"k must be in [1, window] = [1, {window}] (got {k})")
    return rolling_gram_from_lagged(lagged_inner_products(deltas, window), k)


@cites("repulsion:rolling-gram")
def window_gram_eigenvalues(window_deltas: Any, k: int = 5) -> np.ndarray:
    r"""Descending eigenvalues of Δ·Δᵀ (the m × m Gram of the m updates) for one window or a stack of windows.

    The per-step O(m²·P + m³) form, what a ring buffer in a training loop feeds.

    Parameters
    ----------
    window_deltas : array_like
        The windows, a finite array of shape (..., m, P): m updates of P entries each, per window.
    k : int, optional
        Number of eigenvalues, an integer ≥ 1 (default 5); at most m are returned.

    Returns
    -------
    numpy.ndarray
        float64 array of shape (..., min(k, m)), the top eigenvalues in descending order.

    Raises
    ------
    DomainError
        If `window_deltas` is not finite with at least 2 dimensions, or `k` is not an integer ≥ 1.

    References
    ----------
    Spec ID `repulsion:rolling-gram` (paper eq. 5).
    """
    D = V.as_float_array(window_deltas, "window_deltas")
    if D.ndim < 2:
        raise DomainError(f"window_deltas must have shape (..., m, P) (got {D.shape})")
    k = V.integer_at_least(k, "k", 1)
    G = D @ np.swapaxes(D, -1, -2)
    ev = np.linalg.eigvalsh(G)[..., ::-1]
    return ev[..., : min(k, D.shape[-2])]


@cites("repulsion:rolling-gram")
def eigengap(eigs: Any, i: int = 2, j: int = 3) -> np.ndarray | float:
    r"""Eigengap g(t) = σ_i(t)/σ_j(t), by default σ₂/σ₃.

    NaN where either eigenvalue is NaN or σ_j ≤ 0 (the authors' code: `evW[2] > 0` else NaN).

    Parameters
    ----------
    eigs : array_like
        Eigenvalues in descending order along the last axis: a 2-D array (one row per epoch, e.g. from
        `rolling_gram_eigenvalues`) or a 1-D array (one row); NaN allowed, no infinities.
    i : int, optional
        1-based order of the numerator eigenvalue, an integer ≥ 1 (default 2).
    j : int, optional
        1-based order of the denominator eigenvalue, an integer ≥ 1 (default 3).

    Returns
    -------
    float or numpy.ndarray
        The gap per row, a float64 array of length len(eigs) for 2-D input, a float for one row.

    Raises
    ------
    DomainError
        If `eigs` is not 1-D or 2-D, holds an infinity, or `i`, `j` exceed the number of eigenvalues.

    References
    ----------
    Spec ID `repulsion:rolling-gram` (paper eq. 5).
    """
    E, (lo, _) = _series(eigs, "eigs", ndim=(1, 2), extrema=True)
    i = V.integer_at_least(i, "i", 1)
    j = V.integer_at_least(j, "j", 1)
    if max(i, j) > E.shape[-1]:
        raise DomainError(f"i and j must be <= the number of eigenvalues {E.shape[-1]} (got {i}, {j})")
    num, den = E[..., i - 1], E[..., j - 1]  # columns, or two numbers for a 1-D input (one row of eigenvalues)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        g = num / den
    # NaN where sigma_j <= 0 or NaN.  The check's NaN-skipping minimum over all eigenvalues > 0 proves every
    # sigma_j > 0 or NaN, and num / NaN is NaN already: no pass over the column (else one reduction)
    if not lo > 0 and not den.min() > 0:
        g = P.patch(g, np.logical_not(den > 0), lambda d: np.full(np.shape(d), np.nan), den)
    return P.result(g)


class SlopeDetection(NamedTuple):
    r"""Result of `slope_detector` (eq. 6).

    A named tuple; it unpacks like the plain tuple (t_fire, s).
    """

    t_fire: int | None
    r"""The first epoch index at which the detector fires; `None` if it never does."""
    s: np.ndarray
    r"""float64 slope statistic s(t) of each epoch (NaN where undefined)."""


@cites("repulsion:slope-detector")
def slope_detector(gap: Any, lag: int = 25, threshold: float = 0.04, t_min: int = 100,
                   floor: float = 1e-6) -> SlopeDetection:
    r"""Slope detector on the log eigengap (eq. 6): the first epoch where log g rises faster than a threshold.

    .. math::

        x(t)=\log\max(g(t),10^{-6}),\qquad s(t)=\frac{x(t)-x(t-L)}{L},\qquad
        t_{\rm fire}=\min\{t\ge t_{\min}:s(t)>\theta\}

    In words: x(t) = log max(g(t), floor), s(t) = (x(t) − x(t − L))/L, and the detector fires at the
    first t ≥ t_min with s(t) > θ (natural log; s is NaN for t < L or where either x is NaN; NaN never
    fires).  Invariant to a common rescaling of ΔW (the gap is a ratio).

    Parameters
    ----------
    gap : array_like
        The eigengap g(t) per epoch (see `eigengap`), a 1-D array indexed by epoch (row 0 =
        initialisation); NaN allowed, no infinities.
    lag : int, optional
        The lag L in epochs, an integer in [1, len(gap)) (default 25).
    threshold : float, optional
        The slope threshold θ per epoch, a finite real (default 0.04).
    t_min : int, optional
        The first epoch at which the detector may fire, an integer ≥ 0 (default 100).
    floor : float, optional
        Floor on g before the logarithm, finite and > 0 (default 10⁻⁶).

    Returns
    -------
    SlopeDetection
        The named tuple (t_fire, s): the firing epoch or `None`, and the statistic s of shape
        (len(gap),).

    Raises
    ------
    DomainError
        If `gap` is not 1-D or holds an infinity, or `lag`, `threshold`, `t_min`, `floor` is outside its
        domain.

    References
    ----------
    Spec ID `repulsion:slope-detector` (paper eq. 6; the authors' code `analysis.slope_signal`,
    `analyze_eta_sweep.slope_fire`).
    """
    g = _series(gap, "gap")
    lag = V.integer_at_least(lag, "lag", 1)
    if lag >= g.size:
        raise DomainError(f"lag must be < len(gap) = {g.size} (got {lag})")
    threshold = V.finite(threshold, "threshold", scalar=True)
    t_min = V.integer_at_least(t_min, "t_min", 0)
    floor = V.positive(floor, "floor", scalar=True)
    with np.errstate(invalid="ignore"):
        x = np.log(np.where(np.isnan(g), np.nan, np.maximum(g, floor)))
    s = np.full(g.size, np.nan)
    s[lag:] = (x[lag:] - x[:-lag]) / lag
    with np.errstate(invalid="ignore"):
        hit = np.nonzero((s > threshold) & (np.arange(g.size) >= t_min))[0]
    return SlopeDetection((int(hit[0]) if hit.size else None), s)


def _window(window: Any, T: int) -> tuple[int, int]:
    try:
        a, b = window
    except (TypeError, ValueError) as exc:
        raise DomainError(f"window must be a pair (start, stop) of epochs (got {window!r})") from exc
    a = V.integer_at_least(a, "window start", 0)
    b = V.integer_at_least(b, "window stop", 0)
    if a > b or b >= T:
        raise DomainError(f"window must satisfy 0 <= start <= stop < number of epochs {T} (got ({a}, {b}))")
    return a, b


@cites("repulsion:late-separation")
def late_median_gap(gaps: Any, window: tuple[int, int] = (200, 400)) -> float | np.ndarray:
    r"""Per-run median of the eigengap over an epoch window, m = median_{a ≤ t ≤ b} g(t) (NaN-aware, inclusive).

    Parameters
    ----------
    gaps : array_like
        Eigengaps g(t): a 1-D array (one run) or a 2-D array (runs × epochs); NaN allowed, no
        infinities.
    window : tuple of int, optional
        The inclusive epoch window (a, b), integers with 0 ≤ a ≤ b < number of epochs (default
        (200, 400)).

    Returns
    -------
    float or numpy.ndarray
        The median per run: a float for one run, a float64 array of length n_runs for 2-D input; NaN for
        a run with no finite gap in the window.

    Raises
    ------
    DomainError
        If `gaps` is not 1-D or 2-D or holds an infinity, or `window` is not a valid pair.

    References
    ----------
    Spec ID `repulsion:late-separation` (late-stage separation).
    """
    G = _series(gaps, "gaps", ndim=(1, 2))
    a, b = _window(window, G.shape[-1])
    seg = G[..., a:b + 1]
    out = np.full(seg.shape[:-1], np.nan)
    ok = np.any(np.isfinite(seg), axis=-1)
    if np.any(ok):
        out[ok] = np.nanmedian(seg[ok] if seg.ndim == 2 else seg, axis=-1)
    return V.scalar_or_array(out)


@cites("repulsion:late-separation")
def late_stage_separation(gaps_grok: Any, gaps_control: Any, window: tuple[int, int] = (200, 400)) -> float:
    r"""Late-stage separation median(m_grok)/median(m_control) of the per-run median eigengaps.

    m is the per-run median gap over the window (see `late_median_gap`); the paper's 229× uses epochs
    200–400.  The value depends on the window (the gap decays after lock-in; erratum repulsion-6).

    Parameters
    ----------
    gaps_grok : array_like
        Eigengaps of the grokking runs (η > 0): 1-D (one run) or 2-D (runs × epochs); NaN allowed.
    gaps_control : array_like
        Eigengaps of the control runs (η = 0), in the same layout.
    window : tuple of int, optional
        The inclusive epoch window (a, b), integers with 0 ≤ a ≤ b < number of epochs (default
        (200, 400)).

    Returns
    -------
    float
        The separation ratio, > 0.

    Raises
    ------
    DomainError
        If an array is not 1-D or 2-D or holds an infinity, `window` is invalid, a condition has no run
        with a finite gap in the window, or the control's median is not > 0.

    References
    ----------
    Spec ID `repulsion:late-separation` (the authors' code `analysis.py`).
    """
    _series(gaps_grok, "gaps_grok", ndim=(1, 2))
    _series(gaps_control, "gaps_control", ndim=(1, 2))
    mg = np.atleast_1d(late_median_gap(gaps_grok, window))
    mc = np.atleast_1d(late_median_gap(gaps_control, window))
    if np.all(np.isnan(mg)) or np.all(np.isnan(mc)):
        raise DomainError("each condition needs at least one run with a finite gap in the window")
    den = float(np.nanmedian(mc))
    if not den > 0:
        raise DomainError(f"the control's median late gap must be > 0 (got {den!r})")
    return float(np.nanmedian(mg)) / den
