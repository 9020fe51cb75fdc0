"""The result of a forecast: `Forecast` (what is predicted, how sure, from which signals) and `Signal`."""

from __future__ import annotations

import dataclasses
import math
import os
from typing import Any

import numpy as np

from .._escape import markdown_code, markdown_text, terminal_text
from .._safe_write import WRITER, figure_suffixes
from .._validate import DomainError, flag
from ..runs._records import _fmt_num, _json_number, _json_state
from ._model import calibrate, family_cdf, family_ppf, uncalibrate

__all__ = ["STATUSES", "Forecast", "Signal"]

STATUSES: dict[str, str] = {
    "forecast": "the run fits its training set and has not reached the test level: t_test is forecast",
    "too early": "the train accuracy has not reached its level yet: no forecast before t_train",
    "grokked": "the test accuracy has reached its level: t_test is measured, nothing to forecast",
    "diverged": "a logged value is not finite (the run diverged): no forecast",
    "cannot tell": "the run lacks what a forecast needs (the reason says what)",
}
"""The states of a forecast, each with its meaning."""


@dataclasses.dataclass(frozen=True)
class Signal:
    """One signal a forecast read off the run, with its value, its theory and whether the forecast used it.

    A forecast's `signals` hold one `Signal` per signal read, used or not; `Forecast.table` shows them as
    rows (ID, signal, value, used, contribution, spec ID) and their notes below.
    """

    id: str
    """Short stable name, e.g. "t_train", "norm_rate", "lock_in"."""
    title: str
    """What it is, in words."""
    value: float | None
    """Its value at the issue step τ: a float, `math.inf` for a clock that has not fired, `None` when it is not
    available (its series is not logged, or it cannot be read off the records up to τ)."""
    spec_id: str
    """The spec ID of the result it comes from, e.g. "clocks:appF2-wd-rate"."""
    used: bool = False
    """`True` if the forecast's model used it; `False` (default) if it is only shown."""
    contribution: float = math.nan
    """Its share of the forecast's log remaining time log((t_test − τ)/τ), relative to the fitting set's mean run
    (β x̃ of the model); positive = later; NaN (default) when not used."""
    note: str = ""
    """Why it is used or not, or a caveat; "" (default) when there is nothing to say."""
    in_range: bool | None = None
    """Whether its value lies inside the range the model was fitted on: `True`, `False` (then the forecast did
    not use it and fell back to a model without it; `Forecast.out_of_range` names it), or `None` (default)
    when the model has no range for it (not a model signal, or not readable)."""

    def formatted(self) -> str:
        """The value as the table shows it."""
        return "n/a" if self.value is None else _fmt_num(self.value)


_WIDTH = 80  # the plain-text table fits a standard terminal: long lines wrap, nothing is cut


def _wrapper(width: int):
    """lines(text, indent, first="") -> the text wrapped to `width` columns (words never cut or hyphenated)."""
    import textwrap

    def lines(text: str, indent: str, first: str = "") -> list[str]:
        return textwrap.wrap(text, width=width, initial_indent=first, subsequent_indent=indent,
                             break_long_words=False, break_on_hyphens=False) or [""]

    return lines


def _fmt_step(x: float) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    if math.isinf(x):
        return "never" if x > 0 else "-inf"
    return f"{x:,.0f}" if abs(x) >= 100 else _fmt_num(x)


