"""Every code block of README.md and the documentation pages runs, and what it quotes is what it prints.

A reader copies the blocks of a page in order; this test does the same, for README.md, docs/*.md and
docs/theory/*.md (the verification pages under docs/verification/ hold the GPU tier's commands and are
generated or kept by the verification tooling):

* ```python blocks share one namespace per page and run in order, in a temporary directory in which
  `tests/fixtures` is the repository's (so a page can use the log fixtures as a reader at the repository
  root would, and what a block writes, such as `run.npz`, stays out of the checkout);
* ```pycon blocks run the same way, and what each `>>>` line prints (or the `Error: message` it
  raises) must be what the page shows;
* ```bash blocks whose every command is `grokclocks ...` or `python ...` run in that directory, in page
  order with the python blocks (`grokclocks` is `grokclocks.cli.main`, the entry point the install
  writes; `python` is this interpreter with the checkout first on `PYTHONPATH`); every command must exit
  with status 0. Blocks with any other command (`pip install`, `pytest`, `mkdocs`) are the install and CI
  commands: they are not run here;
* numbers a page quotes are checked: an expression statement (or a single assignment) whose comment
  starts with a number, e.g. `classifier_clock(t, loss, 1e-3)   # 1550.0: ...`, must give that number to
  half a unit of its last printed digit (a tuple such as `# (8, 101)` exactly); a block preceded by
  `<!-- doctest: output -->` is the printed output of the block before it (a line `...` stands for any
  lines, a line ending in ` ...` for the rest of a line; `rtol=X (reason)` compares its numbers to a
  relative tolerance X, the words exactly);
* a block preceded by `<!-- doctest: skip (reason) -->` is not run, and says why in the page: it needs
  a GPU, several hosts, a package the `test` extra does not install, or hours.

Each page must check at least `MIN_CHECKED[page]` quoted values or outputs, so checks cannot silently
vanish. The negative controls at the end show that a wrong number, a wrong output and a skip without a
reason each fail.
"""

from __future__ import annotations

import ast
import contextlib
import glob
import io
import math
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = ["README.md"] + [p.relative_to(ROOT).as_posix() for p in
                         sorted((ROOT / "docs").glob("*.md")) + sorted((ROOT / "docs" / "theory").glob("*.md"))]

# how many quoted values and outputs each page must have checked (pages not listed: none required)
MIN_CHECKED = {"README.md": 2, "docs/index.md": 0, "docs/getting-started.md": 13, "docs/cli.md": 1,
               "docs/compare.md": 1, "docs/byor.md": 3}

FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<lang>[\w+-]*)")
MARKER = re.compile(r"^\s*<!--\s*doctest:\s*(?P<what>skip|output)\b(?P<rest>.*?)-->\s*$")
NUMBER_COMMENT = re.compile(r"#\s*(?P<num>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?inf|nan)(?=[\s:,;=)]|$)")
TUPLE_COMMENT = re.compile(r"#\s*(?P<tup>\(\s*-?\d+\s*(?:,\s*-?\d+\s*)+\))(?=[\s:,;=]|$)")
NUM = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
RUNNABLE = ("grokclocks", "python")


@dataclass
class Block:
    """One fenced block of a page: its language, first line number, text and the marker before it."""

    lang: str
    line: int
    text: str
    marker: str | None = None  # "skip" or "output"
    marker_rest: str = ""


def parse_blocks(markdown: str) -> list[Block]:
    """The fenced code blocks of `markdown`, in order, each with the doctest marker right before it."""
    lines = markdown.splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence = m.group("indent"), m.group("fence")
        body, j = [], i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence):
            body.append(lines[j][len(indent):] if lines[j].startswith(indent) else lines[j].lstrip())
            j += 1
        k = i - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        mk = MARKER.match(lines[k]) if k >= 0 else None
        blocks.append(Block(m.group("lang").lower(), i + 1, "\n".join(body) + "\n",
                            mk.group("what") if mk else None, mk.group("rest").strip() if mk else ""))
        i = j + 1
    return blocks


