"""One logged training run against the five theories: what each predicts or measures, and a verdict.

:func:`compare_run` takes a training run -- a :class:`grokclocks.sim.train.Trajectory` from
:func:`grokclocks.sim.modular.train_modular`, a log file in any format of :mod:`grokclocks.logs` (CSV,
JSON lines / W&B, TensorBoard, Lightning, Hugging Face ``trainer_state.json``, ``torch.save``, ``.npz``), a
pandas DataFrame, a mapping of arrays, or several files (one per seed) -- and returns a :class:`Comparison`:
one :class:`Entry` per quantity, each with a stable short ID (``t_test``, ``t_cls``, ``delay_ratio``, ...;
:data:`QUANTITY_IDS`), the theory, the spec ID, the value and a status:

``measured``
    read off the run with the theory's estimator (a clock, a delay, a barrier inverted from a delay);
``predicted``
    what the theory says the run should do (the exact accuracy ceiling of the split, the linear
    estimator's grokking delay);
``n/a: <reason>``
    the theory does not apply, or the run lacks what it needs.  No number is made up.

Under the entries, one :class:`Verdict` per theory: ``consistent``, ``inconsistent`` or ``cannot tell``,
with the one number that decides it, the band the theory allows and its spec ID (the rules are in
:func:`compare_run`).

Every number comes from the library's own functions (:mod:`grokclocks.linear`, :mod:`grokclocks.clocks`,
:mod:`grokclocks.spectral`, :mod:`grokclocks.kramers`, :mod:`grokclocks.coverage`,
:mod:`grokclocks.repulsion`); this module only routes the run's arrays to them.  Pure numpy/scipy: JAX
is imported only to rebuild the engine's random split of a :func:`~grokclocks.sim.modular.train_modular`
run, matplotlib only by :meth:`Comparison.plot`, pandas only by :meth:`Comparison.to_dataframe`.

Series may be logged at different steps (train metrics every step, evaluation every 100, embedding
snapshots every 1000): the run's step grid is the union, a series is ``NaN`` where it was not logged, and
each clock is read on the records of its own series.  Nothing is interpolated; the table's header says
which series was logged where.

The keys of a run (:data:`USER_KEYS`; one run, or several seeds along a leading axis; a log's column names
are matched to them by :func:`grokclocks.logs.canonical_name`):

``steps``
    (n_records,) strictly increasing step (or epoch) of each record.  Required.
``train_acc``, ``test_acc``
    ([n_runs,] n_records) accuracies in [0, 1], ``NaN`` = not logged at that record.  At least one of the
    two is required.
``train_loss``, ``test_loss``
    ([n_runs,] n_records) losses (>= 0, ``NaN`` = not logged).
``weight_norm``
    ([n_runs,] n_records) global parameter norm.
``embeddings``, ``embedding_steps``
    ([n_runs,] n_snapshots, n_tokens, d) token-embedding snapshots, token ``t`` = row ``t`` (the first ``p``
    rows are the operand tokens ``0..p-1``), taken at ``embedding_steps`` (default: ``steps``).
``weights``, ``weights_steps``
    ([n_runs,] n_snapshots, ...) parameter snapshots (flattened per record); the update Gram of
    ``repulsion:rolling-gram`` needs them at consecutive steps.
``gap``
    ([n_runs,] n_epochs) eigengap series ``sigma_2/sigma_3`` indexed by epoch, row 0 = init
    (``repulsion:rolling-gram``).
``train_mask``
    the training set in any form of :func:`grokclocks.task.as_mask` (bool ``(p, p)``, flat ``(p*p,)``,
    pair indices), one per run or shared.
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
>>> c.value("t_train"), c.value("t_test"), c.value("delay_ratio")
(450.0, 3200.0, 7.111111111111111)
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
from . import logs as _logs
from . import repulsion as _repulsion
from . import spectral as _spectral
from . import task as _task
from ._validate import DomainError
from .citations import cites

__all__ = ["Entry", "Verdict", "RunData", "Comparison", "USER_KEYS", "QUANTITY_IDS", "VERDICT_RULES",
           "compare_run", "load_run", "run_data"]

THEORIES: tuple[str, ...] = ("levi", "clocks", "kramers", "coverage", "repulsion")

USER_KEYS: tuple[str, ...] = ("steps", "train_acc", "test_acc", "train_loss", "test_loss", "weight_norm",
                              "embeddings", "embedding_steps", "weights", "weights_steps", "gap", "train_mask", "p",
                              "operation", "b_offset", "lam", "n_train")

#: Stable short IDs of the quantities (``Comparison.value(id)``, the JSON's ``id``, the table's ID column).
QUANTITY_IDS: dict[str, str] = {
    "lambda": "lambda = d_in / N_train",
    "delta_t": "Delta t = t_test - t_train (grokking delay)",
    "delta_t_linear": "Delta t predicted by the linear estimator",
    "lambda_star": "lambda* of the fit Delta t = C (lambda* - lambda)^-2",
    "delta_t_fit": "Delta t from the lambda* fit",
    "t_train": "t_train: first record with train acc >= the train level",
    "t_test": "t_test: first record with test acc >= the test level",
    "t_cls": "t_cls(eps): first record with training loss <= eps",
    "t_cls_sustained": "t_cls(eps) sustained for `window` records",
    "t_rep_fourier": "t_rep of the embedding's Fourier energy outside its key frequencies",
    "t_rep_srank": "t_rep of the embedding's stable rank",
    "t_rep_weight_norm": "t_rep of the weight norm",
    "lag_fourier": "t_rep(Fourier) - t_rep(test acc)",
    "lag_srank": "t_rep(stable rank) - t_rep(test acc)",
    "lag_weight_norm": "t_rep(weight norm) - t_rep(test acc)",
    "t_rep": "representation clock (n/a row when no structural statistic is logged)",
    "cls_before_rep": "t_cls < t_rep",
    "separation_ratio": "t_rep / t_cls",
    "clock_order": "t_train <= t_cls < t_test",
    "delay_ratio": "t_grok / t_mem = t_test / t_train",
    "barrier": "Arrhenius barrier ln(t_grok / t_mem)",
    "cv_delta_t": "coefficient of variation of Delta t over seeds",
    "ks_pvalue": "KS p-value of Delta t against an exponential law",
    "escape_like": "KS p >= 0.05",
    "ceiling": "exact test-accuracy ceiling Ceil(inf) of the split",
    "max_test_acc": "max test accuracy",
    "below_ceiling": "max test accuracy <= ceiling + chance allowance",
    "implied_radius": "implied radius n of U-Acc",
    "med_start": "MED at the first snapshot",
    "med_end": "MED at the last snapshot",
    "spearman_med": "Spearman(MED, test loss) while grokking",
    "med": "MED (n/a row when no embeddings are logged)",
    "lock_in": "lock-in epoch of the slope detector",
    "t_test_half": "first record with test acc >= 0.5",
}

#: The verdict rule of each theory (also in the table's ``verdicts`` section and docs/byor.md).
VERDICT_RULES: dict[str, str] = {
    "levi": "with levi_params: consistent if |Delta t / Delta t_linear - 1| <= 0.15 (levi:grok-def, the spec's "
            "CPU tolerance at d = 500); with a lambda sweep: consistent if the inverse-square fit's largest relative "
            "residual <= 0.15 (levi:appG); otherwise cannot tell",
    "clocks": "consistent if t_test / t_cls > 1 in every run where both fired (the ordering t_cls < t_test of "
              "clocks:appB); inconsistent if <= 1 in any; cannot tell if no run has both",
    "kramers": "with >= 5 seeds that grok: consistent if the KS p-value of Delta t against an exponential law "
               "(an activated escape, kramers:eq15) is >= 0.05, inconsistent if < 0.05; cannot tell with fewer",
    "coverage": "consistent if every run's max test accuracy <= Ceil(inf) + chance allowance (uniformity:thm3.10); "
                "inconsistent if above; cannot tell without the split, or when Ceil(inf) = 1 (every accuracy allowed)",
    "repulsion": "consistent if the slope detector fires in exactly the runs that reach test acc 0.5 "
                 "(repulsion:headline: 15/15 grokking runs, 0/15 controls); inconsistent otherwise; cannot tell "
                 "without an eigengap series or per-step weights",
}

_SERIES = ("train_acc", "test_acc", "train_loss", "test_loss", "weight_norm")
_ENGINE_METRICS = {"acc_train": "train_acc", "acc_test": "test_acc", "loss_train": "train_loss",
                   "loss_test": "test_loss", "param_norm": "weight_norm", "E": "embeddings", "W_E": "embeddings",
                   "embeddings": "embeddings", "weights": "weights", "gap": "gap"}
_STAT_IDS = {"Fourier energy outside": "fourier", "stable rank of embedding": "srank", "weight norm": "weight_norm"}
_MIN_SEEDS_CV = 2
_MIN_SEEDS_KS = 5
_LEVI_RTOL = 0.15  # spec levi:grok-def recipe: Delta t seed-mean tolerance 0.08-0.15 at d = 500 (widest taken)
_APPG_RESIDUAL = 0.15  # spec levi:appG GPU recipe: inverse-square fit residual <= 15 %
_KS_ALPHA = 0.05


# ============================================================================================ data


@dataclasses.dataclass(frozen=True, eq=False)
class RunData:
    """A training run in the normal form :func:`compare_run` works on (runs = seeds, on axis 0).

    Attributes
    ----------
    steps : ndarray (n_records,)
        Strictly increasing record steps: the union of the steps at which any series was logged.
    train_acc, test_acc, train_loss, test_loss, weight_norm : ndarray (n_runs, n_records) or None
        ``NaN`` where the series was not logged at that record.
    embeddings : ndarray (n_runs, n_snapshots, n_tokens, d) or None
    embedding_steps : ndarray (n_snapshots,) or None
        Steps of the embedding snapshots.
    weights : ndarray (n_runs, n_snapshots, P) or None
    weights_steps : ndarray (n_snapshots,) or None
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
    run_names : tuple of str
        One name per run (the file of each seed, or ``run 0``, ``run 1``, ...).
    input_notes : tuple of str
        How the input was read and aligned (shown under the header).
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
    train_level: float = _task.TRAIN_LEVEL
    test_level: float = _task.TEST_LEVEL
    source: str = "arrays"
    embedding_steps: np.ndarray | None = None
    weights_steps: np.ndarray | None = None
    run_names: tuple[str, ...] = ()
    input_notes: tuple[str, ...] = ()

    @property
    def n_runs(self) -> int:
        """Number of runs (seeds) on the leading axis."""
        for name in _SERIES:
            a = getattr(self, name)
            if a is not None:
                return int(a.shape[0])
        return 1

    def logged(self, name: str, run: int) -> tuple[np.ndarray, np.ndarray]:
        """(steps, values) of one series of one run at the records where it was logged."""
        a = getattr(self, name)[run]
        ok = ~np.isnan(a)
        return self.steps[ok], a[ok]


