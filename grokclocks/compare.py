"""One logged training run against the five theories: what each predicts or measures.

:func:`compare_run` takes a training run -- a :class:`grokclocks.sim.train.Trajectory` from
:func:`grokclocks.sim.modular.train_modular`, an engine ``.npz`` (:func:`load_run`), or plain arrays a
user logged -- and returns a :class:`Comparison`: one :class:`Entry` per quantity, each with the theory,
the spec ID, the value and a status:

``measured``
    read off the run with the theory's estimator (a clock, a delay, a barrier inverted from a delay);
``predicted``
    what the theory says the run should do (the exact accuracy ceiling of the split, the linear
    estimator's grokking delay);
``n/a: <reason>``
    the theory does not apply, or the run lacks what it needs.  No number is made up.

Every number comes from the library's own functions (:mod:`grokclocks.linear`, :mod:`grokclocks.clocks`,
:mod:`grokclocks.spectral`, :mod:`grokclocks.kramers`, :mod:`grokclocks.coverage`,
:mod:`grokclocks.repulsion`); this module only routes the run's arrays to them.  Pure numpy/scipy: JAX
is imported only to rebuild the engine's random split of a :func:`~grokclocks.sim.modular.train_modular`
run, and matplotlib only by :meth:`Comparison.plot`.

The keys of a user ``.npz`` (:data:`USER_KEYS`; one run, or several seeds along a leading axis):

``steps``
    (n_records,) strictly increasing step (or epoch) of each record.  Required.
``train_acc``, ``test_acc``
    ([n_runs,] n_records) accuracies in [0, 1].  At least one of the two is required.
``train_loss``, ``test_loss``
    ([n_runs,] n_records) losses (finite, >= 0).
``weight_norm``
    ([n_runs,] n_records) global parameter norm.
``embeddings``
    ([n_runs,] n_records, n_tokens, d) token-embedding snapshots, token ``t`` = row ``t``
    (the first ``p`` rows are the operand tokens ``0..p-1``).
``weights``
    ([n_runs,] n_records, ...) parameter snapshots (flattened per record); the update Gram of
    ``repulsion:rolling-gram`` needs them at consecutive steps.
``gap``
    ([n_runs,] n_epochs) eigengap series ``sigma_2/sigma_3`` indexed by epoch, row 0 = init
    (``repulsion:rolling-gram``).
``train_mask``
    ([n_runs,] p, p) or ([n_runs,] p^2) boolean training set, entry ``[a, b]`` / row ``a p + b``.
``p``, ``operation``, ``b_offset``
    modulus, task (``"add"``, ``"sub"``, ``"mul"``, ``"sq_sum"``, ...; :func:`grokclocks.coverage.label_table`)
    and vocabulary offset of the second operand (0 = shared tokens).
``lam``, ``n_train``
    the linear estimator's aspect ratio :math:`\\lambda=d_{\\rm in}/N_{\\rm tr}`, or the training-set size
    (then :math:`\\lambda=2p/N_{\\rm tr}`, one-hot pair inputs).

Examples
--------
>>> import numpy as np
>>> from grokclocks.compare import compare_run
>>> steps = np.arange(0, 5001, 50)
>>> train = 1 / (1 + np.exp(-(steps - 300) / 30))
>>> test = 1 / (1 + np.exp(-(steps - 2500) / 150))
>>> c = compare_run(steps=steps, train_acc=train, test_acc=test, train_level=0.99, test_level=0.99)
>>> c.value("t_train (train acc >= 0.99)"), c.value("t_test (test acc >= 0.99)")
(450.0, 3200.0)
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from . import _validate as V
from . import clocks as _clocks
from . import coverage as _coverage
from . import kramers as _kramers
from . import linear as _linear
from . import repulsion as _repulsion
from . import spectral as _spectral
from ._validate import DomainError

__all__ = ["Entry", "RunData", "Comparison", "USER_KEYS", "compare_run", "load_run", "run_data"]

THEORIES: tuple[str, ...] = ("levi", "clocks", "kramers", "coverage", "repulsion")

USER_KEYS: tuple[str, ...] = ("steps", "train_acc", "test_acc", "train_loss", "test_loss", "weight_norm",
                              "embeddings", "weights", "gap", "train_mask", "p", "operation", "b_offset",
                              "lam", "n_train")

_SERIES = ("train_acc", "test_acc", "train_loss", "test_loss", "weight_norm")
_ENGINE_METRICS = {"acc_train": "train_acc", "acc_test": "test_acc", "loss_train": "train_loss",
                   "loss_test": "test_loss", "param_norm": "weight_norm", "E": "embeddings", "W_E": "embeddings",
                   "embeddings": "embeddings", "weights": "weights", "gap": "gap"}
_MIN_SEEDS_CV = 2
_MIN_SEEDS_KS = 5


# ============================================================================================ data


@dataclasses.dataclass(frozen=True, eq=False)
class RunData:
    """A training run in the normal form :func:`compare_run` works on (runs = seeds, on axis 0).

    Attributes
    ----------
    steps : ndarray (n_records,)
        Strictly increasing record steps.
    train_acc, test_acc, train_loss, test_loss, weight_norm : ndarray (n_runs, n_records) or None
    embeddings : ndarray (n_runs, n_records, n_tokens, d) or None
    weights : ndarray (n_runs, n_records, P) or None
    gap : ndarray (n_runs, n_epochs) or None
    train_mask : bool ndarray (n_runs, p, p) or None
    p : int or None
    operation : str
    b_offset : int
    lam : float or None
        Linear-estimator aspect ratio given by the user (overrides the one from ``n_train``).
    n_train : ndarray (n_runs,) or None
    lam_sweep : (lams, delays) or None
        Grokking delays at several aspect ratios (a ``train_frac`` grid), for the ``levi:appG`` fit.
    train_level, test_level : float
        Accuracy levels of the train / test clocks.
    source : str
        Where the run came from (shown in the table's header).
    """

    steps: np.ndarray
    train_acc: np.ndarray | None = None
    test_acc: np.ndarray | None = None
    train_loss: np.ndarray | None = None
    test_loss: np.ndarray | None = None
    weight_norm: np.ndarray | None = None
    embeddings: np.ndarray | None = None
    weights: np.ndarray | None = None
    gap: np.ndarray | None = None
    train_mask: np.ndarray | None = None
    p: int | None = None
    operation: str = "add"
    b_offset: int = 0
    lam: float | None = None
    n_train: np.ndarray | None = None
    lam_sweep: tuple[np.ndarray, np.ndarray] | None = None
    train_level: float = 1.0
    test_level: float = 0.99
    source: str = "arrays"

    @property
    def n_runs(self) -> int:
        """Number of runs (seeds) on the leading axis."""
        for name in _SERIES:
            a = getattr(self, name)
            if a is not None:
                return int(a.shape[0])
        return 1


@dataclasses.dataclass(frozen=True)
class Entry:
    """One quantity of one theory.

    Attributes
    ----------
    theory : str
        ``"levi"``, ``"clocks"``, ``"kramers"``, ``"coverage"`` or ``"repulsion"``.
    quantity : str
        What it is, e.g. ``"t_test (test acc >= 0.99)"``.
    value : float, bool, str or None
        Median over the runs that reached it (``inf`` = never reached by any run); ``None`` if n/a.
    status : str
        ``"measured"``, ``"predicted"`` or ``"n/a: <reason>"``.
    spec_id : str
        The spec result behind it.
    note : str
        Caveat or definition.
    per_run : tuple
        The value of every run (seed), ``inf`` = never, ``nan`` = not defined for that run.
    """

    theory: str
    quantity: str
    value: Any
    status: str
    spec_id: str = ""
    note: str = ""
    per_run: tuple = ()

    @property
    def available(self) -> bool:
        """False for ``n/a`` entries."""
        return not self.status.startswith("n/a")

    def formatted(self) -> str:
        """The value as the table shows it (median, range and count over runs where several)."""
        if not self.available:
            return "n/a"
        return _format_value(self.value, self.per_run)


def _fmt_num(x: Any) -> str:
    if isinstance(x, (bool, np.bool_)):
        return "yes" if x else "no"
    if isinstance(x, str):
        return x
    x = float(x)
    if math.isinf(x):
        return "never" if x > 0 else "-inf"
    if math.isnan(x):
        return "nan"
    if x == int(x) and abs(x) < 1e7:
        return str(int(x))
    return f"{x:.4g}"


def _format_value(value: Any, per_run: tuple) -> str:
    if value is None:
        return "n/a"
    if len(per_run) <= 1 or isinstance(value, str):
        return _fmt_num(value)
    vals = [v for v in per_run if v is not None]
    if all(isinstance(v, (bool, np.bool_)) for v in vals):
        return f"{sum(bool(v) for v in vals)}/{len(vals)} yes"
    arr = np.asarray([float(v) for v in vals], dtype=float)
    fin = arr[np.isfinite(arr)]
    count = f"{fin.size}/{arr.size}"
    if fin.size == 0:
        return f"{_fmt_num(value)} ({count})"
    if fin.min() == fin.max():
        return f"{_fmt_num(value)} ({count})"
    return f"{_fmt_num(value)} [{_fmt_num(fin.min())}, {_fmt_num(fin.max())}] ({count})"


# ============================================================================================ result


@dataclasses.dataclass(frozen=True, eq=False)
class Comparison:
    """The answer of :func:`compare_run`: entries per theory, the run, and the clocks to draw.

    Attributes
    ----------
    entries : tuple of Entry
    run : RunData
    clocks : dict of str -> float
        Named clock steps (medians over the runs that reached them) drawn by :meth:`plot`; ``inf`` =
        never reached, ``nan`` = undefined (listed in the figure, not drawn).
    """

    entries: tuple[Entry, ...]
    run: RunData
    clocks: Mapping[str, float]

    def __getitem__(self, quantity: str) -> Entry:
        for e in self.entries:
            if e.quantity == quantity:
                return e
        raise KeyError(f"no entry {quantity!r}; entries: {[e.quantity for e in self.entries]}")

    def value(self, quantity: str) -> Any:
        """The value of the entry called ``quantity`` (``None`` if it is n/a)."""
        return self[quantity].value

    def theory(self, name: str) -> list[Entry]:
        """The entries of one theory."""
        return [e for e in self.entries if e.theory == name]

    def header(self) -> str:
        """One line describing the run."""
        r = self.run
        s = r.steps
        return (f"run: {r.source}; {r.n_runs} run(s), {s.size} records, steps {_fmt_num(s[0])}..{_fmt_num(s[-1])}"
                + (f"; p={r.p}, {r.operation}" if r.p is not None else ""))

    def table(self, markdown: bool = False) -> str:
        """The comparison as a text table (``markdown=False``) or a Markdown table.

        Columns: theory, quantity, value (median over runs; ``[min, max] (k/n)`` = range over the runs
        that reached it and how many did), spec ID, status (``measured`` / ``predicted`` /
        ``n/a: reason``) and, below the text table or as a Markdown column, the notes.
        """
        head = ["theory", "quantity", "value", "spec ID", "status", "note"]
        body = [[e.theory, e.quantity, e.formatted(), e.spec_id, e.status, e.note] for e in self.entries]
        if markdown:
            out = [self.header(), "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
            out += ["| " + " | ".join(c.replace("|", "\\|") for c in b) + " |" for b in body]
            return "\n".join(out)
        cols = head[:5]
        widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(cols)]

        def line(cells: Sequence[str]) -> str:
            return "  ".join(c.ljust(widths[i]) for i, c in enumerate(cells)).rstrip()

        out = [self.header(), line(cols), line(["-" * w for w in widths])]
        for b in body:
            out.append(line(b[:5]))
        notes = [(e.quantity, e.note) for e in self.entries if e.note]
        if notes:
            out.append("")
            out.append("notes:")
            out += [f"  {q}: {n}" for q, n in notes]
        return "\n".join(out)

    def __str__(self) -> str:
        return self.table()

    def as_dicts(self) -> list[dict[str, Any]]:
        """The entries as JSON-ready dicts (``inf``/``nan`` as strings)."""

        def js(x: Any) -> Any:
            if isinstance(x, (bool, np.bool_)):
                return bool(x)
            if isinstance(x, (int, float, np.integer, np.floating)):
                x = float(x)
                return x if math.isfinite(x) else repr(x)
            return x

        return [dict(theory=e.theory, quantity=e.quantity, value=js(e.value), formatted=e.formatted(),
                     status=e.status, spec_id=e.spec_id, note=e.note, per_run=[js(v) for v in e.per_run])
                for e in self.entries]

    def plot(self, path: str | os.PathLike | None = None, *, title: str | None = None) -> Any:
        """One figure of the run: accuracy (top) and loss (bottom) vs step, log x, every clock a labelled line.

        Each run (seed) is drawn thin; clocks are medians over the runs that reached them.  Step 0
        is not drawable on a log axis and is left out.  Needs matplotlib (``pip install
        grokclocks[plots]``).

        Parameters
        ----------
        path : path, optional
            Where to save the figure (format from the suffix, e.g. ``.png``, ``.pdf``).
        title : str, optional
            Figure title (default: the run's source).

        Returns
        -------
        matplotlib.figure.Figure
        """
        try:
            from matplotlib.figure import Figure
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError("Comparison.plot needs matplotlib: pip install 'grokclocks[plots]'") from exc
        r = self.run
        fig = Figure(figsize=(8.0, 6.5), layout="constrained")
        ax_acc, ax_loss = fig.subplots(2, 1, sharex=True)
        keep = r.steps > 0
        x = r.steps[keep]
        styles = {"train": ("tab:blue", "-"), "test": ("tab:orange", "-")}
        drew_loss = False
        for which in ("train", "test"):
            color, ls = styles[which]
            acc = getattr(r, f"{which}_acc")
            if acc is not None:
                for i, y in enumerate(acc):
                    ax_acc.plot(x, y[keep], color=color, ls=ls, lw=1.0, alpha=0.8,
                                label=f"{which} accuracy" if i == 0 else None)
            loss = getattr(r, f"{which}_loss")
            if loss is not None:
                drew_loss = True
                for i, y in enumerate(loss):
                    ax_loss.plot(x, np.maximum(y[keep], 1e-300), color=color, ls=ls, lw=1.0, alpha=0.8,
                                 label=f"{which} loss" if i == 0 else None)
        ax_acc.set_ylabel("accuracy")
        ax_acc.set_ylim(-0.02, 1.02)
        ax_loss.set_ylabel("loss")
        if drew_loss:
            ax_loss.set_yscale("log")
        else:
            ax_loss.text(0.5, 0.5, "no loss logged", transform=ax_loss.transAxes, ha="center", va="center")
        ax_loss.set_xlabel("step")
        ax_acc.set_xscale("log")
        colors = ["tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink", "tab:gray", "tab:olive",
                  "tab:cyan", "black"]
        lo, hi = (x.min(), x.max()) if x.size else (1.0, 10.0)
        for k, (name, t) in enumerate(sorted(self.clocks.items(), key=lambda kv: kv[1])):
            if not (math.isfinite(t) and t > 0):
                continue
            c = colors[k % len(colors)]
            for ax in (ax_acc, ax_loss):
                ax.axvline(t, color=c, ls="--", lw=1.0)
            ax_acc.text(t, 1.0 - 0.08 * (k % 6), f" {name} = {_fmt_num(t)}", color=c, fontsize=7,
                        rotation=0, va="top", ha="left" if t < math.sqrt(lo * hi) * 3 else "right")
        missing = [n for n, t in self.clocks.items() if not (math.isfinite(t) and t > 0)]
        if missing:
            ax_acc.text(0.99, 0.02, "not reached: " + ", ".join(missing), transform=ax_acc.transAxes, fontsize=7,
                        ha="right", va="bottom")
        ax_acc.legend(loc="center left", fontsize=8)
        if drew_loss:
            ax_loss.legend(loc="lower left", fontsize=8)
        fig.suptitle(title if title is not None else r.source, fontsize=9)
        if path is not None:
            fig.savefig(path, dpi=120)
        return fig


# ============================================================================================ input


def _series2d(x: Any, name: str, n_rec: int) -> np.ndarray:
    a = V.as_float_array(x, name)
    if a.ndim == 1:
        a = a[None]
    if a.ndim != 2 or a.shape[1] != n_rec:
        raise DomainError(f"{name} must have shape (n_records,) or (n_runs, n_records) with n_records={n_rec} "
                          f"(got {np.shape(x)})")
    return a


def _mask3d(x: Any, p: int | None) -> tuple[np.ndarray, int]:
    m = np.asarray(x)
    if m.dtype != bool:
        if not np.issubdtype(m.dtype, np.integer) or not np.isin(m, (0, 1)).all():
            raise DomainError(f"train_mask must be boolean (got dtype {m.dtype})")
        m = m.astype(bool)
    if m.ndim in (1, 2) and (m.ndim == 1 or m.shape[0] != m.shape[1]):  # flat (p^2,) or (n_runs, p^2)
        n = int(round(math.sqrt(m.shape[-1])))
        if n * n != m.shape[-1]:
            raise DomainError(f"a flat train_mask must have p^2 entries (got {m.shape[-1]})")
        m = m.reshape(m.shape[:-1] + (n, n))
    if m.ndim == 2:
        m = m[None]
    if m.ndim != 3 or m.shape[1] != m.shape[2]:
        raise DomainError(f"train_mask must have shape ([n_runs,] p, p) or ([n_runs,] p^2) (got {np.shape(x)})")
    if p is not None and m.shape[1] != p:
        raise DomainError(f"train_mask is for p={m.shape[1]} but p={p}")
    return m, int(m.shape[1])


def run_data(*, steps: Any, train_acc: Any = None, test_acc: Any = None, train_loss: Any = None,
             test_loss: Any = None, weight_norm: Any = None, embeddings: Any = None, weights: Any = None,
             gap: Any = None, train_mask: Any = None, p: Any = None, operation: str = "add", b_offset: Any = 0,
             lam: Any = None, n_train: Any = None, lam_sweep: Any = None, train_level: float = 1.0,
             test_level: float = 0.99, source: str = "arrays") -> RunData:
    """Validate user arrays into a :class:`RunData` (every argument as in the module docstring).

    Parameters
    ----------
    steps : 1-D strictly increasing finite array
    train_acc, test_acc : arrays ([n_runs,] n_records) in [0, 1]; at least one is required
    train_loss, test_loss, weight_norm : arrays ([n_runs,] n_records), finite, >= 0
    embeddings : array ([n_runs,] n_records, n_tokens, d), optional
    weights : array ([n_runs,] n_records, ...), optional (flattened per record)
    gap : array ([n_runs,] n_epochs), optional (NaN allowed: undefined rows)
    train_mask : bool ([n_runs,] p, p) or ([n_runs,] p^2), optional
    p : int >= 2, optional (taken from ``train_mask`` if absent)
    operation : str
        Task of :func:`grokclocks.coverage.label_table`.
    b_offset : int >= 0
    lam : float > 0, optional; n_train : int or ([n_runs],) ints, optional
    lam_sweep : (lams, delays), optional
        Grokking delays measured at >= 3 aspect ratios (for the ``levi:appG`` fit).
    train_level, test_level : float in (0, 1]
    source : str

    Returns
    -------
    RunData

    Raises
    ------
    DomainError
        Wrong shapes, non-finite values, accuracies outside [0, 1], negative losses, inconsistent ``p``.
    """
    p, b_offset, lam, operation = (x.item() if isinstance(x, np.ndarray) and x.ndim == 0 else x
                                   for x in (p, b_offset, lam, operation))
    t = V.as_float_array(steps, "steps")
    if t.ndim != 1 or t.size < 2:
        raise DomainError(f"steps must be 1-D with at least 2 records (got shape {t.shape})")
    if np.any(np.diff(t) <= 0):
        raise DomainError("steps must be strictly increasing")
    n = t.size
    if train_acc is None and test_acc is None:
        raise DomainError("give at least one of train_acc, test_acc")
    ser: dict[str, np.ndarray | None] = {}
    for name, val in (("train_acc", train_acc), ("test_acc", test_acc), ("train_loss", train_loss),
                      ("test_loss", test_loss), ("weight_norm", weight_norm)):
        if val is None:
            ser[name] = None
            continue
        a = _series2d(val, name, n)
        if name.endswith("acc") and (a.min() < 0 or a.max() > 1):
            raise DomainError(f"{name} must lie in [0, 1] (got range [{a.min():g}, {a.max():g}])")
        if a.min() < 0:
            raise DomainError(f"{name} must be >= 0 (got {a.min():g})")
        ser[name] = a
    n_runs = {a.shape[0] for a in ser.values() if a is not None}
    if len(n_runs) > 1:
        raise DomainError(f"the series disagree on the number of runs: {sorted(n_runs)}")
    nr = n_runs.pop()
    if p is not None:
        p = V.integer_at_least(p, "p", 2)
    mask = None
    if train_mask is not None:
        mask, p = _mask3d(train_mask, p)
        if mask.shape[0] == 1 and nr > 1:
            mask = np.broadcast_to(mask, (nr,) + mask.shape[1:])
        if mask.shape[0] != nr:
            raise DomainError(f"train_mask has {mask.shape[0]} runs, the series {nr}")
        if (~mask).all(axis=(1, 2)).any() or mask.all(axis=(1, 2)).any():
            raise DomainError("every train_mask needs at least one training and one test pair")
    emb = None
    if embeddings is not None:
        emb = V.as_float_array(embeddings, "embeddings")
        if emb.ndim == 3:
            emb = emb[None]
        if emb.ndim != 4 or emb.shape[0] != nr or emb.shape[1] != n:
            raise DomainError(f"embeddings must have shape ([n_runs,] n_records, n_tokens, d) with n_runs={nr}, "
                              f"n_records={n} (got {np.shape(embeddings)})")
    wts = None
    if weights is not None:
        wts = V.as_float_array(weights, "weights")
        if nr == 1 and wts.shape[0] == n:
            wts = wts[None]
        if wts.ndim < 2 or wts.shape[0] != nr or wts.shape[1] != n:
            raise DomainError(f"weights must have shape ([n_runs,] n_records, ...) with n_runs={nr}, "
                              f"n_records={n} (got {np.shape(weights)})")
        wts = wts.reshape(nr, n, -1)
    g = None
    if gap is not None:
        g = np.asarray(gap, dtype=np.float64)
        if g.ndim == 1:
            g = g[None]
        if g.ndim != 2 or g.shape[0] != nr or g.shape[1] < 2:
            raise DomainError(f"gap must have shape ([n_runs,] n_epochs) with n_runs={nr} (got {np.shape(gap)})")
        if np.isinf(g).any():
            raise DomainError("gap must not contain inf (NaN marks undefined rows)")
    b_offset = V.integer_at_least(b_offset, "b_offset", 0)
    if lam is not None:
        lam = float(V.positive(lam, "lam"))
    ntr = None
    if n_train is not None:
        ntr = np.atleast_1d(V.as_float_array(n_train, "n_train"))
        if np.any(ntr < 1) or np.any(ntr != np.round(ntr)):
            raise DomainError(f"n_train must be integers >= 1 (got {n_train!r})")
        ntr = np.broadcast_to(ntr, (nr,)).copy() if ntr.size in (1, nr) else None
        if ntr is None:
            raise DomainError(f"n_train must have one entry or one per run ({nr})")
    elif mask is not None:
        ntr = mask.sum(axis=(1, 2)).astype(float)
    sweep = None
    if lam_sweep is not None:
        try:
            lams, dts = lam_sweep
        except (TypeError, ValueError) as exc:
            raise DomainError("lam_sweep must be a pair (lams, delays)") from exc
        lams, dts = V.positive(lams, "lam_sweep lams"), V.positive(dts, "lam_sweep delays")
        if lams.shape != dts.shape or lams.ndim != 1:
            raise DomainError("lam_sweep lams and delays must be 1-D of equal length")
        sweep = (lams, dts)
    train_level = float(V.in_open_interval(train_level, "train_level", 0.0, 1.0 + 1e-12))
    test_level = float(V.in_open_interval(test_level, "test_level", 0.0, 1.0 + 1e-12))
    if not isinstance(operation, str):
        raise DomainError(f"operation must be a string (got {operation!r})")
    return RunData(steps=t, embeddings=emb, weights=wts, gap=g, train_mask=mask, p=p, operation=operation,
                   b_offset=b_offset, lam=lam, n_train=ntr, lam_sweep=sweep, train_level=train_level,
                   test_level=test_level, source=source, **ser)


def _config_dict(config: Any) -> dict[str, Any]:
    if config is None:
        return {}
    if dataclasses.is_dataclass(config) and not isinstance(config, type):
        return {f.name: getattr(config, f.name) for f in dataclasses.fields(config)}
    if isinstance(config, Mapping):
        return dict(config)
    return {}


def _select(metric: np.ndarray, n_grid: int, index: tuple[int, ...]) -> np.ndarray:
    """Grid point ``index`` of an engine metric ``(*grid, n_seeds, *value, n_rec)`` -> ``(n_seeds, n_rec, *value)``."""
    a = np.asarray(metric)
    if n_grid:
        a = a[index]
    return np.moveaxis(a, -1, 1) if a.ndim > 2 else a


def _engine_run(times: Any, metrics: Mapping[str, Any], extras: Mapping[str, Any], config: Any,
                index: Any, source: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Arguments of :func:`run_data` (and defaults) from an engine trajectory's parts."""
    cfg = _config_dict(config)
    if "acc_test" not in metrics and "acc_train" not in metrics:
        raise DomainError(f"the trajectory records no accuracy (metrics: {sorted(metrics)})")
    ref = np.asarray(metrics.get("acc_test", metrics.get("acc_train")))
    if ref.ndim == 1:  # a single unbatched run
        metrics = {k: np.asarray(v)[None] for k, v in metrics.items()}
        ref = ref[None]
    n_grid = ref.ndim - 2
    grid_shape = ref.shape[:n_grid]
    if n_grid:
        if index is None:
            if int(np.prod(grid_shape)) != 1:
                axes = cfg.get("grid_axes") or ("alpha",)
                raise DomainError(f"the run holds a grid of shape {grid_shape} over {tuple(axes)}; pick one point with "
                                  f"index=(...) (e.g. index={(0,) * n_grid})")
            index = (0,) * n_grid
        index = tuple(int(i) for i in np.atleast_1d(index))
        if len(index) != n_grid or any(not 0 <= i < s for i, s in zip(index, grid_shape)):
            raise DomainError(f"index must be {n_grid} integer(s) within the grid shape {grid_shape} (got {index})")
    elif index not in (None, (), 0):
        raise DomainError(f"the run holds no grid; index must be None (got {index!r})")
    else:
        index = ()
    kw: dict[str, Any] = {"steps": np.asarray(times, dtype=np.float64), "source": source}
    for name, key in _ENGINE_METRICS.items():
        if name in metrics and key not in kw:
            kw[key] = _select(metrics[name], n_grid, index)
    if "embeddings" in kw and kw["embeddings"].ndim != 4:
        del kw["embeddings"]
    p = cfg.get("p")
    if p is not None:
        kw["p"] = int(p)
    op = cfg.get("operation")
    if isinstance(op, str) and op != "user":
        kw["operation"] = op
    defaults: dict[str, Any] = {}
    if "threshold" in cfg:  # run_modular_addition: one accuracy level for both clocks
        defaults.update(train_level=float(cfg["threshold"]), test_level=float(cfg["threshold"]))
    n_train = extras.get("n_train")
    if n_train is not None:
        nt = np.asarray(n_train, dtype=float)
        if nt.ndim == 0:
            nt = np.full(ref.shape[n_grid], float(nt))
        elif n_grid and nt.ndim > 1:
            nt = nt[index]
        elif n_grid and nt.ndim == 1 and nt.shape[0] == grid_shape[0] and len(grid_shape) == 1 and "alpha" in cfg:
            nt = np.full(ref.shape[n_grid], nt[index[0]])
        kw["n_train"] = nt
    # the engine's random split (train_modular, split="random") can be rebuilt exactly
    if cfg.get("split") == "random" and p is not None and cfg.get("train_frac"):
        fracs = tuple(cfg["train_frac"])
        axes = tuple(cfg.get("grid_axes") or ())
        f = fracs[index[axes.index("train_frac")]] if "train_frac" in axes else fracs[0]
        seeds = tuple(cfg.get("seeds") or (0,))
        split_seeds = [s if cfg.get("split_seed") is None else int(cfg["split_seed"]) for s in seeds]
        try:
            from .sim.data import random_split_mask
        except ImportError:  # pragma: no cover - JAX missing
            pass
        else:
            kw["train_mask"] = np.asarray(random_split_mask(int(p), split_seeds, frac=float(f))).reshape(len(seeds), -1)
    # a sweep over the training fraction gives the levi:appG fit of Delta t vs lambda
    axes = tuple(cfg.get("grid_axes") or ())
    if p is not None and n_grid == 1 and (axes == ("train_frac",) or ("alpha" in cfg and not axes)):
        defaults["_sweep"] = (metrics, n_train)
    return kw, defaults


def _sweep_from_engine(metrics: Mapping[str, Any], n_train: Any, p: int, steps: np.ndarray, train_level: float,
                       test_level: float) -> tuple[np.ndarray, np.ndarray] | None:
    """(lambda, median grokking delay) per training fraction of an engine grid (grid axis 0)."""
    if n_train is None or "acc_train" not in metrics or "acc_test" not in metrics:
        return None
    acc_tr, acc_te = np.asarray(metrics["acc_train"]), np.asarray(metrics["acc_test"])
    nt = np.asarray(n_train, dtype=float)
    lams, dts = [], []
    for g in range(acc_te.shape[0]):
        d = []
        for s in range(acc_te.shape[1]):
            t_tr = _clocks.accuracy_clock(steps, acc_tr[g, s], target=train_level)
            t_te = _clocks.first_hitting_time(steps, acc_te[g, s], test_level, direction="above")
            if math.isfinite(t_te) and math.isfinite(t_tr) and t_te > t_tr:
                d.append(t_te - t_tr)
        ntr = float(np.median(nt[g])) if nt.ndim else float(nt)
        if d and ntr <= p * p:
            lams.append(float(_linear.modular_lambda(ntr / (p * p), p)))
            dts.append(float(np.median(d)))
    return (np.asarray(lams), np.asarray(dts)) if len(lams) else None


def load_run(path: str | os.PathLike, *, index: Any = None) -> RunData:
    """Read a run from ``.npz``: an engine trajectory (``Trajectory.save``) or a user file (:data:`USER_KEYS`).

    An engine file has the keys ``times``, ``metric:<name>`` and ``extra:<name>`` and a ``.json`` config
    next to it (read as plain JSON: no JAX needed, except to rebuild a random split's training mask).
    A user file has the keys of :data:`USER_KEYS` (``steps`` and one accuracy at least).

    Parameters
    ----------
    path : path to the ``.npz``
    index : tuple of int, optional
        Grid point of an engine sweep (``config.grid_axes``); required when the file holds a grid.

    Returns
    -------
    RunData

    Raises
    ------
    DomainError
        Missing file, unknown keys, or invalid arrays.
    """
    p = Path(path)
    if not p.exists() and p.with_name(p.name + ".npz").exists():
        p = p.with_name(p.name + ".npz")
    if not p.exists():
        raise DomainError(f"path must be an existing .npz file (got {str(path)!r})")
    try:
        with np.load(p, allow_pickle=False) as f:
            arrays = {k: f[k] for k in f.files}
    except (OSError, ValueError) as exc:
        raise DomainError(f"cannot read {str(p)!r} as .npz: {exc}") from exc
    if "times" in arrays and any(k.startswith("metric:") for k in arrays):
        metrics = {k.split(":", 1)[1]: v for k, v in arrays.items() if k.startswith("metric:")}
        extras = {k.split(":", 1)[1]: v for k, v in arrays.items() if k.startswith("extra:")}
        js = p.with_suffix(".json")
        config = None
        if js.exists():
            obj = json.loads(js.read_text())
            config = obj.get("fields") if isinstance(obj, dict) else None
        kw, defaults = _engine_run(arrays["times"], metrics, extras, config, index, f"engine run {p.name}")
        return _finish(kw, defaults, {})
    unknown = sorted(set(arrays) - set(USER_KEYS))
    if unknown:
        raise DomainError(f"{p.name}: unknown keys {unknown}; a user .npz may hold {list(USER_KEYS)}")
    if "steps" not in arrays:
        raise DomainError(f"{p.name}: a user .npz needs 'steps' (keys: {sorted(arrays)})")
    kw = {k: v for k, v in arrays.items()}
    for k in ("operation",):
        if k in kw:
            kw[k] = str(kw[k])
    for k in ("p", "b_offset"):
        if k in kw:
            kw[k] = int(kw[k])
    if "lam" in kw:
        kw["lam"] = float(kw["lam"])
    kw["source"] = f"user file {p.name}"
    return run_data(**kw)


def _finish(kw: dict[str, Any], defaults: dict[str, Any], overrides: dict[str, Any]) -> RunData:
    sweep_src = defaults.pop("_sweep", None)
    args = {**defaults, **kw, **{k: v for k, v in overrides.items() if v is not None}}
    rd = run_data(**args)
    if sweep_src is not None and rd.lam_sweep is None and rd.p is not None:
        sw = _sweep_from_engine(sweep_src[0], sweep_src[1], rd.p, rd.steps, rd.train_level, rd.test_level)
        if sw is not None:
            rd = dataclasses.replace(rd, lam_sweep=sw)
    return rd


# ============================================================================================ theories


def _summary(per_run: Sequence[float]) -> float:
    """Median over the runs where the quantity is finite; ``inf`` if it is inf for all; ``nan`` if undefined."""
    a = np.asarray(per_run, dtype=float)
    fin = a[np.isfinite(a)]
    if fin.size:
        return float(np.median(fin))
    if np.any(np.isinf(a)):
        return math.inf
    return math.nan


def _entry(theory: str, quantity: str, per_run: Sequence[Any], status: str, spec_id: str, note: str = "") -> Entry:
    vals = tuple(per_run)
    if vals and all(isinstance(v, (bool, np.bool_)) for v in vals):
        value: Any = bool(all(vals)) if len(vals) == 1 else f"{sum(map(bool, vals))}/{len(vals)} yes"
        vals = tuple(bool(v) for v in vals)
    else:
        vals = tuple(float(v) for v in vals)
        value = _summary(vals)
    return Entry(theory, quantity, value, status, spec_id, note, vals)


def _na(theory: str, quantity: str, reason: str, spec_id: str, note: str = "") -> Entry:
    return Entry(theory, quantity, None, f"n/a: {reason}", spec_id, note, ())


def _normalised_change(x: np.ndarray) -> np.ndarray | None:
    """``|S_j - S_end| / |S_0 - S_end|``: the normalisation of ``clocks:appF4-srank-stat``, for any statistic.

    (:func:`grokclocks.clocks.stable_rank_gap` applies it to stable ranks; this is the same ratio for a
    statistic that is not a stable rank.)  ``None`` if the statistic ends where it started.
    """
    den = abs(float(x[0]) - float(x[-1]))
    if not den > 0:
        return None
    return np.abs(x - x[-1]) / den


def _clock_entries(r: RunData, eps_cls: float, delta: float, window: int, n_freqs: int,
                   out: list[Entry], clocks: dict[str, float]) -> dict[str, np.ndarray]:
    """Classifier, accuracy and representation clocks (spec ``clocks``); returns per-run clocks for later use."""
    t = r.steps
    n = r.n_runs
    res: dict[str, np.ndarray] = {}
    lv_tr, lv_te = _fmt_num(r.train_level), _fmt_num(r.test_level)
    if r.train_acc is not None:
        tt = np.array([_clocks.accuracy_clock(t, a, target=r.train_level) for a in r.train_acc])
        res["t_train"] = tt
        out.append(_entry("clocks", f"t_train (train acc >= {lv_tr})", tt, "measured", "clocks:appF4-acc-clock",
                          "zero-one clock t_01 (first record; 'never' = not within the run)"))
        clocks["t_train"] = _summary(tt)
    else:
        out.append(_na("clocks", f"t_train (train acc >= {lv_tr})", "no train accuracy logged",
                       "clocks:appF4-acc-clock"))
    if r.test_acc is not None:
        te = np.array([_clocks.first_hitting_time(t, a, r.test_level, direction="above") for a in r.test_acc])
        res["t_test"] = te
        out.append(_entry("clocks", f"t_test (test acc >= {lv_te})", te, "measured", "kramers:milestones",
                          "generalisation clock (first record at the level)"))
        clocks["t_test"] = _summary(te)
    else:
        out.append(_na("clocks", f"t_test (test acc >= {lv_te})", "no test accuracy logged", "kramers:milestones"))
    q = f"t_cls(eps={_fmt_num(eps_cls)})"
    if r.train_loss is not None:
        tc = np.array([_clocks.classifier_clock(t, L, eps_cls) for L in r.train_loss])
        tcw = np.array([_clocks.classifier_clock(t, L, eps_cls, window=window) for L in r.train_loss])
        res["t_cls"] = tc
        out.append(_entry("clocks", q, tc, "measured", "clocks:appF4-cls-estimator",
                          "first record with training loss <= eps (classifier clock)"))
        out.append(_entry("clocks", f"t_cls(eps={_fmt_num(eps_cls)}, window {window})", tcw, "measured",
                          "clocks:appF4-cls-estimator", f"sustained for {window} records"))
        clocks["t_cls"] = _summary(tc)
    else:
        out.append(_na("clocks", q, "no training loss logged", "clocks:appF4-cls-estimator"))
    # structural statistics -> representation clocks
    stats_: dict[str, tuple[np.ndarray, str, str]] = {}
    if r.embeddings is not None and r.p is not None and r.embeddings.shape[2] >= r.p:
        E = r.embeddings[:, :, : r.p, :]  # operand tokens 0..p-1 (shared layout)
        try:
            fe = np.empty(E.shape[:2])
            for i in range(n):
                e_final = _clocks.fourier_energies(E[i, -1], r.p)
                key = 1 + np.argsort(-e_final[1:], kind="stable")[: max(1, min(n_freqs, e_final.size - 1))]
                fe[i] = [_clocks.fourier_energy_outside(E[i, j], r.p, freqs=key) for j in range(E.shape[1])]
            stats_["Fourier energy outside"] = (fe, "clocks:appF4-fourier",
                                                f"embedding energy outside its final top-{n_freqs} frequencies")
        except DomainError as exc:
            out.append(_na("clocks", "t_rep(Fourier energy outside)", str(exc), "clocks:appF4-fourier"))
        try:
            sr = _spectral.stable_rank(E)
            stats_["stable rank of embedding"] = (sr, "clocks:appF4-srank-stat", "srank(E) = |E|_F^2 / |E|_2^2")
        except DomainError as exc:
            out.append(_na("clocks", "t_rep(stable rank of embedding)", str(exc), "clocks:appF4-srank-stat"))
    if r.weight_norm is not None:
        stats_["weight norm"] = (r.weight_norm, "clocks:appF4-persist", "global parameter norm")
    if r.test_acc is not None:
        ref = np.array([_rep_clock(t, a, delta, window) for a in r.test_acc])
        res["t_rep_test_acc"] = ref
    else:
        ref = np.full(n, math.nan)
    primary = None
    for name, (series, sid, what) in stats_.items():
        tr = np.array([_rep_clock(t, s, delta, window, srank=name.startswith("stable rank")) for s in series])
        if np.isnan(tr).all():
            out.append(_na("clocks", f"t_rep({name})", "the statistic ends where it started in every run", sid, what))
            continue
        out.append(_entry("clocks", f"t_rep({name})", tr, "measured", sid,
                          f"{what}; first record where |S - S_end| <= {_fmt_num(delta)} |S_0 - S_end| "
                          f"for {window} records"))
        grokked = np.isfinite(res.get("t_test", np.full(n, math.inf)))
        if grokked.any():
            lag = np.where(grokked, tr - ref, math.nan)
            out.append(_entry("clocks", f"lag t_rep({name}) - t_rep(test acc)", lag, "measured", "clocks:cor5.7",
                              "same estimator on the test-accuracy curve; < 0 = the statistic settled first"))
        else:
            out.append(_na("clocks", f"lag t_rep({name}) - t_rep(test acc)",
                           "test accuracy never reached its level", "clocks:cor5.7"))
        if primary is None:
            primary = (name, tr)
    if primary is None:
        out.append(_na("clocks", "t_rep (representation clock)",
                       "needs a structural statistic: weight_norm or embeddings (+ p)", "clocks:eq2.2"))
    else:
        name, tr = primary
        res["t_rep"] = tr
        clocks[f"t_rep({name})"] = _summary(tr)
        if "t_cls" in res:
            tc = res["t_cls"]
            ok = np.isfinite(tc) & np.isfinite(tr)
            if ok.any():
                out.append(_entry("clocks", f"t_cls < t_rep({name})", [bool(a < b) for a, b in zip(tc[ok], tr[ok])],
                                  "measured", "clocks:thm5.6", "the theory's ordering: classifier clock first"))
                ratio = [float(_clocks.separation_ratio(b, a)) if a > 0 else math.nan for a, b in zip(tc, tr)]
                out.append(_entry("clocks", f"separation ratio t_rep({name}) / t_cls", ratio, "measured",
                                  "clocks:appF4-sep-ratio", "descriptive; depends on units and thresholds"))
            else:
                out.append(_na("clocks", f"t_cls < t_rep({name})", "a clock never fired", "clocks:thm5.6"))
        else:
            out.append(_na("clocks", f"t_cls < t_rep({name})", "no training loss logged", "clocks:thm5.6"))
    q_ord = "t_train <= t_cls < t_test"
    if {"t_train", "t_cls", "t_test"} <= set(res):
        fired = np.isfinite(res["t_train"]) & np.isfinite(res["t_cls"]) & np.isfinite(res["t_test"])
        if fired.any():
            order = [bool(a <= b < c)
                     for a, b, c in zip(res["t_train"][fired], res["t_cls"][fired], res["t_test"][fired])]
            out.append(_entry("clocks", q_ord, order, "measured", "clocks:appB",
                              f"ordering of the modular-addition report, over the {int(fired.sum())} of {n} runs "
                              "where all three clocks fired"))
        else:
            out.append(_na("clocks", q_ord, "no run where all three clocks fired", "clocks:appB"))
    else:
        out.append(_na("clocks", q_ord, "needs train and test accuracy and the training loss", "clocks:appB"))
    return res


def _rep_clock(t: np.ndarray, x: np.ndarray, delta: float, window: int, *, srank: bool = False) -> float:
    if srank:
        try:
            g = _clocks.stable_rank_gap(x)
        except DomainError:
            return math.nan
    else:
        g = _normalised_change(np.asarray(x, dtype=float))
        if g is None:
            return math.nan
    return float(_clocks.representation_clock(t, g, delta, window=window))


def _levi_entries(r: RunData, res: dict[str, np.ndarray], levi_params: Mapping[str, Any] | None,
                  out: list[Entry]) -> None:
    lam = None
    if r.lam is not None:
        lam = r.lam
        out.append(Entry("levi", "lambda = d_in / N_train", lam, "measured", "levi:conv-data", "given by the user",
                         (lam,)))
    elif r.n_train is not None and r.p is not None:
        lams = [float(_linear.modular_lambda(n / r.p ** 2, r.p)) for n in r.n_train]
        lam = float(np.median(lams))
        out.append(_entry("levi", "lambda = d_in / N_train", lams, "measured", "levi:appG",
                          "2p / N_train: one-hot pair inputs (App. G)"))
    else:
        out.append(_na("levi", "lambda = d_in / N_train", "needs lam, or p with n_train or train_mask", "levi:appG"))
    if "t_train" in res and "t_test" in res:
        dt = res["t_test"] - res["t_train"]
        res["delta_t"] = dt
        out.append(_entry("levi", "Delta t = t_test - t_train", dt, "measured", "levi:grok-def",
                          "grokking delay in steps ('never': the test clock never fired)"))
    else:
        out.append(_na("levi", "Delta t = t_test - t_train", "needs train and test accuracy", "levi:grok-def"))
    q = "Delta t, linear estimator"
    if levi_params:
        if lam is None:
            out.append(_na("levi", q, "lambda unknown", "levi:grok-def"))
        else:
            kw = dict(levi_params)
            try:
                eps, eta0 = kw.pop("eps"), kw.pop("eta0")
            except KeyError as exc:
                raise DomainError("levi_params must contain 'eps' and 'eta0' (the arguments of "
                                  "grokclocks.linear.grok_time)") from exc
            pred = float(_linear.grok_time(lam, eps, eta0, **kw))
            note = f"grok_time(lam={_fmt_num(lam)}, eps={_fmt_num(eps)}, eta0={_fmt_num(eta0)}" + "".join(
                f", {k}={_fmt_num(v) if not isinstance(v, str) else v}" for k, v in kw.items()) + ")"
            if math.isnan(pred):
                out.append(_na("levi", q, "neither accuracy reaches the level in the linear model", "levi:grok-def",
                               note))
            else:
                out.append(Entry("levi", q, pred, "predicted", "levi:grok-def", note, (pred,)))
    else:
        out.append(_na("levi", q, "needs the linear model's eps and eta0 (levi_params); the closed form is for GD "
                       "on a linear MSE teacher-student, which this run is not known to be", "levi:grok-def"))
    if r.lam_sweep is not None and r.lam_sweep[0].size >= 3 and np.unique(r.lam_sweep[0]).size >= 3:
        lams, dts = r.lam_sweep
        try:
            C, lam_star = _linear.fit_inverse_square(lams, dts)
        except (DomainError, RuntimeError, ValueError) as exc:
            out.append(_na("levi", "lambda* (fit Delta t = C (lambda* - lambda)^-2)", f"fit failed: {exc}",
                           "levi:appG"))
        else:
            out.append(Entry("levi", "lambda* (fit Delta t = C (lambda* - lambda)^-2)", float(lam_star), "measured",
                             "levi:appG", f"C = {_fmt_num(C)}; fitted to {lams.size} (lambda, Delta t) points",
                             (float(lam_star),)))
            if lam is not None and lam != lam_star:
                pred = float(C * (lam_star - lam) ** -2)
                out.append(Entry("levi", "Delta t from the lambda* fit", pred, "predicted", "levi:appG",
                                 "in-sample: the fit used this run's delay", (pred,)))
    else:
        out.append(_na("levi", "lambda* (fit Delta t = C (lambda* - lambda)^-2)",
                       "needs grokking delays at >= 3 training fractions (a train_frac sweep, or lam_sweep=)",
                       "levi:appG"))


def _kramers_entries(r: RunData, res: dict[str, np.ndarray], out: list[Entry]) -> None:
    if "t_train" not in res or "t_test" not in res:
        out.append(_na("kramers", "delay ratio t_grok / t_mem", "needs train and test accuracy", "kramers:milestones"))
        return
    tm, tg = res["t_train"], res["t_test"]
    ok = np.isfinite(tm) & (tm > 0)
    ratio = np.where(ok, tg / np.where(ok, tm, 1.0), math.nan)  # inf: never generalised
    out.append(_entry("kramers", "delay ratio t_grok / t_mem", ratio, "measured", "kramers:milestones",
                      "t_mem = t_train, t_grok = t_test"))
    fin = np.isfinite(ratio) & (ratio > 0)
    if fin.any():
        bars = []
        neg = False
        for x in ratio:
            if np.isfinite(x) and x > 0:
                with warnings.catch_warnings(record=True) as w:
                    warnings.simplefilter("always")
                    bars.append(_kramers.arrhenius_barrier(float(x)))
                neg |= bool(w)
            else:
                bars.append(math.inf if np.isinf(x) else math.nan)
        out.append(_entry("kramers", "barrier Delta F / T_eff = ln(t_grok / t_mem)", bars, "measured",
                          "kramers:arrhenius", "Arrhenius inversion with tau_0 = t_mem (an assumption; heuristic use)"
                          + ("; a ratio < 1 gives a negative barrier" if neg else "")))
    else:
        out.append(_na("kramers", "barrier Delta F / T_eff = ln(t_grok / t_mem)",
                       "no run both memorised (t_mem > 0) and generalised", "kramers:arrhenius"))
    wait = (tg - tm)[np.isfinite(tg) & np.isfinite(tm) & (tg > tm)]
    q_cv, q_ks = "CV of Delta t over seeds (escape: 1)", "KS p-value, Delta t ~ exponential"
    if wait.size >= _MIN_SEEDS_CV:
        cv = float(np.std(wait, ddof=1) / np.mean(wait))
        out.append(Entry("kramers", q_cv, cv, "measured", "kramers:eq15",
                         f"{wait.size} grokked runs; an escape over a barrier has exponential waiting times, CV = 1",
                         (cv,)))
    else:
        out.append(_na("kramers", q_cv, f"needs >= {_MIN_SEEDS_CV} seeds that grok (have {wait.size})", "kramers:eq15"))
        cv = None
    if wait.size >= _MIN_SEEDS_KS:
        gof = stats.goodness_of_fit(stats.expon, wait, known_params={"loc": 0.0}, statistic="ks",
                                    n_mc_samples=999, random_state=0)
        pv = float(gof.pvalue)
        out.append(Entry("kramers", q_ks, pv, "measured", "kramers:eq15",
                         f"KS D = {gof.statistic:.3g}, mean fitted (Monte-Carlo p, 999 samples)", (pv,)))
        looks = pv >= 0.05
        out.append(Entry("kramers", "spread looks like an escape (KS p >= 0.05)",
                         f"{'yes' if looks else 'no'} (CV {cv:.2f}, p {pv:.2g})", "measured", "kramers:eq15",
                         "an activated escape has exponential first-passage times (CV = 1); "
                         + ("consistent with that" if looks else "this spread is too narrow/regular for one")
                         + " (spec kramers:arrhenius caveat iii)"))
    else:
        out.append(_na("kramers", q_ks, f"needs >= {_MIN_SEEDS_KS} seeds that grok (have {wait.size})", "kramers:eq15"))


def _coverage_entries(r: RunData, res: dict[str, np.ndarray], out: list[Entry]) -> None:
    q = "test-accuracy ceiling Ceil(inf)"
    if r.p is None or r.train_mask is None:
        out.append(_na("coverage", q, "needs p and the training mask (train_mask=)", "uniformity:thm3.10"))
        return
    if r.test_acc is None:
        out.append(_na("coverage", q, "needs the test accuracy", "uniformity:thm3.10"))
        return
    try:
        labels = _coverage.label_table(r.p, r.operation)
    except DomainError as exc:
        out.append(_na("coverage", q, f"labels of operation {r.operation!r}: {exc}", "uniformity:thm3.10"))
        return
    med = None
    if r.embeddings is not None and r.embeddings.shape[2] >= r.p + r.b_offset and r.p >= 3:
        med = [_coverage.med_trajectory(E, r.p, r.b_offset, token_axis=0) for E in r.embeddings]
    runs = []
    for i in range(r.n_runs):
        runs.append(_coverage.analyse_run(
            r.test_acc[i], r.train_mask[i], labels, train_acc=None if r.train_acc is None else r.train_acc[i],
            epochs=r.steps, test_loss=None if r.test_loss is None else r.test_loss[i],
            med=None if med is None else med[i], b_offset=r.b_offset))
    ceil = [d["ceiling"] for d in runs]
    note = (f"fraction of test pairs whose label occurs in training and whose tokens were trained "
            f"(torus, b_offset={r.b_offset})")
    if min(ceil) < r.test_level:
        note += f"; below the test level {_fmt_num(r.test_level)}, so t_test cannot fire"
    out.append(_entry("coverage", q, ceil, "predicted", "uniformity:thm3.10", note))
    mx = [d["max_test_acc"] for d in runs]
    out.append(_entry("coverage", "max test accuracy", mx, "measured", "uniformity:table1"))
    allow = []
    for i, c in enumerate(ceil):
        n_test = int((~r.train_mask[i]).sum())
        n_unc = round((1.0 - c) * n_test)
        q_ch = 1.0 / r.p
        allow.append((n_unc * q_ch + 3.0 * math.sqrt(n_unc * q_ch * (1.0 - q_ch))) / n_test)
    res["ceiling"], res["allowance"], res["max_test_acc"] = np.asarray(ceil), np.asarray(allow), np.asarray(mx)
    within = [bool(m <= c + a) for m, c, a in zip(mx, ceil, allow)]
    out.append(_entry("coverage", "test accuracy <= ceiling (+ chance allowance)", within, "measured",
                      "uniformity:thm3.10", "allowance = chance hits 1/p on the uncovered test pairs + 3 binomial s.d. "
                      f"(median {_fmt_num(float(np.median(allow)))})"))
    radius = [math.nan if d["implied_radius"] is None else float(d["implied_radius"]) for d in runs]
    out.append(_entry("coverage", "implied radius n of U-Acc", radius, "measured", "uniformity:thm3.10",
                      "smallest torus radius whose ceiling reaches the best post-memorisation test accuracy"))
    if med is not None:
        out.append(_entry("coverage", "MED at start", [m[0] for m in med], "measured", "uniformity:def4.2"))
        out.append(_entry("coverage", "MED at end", [m[-1] for m in med], "measured", "uniformity:def4.2"))
        if r.test_loss is not None:
            q_rho = "Spearman(MED, test loss), test acc > 0.2 window"
            rho = [math.nan if d.get("spearman_grokking") is None else d["spearman_grokking"] for d in runs]
            if np.isfinite(rho).any():
                out.append(_entry("coverage", q_rho, rho, "measured", "uniformity:def4.2",
                                  "from the first record after memorisation with test acc > 0.2 to the end; > 0 = MED "
                                  "falls with the test loss (spec V3, transformer p=97: > 0.5)"))
            else:
                out.append(_na("coverage", q_rho, "test acc never above 0.2 after memorisation", "uniformity:def4.2"))
    else:
        out.append(_na("coverage", "MED (main embedding diff)", "needs token-embedding snapshots (embeddings=)",
                       "uniformity:def4.2"))


def _repulsion_entries(r: RunData, res: dict[str, np.ndarray], out: list[Entry], clocks: dict[str, float],
                       gram_window: int, lag: int, threshold: float, t_min: int) -> None:
    q = "lock-in (slope detector fires)"
    gaps = None
    src = ""
    if r.gap is not None:
        gaps, src = r.gap, "logged eigengap"
        epoch0 = 0.0
    elif r.weights is not None:
        steps_ok = np.all(np.diff(r.steps) == 1)
        if not steps_ok:
            out.append(_na("repulsion", q, "weight snapshots are not at consecutive steps; the update Gram "
                           "(eq. 5) needs every step's update", "repulsion:slope-detector"))
            return
        if r.weights.shape[1] - 1 < gram_window:
            out.append(_na("repulsion", q, f"needs more than {gram_window} snapshots (window)",
                           "repulsion:rolling-gram"))
            return
        gaps = np.stack([_repulsion.eigengap(_repulsion.rolling_gram_eigenvalues(np.diff(w, axis=0), gram_window, 3))
                         for w in r.weights])
        src = f"sigma_2/sigma_3 of the rolling {gram_window}-update Gram"
        epoch0 = float(r.steps[0])
    else:
        out.append(_na("repulsion", q, "needs an eigengap series (gap=) or per-step weight snapshots (weights=)",
                       "repulsion:slope-detector"))
        return
    if gaps.shape[1] <= lag:
        out.append(_na("repulsion", q, f"gap series shorter than the lag ({lag})", "repulsion:slope-detector"))
        return
    fire = []
    for g in gaps:
        f, _ = _repulsion.slope_detector(g, lag=lag, threshold=threshold, t_min=t_min)
        fire.append(math.inf if f is None else epoch0 + f)
    out.append(_entry("repulsion", q, fire, "measured", "repulsion:slope-detector",
                      f"{src}; slope of log gap over {lag} epochs > {_fmt_num(threshold)}, t >= {t_min}"))
    clocks["lock-in"] = _summary(fire)
    if r.test_acc is not None:
        t50 = np.array([_clocks.first_hitting_time(r.steps, a, 0.5, direction="above") for a in r.test_acc])
        out.append(_entry("repulsion", "test acc >= 0.5 (grokking epoch of the paper)", t50, "measured",
                          "repulsion:headline"))
        clocks["test 0.5"] = _summary(t50)


# ============================================================================================ API


def compare_run(run: Any = None, *, index: Any = None, steps: Any = None, train_acc: Any = None,
                test_acc: Any = None, train_loss: Any = None, test_loss: Any = None, weight_norm: Any = None,
                embeddings: Any = None, weights: Any = None, gap: Any = None, train_mask: Any = None,
                p: Any = None, operation: str | None = None, b_offset: Any = None, lam: Any = None,
                n_train: Any = None, lam_sweep: Any = None, train_level: float | None = None,
                test_level: float | None = None, eps_cls: float = 1e-3, delta: float = 0.1, window: int = 5,
                n_freqs: int = 4, levi_params: Mapping[str, Any] | None = None, gram_window: int = 20,
                slope_lag: int = 25, slope_threshold: float = 0.04, slope_t_min: int = 100) -> Comparison:
    """Compare a training run with what each theory predicts or measures.

    Parameters
    ----------
    run : Trajectory, RunData, mapping of arrays, path to an ``.npz``, or None
        The run: a :class:`grokclocks.sim.train.Trajectory` (e.g. from
        :func:`~grokclocks.sim.modular.train_modular`; metrics ``acc_train``, ``acc_test``, ``loss_train``,
        ``loss_test``, ``param_norm``, and hooks named ``E`` / ``W_E`` (embeddings), ``weights``, ``gap``),
        a :class:`RunData`, a mapping with the keys of :data:`USER_KEYS`, or a path (:func:`load_run`).
        ``None``: the keyword arrays alone.
    index : tuple of int, optional
        Grid point of an engine sweep (required if the run holds a grid).
    steps, train_acc, test_acc, train_loss, test_loss, weight_norm, embeddings, weights, gap : array_like, optional
        Arrays as in :func:`run_data`.
    train_mask, p, operation, b_offset, lam, n_train, lam_sweep : optional
        Arrays and settings as in :func:`run_data`; given with ``run`` they override its values (e.g.
        ``train_mask=`` for an engine run trained on an explicit mask, which the trajectory does not store).
    train_level, test_level : float in (0, 1], optional
        Accuracy levels of ``t_train`` and ``t_test`` (default 1.0 and 0.99, the defaults of
        ``train_modular``; ``run_modular_addition`` runs use their ``threshold``).
    eps_cls : float > 0
        Loss level of the classifier clock (``clocks:appF4-cls-estimator``; 1e-3 as in the spec's table).
    delta : float in (0, 1)
        Structural-gap level of the representation clocks (0.1 = 90 % of the statistic's change done).
    window : int >= 1
        Persistence window (records) of the representation clocks and the sustained classifier clock.
    n_freqs : int >= 1
        Key frequencies of the Fourier statistic (the top ``n_freqs`` of each run's final embedding).
    levi_params : mapping, optional
        ``eps``, ``eta0`` and optional keywords of :func:`grokclocks.linear.grok_time` (``d_out``,
        ``gamma``, ``level``, ...) for the linear estimator's prediction of the delay.
    gram_window, slope_lag, slope_threshold, slope_t_min
        Window of :func:`grokclocks.repulsion.rolling_gram_eigenvalues` and the parameters of
        :func:`grokclocks.repulsion.slope_detector` (spec defaults 20, 25, 0.04, 100).

    Returns
    -------
    Comparison
        ``.table()`` / ``.table(markdown=True)``, ``.plot(path)``, ``.value(quantity)``, ``.entries``.

    Raises
    ------
    DomainError
        Invalid arrays (shapes, ranges, non-finite values), or a grid without ``index``.

    Notes
    -----
    Per theory (each entry names its spec ID):

    * ``levi`` -- :math:`\\lambda=d_{\\rm in}/N_{\\rm tr}` (:func:`~grokclocks.linear.modular_lambda`), the measured
      delay :math:`\\Delta t=t_{\\rm test}-t_{\\rm train}`, the linear estimator's :math:`\\Delta t`
      (:func:`~grokclocks.linear.grok_time`, only with ``levi_params``), and the App. G fit
      :math:`\\Delta t=C(\\lambda^*-\\lambda)^{-2}` (:func:`~grokclocks.linear.fit_inverse_square`) over a
      ``train_frac`` sweep.
    * ``clocks`` -- zero-one, classifier (first and sustained) and test clocks, a representation clock
      per structural statistic (Fourier energy, stable rank of the embedding, weight norm), each
      statistic's lag behind the same clock of the test accuracy, the ordering
      :math:`t_{\\rm cls}<t_{\\rm rep}` and the separation ratio.
    * ``kramers`` -- :math:`t_{\\rm grok}/t_{\\rm mem}`, the Arrhenius barrier
      (:func:`~grokclocks.kramers.arrhenius_barrier`, :math:`\\tau_0=t_{\\rm mem}`), and over seeds the CV of
      the delay and a KS test against the exponential law of an activated escape.
    * ``coverage`` -- the exact ceiling :math:`\\mathrm{Ceil}(\\infty)` of the split
      (:func:`~grokclocks.coverage.analyse_run`), whether the run respects it, the implied radius, MED.
    * ``repulsion`` -- the lock-in slope detector on a logged eigengap or on the rolling update Gram of
      per-step weight snapshots.

    Examples
    --------
    >>> import numpy as np
    >>> steps = np.arange(0, 3001, 25)
    >>> c = compare_run(steps=steps, train_acc=np.minimum(1, steps / 100), test_acc=np.full(steps.size, 0.4))
    >>> c.value("t_test (test acc >= 0.99)")
    inf
    """
    overrides = dict(steps=steps, train_acc=train_acc, test_acc=test_acc, train_loss=train_loss, test_loss=test_loss,
                     weight_norm=weight_norm, embeddings=embeddings, weights=weights, gap=gap, train_mask=train_mask,
                     p=p, operation=operation, b_offset=b_offset, lam=lam, n_train=n_train, lam_sweep=lam_sweep,
                     train_level=train_level, test_level=test_level)
    if isinstance(run, (str, os.PathLike)):
        run = load_run(run, index=index)
    if run is None:
        if steps is None:
            raise DomainError("give a run or at least steps= and an accuracy")
        rd = _finish({}, {"source": "arrays"}, overrides)
    elif isinstance(run, RunData):
        given = {k: v for k, v in overrides.items() if v is not None}
        if given:
            base = {f.name: getattr(run, f.name) for f in dataclasses.fields(run)}
            rd = run_data(**{**base, **given})
        else:
            rd = run
    elif hasattr(run, "times") and hasattr(run, "metrics"):
        kw, defaults = _engine_run(run.times, run.metrics, getattr(run, "extras", {}) or {},
                                   getattr(run, "config", None), index,
                                   f"Trajectory ({type(getattr(run, 'config', None)).__name__})")
        rd = _finish(kw, defaults, overrides)
    elif isinstance(run, Mapping):
        unknown = sorted(set(run) - set(USER_KEYS))
        if unknown:
            raise DomainError(f"unknown keys {unknown}; a run mapping may hold {list(USER_KEYS)}")
        rd = _finish({"source": "arrays", **dict(run)}, {}, overrides)
    else:
        raise DomainError(f"run must be a Trajectory, RunData, mapping, path or None (got {type(run).__name__})")
    eps_cls = float(V.positive(eps_cls, "eps_cls"))
    delta = float(V.in_open_interval(delta, "delta", 0.0, 1.0))
    window = V.integer_at_least(window, "window", 1)
    n_freqs = V.integer_at_least(n_freqs, "n_freqs", 1)
    gram_window = V.integer_at_least(gram_window, "gram_window", 3)
    slope_lag = V.integer_at_least(slope_lag, "slope_lag", 1)
    slope_t_min = V.integer_at_least(slope_t_min, "slope_t_min", 0)
    slope_threshold = float(V.finite(slope_threshold, "slope_threshold"))

    entries: list[Entry] = []
    clock_marks: dict[str, float] = {}
    clock_part: list[Entry] = []
    with np.errstate(invalid="ignore"):  # inf - inf of two clocks that never fired is a documented nan
        res = _clock_entries(rd, eps_cls, delta, window, n_freqs, clock_part, clock_marks)
        _levi_entries(rd, res, levi_params, entries)
        entries += clock_part
        _kramers_entries(rd, res, entries)
        _coverage_entries(rd, res, entries)
        _repulsion_entries(rd, res, entries, clock_marks, gram_window, slope_lag, slope_threshold, slope_t_min)
    return Comparison(tuple(entries), rd, dict(clock_marks))