# ------------------------------------------------------------------ quoted numbers in comments
def _half_unit(text: str) -> float:
    mant, _, exp = text.lower().partition("e")
    decimals = len(mant.split(".")[1]) if "." in mant else 0
    return 0.5 * 10.0 ** (-decimals) * 10.0 ** (int(exp) if exp else 0)


def _check_quoted(value, comment: str, where: str) -> int:
    """Compare `value` with the number (or integer tuple) `comment` starts with; 1 if one was checked."""
    m = TUPLE_COMMENT.match(comment)
    if m:
        quoted = ast.literal_eval(m.group("tup"))
        assert tuple(value) == quoted, f"{where} gives {tuple(value)!r}, the page says {quoted!r}"
        return 1
    m = NUMBER_COMMENT.match(comment)
    if not m or value is None or isinstance(value, (str, bytes)):
        return 0
    arr = np.asarray(value, dtype=float)
    if arr.size != 1:  # "a, b  # equal" states no number
        return 0
    got, text = float(arr), m.group("num")
    quoted = float(text)
    if math.isinf(quoted) or math.isnan(quoted):
        ok = got == quoted or (math.isnan(quoted) and math.isnan(got))
    else:
        ok = math.isclose(got, quoted, rel_tol=0.0, abs_tol=_half_unit(text) * (1 + 1e-9))
    assert ok, f"{where} gives {got!r}, the page says {text}"
    return 1


def run_python(source: str, ns: dict, where: str) -> tuple[str, int]:
    """Run a python block statement by statement in `ns`; its printed output and how many values it checked."""
    tree = ast.parse(source)
    lines = source.splitlines()
    checked = 0
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for stmt in tree.body:
            here = f"{where}, line {stmt.lineno}: `{ast.unparse(stmt)[:80]}`"
            if isinstance(stmt, ast.Expr):
                value = eval(compile(ast.Expression(stmt.value), where, "eval"), ns)
            else:
                exec(compile(ast.Module(body=[stmt], type_ignores=[]), where, "exec"), ns)  # noqa: S102 - the page's code
                single = (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                          and isinstance(stmt.targets[0], ast.Name))
                value = ns[stmt.targets[0].id] if single else None
            comment = lines[stmt.end_lineno - 1].partition("#")[2].strip()
            if comment:
                checked += _check_quoted(value, "#" + comment, here)
    return out.getvalue(), checked


def run_pycon(source: str, ns: dict, where: str) -> int:
    """Run a `>>>` session: each statement's printed value or raised `Error: message` must be the page's."""
    examples: list[tuple[str, list[str]]] = []
    for line in source.splitlines():
        if line.startswith(">>> "):
            examples.append((line[4:], []))
        elif line.startswith("... ") and examples:
            examples[-1] = (examples[-1][0] + "\n" + line[4:], examples[-1][1])
        elif examples and line.strip():
            examples[-1][1].append(line)
    for src, expected in examples:
        want = "\n".join(expected)
        try:
            try:
                got = repr(eval(compile(src, where, "eval"), ns))
            except SyntaxError:
                exec(compile(src, where, "exec"), ns)  # noqa: S102 - the page's code
                got = ""
        except Exception as exc:  # noqa: BLE001 - the page shows the error
            got = f"{type(exc).__name__}: {exc}"
        if got == "None":
            got = ""
        assert got == want, f"{where}: `{src}` gives\n{got}\nthe page shows\n{want}"
    return len(examples)


# ------------------------------------------------------------------ bash blocks
def commands(text: str) -> list[list[str]]:
    """The commands of a bash block (comments dropped, continuations joined), each as its words."""
    joined = re.sub(r"\\\n", " ", text)
    out = []
    for line in joined.splitlines():
        words = shlex.split(line, comments=True)
        if words:
            out.append(words)
    return out