@dataclasses.dataclass(frozen=True)
class Entry:
    """One quantity of one theory.

    Attributes
    ----------
    theory : str
        ``"levi"``, ``"clocks"``, ``"kramers"``, ``"coverage"`` or ``"repulsion"``.
    quantity : str
        What it is, e.g. ``"t_test (test acc >= 0.99)"``.
    value : float, bool or None
        Median over the runs where it is finite (``inf`` = never reached by any run, ``nan`` = undefined);
        for a yes/no quantity the answer (one run) or the fraction of runs answering yes; ``None`` if n/a.
    status : str
        ``"measured"``, ``"predicted"`` or ``"n/a: <reason>"``.
    spec_id : str
        The spec result behind it.
    note : str
        Caveat or definition.
    per_run : tuple
        The value of every run (seed), ``inf`` = never, ``nan`` = not defined for that run.
    id : str
        Stable short ID (:data:`QUANTITY_IDS`), e.g. ``"t_test"``.
    """

    theory: str
    quantity: str
    value: Any
    status: str
    spec_id: str = ""
    note: str = ""
    per_run: tuple = ()
    id: str = ""

    @property
    def available(self) -> bool:
        """False for ``n/a`` entries."""
        return not self.status.startswith("n/a")

    @property
    def state(self) -> str:
        """``"measured"``, ``"predicted"``, ``"never"`` (inf: no run reached it), ``"undefined"`` (nan) or ``"n/a"``."""
        if not self.available:
            return "n/a"
        v = self.value
        if isinstance(v, (float, np.floating)) and not isinstance(v, bool):
            if math.isinf(v) and v > 0:
                return "never"
            if math.isnan(v):
                return "undefined"
        return self.status

    def formatted(self) -> str:
        """The value as the table shows it (median, range and count over runs where several)."""
        if not self.available:
            return "n/a"
        return _format_value(self.value, self.per_run)


@dataclasses.dataclass(frozen=True)
class Verdict:
    """Whether the run is consistent with one theory.

    Attributes
    ----------
    theory : str
    verdict : str
        ``"consistent"``, ``"inconsistent"`` or ``"cannot tell"``.
    quantity : str
        ID of the deciding quantity (:data:`QUANTITY_IDS`), or ``""`` when nothing decided.
    value : float or None
        The deciding number (``None`` for "cannot tell" without one).
    band : str
        What the theory allows for that number.
    spec_id : str
        The spec result the band comes from.
    reason : str
        One sentence: why this verdict.
    """

    theory: str
    verdict: str
    quantity: str
    value: float | None
    band: str
    spec_id: str
    reason: str

    def line(self) -> str:
        """One line for the table."""
        num = "" if self.value is None else f"{self.quantity} = {_fmt_num(self.value)}; "
        band = f"band {self.band}; " if self.band and self.value is not None else ""
        return f"{self.verdict}: {num}{band}{self.reason} [{self.spec_id}]"


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


def _json_number(x: Any) -> Any:
    """A JSON value: bools stay bools, finite numbers are numbers, inf / nan / None are null."""
    if x is None:
        return None
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, float, np.integer, np.floating)):
        x = float(x)
        return x if math.isfinite(x) else None
    return x


def _json_state(x: Any) -> str:
    if isinstance(x, (float, np.floating)) and not isinstance(x, bool):
        if math.isinf(x):
            return "never" if x > 0 else "-inf"
        if math.isnan(x):
            return "undefined"
    return "ok"


# ============================================================================================ result


