"""The result of `compare_run`: the table, JSON, citations and plot of a run against every theory."""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .. import _validate as V
from .._escape import fit_columns, markdown_text, terminal_text, terminal_width, wrap_text
from .._safe_write import WRITER, figure_suffixes, plain_figure_texts
from ._records import Entry, RunData, THEORIES, Verdict, _fmt_num, _json_number, _json_state

__all__ = ["Comparison"]


def _entry_blocks(body: Sequence[Sequence[str]], width: int | None) -> list[str]:
    """The entries of a table too narrow for its columns: per theory a heading, per entry its ID, value and
    quantity on one line, its status and spec ID on the next (each wrapped to `width`)."""
    idw = max(len(b[1]) for b in body) if body else 2
    valw = max(len(b[3]) for b in body) if body else 5
    start = 2 + idw + 2 + valw + 2
    if width is not None and width - start < 24:  # no room beside: the text goes under the ID and value
        start = 6
    pad = " " * start
    head = "  " + "id".ljust(idw) + "  " + "value".ljust(valw) + "  "
    out = ["theory"] + ([head + "quantity"] if start == len(head) else [head.rstrip(), pad + "quantity"])
    out += [pad + "status [spec ID]", "-" * min(width or start + 40, start + 40)]
    theory = None
    for b in body:
        if b[0] != theory:
            theory = b[0]
            out.append(theory)
        lead = "  " + b[1].ljust(idw) + "  " + b[3].ljust(valw) + "  "
        if start == len(lead):
            out += wrap_text(b[2], width, lead, pad)
        else:
            out.append(lead.rstrip())
            out += wrap_text(b[2], width, pad)
        out += wrap_text(f"{b[5]} [{b[4]}]" if b[4] else b[5], width, pad)
    return out


def _short(name: str, n: int = 28) -> str:
    """A run name for a legend: at most `n` characters, a cut one ending in "..." (the table has it in full)."""
    return name if len(name) <= n else name[:n - 3] + "..."