def is_runnable(cmds: list[list[str]]) -> bool:
    return bool(cmds) and all(c[0] in RUNNABLE for c in cmds)


def run_command(words: list[str], where: str) -> str:
    """Run one `grokclocks` / `python` command in the current directory; its standard output."""
    assert not set(words) & {"&&", "||", "|", ";", ">", "<"}, f"{where}: shell syntax in {' '.join(words)!r}"
    argv = []
    for w in words[1:]:
        hits = sorted(glob.glob(w)) if any(ch in w for ch in "*?[") else []
        argv += hits or [w]
    if words[0] == "grokclocks":
        from grokclocks.cli import main

        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = main(argv)
            except SystemExit as exc:  # argparse
                status = exc.code
        assert status in (0, None), f"{where}: `{' '.join(words)}` exited {status}:\n{err.getvalue()}"
        return out.getvalue()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, *argv], check=False, capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, f"{where}: `{' '.join(words)}` exited {proc.returncode}:\n{proc.stderr}"
    return proc.stdout


# ------------------------------------------------------------------ printed output against the page
def _parse_rtol(rest: str, where: str) -> float:
    m = re.match(r"rtol=(?P<x>[0-9.eE+-]+)\s*(?P<why>\(.+\))?$", rest)
    if not rest:
        return 0.0
    assert m and m.group("why"), f"{where}: an output marker takes `rtol=X (reason)`, got {rest!r}"
    return float(m.group("x"))


def _tokens(line: str) -> list[str]:
    """A line as alternating text and number tokens, runs of spaces collapsed."""
    return [t for t in re.split(f"({NUM.pattern})", " ".join(line.split())) if t]


def _line_matches(expected: str, actual: str, rtol: float) -> bool:
    prefix = expected.endswith(" ...")
    exp = _tokens(expected[:-4] if prefix else expected)
    act = _tokens(actual)
    if prefix:
        act = act[:len(exp)]
        if exp and act and not NUM.fullmatch(exp[-1]):  # the last text token may be cut
            act[-1] = act[-1][:len(exp[-1])]
    if len(exp) != len(act):
        return False
    for e, a in zip(exp, act):
        if NUM.fullmatch(e) and NUM.fullmatch(a):
            if not (e == a or (rtol and math.isclose(float(a), float(e), rel_tol=rtol))):
                return False
        elif e != a:
            return False
    return True


def output_matches(expected: str, actual: str, rtol: float = 0.0) -> bool:
    """Whether printed `actual` is the page's `expected` (`...` lines, ` ...` line ends, `rtol` for numbers)."""
    exp = [x.rstrip() for x in expected.strip("\n").splitlines()]
    act = [x.rstrip() for x in actual.strip("\n").splitlines()]

    def match(i: int, j: int) -> bool:
        if i == len(exp):
            return j == len(act)
        if exp[i].strip() == "...":
            return any(match(i + 1, k) for k in range(j, len(act) + 1))
        return j < len(act) and _line_matches(exp[i], act[j], rtol) and match(i + 1, j + 1)

    return match(0, 0)