@dataclasses.dataclass(frozen=True, eq=False)
class Forecast:
    """A forecast of the step t_test at which a run's test accuracy reaches its level.

    Made by `grokclocks.forecast.forecast` (one run) or `grokclocks.forecast.forecast_runs` (every run of a
    source).  `status` says whether there is a forecast; for status "forecast" the forecast distribution of
    t_test (`distribution`) gives the point forecast, the intervals and P(grok by the horizon), and `cdf` and
    `quantile` read it at any step or probability.  `str(forecast)` is `table()`; `line()` is one line,
    `as_json()` the typed dict, `plot()` the curves with the forecast band.
    """

    status: str
    """One of `STATUSES`: "forecast", "too early", "grokked", "diverged" or "cannot tell"."""
    reason: str
    """One sentence: why this status (and, for a forecast, which model made it)."""
    at_step: float
    """The issue step τ: the forecast used only the records with step ≤ τ."""
    horizon: float
    """The step H by which P(grok by the horizon) is given (`p_grok`)."""
    horizon_source: str
    """Where the horizon comes from: "given", "planned length" or "10x the current step"."""
    t_train: float = math.inf
    """The first record step with train accuracy ≥ `train_level`; `math.inf` (default) = not yet."""
    t_test: float = math.nan
    """The point forecast (the median) of t_test for status "forecast", the measured t_test for "grokked", NaN
    (default) otherwise."""
    interval_50: tuple[float, float] = (math.nan, math.nan)
    """Nominal 50 % interval of t_test (its 25 % and 75 % quantiles), in steps; (NaN, NaN) (default) when there
    is no forecast."""
    interval_90: tuple[float, float] = (math.nan, math.nan)
    """Nominal 90 % interval of t_test (its 5 % and 95 % quantiles), in steps; (NaN, NaN) (default) when there
    is no forecast."""
    p_grok: float = math.nan
    """P(t_test ≤ horizon), the probability that the run groks by the horizon: 1 once it has grokked, 0 for a
    diverged run, NaN (default) when it cannot be told."""
    signals: tuple[Signal, ...] = ()
    """Every signal read, used or not, one `Signal` each; () (default) when none was read."""
    spec_ids: tuple[str, ...] = ()
    """Spec IDs of the theories the forecast leans on (the used signals and the interval's law); what
    `cite` cites."""
    method: str = ""
    """How the forecast was made: "calibrated model" (the censored regression of
    `grokclocks.forecast.fit_model`), "linear closed form" (Levi et al.'s t*_gen) or "" (default: no
    forecast)."""
    model: str = ""
    """Which model and signals made the forecast, in words; "" (default) when there is no forecast."""
    train_level: float = 1.0
    """Train-accuracy level of t_train, in (0, 1] (default 1.0: every training example right)."""
    test_level: float = 0.99
    """Test-accuracy level of t_test, in (0, 1] (default 0.99)."""
    source: str = ""
    """Where the run came from, as the table's header shows it (a path, or e.g. "arrays"); "" (default) when
    not given."""
    run_name: str = ""
    """Which run (seed) of the source: its name, or "run i" for the i-th of unnamed runs; "" (default) for a
    source of one unnamed run."""
    curves: dict = dataclasses.field(default_factory=dict, repr=False)
    """The records up to τ the forecast read, for `plot`: "steps" and each logged series among "train_acc",
    "test_acc", "train_loss", "test_loss" and "weight_norm", an array of one value per record each."""
    distribution: tuple = ()
    """The forecast distribution of t_test as (kind, family, μ, σ, τ, calibration): kind "remaining" when
    log((t_test − τ)/τ) = μ + σ W, "absolute" when log t_test = μ + σ W, with W the standard variable of
    `family` (one of `grokclocks.forecast.FAMILIES`) whose probabilities pass through the recalibration map
    given by `calibration`, knots (u, G(u)) (() = none; `AFTModel.calibration`); () (default) when there is no
    forecast."""
    out_of_range: tuple[str, ...] = ()
    """The signals that lay outside the range the model was fitted on, which the forecast therefore did not
    use (each named with its value and range in `reason` and in its `Signal.note`); () (default) when none."""

    def cdf(self, step: float) -> float:
        """P(t_test ≤ step): the probability that the run groks by `step`, under this forecast.

        Parameters
        ----------
        step : float
            A training step.

        Returns
        -------
        float
            The probability, in [0, 1]; for a run that has grokked, 1 from its t_test on and 0 before; NaN
            when there is no forecast.
        """
        step = float(step)
        if self.status == "grokked":
            return 1.0 if step >= self.t_test else 0.0
        if not self.distribution:
            return math.nan
        kind, family, mu, sigma, tau, *knots = self.distribution
        knots = knots[0] if knots else ()
        if kind == "remaining":
            if step <= tau:
                return 0.0
            return calibrate(knots, family_cdf(family, (math.log((step - tau) / tau) - mu) / sigma))
        return calibrate(knots, family_cdf(family, (math.log(step) - mu) / sigma)) if step > 0 else 0.0

    def quantile(self, q: float) -> float:
        """The step by which the run groks with probability `q`, under this forecast.

        Parameters
        ----------
        q : float
            A probability in (0, 1).

        Returns
        -------
        float
            The q-quantile of t_test (the measured t_test for a run that has grokked; NaN when there is no
            forecast).

        Raises
        ------
        DomainError
            If `q` is not in (0, 1).
        """
        q = float(q)
        if not 0.0 < q < 1.0:
            raise DomainError(f"q must be in (0, 1) (got {q!r})")
        if self.status == "grokked":
            return self.t_test
        if not self.distribution:
            return math.nan
        kind, family, mu, sigma, tau, *knots = self.distribution
        u = uncalibrate(knots[0] if knots else (), q)
        if u >= 1.0:
            return math.inf
        if u <= 0.0:
            return tau if kind == "remaining" else 0.0
        w = mu + sigma * family_ppf(family, u)
        return tau * (1.0 + math.exp(min(w, 700.0))) if kind == "remaining" else math.exp(min(w, 700.0))

    @property
    def __cites__(self) -> tuple[str, ...]:
        """The spec IDs of this forecast (what `grokclocks.cite` reads)."""
        return self.spec_ids

    def cite(self, format: str = "bibtex") -> str:
        """BibTeX or one text line per paper of every result this forecast leans on.

        Parameters
        ----------
        format : {"bibtex", "text"}
            "bibtex" (default) for BibTeX entries, "text" for one line per paper naming the spec IDs.

        Returns
        -------
        str
            The citations, each paper once; an empty string when the forecast leans on no result.
        """
        from ..citations import cite_many

        return cite_many(list(self.spec_ids), format=format) if self.spec_ids else ""

    def signal(self, id: str) -> Signal:
        """The signal with this ID.

        Parameters
        ----------
        id : str
            A signal ID, e.g. "t_train" or "norm_rate".

        Returns
        -------
        Signal
            The signal.

        Raises
        ------
        KeyError
            If the forecast holds no signal of that ID (the message lists the IDs it holds).
        """
        for s in self.signals:
            if s.id == id:
                return s
        raise KeyError(f"no signal {id!r}; signals: {', '.join(s.id for s in self.signals)}")

    def header(self) -> str:
        """One line: the run, the issue step and the horizon."""
        name = f" [{self.run_name}]" if self.run_name else ""
        return (f"forecast of {self.source}{name} at step {_fmt_step(self.at_step)}; horizon "
                f"{_fmt_step(self.horizon)} ({self.horizon_source})")

    def line(self) -> str:
        """The forecast in one line (the form `grokclocks compare` prints under its verdicts); a reason's
        control characters and newlines shown as escapes (`grokclocks._escape.terminal_text`)."""
        if self.status == "forecast":
            lo50, hi50 = self.interval_50
            lo90, hi90 = self.interval_90
            return (f"t_test ~ {_fmt_step(self.t_test)} (50 %: {_fmt_step(lo50)}-{_fmt_step(hi50)}, 90 %: "
                    f"{_fmt_step(lo90)}-{_fmt_step(hi90)}); P(grok by {_fmt_step(self.horizon)}) = "
                    f"{self.p_grok:.2f} [{', '.join(self.spec_ids)}]")
        if self.status == "grokked":
            return f"grokked: t_test = {_fmt_step(self.t_test)} (measured)"
        return f"{self.status}: {terminal_text(self.reason)}"

    def table(self, markdown: bool = False) -> str:
        """The forecast as a text table (default) or Markdown: the numbers, then every signal.

        Parameters
        ----------
        markdown : bool
            False (default): aligned plain text; True: Markdown tables.

        Returns
        -------
        str
            The header, the status, the forecast (point, 50 % and 90 % intervals, probability by the
            horizon), the model, and one row per signal (ID, signal, value, used, contribution, spec ID).
        """
        if markdown:
            return self._markdown()
        esc = terminal_text  # the source, run and column names, notes and reasons are a file's words
        wrap = _wrapper(_WIDTH)
        out = wrap(esc(self.header()), "")
        for item in self._summary(esc):
            out += wrap(item, "    " if item.startswith(" ") else "  ")
        head = ["id", "value", "used", "contrib.", "spec ID"]
        rows = [[esc(s.id), esc(s.formatted()), "yes" if s.used else "no",
                 "" if not math.isfinite(s.contribution) else f"{s.contribution:+.2f}", esc(s.spec_id)]
                for s in self.signals]
        if rows:
            widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]

            def fmt(cells: list[str]) -> str:
                return "  ".join(c.ljust(widths[i]) for i, c in enumerate(cells)).rstrip()

            out += [""] + wrap("signals (contrib. = share of log((t_test - now) / now) against the mean fitting "
                               "run):", "")
            out += [fmt(head), fmt(["-" * w for w in widths])] + [fmt(r) for r in rows]
            out += ["", "what each signal is, and notes:"]
            for s in self.signals:
                out += wrap(esc(f"{s.id}: {s.title}" + (f"; {s.note}" if s.note else "")), "    ", "  ")
        if self.spec_ids:
            out += [""] + wrap("spec IDs: " + ", ".join(esc(i) for i in self.spec_ids), "  ")
        return "\n".join(out)

    def _summary(self, esc: Any) -> list[str]:
        """The status, the forecast's numbers and the model, one item each (an interval indented by two); the
        reason and the model's description escaped by `esc` (`terminal_text` or `markdown_text`)."""
        out = [f"status: {self.status}: {esc(self.reason)}"]
        if self.status == "forecast":
            lo50, hi50 = self.interval_50
            lo90, hi90 = self.interval_90
            out += [f"t_test (test acc >= {_fmt_num(self.test_level)}): ~ {_fmt_step(self.t_test)}",
                    f"  50 % interval: {_fmt_step(lo50)} - {_fmt_step(hi50)}",
                    f"  90 % interval: {_fmt_step(lo90)} - {_fmt_step(hi90)}",
                    f"P(grok by step {_fmt_step(self.horizon)}): {self.p_grok:.3f}",
                    f"model: {esc(self.model)}"]
        elif self.status == "grokked":
            out.append(f"t_test (test acc >= {_fmt_num(self.test_level)}): {_fmt_step(self.t_test)} (measured)")
        return out

    def _markdown(self) -> str:
        esc = markdown_text  # every text of a file's words as Markdown that shows exactly it (| included)
        out = [esc(self.header()), ""] + [f"* {item.strip()}" for item in self._summary(esc)]
        head = ["id", "signal", "value", "used", "contribution", "spec ID"]
        rows = [[esc(x) for x in (s.id, s.title, s.formatted(), "yes" if s.used else "no",
                                  "" if not math.isfinite(s.contribution) else f"{s.contribution:+.2f}", s.spec_id)]
                for s in self.signals]
        if rows:
            out += ["", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
            out += ["| " + " | ".join(r) + " |" for r in rows]
        notes = [(s.id, esc(s.note)) for s in self.signals if s.note]
        if notes:
            out += [""] + [f"* {markdown_code(i)}: {n}" for i, n in notes]
        if self.spec_ids:
            out += ["", "spec IDs: " + ", ".join(markdown_code(i) for i in self.spec_ids)]
        return "\n".join(out)

    def __str__(self) -> str:
        return self.table()

    def as_json(self) -> dict[str, Any]:
        """The forecast as one JSON-ready dict, in the typed form of `grokclocks.compare.Comparison.as_json`.

        Returns
        -------
        dict
            `run` (the header), `status`, `reason`, `at_step`, `horizon`, `horizon_source`, `t_train`,
            `t_test` (with `t_test_state`: "predicted", "measured", "never" or "undefined"), `interval_50`,
            `interval_90`, `p_grok`, `method`, `model`, `levels`, `signals` (one dict per signal: `id`,
            `signal`, `value`, `state`, `used`, `contribution`, `spec_id`, `note`, `in_range`), `out_of_range`
            (the signals outside the model's fitting range), `spec_ids` and `distribution` (kind, family, mu,
            sigma, tau and the calibration knots of the forecast distribution, or null).  Every
            number is a finite number or null; a null's state says why ("never" for +inf, "undefined" for
            NaN).
        """
        t_state = {"forecast": "predicted", "grokked": "measured"}.get(self.status, "undefined")
        return {
            "run": self.header(),
            "status": self.status,
            "reason": self.reason,
            "at_step": _json_number(self.at_step),
            "horizon": _json_number(self.horizon),
            "horizon_source": self.horizon_source,
            "t_train": _json_number(self.t_train),
            "t_train_state": "ok" if math.isfinite(self.t_train) else _json_state(self.t_train),
            "t_test": _json_number(self.t_test),
            "t_test_state": t_state if math.isfinite(self.t_test) else _json_state(self.t_test),
            "interval_50": [_json_number(x) for x in self.interval_50],
            "interval_90": [_json_number(x) for x in self.interval_90],
            "p_grok": _json_number(self.p_grok),
            "method": self.method,
            "model": self.model,
            "levels": {"train": self.train_level, "test": self.test_level},
            "signals": [{"id": s.id, "signal": s.title, "value": _json_number(s.value),
                             "state": "n/a" if s.value is None else _json_state(s.value), "used": s.used,
                             "contribution": _json_number(s.contribution), "spec_id": s.spec_id, "note": s.note,
                             "in_range": s.in_range}
                        for s in self.signals],
            "out_of_range": list(self.out_of_range),
            "spec_ids": list(self.spec_ids),
            "distribution": ({**dict(zip(("kind", "family", "mu", "sigma", "tau"), self.distribution[:5])),
                              "calibration": [list(k) for k in (self.distribution[5] if len(self.distribution) > 5
                                                                else ())]}
                             if self.distribution else None),
        }

    def plot(self, path: str | os.PathLike | None = None, *, title: str | None = None, overwrite: bool = False) -> Any:
        """The run's curves up to the issue step with the forecast band: accuracy (top) and loss (bottom).

        The 90 % and 50 % intervals of t_test are shaded, the point forecast, the issue step and the horizon
        are vertical lines, the test level a horizontal one.  Needs matplotlib (pip install
        "grokclocks[plots]").

        Parameters
        ----------
        path : str or os.PathLike, optional
            Where to save the figure (format from the suffix, e.g. .png, .pdf); None: not saved.
        title : str, optional
            Figure title; default: the header line.
        overwrite : bool
            Whether an existing file at `path` may be replaced; default `False` (checked before drawing:
            an existing file is an `OutputExistsError` and nothing is drawn or written).

        Returns
        -------
        matplotlib.figure.Figure
            The figure.

        Raises
        ------
        ImportError
            If matplotlib is not installed (one line naming it).
        OutputExistsError
            `path` exists and `overwrite` is false; nothing is written.
        DomainError
            `path` is a symbolic link (never written through), a directory or not a regular file, its
            suffix is not a figure format, its directory does not exist or cannot be written, or the write
            failed (the previous file is then as it was).
        """
        try:
            from matplotlib.figure import Figure
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError("Forecast.plot needs matplotlib: pip install 'grokclocks[plots]'") from exc
        if path is not None:  # checked before drawing; written by the one writer (temporary file, then rename)
            path = WRITER.check(path, overwrite=flag(overwrite, "overwrite"), suffixes=figure_suffixes())
        fig = Figure(figsize=(8.0, 6.0), layout="constrained")
        ax_acc, ax_loss = fig.subplots(2, 1, sharex=True)
        c = self.curves
        steps = np.asarray(c.get("steps", []), dtype=float)
        drew_loss = False
        for name, ax, style in (("train_acc", ax_acc, ("tab:blue", "-")), ("test_acc", ax_acc, ("tab:orange", "-")),
                                ("train_loss", ax_loss, ("tab:blue", "-")), ("test_loss", ax_loss, ("tab:orange", "-"))):
            y = c.get(name)
            if y is None:
                continue
            y = np.asarray(y, dtype=float)
            ok = ~np.isnan(y) & (steps > 0)
            if name.endswith("loss"):
                drew_loss = True
                y = np.maximum(y, 1e-300)
            ax.plot(steps[ok], y[ok], color=style[0], ls=style[1], lw=1.2, label=name.replace("_", " "))
        ax_acc.axhline(self.test_level, color="0.4", ls=":", lw=1.0)
        ends = [x for x in (self.at_step, self.horizon) if math.isfinite(x) and x > 0]
        if self.status == "forecast":
            lo90, hi90 = self.interval_90
            lo50, hi50 = self.interval_50
            far = 3.0 * max(x for x in (self.t_test, lo90, self.at_step) if math.isfinite(x))
            hi90, hi50 = min(hi90, far), min(hi50, far)  # an open upper end ("never") is drawn to the edge
            for ax in (ax_acc, ax_loss):
                ax.axvspan(lo90, hi90, color="tab:green", alpha=0.15, lw=0)
                ax.axvspan(lo50, hi50, color="tab:green", alpha=0.3, lw=0)
                ax.axvline(self.t_test, color="tab:green", lw=1.5)
            ax_acc.text(self.t_test, 0.5, f" t_test ~ {_fmt_step(self.t_test)}\n P(by horizon) {self.p_grok:.2f}",
                        color="tab:green", fontsize=8, va="center")
            ends += [hi90]
        elif self.status == "grokked" and math.isfinite(self.t_test):
            for ax in (ax_acc, ax_loss):
                ax.axvline(self.t_test, color="tab:green", lw=1.5)
        for ax in (ax_acc, ax_loss):
            ax.axvline(self.at_step, color="0.2", ls="--", lw=1.0)
            if math.isfinite(self.horizon):
                ax.axvline(self.horizon, color="0.5", ls="-.", lw=1.0)
        ax_acc.text(self.at_step, 1.0, " now", fontsize=8, va="top")
        if math.isfinite(self.horizon):
            ax_acc.text(self.horizon, 0.02, " horizon", fontsize=8, va="bottom")
        ax_acc.set_xscale("log")
        pos = steps[steps > 0]
        if pos.size and ends:
            ax_acc.set_xlim(float(pos.min()), 1.3 * max(max(ends), float(pos.max())))
        ax_acc.set_ylim(-0.02, 1.02)
        ax_acc.set_ylabel("accuracy")
        ax_acc.legend(loc="center left", fontsize=7)
        ax_loss.set_ylabel("loss")
        ax_loss.set_xlabel("step")
        if drew_loss:
            ax_loss.set_yscale("log")
            ax_loss.legend(loc="lower left", fontsize=7)
        else:
            ax_loss.text(0.5, 0.5, "no loss logged", transform=ax_loss.transAxes, ha="center", va="center")
        fig.suptitle(title if title is not None else self.header(), fontsize=9)
        if path is not None:
            WRITER.save_figure(fig, path, overwrite=overwrite)
        return fig
