"""The result of `compare_run`: the table, JSON, citations and plot of a run against every theory."""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .. import _validate as V
from .._escape import markdown_text, terminal_text
from .._safe_write import WRITER, figure_suffixes
from ._records import Entry, RunData, THEORIES, Verdict, _fmt_num, _json_number, _json_state

__all__ = ["Comparison"]


@dataclasses.dataclass(frozen=True, eq=False)
class Comparison:
    """The answer of `compare_run`: entries per theory, a verdict per theory, the run, and the clocks to draw.

    `cmp["t_test"]` (an ID or the quantity text) is the `Entry` of that ID."""

    entries: tuple[Entry, ...]
    """Every quantity of every theory, in the order of the table."""
    run: RunData
    """The run as compared (after overrides and alignment)."""
    clocks: Mapping[str, float]
    """Named clock steps (medians over the runs that reached them) that `plot` draws: `inf` = never reached,
    `nan` = undefined (listed in the figure, not drawn)."""
    verdicts: tuple[Verdict, ...] = ()
    """One per theory, in the order levi, clocks, kramers, coverage, repulsion."""
    forecast: tuple[str, ...] = ()
    """Forecast lines for the runs that have not grokked, shown under the verdicts; empty unless a caller above
    both `grokclocks.compare` and `grokclocks.forecast` adds them (the `grokclocks compare` command does, with
    `grokclocks.forecast.forecast_runs` at the last record): `compare_run` does not forecast."""

    def __getitem__(self, key: str) -> Entry:
        for e in self.entries:
            if e.id == key or e.quantity == key:
                return e
        raise KeyError(f"no entry {key!r}; IDs: {', '.join(e.id for e in self.entries)}")

    def value(self, key: str) -> Any:
        """The value of one entry (`None` if it is n/a).

        Parameters
        ----------
        key : str
            The entry's short ID (a key of `QUANTITY_IDS`, e.g. `"t_test"`) or its quantity text.

        Returns
        -------
        float, bool or None
            `Entry.value`: the median over runs (`inf` = never reached), a yes/no answer, or `None`.

        Raises
        ------
        KeyError
            No entry has this ID or quantity text (the message lists the IDs).
        """
        return self[key].value

    def theory(self, name: str) -> list[Entry]:
        """The entries of one theory.

        Parameters
        ----------
        name : str
            The theory: `"levi"`, `"clocks"`, `"kramers"`, `"coverage"` or `"repulsion"`.

        Returns
        -------
        list of Entry
            Its entries in table order (empty for an unknown name).
        """
        return [e for e in self.entries if e.theory == name]

    def verdict(self, theory: str) -> Verdict:
        """The verdict of one theory.

        Parameters
        ----------
        theory : str
            The theory: `"levi"`, `"clocks"`, `"kramers"`, `"coverage"` or `"repulsion"`.

        Returns
        -------
        Verdict

        Raises
        ------
        KeyError
            No verdict for that name (the message lists the theories).
        """
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
        """The citations of every result this comparison used (its `spec_ids`).

        Parameters
        ----------
        format : {"bibtex", "text"}
            `"bibtex"` (default): one BibTeX entry per paper; `"text"`: one line per paper.

        Returns
        -------
        str
            The citations, one paper each, as `grokclocks.cite` writes them.
        """
        from ..citations import cite_many

        return cite_many(self.spec_ids(), format=format)

    def table(self, markdown: bool = False) -> str:
        """The comparison as a table: the header, how the input was read and aligned, one row per entry, the
        notes and one verdict line per theory.

        Columns: theory, ID, quantity, value (median over runs; `[min, max] (k/n)` = range over the runs
        that reached it and how many did), spec ID, status (`measured` / `predicted` / `n/a: reason`).

        Parameters
        ----------
        markdown : bool
            `False` (default): aligned plain text for a terminal; `True`: Markdown tables (notes as a list,
            the verdicts in a second table).

        Returns
        -------
        str
            The table; every text that may come from the run's file (its source, run and column names, notes)
            has its control characters and newlines shown as escapes, and in Markdown its markup and HTML
            characters escaped (`grokclocks._escape`).
        """
        # every text may hold a file's words (run and column names, the source path): escaped for where it goes
        esc = markdown_text if markdown else terminal_text
        head = ["theory", "id", "quantity", "value", "spec ID", "status", "note"]
        body = [[esc(c) for c in (e.theory, e.id, e.quantity, e.formatted(), e.spec_id, e.status, e.note)]
                for e in self.entries]
        verdicts = [(esc(v.theory), esc(v.line())) for v in self.verdicts]
        notes_in = [esc(n) for n in self.run.input_notes]
        fc = [esc(x) for x in self.forecast]
        if markdown:
            out = [esc(self.header()), ""]
            out += [f"* {n}" for n in notes_in]
            out += ["", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
            out += ["| " + " | ".join(b) + " |" for b in body]
            if verdicts:
                out += ["", "| theory | verdict |", "|---|---|"]
                out += [f"| {t} | {line} |" for t, line in verdicts]
            if fc:
                out += ["", "forecast (runs that have not grokked; grokclocks.forecast):", ""] + [f"* {x}" for x in fc]
            return "\n".join(out)
        cols = head[:6]
        widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(cols)]

        def line(cells: Sequence[str]) -> str:
            return "  ".join(c.ljust(widths[i]) for i, c in enumerate(cells)).rstrip()

        out = [esc(self.header())]
        out += [f"  {n}" for n in notes_in]
        out += [line(cols), line(["-" * w for w in widths])]
        for b in body:
            out.append(line(b[:6]))
        notes = [(b[1], b[6]) for b in body if b[6]]
        if notes:
            out.append("")
            out.append("notes:")
            out += [f"  {q}: {n}" for q, n in notes]
        if verdicts:
            out.append("")
            out.append("verdicts:")
            w = max(len(t) for t, _ in verdicts)
            out += [f"  {t.ljust(w)}  {text}" for t, text in verdicts]
        if fc:
            out += ["", "forecast (runs that have not grokked; grokclocks.forecast):"] + [f"  {x}" for x in fc]
        return "\n".join(out)

    def __str__(self) -> str:
        return self.table()

    def as_dicts(self) -> list[dict[str, Any]]:
        """The entries as JSON-ready dicts.

        `value` is a number, a bool or `null`; `state` says which: `"measured"` / `"predicted"`
        (a value), `"never"` (inf: no run reached it; `value` is `null`), `"undefined"` (nan) or
        `"n/a"` (the reason is in `status`).  `per_run` holds numbers, bools or `null` with
        `per_run_state` (`"ok"`, `"never"`, `"undefined"`) and `per_run_names` (the run, i.e. seed, of each
        value: `RunData.run_names`, or `"run 0"`, `"run 1"`, ...) beside it; `per_run_names` is empty where
        `per_run` is not one value per run (a statistic over the runs).
        """
        names = self.run_names()
        return [dict(id=e.id, theory=e.theory, quantity=e.quantity, value=_json_number(e.value), state=e.state,
                     formatted=e.formatted(), status=e.status, spec_id=e.spec_id, note=e.note,
                     per_run=[_json_number(v) for v in e.per_run], per_run_state=[_json_state(v) for v in e.per_run],
                     per_run_names=list(names) if len(e.per_run) == len(names) else [])
                for e in self.entries]

    def run_names(self) -> tuple[str, ...]:
        """The name of each run (seed) in the order of `per_run`: `RunData.run_names` (each seed's file, folder or
        MLflow run, in the order the runs were read), or `"run 0"`, `"run 1"`, ... when the input named none.

        Returns
        -------
        tuple of str
            One name per run.
        """
        r = self.run
        return r.run_names or tuple(f"run {i}" for i in range(r.n_runs))

    def as_json(self) -> dict[str, Any]:
        """Header, the run names, input notes, entries (`as_dicts`) and verdicts as one JSON-ready dict."""
        return {"run": self.header(), "run_names": list(self.run_names()), "input": list(self.run.input_notes),
                "entries": self.as_dicts(),
                "verdicts": [dict(theory=v.theory, verdict=v.verdict, quantity=v.quantity,
                                  value=_json_number(v.value), band=v.band, spec_id=v.spec_id, reason=v.reason)
                             for v in self.verdicts]}

    def to_dataframe(self) -> Any:
        """The entries as a pandas DataFrame indexed by ID (the columns of `as_dicts`; `value` keeps inf and nan).

        Needs pandas (`pip install "grokclocks[logs]"`).
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

    def plot(self, path: str | os.PathLike | None = None, *, title: str | None = None, overwrite: bool = False) -> Any:
        """One figure of the run: accuracy (top) and loss (bottom) vs step, log x, every clock a labelled line.

        Each run (seed) has its own colour (train solid, test dashed, each series on the records where it
        was logged); clocks are medians over the runs that reached them, drawn as grey dotted lines.  Step 0
        is not drawable on a log axis and is left out.  Needs matplotlib (`pip install grokclocks[plots]`).

        Parameters
        ----------
        path : str or os.PathLike, optional
            Where to save the figure, its format from the suffix (`.png`, `.pdf`, ...); default `None`: not
            saved, only returned.
        title : str, optional
            The figure title; default `None`: the run's source.
        overwrite : bool
            Whether an existing file at `path` may be replaced; default `False` (checked before drawing: an
            existing file is an `OutputExistsError` and nothing is drawn or written).

        Returns
        -------
        matplotlib.figure.Figure

        Raises
        ------
        OutputExistsError
            `path` exists and `overwrite` is false; nothing is written.
        DomainError
            `path` is a symbolic link (never written through), a directory or not a regular file, its
            suffix is not a figure format, its directory does not exist or cannot be written, or the write
            failed (the previous file is then as it was).

        Notes
        -----
        The file is written by `grokclocks`'s one writer: to a temporary file beside `path`, then put in
        place in one step (without `overwrite`, never over a file that appeared meanwhile).
        """
        try:
            from matplotlib.figure import Figure
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError("Comparison.plot needs matplotlib: pip install 'grokclocks[plots]'") from exc
        if path is not None:  # checked before drawing
            path = WRITER.check(path, overwrite=V.flag(overwrite, "overwrite"), suffixes=figure_suffixes())
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
            WRITER.save_figure(fig, path, overwrite=overwrite)
        return fig