# ------------------------------------------------------------------ one page
def run_page(name: str, markdown: str, workdir: Path) -> tuple[int, list[str]]:
    """Run every block of a page in `workdir`; how many quoted values and outputs it checked, and the skips."""
    ns: dict = {"__name__": "__doc_page__"}
    checked, skipped = 0, []
    last_output: str | None = None
    cwd = os.getcwd()
    os.chdir(workdir)
    try:
        for b in parse_blocks(markdown):
            where = f"{name}:{b.line}"
            if b.marker == "skip":
                reason = re.fullmatch(r"\((.+)\)", b.marker_rest)
                assert reason, f"{where}: a skipped block must say why: <!-- doctest: skip (reason) -->"
                skipped.append(f"{where}: {reason.group(1)}")
                last_output = None
                continue
            if b.marker == "output":
                assert last_output is not None, f"{where}: an output block must follow a block that ran"
                rtol = _parse_rtol(b.marker_rest, where)
                assert output_matches(b.text, last_output, rtol), (
                    f"{where}: the page shows\n{b.text}\nthe block before it printed\n{last_output}")
                checked += 1
                last_output = None
                continue
            if b.lang == "python":
                last_output, n = run_python(b.text, ns, where)
                checked += n
            elif b.lang == "pycon":
                checked += run_pycon(b.text, ns, where)
                last_output = None
            elif b.lang in ("bash", "sh", "shell", "console"):
                cmds = commands(b.text)
                if is_runnable(cmds):
                    last_output = "".join(run_command(c, f"{where}") for c in cmds)
                else:
                    last_output = None
            else:
                last_output = None
    finally:
        os.chdir(cwd)
    return checked, skipped


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """A directory that looks like the repository root to the examples: `tests/fixtures` is the real one."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "fixtures").symlink_to(ROOT / "tests" / "fixtures", target_is_directory=True)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    # the terminal tables wrap to the terminal's width (COLUMNS first): the quoted outputs are at 100 columns,
    # whatever terminal (or none) the tests run in
    monkeypatch.setenv("COLUMNS", "100")
    return tmp_path


@pytest.mark.parametrize("page", PAGES)
def test_page_examples_run_and_quote_what_they_print(page, workdir):
    checked, _skipped = run_page(page, (ROOT / page).read_text(), workdir)
    assert checked >= MIN_CHECKED.get(page, 0), f"{page}: only {checked} quoted values or outputs were checked"


# ------------------------------------------------------------------ negative controls
def test_a_wrong_quoted_number_fails(workdir):
    with pytest.raises(AssertionError, match="the page says 1551.0"):
        run_python("import numpy as np\nfloat(np.float64(1550.0))  # 1551.0: wrong on purpose\n", {}, "control")
    with pytest.raises(AssertionError, match=r"the page says \(2, 3\)"):
        run_python("import numpy as np\nnp.zeros((2, 4)).shape  # (2, 3): wrong on purpose\n", {}, "control")
    assert run_python("x = 0.1249  # 0.12: rounded as printed\n", {}, "control")[1] == 1
    assert _half_unit("3500.03") == pytest.approx(0.005) and _half_unit("2e-3") == pytest.approx(5e-4)


def test_a_wrong_output_fails(workdir):
    page = "```python\nprint('t_test = 1525')\n```\n\n<!-- doctest: output -->\n```text\nt_test = 1500\n```\n"
    with pytest.raises(AssertionError, match="the block before it printed"):
        run_page("control.md", page, workdir)
    assert run_page("control.md", page.replace("1500", "1525"), workdir)[0] == 1
    assert output_matches("a\n...\nz = 1.3 ...", "a\nb\nc\nz = 1.275; more", rtol=0.05)
    assert not output_matches("a\n...\nz = 1.3 ...", "a\nb\nc\nz = 1.275; more")
    assert not output_matches("consistent: 1.275", "inconsistent: 1.275", rtol=0.5)


def test_a_skip_needs_a_reason_and_a_failing_command_fails(workdir):
    with pytest.raises(AssertionError, match="must say why"):
        run_page("control.md", "<!-- doctest: skip -->\n```python\nraise SystemExit\n```\n", workdir)
    assert run_page("control.md", "<!-- doctest: skip (needs a GPU) -->\n```python\n1/0\n```\n", workdir)[1]
    with pytest.raises(AssertionError, match="exited 2"):
        run_page("control.md", "```bash\ngrokclocks time --lam -1 --eps 1e-3\n```\n", workdir)
    assert not is_runnable(commands("pip install -e .\ngrokclocks list\n"))
    assert is_runnable(commands("grokclocks list   # comment\npython -c 'print(1)'\n"))


# ------------------------------------------------------------------ quotes outside code blocks
def _section(markdown: str, heading: str) -> str:
    start = markdown.index(heading)
    nxt = markdown.find("\n## ", start + len(heading))
    return markdown[start:nxt if nxt >= 0 else None]


def _rewrite_rows(src: Path, dst: Path, edit) -> Path:
    lines = src.read_text().splitlines(keepends=True)
    dst.write_text("".join(edit(lines)))
    return dst


def test_bring_your_own_run_quotes_the_errors_the_program_prints(workdir):
    """docs/byor.md's error lines are what `grokclocks compare` prints for the three broken logs they describe."""
    fix = ROOT / "tests" / "fixtures" / "logs"
    page = (ROOT / "docs" / "byor.md").read_text()
    quoted = [b.text.strip().splitlines() for b in parse_blocks(_section(page, "## Errors")) if b.lang == "text"]
    assert len(quoted) == 1 and len(quoted[0]) == 3, quoted

    def cell(lines, line_no, col, value):  # CSV line `line_no` (1 = header), column named `col`
        header = lines[0].rstrip("\n").split(",")
        row = lines[line_no - 1].rstrip("\n").split(",")
        row[header.index(col)] = value
        lines[line_no - 1] = ",".join(row) + "\n"
        return lines

    bad = workdir / "bad"
    tensor = workdir / "tensor"
    for d in (bad, tensor):
        d.mkdir()
    _rewrite_rows(fix / "metrics.csv", tensor / "metrics.csv",
                  lambda L: cell(L, 9, "train_loss", '"' + "tensor(0.0374, grad_fn=<NllLossBackward0>)" * 5 + '"'))
    _rewrite_rows(fix / "wandb_history.jsonl", workdir / "history.jsonl",
                  lambda L: L[:10] + [L[10].replace('"val/acc": ', '"val/acc": NaN, "was": ')] + L[11:])
    _rewrite_rows(fix / "metrics.csv", bad / "metrics.csv", lambda L: L[:5] + [L[6], L[5]] + L[7:])
    from grokclocks.cli import main

    got = []
    for path in (tensor / "metrics.csv", workdir / "history.jsonl", bad / "metrics.csv"):
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            assert main(["compare", str(path)]) == 2
        lines = [x for x in err.getvalue().splitlines() if x.startswith("grokclocks: error:")]
        assert len(lines) == 1, err.getvalue()
        got.append(lines[0].replace(str(path.parent) + os.sep, ""))
    assert got == quoted[0], "\n".join(["the page:", *quoted[0], "the program:", *got])