def _clock_labels(fig: Any, ax_top: Any, ax_bottom: Any, clocks: Mapping[str, float]) -> None:
    """Mark each drawable clock (finite, > 0) with a dotted vertical line through both axes and a label in a strip
    above the top axes, joined to its line by a vertical dotted stub: no label covers a curve, another label or
    another label's stub.

    The places are chosen on the laid-out figure (`Figure.draw_without_rendering`), clock by clock from the left:
    the lowest row, and in it the first of centred on the line, ending at it or starting at it (kept within the
    axes' width; one that would cover a line further right is not tried), where the label keeps 4 pixels from
    every label of its row, its stub crosses no label of a lower row and no stub of a higher row crosses it.
    Clocks at the same step share one line and one label."""
    greys = ["0.1", "0.35", "0.5"]
    at: dict[float, list[str]] = {}  # clocks at the same step share a line and a label
    for name, t in clocks.items():
        if math.isfinite(t) and t > 0:
            at.setdefault(float(t), []).append(name)
    drawn = sorted(at.items())
    labels = []
    for k, (t, names) in enumerate(drawn):
        c = greys[k % len(greys)]
        for ax in (ax_top, ax_bottom):
            ax.axvline(t, color=c, ls=":", lw=1.2)
        labels.append(ax_top.annotate(f"{', '.join(names)} = {_fmt_num(t)}", xy=(t, 1.0),
                                      xycoords=("data", "axes fraction"), xytext=(0, 4), textcoords="offset points",
                                      ha="center", va="bottom", fontsize=7, color=c, annotation_clip=False))
    if not labels:
        return
    plain_figure_texts(fig)  # measured as they will be drawn
    fig.draw_without_rendering()
    box = ax_top.get_window_extent()
    to_pt, gap, clear = 72.0 / fig.dpi, 4.0, 1.5  # pixels between labels of a row; between a stub and a label
    placed: list[tuple[int, float, float, float]] = []  # (row, left, right, x of its line), in pixels
    xs = [ax_top.transData.transform((t, 1.0))[0] for t, _ in drawn]
    for k, label in enumerate(labels):
        x, w = xs[k], label.get_window_extent().width
        spans = [min(max(left, box.x0), box.x1 - w) for left in (x - w / 2, x - w, x)]
        # a label covers no line to its right (whose stub might have to rise past it): then a row always exists
        tried = [a for a in spans if not any(a - clear <= xr <= a + w + clear for xr in xs[k + 1:])] or spans[1:2]
        top = 1 + max((r for r, *_ in placed), default=-1)
        for row in range(top + 1):
            fits = [a for a in tried
                    if all(r != row or a >= b + gap or a + w <= a0 - gap for r, a0, b, _ in placed)
                    and all(r >= row or not a0 - clear <= x <= b + clear for r, a0, b, _ in placed)
                    and all(r <= row or not a - clear <= xl <= a + w + clear for r, _, _, xl in placed)]
            if fits:
                break
        left = (fits or tried)[0]  # none fits only for lines closer than a pixel or two: then above the rest
        placed.append((row, left, left + w, x))
        label.set_position(((left + w / 2 - x) * to_pt, 4 + 11 * row))
        if row:  # the stub: the clock's line carried up to its label (an empty text, so it starts where it is put)
            ax_top.annotate("", xy=(drawn[k][0], 1.0), xycoords=("data", "axes fraction"), xytext=(0, 4 + 11 * row),
                            textcoords="offset points", annotation_clip=False,
                            arrowprops=dict(arrowstyle="-", color=label.get_color(), lw=0.8, ls=":", shrinkA=0,
                                            shrinkB=0))


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

    def table(self, markdown: bool = False, width: int | None = None) -> str:
        """The comparison as a table: the header, how the input was read and aligned, one row per entry, the
        notes and one verdict line per theory.

        Columns: theory, ID, quantity, value (median over runs; `[min, max] (k/n)` = range over the runs
        that reached it and how many did), spec ID, status (`measured` / `predicted` / `n/a: reason`).

        Parameters
        ----------
        markdown : bool
            `False` (default): aligned plain text for a terminal; `True`: Markdown tables (notes as a list,
            the verdicts in a second table), every cell on one line.
        width : int, optional
            The most characters a line of the plain-text table holds: long statuses, notes and verdicts are
            wrapped at spaces (never cut); where the status column would be narrower than 40 characters, each
            entry is a short block instead (ID, value and quantity on one line, status and spec ID below).
            Default `None`: the terminal's width (`COLUMNS` first; 80 when the output is not a terminal);
            `0`: no limit, one line per row (the command's `--wide`).  Widths under 40 give 40.  Ignored
            with `markdown`.

        Returns
        -------
        str
            The table; every text that may come from the run's file (its source, run and column names, notes)
            has its control characters and newlines shown as escapes, and in Markdown its markup and HTML
            characters escaped (`grokclocks._escape`).

        Raises
        ------
        DomainError
            `width` is not `None` or an integer ≥ 0.
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
        limit = terminal_width(width)
        out = wrap_text(esc(self.header()), limit)
        for n in notes_in:
            out += wrap_text(n, limit, "  ")
        rows = fit_columns(head[:6], [b[:6] for b in body], limit, wrap=(5,), minimum=40)
        out += rows if rows is not None else _entry_blocks(body, limit)
        notes = [(b[1], b[6]) for b in body if b[6]]
        if notes:
            out += ["", "notes:"]
            for q, n in notes:
                out += wrap_text(f"{q}: {n}", limit, "  ", "    ")
        if verdicts:
            out += ["", "verdicts:"]
            w = max(len(t) for t, _ in verdicts)
            for t, text in verdicts:
                out += wrap_text(text, limit, f"  {t.ljust(w)}  ", " " * (w + 4))
        if fc:
            out += ["", "forecast (runs that have not grokked; grokclocks.forecast):"]
            for x in fc:
                out += wrap_text(x, limit, "  ", "    ")
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
            from matplotlib.lines import Line2D
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError("Comparison.plot needs matplotlib: pip install 'grokclocks[plots]'") from exc
        if path is not None:  # checked before drawing
            path = WRITER.check(path, overwrite=V.flag(overwrite, "overwrite"), suffixes=figure_suffixes())
        r = self.run
        fig = Figure(figsize=(8.0, 6.5), layout="constrained")
        ax_acc, ax_loss = fig.subplots(2, 1, sharex=True)
        palette = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink",
                   "tab:olive", "tab:cyan", "tab:gray"]
        names = self.run_names()
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
                    ax.plot(t[keep], y, color=palette[i % len(palette)], ls=ls, lw=1.0, alpha=0.85)
        ax_acc.set_ylabel("accuracy")
        ax_acc.set_ylim(-0.02, 1.02)
        ax_loss.set_ylabel("loss")
        if drew_loss:
            ax_loss.set_yscale("log")
        else:
            ax_loss.text(0.5, 0.5, "no loss logged", transform=ax_loss.transAxes, ha="center", va="center")
        ax_loss.set_xlabel("step")
        ax_acc.set_xscale("log")
        # one legend beside the axes, off the curves: a colour per run, the line style for train and test
        handles = [Line2D([], [], color="0.3", ls="-", label="train"), Line2D([], [], color="0.3", ls="--", label="test")]
        if self.clocks:
            handles.append(Line2D([], [], color="0.3", ls=":", label="clock" + (" (median)" if r.n_runs > 1 else "")))
        if r.n_runs > 1:
            handles += [Line2D([], [], color=palette[i % len(palette)], label=_short(n)) for i, n in enumerate(names)]
        never = [n for n, t in self.clocks.items() if t == math.inf]
        undefined = [n for n, t in self.clocks.items() if not (t == math.inf or (math.isfinite(t) and t > 0))]
        for what, which in (("never reached", never), ("undefined", undefined)):
            if which:
                handles.append(Line2D([], [], ls="none", label=f"{what}: {', '.join(which)}"))
        fig.legend(handles=handles, loc="outside right upper", fontsize=7)
        fig.suptitle(title if title is not None else r.source, fontsize=9)
        _clock_labels(fig, ax_acc, ax_loss, self.clocks)
        plain_figure_texts(fig)  # a run named `$\oops$` is text on the returned figure too, not a formula
        if path is not None:
            WRITER.save_figure(fig, path, overwrite=overwrite)
        return fig