@dataclasses.dataclass(frozen=True, eq=False)
class Comparison:
    """The answer of :func:`compare_run`: entries per theory, a verdict per theory, the run, the clocks to draw.

    Attributes
    ----------
    entries : tuple of Entry
    run : RunData
    clocks : dict of str -> float
        Named clock steps (medians over the runs that reached them) drawn by :meth:`plot`; ``inf`` =
        never reached, ``nan`` = undefined (listed in the figure, not drawn).
    verdicts : tuple of Verdict
        One per theory, in the order of :data:`THEORIES`.
    """

    entries: tuple[Entry, ...]
    run: RunData
    clocks: Mapping[str, float]
    verdicts: tuple[Verdict, ...] = ()

    def __getitem__(self, key: str) -> Entry:
        for e in self.entries:
            if e.id == key or e.quantity == key:
                return e
        raise KeyError(f"no entry {key!r}; IDs: {', '.join(e.id for e in self.entries)}")

    def value(self, key: str) -> Any:
        """The value of the entry with this ID (``"t_test"``) or quantity text (``None`` if it is n/a)."""
        return self[key].value

    def theory(self, name: str) -> list[Entry]:
        """The entries of one theory."""
        return [e for e in self.entries if e.theory == name]

    def verdict(self, theory: str) -> Verdict:
        """The verdict of one theory."""
        for v in self.verdicts:
            if v.theory == theory:
                return v
        raise KeyError(f"no verdict for {theory!r}; theories: {', '.join(THEORIES)}")

    def header(self) -> str:
        """One line describing the run."""
        r = self.run
        s = r.steps
        return (f"run: {r.source}; {r.n_runs} run(s), {s.size} records, steps {_fmt_num(s[0])}..{_fmt_num(s[-1])}"
                + (f"; p={r.p}, {r.operation}" if r.p is not None else ""))

    def spec_ids(self) -> list[str]:
        """Spec IDs of every result the comparison used (its available entries and its decided verdicts)."""
        ids = [e.spec_id for e in self.entries if e.available and e.spec_id]
        ids += [v.spec_id for v in self.verdicts if v.verdict != "cannot tell" and v.spec_id]
        return list(dict.fromkeys(ids))

    def cite(self, format: str = "bibtex") -> str:  # noqa: A002 - public keyword, as grokclocks.cite
        """BibTeX (or one text line per paper) of every result this comparison used (:meth:`spec_ids`)."""
        from .citations import cite_many

        return cite_many(self.spec_ids(), format=format)

    def table(self, markdown: bool = False) -> str:
        """The comparison as a text table (``markdown=False``) or a Markdown table.

        Columns: theory, ID, quantity, value (median over runs; ``[min, max] (k/n)`` = range over the runs
        that reached it and how many did), spec ID, status (``measured`` / ``predicted`` / ``n/a: reason``);
        then the notes, how the input was aligned, and one verdict line per theory.
        """
        head = ["theory", "id", "quantity", "value", "spec ID", "status", "note"]
        body = [[e.theory, e.id, e.quantity, e.formatted(), e.spec_id, e.status, e.note] for e in self.entries]
        verdicts = [(v.theory, v.line()) for v in self.verdicts]
        if markdown:
            out = [self.header(), ""]
            out += [f"* {n}" for n in self.run.input_notes]
            out += ["", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
            out += ["| " + " | ".join(c.replace("|", "\\|") for c in b) + " |" for b in body]
            if verdicts:
                out += ["", "| theory | verdict |", "|---|---|"]
                out += [f"| {t} | {line.replace('|', chr(92) + '|')} |" for t, line in verdicts]
            return "\n".join(out)
        cols = head[:6]
        widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(cols)]

        def line(cells: Sequence[str]) -> str:
            return "  ".join(c.ljust(widths[i]) for i, c in enumerate(cells)).rstrip()

        out = [self.header()]
        out += [f"  {n}" for n in self.run.input_notes]
        out += [line(cols), line(["-" * w for w in widths])]
        for b in body:
            out.append(line(b[:6]))
        notes = [(e.id, e.note) for e in self.entries if e.note]
        if notes:
            out.append("")
            out.append("notes:")
            out += [f"  {q}: {n}" for q, n in notes]
        if verdicts:
            out.append("")
            out.append("verdicts:")
            w = max(len(t) for t, _ in verdicts)
            out += [f"  {t.ljust(w)}  {text}" for t, text in verdicts]
        return "\n".join(out)

    def __str__(self) -> str:
        return self.table()

    def as_dicts(self) -> list[dict[str, Any]]:
        """The entries as JSON-ready dicts.

        ``value`` is a number, a bool or ``null``; ``state`` says which: ``"measured"`` / ``"predicted"``
        (a value), ``"never"`` (inf: no run reached it; ``value`` is ``null``), ``"undefined"`` (nan) or
        ``"n/a"`` (the reason is in ``status``).  ``per_run`` holds numbers, bools or ``null`` with
        ``per_run_state`` (``"ok"``, ``"never"``, ``"undefined"``) beside it.
        """
        return [dict(id=e.id, theory=e.theory, quantity=e.quantity, value=_json_number(e.value), state=e.state,
                     formatted=e.formatted(), status=e.status, spec_id=e.spec_id, note=e.note,
                     per_run=[_json_number(v) for v in e.per_run], per_run_state=[_json_state(v) for v in e.per_run])
                for e in self.entries]

    def as_json(self) -> dict[str, Any]:
        """Header, input notes, entries (:meth:`as_dicts`) and verdicts as one JSON-ready dict."""
        return {"run": self.header(), "input": list(self.run.input_notes), "entries": self.as_dicts(),
                "verdicts": [dict(theory=v.theory, verdict=v.verdict, quantity=v.quantity,
                                  value=_json_number(v.value), band=v.band, spec_id=v.spec_id, reason=v.reason)
                             for v in self.verdicts]}

    def to_dataframe(self) -> Any:
        """The entries as a pandas DataFrame indexed by ID (columns of :meth:`as_dicts`; ``value`` keeps inf/nan).

        Needs pandas (``pip install "grokclocks[logs]"``).
        """
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError('Comparison.to_dataframe needs pandas: pip install "grokclocks[logs]"') from exc
        rows = []
        for e, d in zip(self.entries, self.as_dicts()):
            v = e.value
            d["value"] = float(v) if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(
                v, (bool, np.bool_)) else v
            rows.append(d)
        return pd.DataFrame(rows).set_index("id")

    def plot(self, path: str | os.PathLike | None = None, *, title: str | None = None) -> Any:
        """One figure of the run: accuracy (top) and loss (bottom) vs step, log x, every clock a labelled line.

        Each run (seed) has its own colour (train solid, test dashed, each series on the records where it
        was logged); clocks are medians over the runs that reached them, drawn as grey dotted lines.  Step 0
        is not drawable on a log axis and is left out.  Needs matplotlib (``pip install grokclocks[plots]``).

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
        palette = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink",
                   "tab:olive", "tab:cyan", "tab:gray"]
        names = r.run_names or tuple(f"run {i}" for i in range(r.n_runs))
        drew_loss = False
        for which, ls in (("train", "-"), ("test", "--")):
            for kind, ax in (("acc", ax_acc), ("loss", ax_loss)):
                a = getattr(r, f"{which}_{kind}")
                if a is None:
                    continue
                drew_loss |= kind == "loss"
                for i in range(a.shape[0]):
                    t, y = r.logged(f"{which}_{kind}", i)
                    keep = t > 0
                    y = np.maximum(y[keep], 1e-300) if kind == "loss" else y[keep]
                    label = f"{which}" + (f", {names[i]}" if r.n_runs > 1 else f" {'accuracy' if kind == 'acc' else 'loss'}")
                    ax.plot(t[keep], y, color=palette[i % len(palette)], ls=ls, lw=1.0, alpha=0.85, label=label)
        ax_acc.set_ylabel("accuracy")
        ax_acc.set_ylim(-0.02, 1.02)
        ax_loss.set_ylabel("loss")
        if drew_loss:
            ax_loss.set_yscale("log")
        else:
            ax_loss.text(0.5, 0.5, "no loss logged", transform=ax_loss.transAxes, ha="center", va="center")
        ax_loss.set_xlabel("step")
        ax_acc.set_xscale("log")
        x = r.steps[r.steps > 0]
        lo, hi = (x.min(), x.max()) if x.size else (1.0, 10.0)
        greys = ["0.15", "0.35", "0.55"]
        for k, (name, t) in enumerate(sorted(self.clocks.items(), key=lambda kv: kv[1])):
            if not (math.isfinite(t) and t > 0):
                continue
            c = greys[k % len(greys)]
            for ax in (ax_acc, ax_loss):
                ax.axvline(t, color=c, ls=":", lw=1.2)
            ax_acc.text(t, 1.0 - 0.08 * (k % 6), f" {name} = {_fmt_num(t)}", color=c, fontsize=7,
                        rotation=0, va="top", ha="left" if t < math.sqrt(lo * hi) * 3 else "right")
        missing = [n for n, t in self.clocks.items() if not (math.isfinite(t) and t > 0)]
        if missing:
            ax_acc.text(0.99, 0.02, "not reached: " + ", ".join(missing), transform=ax_acc.transAxes, fontsize=7,
                        ha="right", va="bottom")
        ax_acc.legend(loc="center left", fontsize=7, ncol=1 if r.n_runs <= 3 else 2)
        if drew_loss:
            ax_loss.legend(loc="lower left", fontsize=7, ncol=1 if r.n_runs <= 3 else 2)
        fig.suptitle(title if title is not None else r.source, fontsize=9)
        if path is not None:
            fig.savefig(path, dpi=120)
        return fig


# ============================================================================================ input


def _series2d(x: Any, name: str, n_rec: int) -> np.ndarray:
    """([n_runs,] n_records) float64; NaN = not logged, inf rejected, every run logged at least once."""
    if isinstance(x, (str, bytes)):
        raise DomainError(f"{name} must be an array of numbers (got {_logs._short(x)})")
    try:
        a = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise DomainError(f"{name} must be an array of numbers (got {_logs._short(x)})") from None
    if a.ndim == 1:
        a = a[None]
    if a.ndim != 2 or a.shape[1] != n_rec:
        raise DomainError(f"{name} must have shape (n_records,) or (n_runs, n_records) with n_records={n_rec} "
                          f"(got {np.shape(x)})")
    if np.isinf(a).any():
        run, rec = np.argwhere(np.isinf(a))[0]
        raise DomainError(f"{name} must be finite (got {a[run, rec]} at record {rec}"
                          + (f" of run {run}" if a.shape[0] > 1 else "") + "; NaN marks a record where it was not logged)")
    empty = np.isnan(a).all(axis=1)
    if empty.any():
        raise DomainError(f"{name} holds no value" + (f" in run {int(np.argmax(empty))}" if a.shape[0] > 1 else "")
                          + " (every record NaN)")
    return a


def _snapshot_steps(x: Any, name: str, n_snap: int, steps: np.ndarray, what: str) -> np.ndarray:
    if x is None:
        if n_snap != steps.size:
            raise DomainError(f"{what} has {n_snap} snapshots but steps has {steps.size} records; give their "
                              f"steps as {name}=")
        return steps
    t = V.as_float_array(x, name)
    if t.ndim != 1 or t.size != n_snap:
        raise DomainError(f"{name} must be 1-D with one step per snapshot ({n_snap}) (got shape {t.shape})")
    if np.any(np.diff(t) <= 0):
        i = int(np.argmax(np.diff(t) <= 0)) + 1
        raise DomainError(f"{name} must be strictly increasing (entry {i} = {t[i]:g} after {t[i - 1]:g})")
    return t


def _cadence(t: np.ndarray) -> str:
    if t.size < 2:
        return f"1 record (step {_fmt_num(t[0])})"
    d = np.diff(t)
    every = f"every {_fmt_num(d[0])}" if np.all(d == d[0]) else f"spacing {_fmt_num(d.min())}..{_fmt_num(d.max())}"
    return f"{t.size} records, {every}, steps {_fmt_num(t[0])}..{_fmt_num(t[-1])}"


def _alignment_notes(t: np.ndarray, ser: Mapping[str, np.ndarray | None], emb_steps: np.ndarray | None) -> list[str]:
    given = {k: a for k, a in ser.items() if a is not None}
    full = [k for k, a in given.items() if not np.isnan(a).any()]
    notes = []
    if len(full) == len(given) and (emb_steps is None or emb_steps is t):
        return notes
    notes.append(f"aligned on the union of the series' steps ({t.size} records); each clock is read on its own "
                 "series' records, nothing is interpolated:")
    for k, a in given.items():
        per = [_cadence(t[~np.isnan(row)]) for row in a]
        desc = per[0] if len(set(per)) == 1 else f"{per[0]} (run 0; runs differ)"
        notes.append(f"  {k}: {desc}")
    if emb_steps is not None and emb_steps is not t:
        notes.append(f"  embeddings: {_cadence(emb_steps)}")
    return notes


def run_data(*, steps: Any, train_acc: Any = None, test_acc: Any = None, train_loss: Any = None,
             test_loss: Any = None, weight_norm: Any = None, embeddings: Any = None, weights: Any = None,
             gap: Any = None, train_mask: Any = None, p: Any = None, operation: str = "add", b_offset: Any = 0,
             lam: Any = None, n_train: Any = None, lam_sweep: Any = None, train_level: float = _task.TRAIN_LEVEL,
             test_level: float = _task.TEST_LEVEL, source: str = "arrays", embedding_steps: Any = None,
             weights_steps: Any = None, run_names: Sequence[str] = (), input_notes: Sequence[str] = ()) -> RunData:
    """Validate user arrays into a :class:`RunData` (every argument as in the module docstring).

    Parameters
    ----------
    steps : 1-D strictly increasing finite array
    train_acc, test_acc : arrays ([n_runs,] n_records) in [0, 1] (NaN = not logged); at least one is required
    train_loss, test_loss, weight_norm : arrays ([n_runs,] n_records), >= 0 (NaN = not logged)
    embeddings : array ([n_runs,] n_snapshots, n_tokens, d), optional
    embedding_steps : 1-D array (n_snapshots,), optional (default ``steps``)
    weights : array ([n_runs,] n_snapshots, ...), optional (flattened per record)
    weights_steps : 1-D array (n_snapshots,), optional (default ``steps``)
    gap : array ([n_runs,] n_epochs), optional (NaN allowed: undefined rows)
    train_mask : any form of :func:`grokclocks.task.as_mask_stack`, optional
    p : int >= 2, optional (taken from ``train_mask`` if absent)
    operation : str
        Task of :func:`grokclocks.coverage.label_table`.
    b_offset : int >= 0
    lam : float > 0, optional; n_train : int or ([n_runs],) ints, optional
    lam_sweep : (lams, delays), optional
        Grokking delays measured at >= 3 aspect ratios (for the ``levi:appG`` fit).
    train_level, test_level : float in (0, 1] (defaults :data:`grokclocks.task.TRAIN_LEVEL`, ``TEST_LEVEL``)
    source : str
    run_names : sequence of str, optional (one per run)
    input_notes : sequence of str, optional (how the input was read; the alignment is added)

    Returns
    -------
    RunData

    Raises
    ------
    DomainError
        Wrong shapes, inf values, a series with no value, accuracies outside [0, 1], negative losses,
        inconsistent ``p``.
    """
    p, b_offset, lam, operation = (x.item() if isinstance(x, np.ndarray) and x.ndim == 0 else x
                                   for x in (p, b_offset, lam, operation))
    t = V.as_float_array(steps, "steps")
    if t.ndim != 1 or t.size < 2:
        raise DomainError(f"steps must be 1-D with at least 2 records (got shape {t.shape})")
    if np.any(np.diff(t) <= 0):
        i = int(np.argmax(np.diff(t) <= 0)) + 1
        raise DomainError(f"steps must be strictly increasing (record {i} = {t[i]:g} after {t[i - 1]:g})")
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
        lo, hi = float(np.nanmin(a)), float(np.nanmax(a))
        if name.endswith("acc") and (lo < 0 or hi > 1):
            raise DomainError(f"{name} must lie in [0, 1] (got range [{lo:g}, {hi:g}])")
        if lo < 0:
            raise DomainError(f"{name} must be >= 0 (got {lo:g})")
        ser[name] = a
    n_runs = {a.shape[0] for a in ser.values() if a is not None}
    if len(n_runs) > 1:
        raise DomainError(f"the series disagree on the number of runs: {sorted(n_runs)}")
    nr = n_runs.pop()
    if p is not None:
        p = V.integer_at_least(p, "p", 2)
    mask = None
    if train_mask is not None:
        mask = _task.as_mask_stack(train_mask, p, name="train_mask")
        p = int(mask.shape[1])
        if mask.shape[0] == 1 and nr > 1:
            mask = np.broadcast_to(mask, (nr,) + mask.shape[1:])
        if mask.shape[0] != nr:
            raise DomainError(f"train_mask has {mask.shape[0]} runs, the series {nr}")
        if (~mask).all(axis=(1, 2)).any() or mask.all(axis=(1, 2)).any():
            raise DomainError("every train_mask needs at least one training and one test pair")
    emb = emb_t = None
    if embeddings is not None:
        emb = V.as_float_array(embeddings, "embeddings")
        if emb.ndim == 3:
            emb = emb[None]
        if emb.ndim != 4 or emb.shape[0] != nr:
            raise DomainError(f"embeddings must have shape ([n_runs,] n_snapshots, n_tokens, d) with n_runs={nr} "
                              f"(got {np.shape(embeddings)})")
        emb_t = _snapshot_steps(embedding_steps, "embedding_steps", emb.shape[1], t, "embeddings")
    wts = wts_t = None
    if weights is not None:
        wts = V.as_float_array(weights, "weights")
        n_snap = n if weights_steps is None else np.size(weights_steps)
        if nr == 1 and wts.shape[0] == n_snap:
            wts = wts[None]
        if wts.ndim < 2 or wts.shape[0] != nr:
            raise DomainError(f"weights must have shape ([n_runs,] n_snapshots, ...) with n_runs={nr} "
                              f"(got {np.shape(weights)})")
        wts_t = _snapshot_steps(weights_steps, "weights_steps", wts.shape[1], t, "weights")
        wts = wts.reshape(nr, wts.shape[1], -1)
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
    train_level = _level(train_level, "train_level")
    test_level = _level(test_level, "test_level")
    if not isinstance(operation, str):
        raise DomainError(f"operation must be a string (got {operation!r})")
    names = tuple(str(x) for x in run_names)
    if names and len(names) != nr:
        raise DomainError(f"run_names must have one name per run ({nr}) (got {len(names)})")
    notes = tuple(input_notes) + tuple(_alignment_notes(t, ser, emb_t))
    return RunData(steps=t, embeddings=emb, weights=wts, gap=g, train_mask=mask, p=p, operation=operation,
                   b_offset=b_offset, lam=lam, n_train=ntr, lam_sweep=sweep, train_level=train_level,
                   test_level=test_level, source=source, embedding_steps=emb_t, weights_steps=wts_t,
                   run_names=names, input_notes=notes, **ser)


def _level(x: Any, name: str) -> float:
    v = float(V.as_float_array(x, name))
    if not 0.0 < v <= 1.0:
        raise DomainError(f"{name} must be in (0, 1] (got {v!r})")
    return v


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
        kw["train_mask"] = _task.random_split_mask(int(p), split_seeds, frac=float(f)).reshape(len(seeds), -1)
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


def _is_engine_npz(path: Path) -> bool:
    if not path.is_file():
        return False
    try:
        with np.load(path, allow_pickle=False) as f:
            files = f.files
    except Exception:  # noqa: BLE001 - not an npz: the log readers say what it is
        return False
    return "times" in files and any(k.startswith("metric:") for k in files)


def _engine_file(p: Path, index: Any) -> RunData:
    with np.load(p, allow_pickle=False) as f:
        arrays = {k: f[k] for k in f.files}
    metrics = {k.split(":", 1)[1]: v for k, v in arrays.items() if k.startswith("metric:")}
    extras = {k.split(":", 1)[1]: v for k, v in arrays.items() if k.startswith("extra:")}
    js = p.with_suffix(".json")
    config = None
    if js.exists():
        obj = json.loads(js.read_text())
        config = obj.get("fields") if isinstance(obj, dict) else None
    kw, defaults = _engine_run(arrays["times"], metrics, extras, config, index, f"engine run {p.name}")
    return _finish(kw, defaults, {})


def _log_kwargs(log: _logs.RunLog) -> dict[str, Any]:
    kw = dict(log.arrays)
    for k in ("operation",):
        if k in kw:
            kw[k] = str(kw[k])
    for k in ("p", "b_offset"):
        if k in kw:
            kw[k] = int(np.asarray(kw[k]))
    if "lam" in kw:
        kw["lam"] = float(np.asarray(kw["lam"]))
    used = ", ".join(f"{s} <- {c!r}" for s, c in log.columns.items())
    notes = [f"read as {log.format}: {used}"] + list(log.notes)
    if log.ignored:
        notes.append(f"ignored columns: {_logs._short(list(log.ignored), 160)}")
    kw["source"] = log.source
    kw["input_notes"] = notes
    return kw


def _resolve_path(path: str | os.PathLike) -> Path:
    p = Path(path)
    if not p.exists() and p.with_name(p.name + ".npz").exists():
        p = p.with_name(p.name + ".npz")
    if not p.exists():
        raise DomainError(f"path must be an existing log file or run directory (got {str(path)!r})")
    return p


def load_run(path: Any, *, index: Any = None, columns: Mapping[str, str] | None = None,
             format: str | None = None) -> RunData:  # noqa: A002 - as grokclocks.logs.read_log
    """Read a run: an engine ``.npz`` (``Trajectory.save``), any log of :mod:`grokclocks.logs`, or several (seeds).

    An engine file has the keys ``times``, ``metric:<name>`` and ``extra:<name>`` and a ``.json`` config next
    to it (read as plain JSON: no JAX needed, except to rebuild a random split's training mask).  Every other
    file or directory goes to :func:`grokclocks.logs.read_log` (CSV, TSV, JSON lines / W&B, TensorBoard,
    Lightning ``metrics.csv``, Hugging Face ``trainer_state.json``, ``torch.save``, ``.npz``, ``.npy``).
    A list or tuple of paths is one run with one seed per file (:func:`grokclocks.logs.merge_seeds`).

    Parameters
    ----------
    path : path, or a sequence of paths (one per seed)
    index : tuple of int, optional
        Grid point of an engine sweep (``config.grid_axes``); required when the file holds a grid.
    columns : mapping, optional
        Series -> column name, overriding the name matching of :func:`grokclocks.logs.canonical_name`.
    format : str, optional
        Force a reader (:data:`grokclocks.logs.FORMATS`).

    Returns
    -------
    RunData

    Raises
    ------
    DomainError
        Missing file, a log that cannot be read (:class:`grokclocks.logs.LogError`: the file, the column,
        the row and its step), or invalid arrays.
    """
    if isinstance(path, (list, tuple)):
        if not path:
            raise DomainError("give at least one path")
        if len(path) == 1:
            return load_run(path[0], index=index, columns=columns, format=format)
        logs = []
        for q in path:
            p = _resolve_path(q)
            if _is_engine_npz(p):
                raise DomainError(f"{p.name} is an engine run (it holds its seeds already); pass it alone")
            logs.append(_logs.read_log(p, columns=columns, format=format))
        merged = _logs.merge_seeds(logs)
        kw = _log_kwargs(merged)
        kw["run_names"] = [_seed_name(Path(q), path) for q in path]
        names = ", ".join(kw["run_names"])
        kw["source"] = f"{len(path)} seeds: {names if len(names) <= 120 else names[:117] + '...'}"
        return run_data(**kw)
    p = _resolve_path(path)
    if format is None and _is_engine_npz(p):
        return _engine_file(p, index)
    return run_data(**_log_kwargs(_logs.read_log(p, columns=columns, format=format)))


def _seed_name(p: Path, all_paths: Sequence[Any]) -> str:
    """The shortest distinguishing name of a seed's file (``seed1/metrics.csv`` -> ``seed1``)."""
    names = [Path(q).name for q in all_paths]
    if len(set(names)) == len(names):
        return p.name
    return p.parent.name if len({Path(q).parent.name for q in all_paths}) == len(names) else str(p)


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


def _entry(theory: str, qid: str, quantity: str, per_run: Sequence[Any], status: str, spec_id: str,
           note: str = "") -> Entry:
    vals = tuple(per_run)
    if vals and all(isinstance(v, (bool, np.bool_)) for v in vals):
        vals = tuple(bool(v) for v in vals)
        value: Any = vals[0] if len(vals) == 1 else sum(vals) / len(vals)
    else:
        vals = tuple(float(v) for v in vals)
        value = _summary(vals)
    return Entry(theory, quantity, value, status, spec_id, note, vals, qid)


def _na(theory: str, qid: str, quantity: str, reason: str, spec_id: str, note: str = "") -> Entry:
    return Entry(theory, quantity, None, f"n/a: {reason}", spec_id, note, (), qid)


def _normalised_change(x: np.ndarray) -> np.ndarray | None:
    """``|S_j - S_end| / |S_0 - S_end|``: the normalisation of ``clocks:appF4-srank-stat``, for any statistic.

    (:func:`grokclocks.clocks.stable_rank_gap` applies it to stable ranks; this is the same ratio for a
    statistic that is not a stable rank.)  ``None`` if the statistic ends where it started.
    """
    den = abs(float(x[0]) - float(x[-1]))
    if not den > 0:
        return None
    return np.abs(x - x[-1]) / den


def _per_run(r: RunData, name: str, fn: Any) -> np.ndarray:
    """``fn(steps, values)`` of one series, run by run, on the records where it was logged."""
    return np.array([fn(*r.logged(name, i)) for i in range(r.n_runs)], dtype=float)


def _clock_entries(r: RunData, eps_cls: float, delta: float, window: int, n_freqs: int,
                   out: list[Entry], clocks: dict[str, float]) -> dict[str, np.ndarray]:
    """Classifier, accuracy and representation clocks (spec ``clocks``); returns per-run clocks for later use."""
    n = r.n_runs
    res: dict[str, np.ndarray] = {}
    lv_tr, lv_te = _fmt_num(r.train_level), _fmt_num(r.test_level)
    if r.train_acc is not None:
        tt = _per_run(r, "train_acc", lambda t, a: _clocks.accuracy_clock(t, a, target=r.train_level))
        res["t_train"] = tt
        out.append(_entry("clocks", "t_train", f"t_train (train acc >= {lv_tr})", tt, "measured",
                          "clocks:appF4-acc-clock", "zero-one clock t_01 (first record; 'never' = not within the run)"))
        clocks["t_train"] = _summary(tt)
    else:
        out.append(_na("clocks", "t_train", f"t_train (train acc >= {lv_tr})", "no train accuracy logged",
                       "clocks:appF4-acc-clock"))
    if r.test_acc is not None:
        te = _per_run(r, "test_acc", lambda t, a: _clocks.first_hitting_time(t, a, r.test_level, direction="above"))
        res["t_test"] = te
        out.append(_entry("clocks", "t_test", f"t_test (test acc >= {lv_te})", te, "measured", "kramers:milestones",
                          "generalisation clock (first record at the level)"))
        clocks["t_test"] = _summary(te)
    else:
        out.append(_na("clocks", "t_test", f"t_test (test acc >= {lv_te})", "no test accuracy logged",
                       "kramers:milestones"))
    q = f"t_cls(eps={_fmt_num(eps_cls)})"
    if r.train_loss is not None:
        tc = _per_run(r, "train_loss", lambda t, L: _clocks.classifier_clock(t, L, eps_cls))
        tcw = _per_run(r, "train_loss", lambda t, L: _clocks.classifier_clock(t, L, eps_cls, window=window))
        res["t_cls"] = tc
        out.append(_entry("clocks", "t_cls", q, tc, "measured", "clocks:appF4-cls-estimator",
                          "first record with training loss <= eps (classifier clock)"))
        out.append(_entry("clocks", "t_cls_sustained", f"t_cls(eps={_fmt_num(eps_cls)}, window {window})", tcw,
                          "measured", "clocks:appF4-cls-estimator", f"sustained for {window} logged records"))
        clocks["t_cls"] = _summary(tc)
    else:
        out.append(_na("clocks", "t_cls", q, "no training loss logged", "clocks:appF4-cls-estimator"))
    # structural statistics -> representation clocks, each on its own records
    stats_: dict[str, tuple[np.ndarray, np.ndarray, str, str]] = {}
    if r.embeddings is not None and r.p is not None and r.embeddings.shape[2] >= r.p:
        E = r.embeddings[:, :, : r.p, :]  # operand tokens 0..p-1 (shared layout)
        try:
            fe = np.empty(E.shape[:2])
            for i in range(n):
                e_final = _clocks.fourier_energies(E[i, -1], r.p)
                key = 1 + np.argsort(-e_final[1:], kind="stable")[: max(1, min(n_freqs, e_final.size - 1))]
                fe[i] = [_clocks.fourier_energy_outside(E[i, j], r.p, freqs=key) for j in range(E.shape[1])]
            stats_["Fourier energy outside"] = (fe, r.embedding_steps, "clocks:appF4-fourier",
                                                f"embedding energy outside its final top-{n_freqs} frequencies")
        except DomainError as exc:
            out.append(_na("clocks", "t_rep_fourier", "t_rep(Fourier energy outside)", str(exc), "clocks:appF4-fourier"))
        try:
            sr = _spectral.stable_rank(E)
            stats_["stable rank of embedding"] = (sr, r.embedding_steps, "clocks:appF4-srank-stat",
                                                  "srank(E) = |E|_F^2 / |E|_2^2")
        except DomainError as exc:
            out.append(_na("clocks", "t_rep_srank", "t_rep(stable rank of embedding)", str(exc),
                           "clocks:appF4-srank-stat"))
    if r.weight_norm is not None:
        stats_["weight norm"] = (r.weight_norm, r.steps, "clocks:appF4-persist", "global parameter norm")
    if r.test_acc is not None:
        ref = _per_run(r, "test_acc", lambda t, a: _rep_clock(t, a, delta, window))
        res["t_rep_test_acc"] = ref
    else:
        ref = np.full(n, math.nan)
    primary = None
    for name, (series, s_steps, sid, what) in stats_.items():
        key = _STAT_IDS[name]
        tr = np.array([_rep_clock(s_steps[~np.isnan(s)], s[~np.isnan(s)], delta, window,
                                  srank=name.startswith("stable rank")) for s in series])
        if np.isnan(tr).all():
            out.append(_na("clocks", f"t_rep_{key}", f"t_rep({name})", "the statistic ends where it started in every run",
                           sid, what))
            continue
        out.append(_entry("clocks", f"t_rep_{key}", f"t_rep({name})", tr, "measured", sid,
                          f"{what}; first record where |S - S_end| <= {_fmt_num(delta)} |S_0 - S_end| "
                          f"for {window} records"))
        grokked = np.isfinite(res.get("t_test", np.full(n, math.inf)))
        if grokked.any():
            lag = np.where(grokked, tr - ref, math.nan)
            out.append(_entry("clocks", f"lag_{key}", f"lag t_rep({name}) - t_rep(test acc)", lag, "measured",
                              "clocks:cor5.7", "same estimator on the test-accuracy curve; < 0 = the statistic "
                              "settled first"))
        else:
            out.append(_na("clocks", f"lag_{key}", f"lag t_rep({name}) - t_rep(test acc)",
                           "test accuracy never reached its level", "clocks:cor5.7"))
        if primary is None:
            primary = (name, tr)
    if primary is None:
        out.append(_na("clocks", "t_rep", "t_rep (representation clock)",
                       "needs a structural statistic: weight_norm or embeddings (+ p)", "clocks:eq2.2"))
    else:
        name, tr = primary
        res["t_rep"] = tr
        clocks[f"t_rep({name})"] = _summary(tr)
        if "t_cls" in res:
            tc = res["t_cls"]
            ok = np.isfinite(tc) & np.isfinite(tr)
            if ok.any():
                out.append(_entry("clocks", "cls_before_rep", f"t_cls < t_rep({name})",
                                  [bool(a < b) for a, b in zip(tc[ok], tr[ok])], "measured", "clocks:thm5.6",
                                  "the theory's ordering: classifier clock first"))
                ratio = [float(_clocks.separation_ratio(b, a)) if a > 0 else math.nan for a, b in zip(tc, tr)]
                out.append(_entry("clocks", "separation_ratio", f"separation ratio t_rep({name}) / t_cls", ratio,
                                  "measured", "clocks:appF4-sep-ratio", "descriptive; depends on units and thresholds"))
            else:
                out.append(_na("clocks", "cls_before_rep", f"t_cls < t_rep({name})", "a clock never fired",
                               "clocks:thm5.6"))
        else:
            out.append(_na("clocks", "cls_before_rep", f"t_cls < t_rep({name})", "no training loss logged",
                           "clocks:thm5.6"))
    q_ord = "t_train <= t_cls < t_test"
    if {"t_train", "t_cls", "t_test"} <= set(res):
        fired = np.isfinite(res["t_train"]) & np.isfinite(res["t_cls"]) & np.isfinite(res["t_test"])
        if fired.any():
            order = [bool(a <= b < c)
                     for a, b, c in zip(res["t_train"][fired], res["t_cls"][fired], res["t_test"][fired])]
            out.append(_entry("clocks", "clock_order", q_ord, order, "measured", "clocks:appB",
                              f"ordering of the modular-addition report, over the {int(fired.sum())} of {n} runs "
                              "where all three clocks fired"))
        else:
            out.append(_na("clocks", "clock_order", q_ord, "no run where all three clocks fired", "clocks:appB"))
    else:
        out.append(_na("clocks", "clock_order", q_ord, "needs train and test accuracy and the training loss",
                       "clocks:appB"))
    return res


def _rep_clock(t: np.ndarray, x: np.ndarray, delta: float, window: int, *, srank: bool = False) -> float:
    if x.size < 2:
        return math.nan
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
    q_lam = "lambda = d_in / N_train"
    if r.lam is not None:
        lam = r.lam
        out.append(Entry("levi", q_lam, lam, "measured", "levi:conv-data", "given by the user", (lam,), "lambda"))
    elif r.n_train is not None and r.p is not None:
        lams = [float(_linear.modular_lambda(n / r.p ** 2, r.p)) for n in r.n_train]
        lam = float(np.median(lams))
        out.append(_entry("levi", "lambda", q_lam, lams, "measured", "levi:appG",
                          "2p / N_train: one-hot pair inputs (App. G)"))
    else:
        out.append(_na("levi", "lambda", q_lam, "needs lam, or p with n_train or train_mask", "levi:appG"))
    q_dt = "Delta t = t_test - t_train"
    if "t_train" in res and "t_test" in res:
        dt = res["t_test"] - res["t_train"]
        res["delta_t"] = dt
        out.append(_entry("levi", "delta_t", q_dt, dt, "measured", "levi:grok-def",
                          "grokking delay in steps ('never': the test clock never fired)"))
    else:
        out.append(_na("levi", "delta_t", q_dt, "needs train and test accuracy", "levi:grok-def"))
    q = "Delta t, linear estimator"
    if levi_params:
        if lam is None:
            out.append(_na("levi", "delta_t_linear", q, "lambda unknown", "levi:grok-def"))
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
                out.append(_na("levi", "delta_t_linear", q, "neither accuracy reaches the level in the linear model",
                               "levi:grok-def", note))
            else:
                out.append(Entry("levi", q, pred, "predicted", "levi:grok-def", note, (pred,), "delta_t_linear"))
    else:
        out.append(_na("levi", "delta_t_linear", q, "needs the linear model's eps and eta0 (levi_params); the closed "
                       "form is for GD on a linear MSE teacher-student, which this run is not known to be",
                       "levi:grok-def"))
    q_star = "lambda* (fit Delta t = C (lambda* - lambda)^-2)"
    if r.lam_sweep is not None and r.lam_sweep[0].size >= 3 and np.unique(r.lam_sweep[0]).size >= 3:
        lams, dts = r.lam_sweep
        try:
            C, lam_star = _linear.fit_inverse_square(lams, dts)
        except (DomainError, RuntimeError, ValueError) as exc:
            out.append(_na("levi", "lambda_star", q_star, f"fit failed: {exc}", "levi:appG"))
        else:
            with np.errstate(divide="ignore", invalid="ignore"):
                fitted = C * (lam_star - lams) ** -2.0
                resid = float(np.max(np.abs(dts / fitted - 1.0)))
            res["appg_residual"] = np.array([resid])
            out.append(Entry("levi", q_star, float(lam_star), "measured", "levi:appG",
                             f"C = {_fmt_num(C)}; fitted to {lams.size} (lambda, Delta t) points; largest relative "
                             f"residual {resid:.3g}", (float(lam_star),), "lambda_star"))
            if lam is not None and lam != lam_star:
                pred = float(C * (lam_star - lam) ** -2)
                out.append(Entry("levi", "Delta t from the lambda* fit", pred, "predicted", "levi:appG",
                                 "in-sample: the fit used this run's delay", (pred,), "delta_t_fit"))
    else:
        out.append(_na("levi", "lambda_star", q_star,
                       "needs grokking delays at >= 3 training fractions (a train_frac sweep, or lam_sweep=)",
                       "levi:appG"))


def _kramers_entries(r: RunData, res: dict[str, np.ndarray], out: list[Entry]) -> None:
    if "t_train" not in res or "t_test" not in res:
        out.append(_na("kramers", "delay_ratio", "delay ratio t_grok / t_mem", "needs train and test accuracy",
                       "kramers:milestones"))
        return
    tm, tg = res["t_train"], res["t_test"]
    ok = np.isfinite(tm) & (tm > 0)
    ratio = np.where(ok, tg / np.where(ok, tm, 1.0), math.nan)  # inf: never generalised
    out.append(_entry("kramers", "delay_ratio", "delay ratio t_grok / t_mem", ratio, "measured", "kramers:milestones",
                      "t_mem = t_train, t_grok = t_test"))
    fin = np.isfinite(ratio) & (ratio > 0)
    q_bar = "barrier Delta F / T_eff = ln(t_grok / t_mem)"
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
        out.append(_entry("kramers", "barrier", q_bar, bars, "measured", "kramers:arrhenius",
                          "Arrhenius inversion with tau_0 = t_mem (an assumption; heuristic use)"
                          + ("; a ratio < 1 gives a negative barrier" if neg else "")))
    else:
        out.append(_na("kramers", "barrier", q_bar, "no run both memorised (t_mem > 0) and generalised",
                       "kramers:arrhenius"))
    wait = (tg - tm)[np.isfinite(tg) & np.isfinite(tm) & (tg > tm)]
    res["waits"] = wait
    q_cv, q_ks = "CV of Delta t over seeds (escape: 1)", "KS p-value, Delta t ~ exponential"
    cv = None
    if wait.size >= _MIN_SEEDS_CV:
        cv = float(np.std(wait, ddof=1) / np.mean(wait))
        out.append(Entry("kramers", q_cv, cv, "measured", "kramers:eq15",
                         f"{wait.size} grokked runs; an escape over a barrier has exponential waiting times, CV = 1",
                         (cv,), "cv_delta_t"))
    else:
        out.append(_na("kramers", "cv_delta_t", q_cv, f"needs >= {_MIN_SEEDS_CV} seeds that grok (have {wait.size})",
                       "kramers:eq15"))
    if wait.size >= _MIN_SEEDS_KS:
        gof = stats.goodness_of_fit(stats.expon, wait, known_params={"loc": 0.0}, statistic="ks",
                                    n_mc_samples=999, random_state=0)
        pv = float(gof.pvalue)
        res["ks_pvalue"] = np.array([pv])
        out.append(Entry("kramers", q_ks, pv, "measured", "kramers:eq15",
                         f"KS D = {gof.statistic:.3g}, mean fitted (Monte-Carlo p, 999 samples)", (pv,), "ks_pvalue"))
        looks = pv >= _KS_ALPHA
        out.append(Entry("kramers", "spread looks like an escape (KS p >= 0.05)", looks, "measured", "kramers:eq15",
                         f"CV {cv:.2f}, p {pv:.2g}; an activated escape has exponential first-passage times (CV = 1); "
                         + ("consistent with that" if looks else "this spread is too narrow/regular for one")
                         + " (spec kramers:arrhenius caveat iii)", (looks,), "escape_like"))
    else:
        out.append(_na("kramers", "ks_pvalue", q_ks, f"needs >= {_MIN_SEEDS_KS} seeds that grok (have {wait.size})",
                       "kramers:eq15"))


def _aligned(r: RunData, name: str, run: int, steps: np.ndarray) -> np.ndarray | None:
    """Series ``name`` of one run at exactly ``steps`` (None if it is not logged at every one of them)."""
    a = getattr(r, name)
    if a is None:
        return None
    idx = np.searchsorted(r.steps, steps)
    vals = a[run, idx]
    return None if np.isnan(vals).any() else vals


def _coverage_entries(r: RunData, res: dict[str, np.ndarray], out: list[Entry]) -> None:
    q = "test-accuracy ceiling Ceil(inf)"
    if r.p is None or r.train_mask is None:
        out.append(_na("coverage", "ceiling", q, "needs p and the training mask (train_mask=)", "uniformity:thm3.10"))
        return
    if r.test_acc is None:
        out.append(_na("coverage", "ceiling", q, "needs the test accuracy", "uniformity:thm3.10"))
        return
    try:
        labels = _coverage.label_table(r.p, r.operation)
    except DomainError as exc:
        out.append(_na("coverage", "ceiling", q, f"labels of operation {r.operation!r}: {exc}", "uniformity:thm3.10"))
        return
    med = None
    if r.embeddings is not None and r.embeddings.shape[2] >= r.p + r.b_offset and r.p >= 3:
        med = [_coverage.med_trajectory(E, r.p, r.b_offset, token_axis=0) for E in r.embeddings]
    runs, spear_na = [], ""
    for i in range(r.n_runs):
        t, acc = r.logged("test_acc", i)
        tl = _aligned(r, "test_loss", i, t)
        m = None
        if med is not None and tl is not None:
            if np.array_equal(r.embedding_steps, t):
                m = med[i]
            else:
                spear_na = "the embeddings and the test loss are not logged at the same records"
        runs.append(_coverage.analyse_run(
            acc, r.train_mask[i], labels, train_acc=_aligned(r, "train_acc", i, t), epochs=t,
            test_loss=None if m is None else tl, med=m, b_offset=r.b_offset))
    ceil = [d["ceiling"] for d in runs]
    note = (f"fraction of test pairs whose label occurs in training and whose tokens were trained "
            f"(torus, b_offset={r.b_offset})")
    if min(ceil) < r.test_level:
        note += f"; below the test level {_fmt_num(r.test_level)}, so t_test cannot fire"
    out.append(_entry("coverage", "ceiling", q, ceil, "predicted", "uniformity:thm3.10", note))
    mx = [d["max_test_acc"] for d in runs]
    out.append(_entry("coverage", "max_test_acc", "max test accuracy", mx, "measured", "uniformity:table1"))
    allow = []
    for i, c in enumerate(ceil):
        n_test = int((~r.train_mask[i]).sum())
        n_unc = round((1.0 - c) * n_test)
        q_ch = 1.0 / r.p
        allow.append((n_unc * q_ch + 3.0 * math.sqrt(n_unc * q_ch * (1.0 - q_ch))) / n_test)
    res["ceiling"], res["allowance"], res["max_test_acc"] = np.asarray(ceil), np.asarray(allow), np.asarray(mx)
    within = [bool(m <= c + a) for m, c, a in zip(mx, ceil, allow)]
    out.append(_entry("coverage", "below_ceiling", "test accuracy <= ceiling (+ chance allowance)", within,
                      "measured", "uniformity:thm3.10",
                      "allowance = chance hits 1/p on the uncovered test pairs + 3 binomial s.d. "
                      f"(median {_fmt_num(float(np.median(allow)))})"))
    radius = [math.nan if d["implied_radius"] is None else float(d["implied_radius"]) for d in runs]
    out.append(_entry("coverage", "implied_radius", "implied radius n of U-Acc", radius, "measured",
                      "uniformity:thm3.10",
                      "smallest torus radius whose ceiling reaches the best post-memorisation test accuracy"))
    if med is not None:
        out.append(_entry("coverage", "med_start", "MED at start", [m[0] for m in med], "measured", "uniformity:def4.2"))
        out.append(_entry("coverage", "med_end", "MED at end", [m[-1] for m in med], "measured", "uniformity:def4.2"))
        q_rho = "Spearman(MED, test loss), test acc > 0.2 window"
        if r.test_loss is None:
            pass
        elif spear_na:
            out.append(_na("coverage", "spearman_med", q_rho, spear_na, "uniformity:def4.2"))
        else:
            rho = [math.nan if d.get("spearman_grokking") is None else d["spearman_grokking"] for d in runs]
            if np.isfinite(rho).any():
                out.append(_entry("coverage", "spearman_med", q_rho, rho, "measured", "uniformity:def4.2",
                                  "from the first record after memorisation with test acc > 0.2 to the end; > 0 = MED "
                                  "falls with the test loss (spec V3, transformer p=97: > 0.5)"))
            else:
                out.append(_na("coverage", "spearman_med", q_rho, "test acc never above 0.2 after memorisation",
                               "uniformity:def4.2"))
    else:
        out.append(_na("coverage", "med", "MED (main embedding diff)", "needs token-embedding snapshots (embeddings=)",
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
        ws = r.weights_steps
        if not np.all(np.diff(ws) == 1):
            out.append(_na("repulsion", "lock_in", q, "weight snapshots are not at consecutive steps; the update Gram "
                           "(eq. 5) needs every step's update", "repulsion:slope-detector"))
            return
        if r.weights.shape[1] - 1 < gram_window:
            out.append(_na("repulsion", "lock_in", q, f"needs more than {gram_window} snapshots (window)",
                           "repulsion:rolling-gram"))
            return
        gaps = np.stack([_repulsion.eigengap(_repulsion.rolling_gram_eigenvalues(np.diff(w, axis=0), gram_window, 3))
                         for w in r.weights])
        src = f"sigma_2/sigma_3 of the rolling {gram_window}-update Gram"
        epoch0 = float(ws[0])
    else:
        out.append(_na("repulsion", "lock_in", q, "needs an eigengap series (gap=) or per-step weight snapshots "
                       "(weights=)", "repulsion:slope-detector"))
        return
    if gaps.shape[1] <= lag:
        out.append(_na("repulsion", "lock_in", q, f"gap series shorter than the lag ({lag})", "repulsion:slope-detector"))
        return
    fire = []
    for g in gaps:
        f, _ = _repulsion.slope_detector(g, lag=lag, threshold=threshold, t_min=t_min)
        fire.append(math.inf if f is None else epoch0 + f)
    res["lock_in"] = np.asarray(fire)
    res["gap_end"] = np.array([epoch0 + gaps.shape[1] - 1])
    out.append(_entry("repulsion", "lock_in", q, fire, "measured", "repulsion:slope-detector",
                      f"{src}; slope of log gap over {lag} epochs > {_fmt_num(threshold)}, t >= {t_min}"))
    clocks["lock-in"] = _summary(fire)
    if r.test_acc is not None:
        t50 = _per_run(r, "test_acc", lambda t, a: _clocks.first_hitting_time(t, a, 0.5, direction="above"))
        res["t_test_half"] = t50
        out.append(_entry("repulsion", "t_test_half", "test acc >= 0.5 (grokking epoch of the paper)", t50, "measured",
                          "repulsion:headline"))
        clocks["test 0.5"] = _summary(t50)


# ============================================================================================ verdicts


def _levi_verdict(r: RunData, res: Mapping[str, np.ndarray], entries: Sequence[Entry]) -> Verdict:
    by_id = {e.id: e for e in entries}
    pred = by_id.get("delta_t_linear")
    band = f"|Delta t / Delta t_linear - 1| <= {_LEVI_RTOL:g}"
    if pred is not None and pred.available and "delta_t" in res:
        dt = res["delta_t"]
        fin = dt[np.isfinite(dt)]
        if fin.size:
            ratio = float(np.median(fin)) / pred.value
            ok = abs(ratio - 1.0) <= _LEVI_RTOL
            return Verdict("levi", "consistent" if ok else "inconsistent", "delta_t / delta_t_linear", ratio, band,
                           "levi:grok-def", f"median measured Delta t {_fmt_num(float(np.median(fin)))} vs the linear "
                           f"estimator's {_fmt_num(pred.value)} (tolerance of the spec's d = 500 check)")
        end = float(r.steps[-1]) - float(np.nanmin(res["t_train"])) if np.isfinite(res["t_train"]).any() else 0.0
        if end > pred.value * (1 + _LEVI_RTOL):
            return Verdict("levi", "inconsistent", "delta_t", math.inf, band, "levi:grok-def",
                           f"the test clock never fired although the run lasted {_fmt_num(end)} steps after t_train, "
                           f"beyond the predicted Delta t {_fmt_num(pred.value)}")
        return Verdict("levi", "cannot tell", "", None, band, "levi:grok-def",
                       "the run ended before the predicted Delta t had passed")
    if "appg_residual" in res:
        resid = float(res["appg_residual"][0])
        ok = resid <= _APPG_RESIDUAL
        return Verdict("levi", "consistent" if ok else "inconsistent", "appg_residual", resid,
                       f"largest relative residual <= {_APPG_RESIDUAL:g}", "levi:appG",
                       f"Delta t = C (lambda* - lambda)^-2 fitted over {r.lam_sweep[0].size} training fractions")
    return Verdict("levi", "cannot tell", "", None, "", "levi:grok-def",
                   "the closed form is for GD on a linear MSE teacher-student (pass levi_params= if the run is one); "
                   "its App. G law needs Delta t at >= 3 training fractions (lam_sweep= or an engine train_frac sweep)")


def _clocks_verdict(r: RunData, res: Mapping[str, np.ndarray]) -> Verdict:
    band = "t_test / t_cls > 1 in every run"
    if "t_cls" not in res or "t_test" not in res:
        missing = "the training loss" if "t_cls" not in res else "the test accuracy"
        return Verdict("clocks", "cannot tell", "", None, band, "clocks:appB", f"{missing} is not logged")
    tc, te = res["t_cls"], res["t_test"]
    both = np.isfinite(tc) & np.isfinite(te) & (tc > 0)
    if not both.any():
        if not np.isfinite(te).any():
            why = "the test clock never fired"
        elif not np.isfinite(tc).any():
            why = "the training loss never fell to eps (a loss floor? try another eps_cls)"
        else:
            why = "no run where both clocks fired"
        return Verdict("clocks", "cannot tell", "", None, band, "clocks:appB", why)
    ratio = te[both] / tc[both]
    worst = float(ratio.min())
    ok = worst > 1.0
    return Verdict("clocks", "consistent" if ok else "inconsistent", "t_test / t_cls (min over runs)", worst, band,
                   "clocks:appB", f"the classifier clock fired {'before' if ok else 'at or after'} generalisation "
                   f"in {'all' if ok else 'not all'} {int(both.sum())} run(s) where both fired "
                   "(the theorem, clocks:thm5.6, puts t_rep >> t_cls)")


def _kramers_verdict(r: RunData, res: Mapping[str, np.ndarray]) -> Verdict:
    band = f"KS p >= {_KS_ALPHA:g} (exponential waiting times, CV ~ 1)"
    if "waits" not in res:
        return Verdict("kramers", "cannot tell", "", None, band, "kramers:eq15", "needs train and test accuracy")
    n = int(res["waits"].size)
    if "ks_pvalue" not in res:
        return Verdict("kramers", "cannot tell", "", None, band, "kramers:eq15",
                       f"the escape statistics need >= {_MIN_SEEDS_KS} seeds that grok (have {n}); a delay ratio "
                       "alone inverts to a barrier only under tau_0 = t_mem (heuristic)")
    pv = float(res["ks_pvalue"][0])
    ok = pv >= _KS_ALPHA
    return Verdict("kramers", "consistent" if ok else "inconsistent", "ks_pvalue", pv, band, "kramers:eq15",
                   f"Delta t over {n} seeds " + ("is compatible with" if ok else "rejects") +
                   " the exponential law of an activated escape" + ("" if ok else " (too regular; erratum E13)"))


def _coverage_verdict(r: RunData, res: Mapping[str, np.ndarray]) -> Verdict:
    band = "max test acc <= Ceil(inf) + chance allowance"
    if "ceiling" not in res:
        return Verdict("coverage", "cannot tell", "", None, band, "uniformity:thm3.10",
                       "needs the training split (train_mask=, p=) and the test accuracy")
    ceil, allow, mx = res["ceiling"], res["allowance"], res["max_test_acc"]
    testable = ceil < 1.0
    if not testable.any():
        return Verdict("coverage", "cannot tell", "", None, band, "uniformity:thm3.10",
                       "Ceil(inf) = 1: the split covers every label and token, so every accuracy is allowed")
    excess = (mx - ceil - allow)[testable]
    worst = int(np.argmax(excess))
    ok = bool(excess.max() <= 0)
    i = np.flatnonzero(testable)[worst]
    return Verdict("coverage", "consistent" if ok else "inconsistent", "max_test_acc", float(mx[i]),
                   f"<= {_fmt_num(float(ceil[i]))} + {_fmt_num(float(allow[i]))}", "uniformity:thm3.10",
                   f"worst of {int(testable.sum())} run(s) with Ceil(inf) < 1; "
                   + ("below the ceiling" if ok else "above the ceiling: the split cannot teach those pairs"))


def _repulsion_verdict(r: RunData, res: Mapping[str, np.ndarray], t_min: int, lag: int) -> Verdict:
    band = "fires exactly in the runs that reach test acc 0.5"
    if "lock_in" not in res:
        return Verdict("repulsion", "cannot tell", "", None, band, "repulsion:headline",
                       "needs an eigengap series (gap=) or per-step weight snapshots (weights=)")
    if "t_test_half" not in res:
        return Verdict("repulsion", "cannot tell", "", None, band, "repulsion:headline", "no test accuracy logged")
    if float(res["gap_end"][0]) < t_min:
        return Verdict("repulsion", "cannot tell", "", None, band, "repulsion:headline",
                       f"the gap series ends before t_min = {t_min}, where the detector may first fire")
    fired = np.isfinite(res["lock_in"])
    grokked = np.isfinite(res["t_test_half"])
    disagree = int(np.sum(fired != grokked))
    ok = disagree == 0
    return Verdict("repulsion", "consistent" if ok else "inconsistent", "runs where fire != grok", float(disagree),
                   "0", "repulsion:headline",
                   f"fired in {int(fired.sum())}/{fired.size}, reached test acc 0.5 in {int(grokked.sum())}/"
                   f"{grokked.size}; the detector constants are calibrated at M = 71, K = 2048 "
                   "(repulsion:reduced-replication: early or missing fires at smaller sizes)")


# ============================================================================================ API

_USED_IDS = ("levi:conv-data", "levi:appG", "levi:grok-def", "clocks:appF4-acc-clock", "kramers:milestones",
             "clocks:appF4-cls-estimator", "clocks:appF4-fourier", "clocks:appF4-srank-stat", "clocks:appF4-persist",
             "clocks:eq2.2", "clocks:cor5.7", "clocks:thm5.6", "clocks:appF4-sep-ratio", "clocks:appB",
             "kramers:arrhenius", "kramers:eq15", "uniformity:thm3.10", "uniformity:table1", "uniformity:def4.2",
             "repulsion:slope-detector", "repulsion:rolling-gram", "repulsion:headline")


def _as_rundata(run: Any, index: Any, columns: Mapping[str, str] | None, overrides: dict[str, Any]) -> RunData:
    if isinstance(run, (str, os.PathLike)) or (isinstance(run, (list, tuple)) and run
                                                and all(isinstance(x, (str, os.PathLike)) for x in run)):
        run = load_run(run, index=index, columns=columns)
    if run is None:
        if overrides.get("steps") is None:
            raise DomainError("give a run or at least steps= and an accuracy")
        return _finish({}, {"source": "arrays"}, overrides)
    if isinstance(run, RunData):
        given = {k: v for k, v in overrides.items() if v is not None}
        if not given:
            return run
        base = {f.name: getattr(run, f.name) for f in dataclasses.fields(run)}
        base["input_notes"] = tuple(n for n in run.input_notes if not n.startswith(("aligned", "  ")))
        return run_data(**{**base, **given})
    if hasattr(run, "times") and hasattr(run, "metrics"):
        kw, defaults = _engine_run(run.times, run.metrics, getattr(run, "extras", {}) or {},
                                   getattr(run, "config", None), index,
                                   f"Trajectory ({type(getattr(run, 'config', None)).__name__})")
        return _finish(kw, defaults, overrides)
    if isinstance(run, Mapping) or (hasattr(run, "to_dict") and hasattr(run, "columns")) or (
            isinstance(run, (list, tuple)) and run and all(isinstance(x, Mapping) for x in run)):
        kw = _log_kwargs(_logs.read_log(run, columns=columns))
        return _finish(kw, {}, overrides)
    raise DomainError(f"run must be a Trajectory, RunData, log path (or a list of them, one per seed), DataFrame, "
                      f"mapping or None (got {type(run).__name__})")


@cites(*_USED_IDS)
def compare_run(run: Any = None, *, index: Any = None, columns: Mapping[str, str] | None = None, steps: Any = None,
                train_acc: Any = None, test_acc: Any = None, train_loss: Any = None, test_loss: Any = None,
                weight_norm: Any = None, embeddings: Any = None, embedding_steps: Any = None, weights: Any = None,
                weights_steps: Any = None, gap: Any = None, train_mask: Any = None, p: Any = None,
                operation: str | None = None, b_offset: Any = None, lam: Any = None, n_train: Any = None,
                lam_sweep: Any = None, train_level: float | None = None, test_level: float | None = None,
                eps_cls: float = 1e-3, delta: float = 0.1, window: int = 5, n_freqs: int = 4,
                levi_params: Mapping[str, Any] | None = None, gram_window: int = 20, slope_lag: int = 25,
                slope_threshold: float = 0.04, slope_t_min: int = 100) -> Comparison:
    """Compare a training run with what each theory predicts or measures, and give a verdict per theory.

    Parameters
    ----------
    run : Trajectory, RunData, path, list of paths, DataFrame, mapping, or None
        The run: a :class:`grokclocks.sim.train.Trajectory` (e.g. from
        :func:`~grokclocks.sim.modular.train_modular`; metrics ``acc_train``, ``acc_test``, ``loss_train``,
        ``loss_test``, ``param_norm``, and hooks named ``E`` / ``W_E`` (embeddings), ``weights``, ``gap``),
        a :class:`RunData`, a log file or run directory in any format of :mod:`grokclocks.logs`
        (:func:`load_run`), a list of them (one seed each), a pandas DataFrame, a mapping of arrays or lists
        (column names matched by :func:`grokclocks.logs.canonical_name`; unknown keys are ignored with a
        warning).  ``None``: the keyword arrays alone.
    index : tuple of int, optional
        Grid point of an engine sweep (required if the run holds a grid).
    columns : mapping, optional
        Series -> column name of a log (``{"test_acc": "val/accuracy"}``), overriding the name matching.
    steps, train_acc, test_acc, train_loss, test_loss, weight_norm, embeddings, embedding_steps, weights, weights_steps, gap : array_like, optional
        Arrays as in :func:`run_data` (``NaN`` = not logged at that record).
    train_mask, p, operation, b_offset, lam, n_train, lam_sweep : optional
        Arrays and settings as in :func:`run_data`; given with ``run`` they override its values (e.g.
        ``train_mask=`` for an engine run trained on an explicit mask, which the trajectory does not store).
        ``train_mask`` takes any form of :func:`grokclocks.task.as_mask`.
    train_level, test_level : float in (0, 1], optional
        Accuracy levels of ``t_train`` and ``t_test`` (default :data:`grokclocks.task.TRAIN_LEVEL` = 1.0 and
        :data:`~grokclocks.task.TEST_LEVEL` = 0.99; ``run_modular_addition`` runs use their ``threshold``).
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
        ``.table()`` / ``.table(markdown=True)``, ``.plot(path)``, ``.value("t_test")``, ``.verdicts``,
        ``.as_json()``, ``.to_dataframe()``, ``.cite()``.

    Raises
    ------
    DomainError
        Invalid arrays (shapes, ranges, inf values), a log that cannot be read, or a grid without ``index``.

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

    Verdicts (:data:`VERDICT_RULES`; "consistent" only when the deciding number is inside the band):

    * ``levi`` (``levi:grok-def``) -- with ``levi_params``: measured median :math:`\\Delta t` over the linear
      estimator's, within 15 % (the spec's widest CPU tolerance for :math:`\\Delta t` at :math:`d=500`); with a
      :math:`\\lambda` sweep (``levi:appG``): the inverse-square fit's largest relative residual <= 15 % (the
      spec's GPU tolerance); otherwise cannot tell (a network is not the linear model).
    * ``clocks`` (``clocks:appB``) -- :math:`\\min_{\\rm runs} t_{\\rm test}/t_{\\rm cls} > 1`: the classifier clock
      fires before generalisation, over the runs where both fired.
    * ``kramers`` (``kramers:eq15``) -- with >= 5 seeds that grok, the KS p-value of the waiting times
      :math:`t_{\\rm test}-t_{\\rm train}` against an exponential law >= 0.05 (an activated escape; a true
      exponential sample is called inconsistent 5 % of the time).
    * ``coverage`` (``uniformity:thm3.10``) -- every run's max test accuracy <= Ceil(inf) + the chance allowance;
      a ceiling of 1 allows everything and gives "cannot tell".
    * ``repulsion`` (``repulsion:headline``) -- the detector fires in exactly the runs that reach test
      accuracy 0.5.

    Examples
    --------
    >>> import numpy as np
    >>> steps = np.arange(0, 3001, 25)
    >>> c = compare_run(steps=steps, train_acc=np.minimum(1, steps / 100), test_acc=np.full(steps.size, 0.4))
    >>> c.value("t_test")
    inf
    >>> c.verdict("clocks").verdict
    'cannot tell'
    """
    overrides = dict(steps=steps, train_acc=train_acc, test_acc=test_acc, train_loss=train_loss, test_loss=test_loss,
                     weight_norm=weight_norm, embeddings=embeddings, embedding_steps=embedding_steps, weights=weights,
                     weights_steps=weights_steps, gap=gap, train_mask=train_mask, p=p, operation=operation,
                     b_offset=b_offset, lam=lam, n_train=n_train, lam_sweep=lam_sweep, train_level=train_level,
                     test_level=test_level)
    rd = _as_rundata(run, index, columns, overrides)
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
        verdicts = (_levi_verdict(rd, res, entries), _clocks_verdict(rd, res), _kramers_verdict(rd, res),
                    _coverage_verdict(rd, res), _repulsion_verdict(rd, res, slope_t_min, slope_lag))
    return Comparison(tuple(entries), rd, dict(clock_marks), verdicts)