# numbers in prose quoted from an included table: `550<!-- t_cls -->` is the row with id t_cls
PROSE_QUOTE = re.compile(r"(?P<num>[-−]?\d+(?:\.\d+)?)<!-- (?P<id>\w+) -->")


def test_compare_page_prose_quotes_its_table():
    """docs/compare.md's reading of the example run quotes the table it includes (a regenerated table that
    moves a number fails here until the prose follows)."""
    page = (ROOT / "docs" / "compare.md").read_text()
    table = (ROOT / "docs" / "figures" / "compare_grokking.md").read_text()
    assert '--8<-- "docs/figures/compare_grokking.md"' in page
    values = {}
    for row in table.splitlines():
        cells = [c.strip() for c in row.strip("|").split("|")]
        if len(cells) > 3 and re.fullmatch(r"[a-z_]+", cells[1]):
            m = NUM.match(cells[3])
            if m:
                values[cells[1]] = float(m.group())
    quotes = PROSE_QUOTE.findall(page)
    assert len(quotes) >= 8, quotes
    for num, key in quotes:
        assert key in values, f"docs/compare.md quotes {key!r}, which the table has no number for"
        quoted = float(num.replace("−", "-"))
        assert abs(values[key] - quoted) <= _half_unit(num.lstrip("−-")) * (1 + 1e-9), (
            f"docs/compare.md quotes {key} = {num}; the table says {values[key]}")
