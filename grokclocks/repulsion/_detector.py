"""Repulsion: the rolling update Gram, its eigengap and the slope detector (eq. 6)."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .. import _validate as V
from ..citations import cites
from ._args import DomainError, _series


@cites("repulsion:rolling-gram")
def lagged_inner_products(deltas: Any, window: int = 20, chunk: int = 64) -> np.ndarray:
    r"""Lagged inner products :math:`L[s,d]=\langle\Delta_{s+1},\Delta_{s+1-d}\rangle`, :math:`0\le d<w`.

    ``deltas[s]`` is :math:`\Delta W_{s+1}` flattened (shape ``(T, P)``); ``L[s, d]`` is NaN for
    :math:`s<d`. These :math:`w` numbers per step are all that the rolling Gram needs (a training loop
    can log them online from a ring buffer at :math:`O(wP)` per step). Computed in float64 in row
    chunks, so float32 input is not copied whole.

    References
    ----------
    Spec ``repulsion:rolling-gram`` (eq. 5).
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
    r"""Rolling-window Gram eigenvalues from lagged inner products (:func:`lagged_inner_products`).

    Row :math:`t=0..T` (epoch, logged before step :math:`t`) holds the top-``k`` eigenvalues, descending,
    of the :math:`m\times m` Gram of :math:`\Delta W_{t-m+1..t}`, :math:`m=\min(t,w)`; NaN for rows 0, 1
    and for orders :math:`>m`. Batched ``eigh`` on :math:`w\times w` matrices: :math:`O(w^3)` per row.

    Parameters
    ----------
    lagged : array (T, w) with ``lagged[s, d]`` finite for ``s >= d``.
    k : int in ``[1, w]``.

    References
    ----------
    Spec ``repulsion:rolling-gram`` (eq. 5; code ``EigengapTracker``).
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
    r"""Top-``k`` eigenvalues :math:`\sigma_k(t)` of the rolling :math:`w\times w` update Gram.

    .. math::

        \Delta(t)=[\Delta W_{t-w+1},\dots,\Delta W_t]\in\mathbb R^{P\times w},\qquad
        \sigma_k(t)=\lambda_k\big(\Delta(t)^\top\Delta(t)\big)

    (squared singular values of :math:`\Delta`), with the code's epoch alignment: row :math:`t` uses the
    last :math:`\min(t,w)` deltas; rows 0, 1 and orders :math:`>\min(t,w)` are NaN.

    Parameters
    ----------
    deltas : array (T, P), ``deltas[s]`` = :math:`\Delta W_{s+1}` (whole optimiser update, flattened).
    window : int, 2 <= window <= T.
    k : int in ``[1, window]``.

    Returns
    -------
    ndarray (T + 1, k).

    References
    ----------
    Spec ``repulsion:rolling-gram`` (eq. 5).
    """
    window = V.integer_at_least(window, "window", 2)
    k = V.integer_at_least(k, "k", 1)
    if k > window:
        raise DomainError(f"k must be in [1, window] = [1, {window}] (got {k})")
    return rolling_gram_from_lagged(lagged_inner_products(deltas, window), k)


@cites("repulsion:rolling-gram")
def window_gram_eigenvalues(window_deltas: Any, k: int = 5) -> np.ndarray:
    r"""Descending eigenvalues of :math:`\Delta^\top\Delta` for a stack of windows ``(..., m, P)``.

    The per-step :math:`O(m^2P+m^3)` form (what a ring buffer in a training loop feeds). Returns the top
    ``min(k, m)`` eigenvalues, shape ``(..., min(k, m))``.

    References
    ----------
    Spec ``repulsion:rolling-gram``.
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
    r"""Eigengap :math:`g(t)=\sigma_i(t)/\sigma_j(t)` (default :math:`\sigma_2/\sigma_3`).

    NaN where either is NaN or :math:`\sigma_j\le0` (code: ``evW[2] > 0`` else NaN).

    References
    ----------
    Spec ``repulsion:rolling-gram``.
    """
    E = _series(eigs, "eigs", ndim=(1, 2))
    E2 = E if E.ndim == 2 else E[None]
    i = V.integer_at_least(i, "i", 1)
    j = V.integer_at_least(j, "j", 1)
    if max(i, j) > E2.shape[-1]:
        raise DomainError(f"i and j must be <= the number of eigenvalues {E2.shape[-1]} (got {i}, {j})")
    num, den = E2[:, i - 1], E2[:, j - 1]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        g = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
    return g if E.ndim == 2 else float(g[0])  # 1-D input = one row of eigenvalues


class SlopeDetection(NamedTuple):
    """Result of :func:`slope_detector` (eq. 6)."""

    t_fire: int | None
    """first index where the detector fires, None if it never does."""
    s: np.ndarray
    """the slope statistic :math:`s_t`."""


@cites("repulsion:slope-detector")
def slope_detector(gap: Any, lag: int = 25, threshold: float = 0.04, t_min: int = 100,
                   floor: float = 1e-6) -> SlopeDetection:
    r"""Slope detector on the log eigengap (eq. 6).

    .. math::

        x(t)=\log\max(g(t),10^{-6}),\qquad s(t)=\frac{x(t)-x(t-L)}{L},\qquad
        t_{\rm fire}=\min\{t\ge t_{\min}:s(t)>\theta\}

    (natural log; :math:`s` is NaN for :math:`t<L` or where either :math:`x` is NaN; NaN never fires).
    Invariant to a common rescaling of :math:`\Delta W` (the gap is a ratio).

    Parameters
    ----------
    gap : 1-D array indexed by epoch (row 0 = init), NaN allowed.
    lag : int, 1 <= lag < len(gap). threshold : float. t_min : int >= 0. floor : float > 0.

    Returns
    -------
    (t_fire or None, s)
        A :class:`SlopeDetection` named tuple (``t_fire``, ``s``); it unpacks like a plain tuple.

    References
    ----------
    Spec ``repulsion:slope-detector`` (eq. 6; code ``analysis.slope_signal``, ``analyze_eta_sweep.slope_fire``).
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
    r"""Per-run :math:`m=\operatorname{median}_{a\le t\le b}g(t)` (NaN-aware, inclusive).

    ``gaps`` 1-D (one run) or 2-D (runs x epochs). NaN for a run with no finite gap in the window.

    References
    ----------
    Spec ``repulsion:late-separation``.
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
    r"""Late-stage separation :math:`\operatorname{median}(m_{\rm grok})/\operatorname{median}(m_{\rm control})`.

    :math:`m` = per-run median gap over the window (:func:`late_median_gap`); the paper's 229x uses
    epochs 200-400. The value depends on the window (the gap decays after lock-in; erratum ``repulsion-6``).

    References
    ----------
    Spec ``repulsion:late-separation`` (code ``analysis.py``).
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
