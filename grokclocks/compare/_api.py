"""compare_run: one run against every theory."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from typing import Any

import numpy as np

from .. import _validate as V
from .. import logs as _logs
from .._validate import DomainError
from ..citations import cites
from ._records import Entry, RunData
from ._result import Comparison
from ._input import _engine_run, _finish, _log_kwargs, load_run, run_data
from ._theories import _clock_entries, _coverage_entries, _kramers_entries, _levi_entries, _repulsion_entries
from ._verdicts import _clocks_verdict, _coverage_verdict, _kramers_verdict, _levi_verdict, _repulsion_verdict

__all__ = ["compare_run"]


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
