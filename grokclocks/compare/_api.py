"""compare_run: one run against every theory."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .. import _validate as V
from ..citations import cites
from ..runs._load import as_run_data
from ._records import Entry
from ._result import Comparison
from ._theories import _clock_entries, _coverage_entries, _kramers_entries, _levi_entries, _repulsion_entries
from ._verdicts import _clocks_verdict, _coverage_verdict, _kramers_verdict, _levi_verdict, _repulsion_verdict

__all__ = ["compare_run"]


# ============================================================================================ API

_USED_IDS = ("levi:conv-data", "levi:appG", "levi:grok-def", "clocks:appF4-acc-clock", "kramers:milestones",
             "clocks:appF4-cls-estimator", "clocks:appF4-fourier", "clocks:appF4-srank-stat", "clocks:appF4-persist",
             "clocks:eq2.2", "clocks:cor5.7", "clocks:thm5.6", "clocks:appF4-sep-ratio", "clocks:appB",
             "kramers:arrhenius", "kramers:eq15", "uniformity:thm3.10", "uniformity:table1", "uniformity:def4.2",
             "repulsion:slope-detector", "repulsion:rolling-gram", "repulsion:headline")


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

    In short: `compare_run("metrics.csv").table()` reads a log in any common format (or a run folder, a
    list of seeds, an engine `Trajectory`) and shows, per theory, the clocks measured on the run next to
    the theory's prediction, with one verdict each.  Only `run` is needed; the keywords add what a log
    lacks (`embeddings` for the representation clocks, `train_mask` for the exact ceiling, `levi_params`
    for the linear estimator's delay) or override a level.  Notes says what each theory reads and how
    its verdict is decided.

    Parameters
    ----------
    run : Trajectory, RunData, str or os.PathLike, list of paths, DataFrame, mapping, or None
        The run: a `grokclocks.sim.train.Trajectory` (e.g. from `grokclocks.sim.modular.train_modular`;
        metrics `acc_train`, `acc_test`, `loss_train`, `loss_test`, `param_norm`, and hooks named `E` / `W_E`
        (embeddings), `weights`, `gap`), a `RunData`, a log file or run directory in any format of
        `grokclocks.logs` (read by `load_run` with its default limits), a list of them (one seed each), a
        pandas DataFrame, or a mapping of arrays or lists (column names matched by
        `grokclocks.logs.canonical_name`; unknown keys are ignored with a warning).  Default `None`: the
        keyword arrays alone.
    index : tuple of int, optional
        The grid point of an engine sweep, one index per axis of the trajectory's `config.grid_axes`; required
        when the run holds a grid of more than one point, `None` (default) otherwise.
    columns : mapping of str to str, optional
        Series -> column name of a log (`{"test_acc": "val/accuracy"}`), overriding the name matching;
        default `None`.
    steps : array_like, optional
        `(n_records,)` strictly increasing step of each record (the run's grid); required without `run`.
    train_acc : array_like, optional
        `([n_runs,] n_records)` train accuracy in [0, 1], `NaN` = not logged at that record.
    test_acc : array_like, optional
        `([n_runs,] n_records)` test accuracy in [0, 1], `NaN` = not logged; with no `run`, at least one of
        `train_acc` and `test_acc` is needed.
    train_loss : array_like, optional
        `([n_runs,] n_records)` training loss ≥ 0 (`NaN` = not logged); the classifier clock reads it.
    test_loss : array_like, optional
        `([n_runs,] n_records)` test loss ≥ 0 (`NaN` = not logged).
    weight_norm : array_like, optional
        `([n_runs,] n_records)` global parameter norm ≥ 0 (`NaN` = not logged); a representation statistic.
    embeddings : array_like, optional
        `([n_runs,] n_snapshots, n_tokens, d)` token-embedding snapshots, row `t` = token `t` (the first `p`
        rows are the operand tokens); the Fourier, stable-rank and MED statistics read them.
    embedding_steps : array_like, optional
        `(n_snapshots,)` steps of the embedding snapshots; default `None`: `steps` (one per record).
    weights : array_like, optional
        `([n_runs,] n_snapshots, ...)` parameter snapshots (flattened per record), at consecutive steps for
        the rolling update Gram of the lock-in detector.
    weights_steps : array_like, optional
        `(n_snapshots,)` steps of the weight snapshots; default `None`: `steps`.
    gap : array_like, optional
        `([n_runs,] n_epochs)` eigengap series σ₂/σ₃ by epoch, row 0 = init (`NaN` = undefined row), for the
        lock-in detector.
    train_mask : array_like, optional
        The training set in any form of `grokclocks.task.as_mask` (bool `(p, p)`, flat `(p*p,)` or pair
        indices a*p + b), one per run or shared; with `run` it overrides the run's (e.g. for an engine run
        trained on an explicit mask, which the trajectory does not store).  It gives the exact ceiling.
    p : int, optional
        The modulus p ≥ 2 (taken from `train_mask` when absent); overrides the run's.
    operation : str, optional
        The task as `grokclocks.coverage.label_table` names it (`"add"`, `"sub"`, `"mul"`, ...); default
        `None`: the run's, or `"add"`.
    b_offset : int, optional
        Vocabulary offset ≥ 0 of the second operand (0 = shared tokens); default `None`: the run's, or 0.
    lam : float, optional
        The linear estimator's aspect ratio λ = d_in/N_tr > 0; overrides the one from `n_train`.
    n_train : int or array_like, optional
        Training-set size N_tr (integers ≥ 1), one or one per run; then λ = 2p/N_tr (one-hot pair inputs).
    lam_sweep : tuple of two array_like, optional
        `(lams, delays)`: grokking delays measured at ≥ 3 aspect ratios, 1-D of equal length, for the
        `levi:appG` fit Δt = C (λ* − λ)⁻².
    train_level : float, optional
        Train-accuracy level in (0, 1] of the clock `t_train`; default `None`: `grokclocks.task.TRAIN_LEVEL`
        = 1.0 (`run_modular_addition` runs use their `threshold`).
    test_level : float, optional
        Test-accuracy level in (0, 1] of the clock `t_test`; default `None`: `grokclocks.task.TEST_LEVEL` =
        0.99 (`run_modular_addition` runs use their `threshold`).
    eps_cls : float
        Training-loss level ε > 0 of the classifier clock t_cls(ε) (`clocks:appF4-cls-estimator`); default
        10⁻³ as in the spec's table.
    delta : float
        Structural-gap level δ in (0, 1) of the representation clocks: t_rep is the first record from which
        |S − S_end| ≤ δ |S₀ − S_end| holds for `window` records (default 0.1 = 90 % of the change done).
    window : int
        Persistence window ≥ 1, in records, of the representation clocks and the sustained classifier clock;
        default 5.
    n_freqs : int
        Number ≥ 1 of key frequencies of the Fourier statistic (the top `n_freqs` of each run's final
        embedding); default 4.
    levi_params : mapping, optional
        `eps`, `eta0` and optional keywords of `grokclocks.linear.grok_time` (`d_out`, `gamma`, `level`, ...)
        for the linear estimator's prediction of the delay; default `None`: no prediction (n/a).
    gram_window : int
        Window w ≥ 3, in steps, of the rolling update Gram (`grokclocks.repulsion.rolling_gram_eigenvalues`)
        built from `weights`; spec default 20.
    slope_lag : int
        Lag L ≥ 1, in epochs, of the slope detector's s(t) = (x(t) − x(t − L))/L on the log eigengap
        (`grokclocks.repulsion.slope_detector`); spec default 25.
    slope_threshold : float
        Threshold θ the slope must exceed for the detector to fire (finite); spec default 0.04.
    slope_t_min : int
        The first epoch ≥ 0 at which the detector may fire; spec default 100.

    Returns
    -------
    Comparison
        `.table()` / `.table(markdown=True)`, `.plot(path)`, `.value("t_test")`, `.verdicts`,
        `.as_json()`, `.to_dataframe()`, `.cite()`.

    Raises
    ------
    DomainError
        Invalid arrays (shapes, ranges, inf values), a log that cannot be read (`grokclocks.logs.LogError`),
        an engine run file whose config holds a value of the wrong kind, or a grid without `index`.

    Notes
    -----
    Per theory (each entry names its spec ID):

    * `levi`: λ = d_in/N_tr (`grokclocks.linear.modular_lambda`), the measured delay Δt = t_test − t_train,
      the linear estimator's Δt (`grokclocks.linear.grok_time`, only with `levi_params`), and the App. G fit
      Δt = C (λ* − λ)⁻² (`grokclocks.linear.fit_inverse_square`) over a `train_frac` sweep.
    * `clocks`: zero-one, classifier (first and sustained) and test clocks, a representation clock per
      structural statistic (Fourier energy, stable rank of the embedding, weight norm), each statistic's lag
      behind the same clock of the test accuracy, the ordering t_cls < t_rep, the separation ratio, and the
      ordering t_train ≤ t_cls < t_test of App. B (`clock_order`: a tie t_train = t_cls on the same record
      counts as ordered, t_cls = t_test does not).
    * `kramers`: t_grok/t_mem, the Arrhenius barrier (`grokclocks.kramers.arrhenius_barrier`, with
      τ₀ = t_mem), and over seeds the CV of the delay and a KS test against the exponential law of an
      activated escape.
    * `coverage`: the exact ceiling Ceil(∞) of the split (`grokclocks.coverage.analyse_run`), whether the run
      respects it, the implied radius, MED.
    * `repulsion`: the lock-in slope detector on a logged eigengap or on the rolling update Gram of per-step
      weight snapshots.

    Verdicts (`VERDICT_RULES`; "consistent" only when the deciding number is inside the band):

    * `levi` (`levi:grok-def`): with `levi_params`, the measured median Δt over the linear estimator's,
      within 15 % (the spec's widest CPU tolerance for Δt at d = 500); with a λ sweep (`levi:appG`), the
      inverse-square fit's largest relative residual ≤ 15 % (the spec's GPU tolerance); otherwise cannot tell
      (a network is not the linear model).
    * `clocks` (`clocks:appB`): min over runs of t_test/t_cls > 1: the classifier clock fires before
      generalisation, over the runs where both fired.
    * `kramers` (`kramers:eq15`): with ≥ 5 seeds that grok, the KS p-value of the waiting times
      t_test − t_train against an exponential law ≥ 0.05 (an activated escape; a true exponential sample is
      called inconsistent 5 % of the time).
    * `coverage` (`uniformity:thm3.10`): every run's max test accuracy ≤ Ceil(∞) + the chance allowance; a
      ceiling of 1 allows everything and gives "cannot tell".
    * `repulsion` (`repulsion:headline`): the detector fires in exactly the runs that reach test accuracy
      0.5.

    References
    ----------
    Spec IDs of every entry and verdict: `levi:conv-data`, `levi:appG`, `levi:grok-def`,
    `clocks:appF4-acc-clock`, `clocks:appF4-cls-estimator`, `clocks:appF4-fourier`, `clocks:appF4-srank-stat`,
    `clocks:appF4-persist`, `clocks:eq2.2`, `clocks:cor5.7`, `clocks:thm5.6`, `clocks:appF4-sep-ratio`,
    `clocks:appB`, `kramers:milestones`, `kramers:arrhenius`, `kramers:eq15`, `uniformity:thm3.10`,
    `uniformity:table1`, `uniformity:def4.2`, `repulsion:slope-detector`, `repulsion:rolling-gram`,
    `repulsion:headline`.

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
    rd = as_run_data(run, index, columns, overrides)
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
