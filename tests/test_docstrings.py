"""The API reference renders and `help()` stands alone: a check of every public docstring.

Every public object of grokclocks (each public module's `__all__`, or its public names where it has
none; classes with their public methods and attributes; the simulation layer included) is parsed
with griffe's numpy parser, the parser mkdocstrings uses for the API pages, and fails on

* raw reStructuredText left in any rendered text (section text and titles, the name, type and
  description columns of every table): double backticks or a role (`:func:`, `:math:`, ...);
* a Parameters entry whose name is not a parameter of the signature (the "description in the type
  column" symptom of `name : description` lines), several parameters sharing one entry, or a
  signature parameter without an entry;
* a parameter description that is empty or starts with "as in", "see" or "same as";
* a Parameters entry without a type (`**kwargs` instead of `**kwargs : any`): the convention asks for
  `name : type`, and the API pages' star escaping turns an untyped `**kwargs` line into one griffe cannot
  parse (`mkdocs build --strict` aborted on grokclocks.forecast's adapters);
* an object or module without a docstring, or one that starts with a section instead of a summary.

`help()` is checked separately: the pydoc text of every public object has no role and no double
backticks, and shows its formulas as Unicode: no `.. math::` directive and no LaTeX command (the site renders
the LaTeX of the source; `grokclocks._helpmaths` rewrites the runtime `__doc__` once, at import). Every
`.. math::` block of the package converts without an unknown command.

The checks are parametrised by module (each object is checked once, under the public module whose
face it belongs to), and a failure lists every offender of the module.  Run one engineer's modules
with ``-k`` on the module name or with the environment variable `GROKCLOCKS_DOC_MODULES`, a
comma-separated list of module-name prefixes::

    GROKCLOCKS_DOC_MODULES=grokclocks.linear,grokclocks.rmt pytest -q tests/test_docstrings.py

The static part (griffe) loads the package in about 1 s and imports nothing; the `help()` part
imports each module (JAX for the simulation layer).
"""

from __future__ import annotations

import importlib
import inspect
import os
import pydoc
import re
from functools import lru_cache
from pathlib import Path

import griffe
import pytest

ROOT = Path(__file__).resolve().parents[1]

# Raw reST in text that is rendered as Markdown (API pages) or read in a terminal (help()).
RAW_REST = re.compile(r"``|:(?:py:)?(?:func|class|math|data|meth|mod|attr|obj|exc|const|ref|term):`")
# LaTeX in a terminal: a `.. math::` directive, a control word (\frac, \lambda) or a spacing/brace command
RAW_LATEX = re.compile(r"^[ \t]*\.\. math::|\\[A-Za-z]+|\\[,;!{}]", re.MULTILINE)
LAZY_DESCRIPTION = re.compile(r"^\s*(?:as in|see|same as)\b", re.IGNORECASE)
# The line `@cites` appends to `__doc__` at import time (grokclocks.citations.cites); checked on its own by
# test_cites_line_has_no_rest so that the modules' help() checks report their own docstrings.
CITES_TAIL = re.compile(r"Spec IDs\n\s*-+\n(?:[^\n]+\n?)*")  # its lines, wrapped, up to a blank one
# A doctest (prompt and expected output, up to a blank line) is literal text: what a function prints, e.g. the
# LaTeX that grokclocks.symbolic.latex returns, is not maths markup in the prose.
DOCTEST = re.compile(r"^[ \t|]*>>>.*\n(?:(?![ \t|]*$)(?![ \t|]*>>>).*(?:\n|$))*", re.MULTILINE)
PARAMETERS_HEADING = re.compile(r"^(?:Other )?Parameters\n-{3,}[ \t]*\n", re.MULTILINE)
SECTION_HEADING = re.compile(r"^[A-Z][A-Za-z ]*\n-{3,}[ \t]*$", re.MULTILINE)

# Modules whose docstrings are not yet converted and which no engineer of this conversion owns; their
# checks are expected to fail (strict: a module that passes must leave this list).
# Every module is converted (grokclocks.cli and grokclocks.verification were the last two): both tables are
# empty, and a module added to them must fail its check.
PENDING: dict[str, str] = {}
# The help() check has its own table.
PENDING_HELP: dict[str, str] = {}


def _selected(module: str) -> bool:
    wanted = [w.strip() for w in os.environ.get("GROKCLOCKS_DOC_MODULES", "").split(",") if w.strip()]
    return not wanted or any(module == w or module.startswith(w + ".") for w in wanted)


@lru_cache(maxsize=1)
def _package() -> griffe.Module:
    return griffe.load("grokclocks", search_paths=[str(ROOT)], docstring_parser="numpy", resolve_aliases=True)


def _public_modules(mod: griffe.Module) -> list[griffe.Module]:
    out = [mod]
    for name, sub in mod.members.items():
        if not name.startswith("_") and not sub.is_alias and sub.is_module:
            out += _public_modules(sub)
    return out


def _face(path: str) -> str:
    """The public module an object at `path` belongs to: its path up to the first private part, minus the name."""
    parts = path.split(".")
    for i, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:i])
    return ".".join(parts[:-1])


def _exported(mod: griffe.Module) -> list[griffe.Object]:
    """The objects `mod` presents: its `__all__` if it has one, else its public names defined in it."""
    if mod.exports is not None:
        names = [str(n) for n in mod.exports]
    else:
        names = [n for n, m in mod.members.items() if not n.startswith("_") and not m.is_alias]
    out = []
    for name in names:
        member = mod.members.get(name)
        if member is None:
            continue
        try:
            target = member.final_target if member.is_alias else member
        except (griffe.AliasResolutionError, griffe.CyclicAliasError):
            continue
        if target.is_module or not target.path.startswith("grokclocks."):
            continue
        out.append(target)
    return out


@lru_cache(maxsize=1)
def _objects_by_module() -> dict[str, list[tuple[str, griffe.Object]]]:
    """Each public module -> the objects checked under it, as (displayed path, object)."""
    modules = _public_modules(_package())
    names = {m.path for m in modules}
    checked: set[str] = set()
    out: dict[str, list[tuple[str, griffe.Object]]] = {m.path: [(m.path, m)] for m in modules}
    # first pass: an object is checked under its own face when that face exports it; second: under the
    # first public module that does (objects of grokclocks._constants etc.)
    for own_face_only in (True, False):
        for mod in modules:
            for obj in _exported(mod):
                if obj.path in checked or (own_face_only and _face(obj.path) != mod.path):
                    continue
                if own_face_only and _face(obj.path) not in names:
                    continue
                checked.add(obj.path)
                out[mod.path].append((f"{mod.path}.{obj.name}", obj))
    return out


def _strings(value: object) -> list[str]:
    """Every piece of text of a parsed docstring section value (names, types, defaults, descriptions)."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _strings(v)]
    if isinstance(value, griffe.Expr):
        return [str(value)]
    return [s for attr in ("name", "annotation", "value", "description", "title", "contents")
            if hasattr(value, attr) for s in _strings(getattr(value, attr))]


def _signature_parameters(obj: griffe.Object) -> list[griffe.Parameter]:
    params = list(obj.parameters) if obj.is_function or obj.is_class else []
    if obj.is_class or (obj.is_function and obj.parent is not None and obj.parent.is_class
                        and "staticmethod" not in obj.labels):
        params = [p for p in params if p.name not in ("self", "cls")]
    # *args / **kwargs are forwarded to another documented callable, which documents them; they may
    # have an entry (checked like any other) but need not.
    return [p for p in params if p.kind not in (griffe.ParameterKind.var_positional, griffe.ParameterKind.var_keyword)]


def _untyped_entries(doc: str) -> list[str]:
    """The entry lines of the Parameters sections of `doc` that name no type (no " : ")."""
    text = inspect.cleandoc(doc)
    out = []
    for m in PARAMETERS_HEADING.finditer(text):
        block = text[m.end():]
        end = SECTION_HEADING.search(block)
        block = block[:end.start()] if end else block
        out += [line for line in block.splitlines() if line.strip() and not line[0].isspace() and " : " not in line]
    return out


def _documented_fields(cls: griffe.Class) -> set[str]:
    """Fields of a record class (dataclass, NamedTuple) documented by their own attribute docstring."""
    return {n for n, m in cls.members.items() if not m.is_alias and m.is_attribute and m.docstring is not None}


def _problems(shown: str, obj: griffe.Object) -> list[str]:
    """What is wrong with the docstring of `obj` (displayed as `shown`), one line each."""
    if obj.docstring is None or not obj.docstring.value.strip():
        return [f"{shown}: no docstring"]
    out = []
    sections = obj.docstring.parse("numpy", warnings=False)
    if not sections or sections[0].kind is not griffe.DocstringSectionKind.text:
        out.append(f"{shown}: no summary (the docstring starts with a section)")
    for section in sections:
        for text in _strings(section.title) + _strings(section.value):
            for m in {m.group(0): m for m in RAW_REST.finditer(text)}.values():
                snippet = text[max(0, m.start() - 30): m.end() + 30].replace("\n", " ")
                out.append(f"{shown}: raw reST {m.group(0)!r} in {section.kind.value}: ...{snippet}...")
    if not (obj.is_function or obj.is_class):
        return out
    if obj.is_function and ("property" in obj.labels):
        return out
    params = _signature_parameters(obj)
    names = {p.name for p in obj.parameters}
    entries = [p for s in sections if s.kind is griffe.DocstringSectionKind.parameters for p in s.value]
    for prev, entry in zip([None] + entries, entries):
        if entry.name.lstrip("*") not in names:
            out.append(f"{shown}: Parameters entry {entry.name!r} is not a parameter of the signature")
        if prev is not None and entry.description and prev.description == entry.description \
                and str(prev.annotation) == str(entry.annotation):
            out.append(f"{shown}: parameters {prev.name!r} and {entry.name!r} share one entry")
        if not entry.description.strip():
            out.append(f"{shown}: parameter {entry.name!r} has no description")
        elif LAZY_DESCRIPTION.match(entry.description):
            out.append(f"{shown}: parameter {entry.name!r} is described by reference "
                       f"({entry.description.strip().splitlines()[0][:40]!r}); say what it is")
    for line in _untyped_entries(obj.docstring.value):
        out.append(f"{shown}: Parameters entry {line.strip()!r} names no type (write `name : type`)")
    have = {e.name.lstrip("*") for e in entries}
    if obj.is_class:
        have |= _documented_fields(obj)
    missing = [p.name for p in params if p.name not in have]
    if missing:
        out.append(f"{shown}: signature parameters without a Parameters entry: {', '.join(missing)}")
    return out


def _class_members(cls: griffe.Class, shown: str) -> list[tuple[str, griffe.Object]]:
    out = []
    for name, member in cls.members.items():
        if name.startswith("_") or member.is_alias:
            continue
        out.append((f"{shown}.{name}", member))
        if member.is_class:
            out += _class_members(member, f"{shown}.{name}")
    return out


def _module_problems(module: str) -> list[str]:
    out = []
    for shown, obj in _objects_by_module()[module]:
        out += _problems(shown, obj)
        if obj.is_class:
            init = obj.members.get("__init__")
            if init is not None and not init.is_alias and init.docstring is not None:
                out += _problems(f"{shown}.__init__", init)
            for member_shown, member in _class_members(obj, shown):
                out += _problems(member_shown, member)
    return list(dict.fromkeys(out))  # a Notes or References admonition exposes its text twice


def _modules() -> list[str]:
    return sorted(_objects_by_module())


def _params(modules: list[str], pending: dict[str, str] = PENDING) -> list:
    out = []
    for m in modules:
        marks = [pytest.mark.xfail(reason=pending[m], strict=True)] if m in pending else []
        out.append(pytest.param(m, id=m, marks=marks))
    return out


@pytest.mark.parametrize("module", _params(_modules()))
def test_docstrings_render(module):
    """Every public docstring of `module` parses into clean numpy sections (see the module docstring)."""
    if not _selected(module):
        pytest.skip("not in GROKCLOCKS_DOC_MODULES")
    problems = _module_problems(module)
    assert not problems, f"{len(problems)} docstring problem(s) in {module}:\n  " + "\n  ".join(problems)


def _runtime_objects(module: str) -> list[tuple[str, object]]:
    mod = importlib.import_module(module)
    out: list[tuple[str, object]] = [(module, None)]
    for shown, obj in _objects_by_module()[module][1:]:
        try:
            value = getattr(mod, shown.rpartition(".")[2])
        except AttributeError:
            continue
        if inspect.isfunction(value) or inspect.isclass(value) or inspect.ismethod(value):
            out.append((shown, value))
    return out


@pytest.mark.parametrize("module", _params(_modules(), PENDING_HELP))
def test_help_text_has_no_rest(module):
    """`help()` on the module docstring and on every public function and class shows no reST roles or ``, and
    its maths as Unicode (no `.. math::`, no LaTeX command)."""
    if not _selected(module):
        pytest.skip("not in GROKCLOCKS_DOC_MODULES")
    problems, seen = [], set()
    for shown, value in _runtime_objects(module):
        if value is None:
            text = inspect.getdoc(importlib.import_module(module)) or ""
        else:
            text = pydoc.render_doc(value, renderer=pydoc.plaintext)
        text = CITES_TAIL.sub("", text)
        prose = DOCTEST.sub("", text)
        for src, m in [*((text, m) for m in RAW_REST.finditer(text)), *((prose, m) for m in RAW_LATEX.finditer(prose))]:
            line = src[src.rfind("\n", 0, m.start()) + 1: src.find("\n", m.end())].strip(" |")
            if line not in seen:  # a class's help() repeats its methods' text: report each line once
                seen.add(line)
                problems.append(f"{shown}: {m.group(0)!r} in help(): {line[:100]}")
    assert not problems, f"{len(problems)} help() problem(s) in {module}:\n  " + "\n  ".join(problems)


def test_cites_line_has_no_rest():
    """The `Spec IDs` line that `@cites` appends to `__doc__` (shown by `help()`) is plain text."""
    from grokclocks.linear import grok_time

    tail = (grok_time.__doc__ or "").rpartition("Spec IDs")[2]
    assert "levi:" in tail
    assert not RAW_REST.search(tail), tail


def test_the_check_finds_what_it_looks_for():
    """Each rule fires on a docstring that breaks it, and not on one that follows the convention."""
    source = '''
def good(lam, eps, *args, **kwargs):
    """Grokking time Δt at λ, in steps.

    Parameters
    ----------
    lam : float
        λ = d_in/N_tr, input dimension over training-set size; λ > 0.
    eps : float
        ε, the squared-error threshold; ε > 0.

    Returns
    -------
    float
        Δt in GD steps; `grok_time` gives the same at `d_out` = 1.
    """

def bad(lam, eps, eta0, level):
    """Uses :func:`good` and ``x``.

    Parameters
    ----------
    lam : λ>0
    eps, level : float
        The threshold.
    d_out : int
        Output dimension.
    eta0 : float
        As in `good`.
    """

def untyped(x, **options):
    """An untyped entry and an untyped `**options` entry.

    Parameters
    ----------
    x
        The number of steps; x ≥ 1.
    **options
        Further options of `good`, each a float.
    """

def bare(x, y):
    """
    Parameters
    ----------
    x : int
        The number of steps; x ≥ 1.
    """
'''
    mod = griffe.visit("probe", filepath=Path("probe.py"), code=source, docstring_parser="numpy")
    assert _problems("probe.good", mod["good"]) == []
    found = "\n".join(_problems("probe.bad", mod["bad"]))
    for expected in ("raw reST ':func:`'", "raw reST '``'", "'lam' has no description",
                     "'eps' and 'level' share one entry", "'d_out' is not a parameter",
                     "'eta0' is described by reference"):
        assert expected in found, (expected, found)
    assert "without a Parameters entry" not in found
    assert _problems("probe.untyped", mod["untyped"]) == [
        "probe.untyped: Parameters entry 'x' names no type (write `name : type`)",
        "probe.untyped: Parameters entry '**options' names no type (write `name : type`)"]
    assert _problems("probe.bare", mod["bare"]) == ["probe.bare: no summary (the docstring starts with a section)",
                                                    "probe.bare: signature parameters without a Parameters entry: y"]
    text = pydoc.render_doc(_probe_function, renderer=pydoc.plaintext)
    assert RAW_REST.search(text)
    # help() maths: the probe's raw block is caught; rendered (as the package faces do at import) it is not
    text = pydoc.render_doc(_probe_maths, renderer=pydoc.plaintext)
    assert {m.group(0).strip() for m in RAW_LATEX.finditer(text)} >= {".. math::", "\\frac", "\\lambda", "\\,", "\\rm"}
    from grokclocks._helpmaths import render_help

    namespace = {"__name__": __name__, "_probe_maths": _probe_maths}
    raw = _probe_maths.__doc__
    try:
        render_help(namespace, ["_probe_maths"])
        text = pydoc.render_doc(_probe_maths, renderer=pydoc.plaintext)
        assert not RAW_LATEX.search(text), text
        assert "L* = (d_out ε)/(2P⁻¹(d_out/2, ℓ)), √λ ≤ 1" in text, text
    finally:
        _probe_maths.__doc__ = raw


def _probe_function():
    """A function whose help() shows a role: :math:`x`."""


def _probe_maths():
    r"""A function whose help() would show LaTeX.

    .. math::

        \mathcal L^*=\frac{d_{\rm out}\,\epsilon}{2P^{-1}(d_{\rm out}/2,\ \ell)},\quad \sqrt\lambda\le1
    """


def test_every_math_block_of_the_package_converts():
    """Each `.. math::` block of the public docstrings (as the site reads them, from the source) converts to Unicode
    with every LaTeX command known: help() would otherwise show a command's bare name."""
    from grokclocks._helpmaths import UnknownLatex, plain_maths

    problems, n = [], 0
    objects = [(shown, obj) for entries in _objects_by_module().values() for shown, obj in entries]
    objects += [m for shown, obj in list(objects) if obj.is_class for m in _class_members(obj, shown)]
    for shown, obj in objects:
        doc = obj.docstring.value if obj.docstring is not None else ""
        if ".. math::" not in doc:
            continue
        n += doc.count(".. math::")
        try:
            text = plain_maths(doc, strict=True)
        except UnknownLatex as exc:
            problems.append(f"{shown}: {exc}")
            continue
        if RAW_LATEX.search(text):
            problems.append(f"{shown}: {RAW_LATEX.search(text).group(0)!r} left")
    assert n >= 150, n  # the public display formulas (175 of the package's 190 on 2026-12-07): the walk finds them
    assert not problems, "\n  ".join(problems)


@pytest.mark.parametrize("tex, text", [
    (r"\frac{a+b}{c}\,x", "((a + b)/c) x"),
    (r"\Delta t_{\rm grok}=t^*_{\rm gen}-t^*_{\rm tr}", "Δt_grok = t*_gen − t*_tr"),
    (r"\lVert x\rVert_2^2\le\tfrac12\sqrt{1-\lambda}", "‖x‖₂² ≤ (1/2)√(1 − λ)"),
    (r"\mathbb E[\nu^k]=\sum_{j=0}^{k-1}\binom{k}{j}", "E[ν^k] = Σ_(j=0)^(k−1) C(k, j)"),
    (r"W_1^\top x_i+e^{-s(\nu+g)/2}", "W₁ᵀx_i + e^(−s(ν+g)/2)"),
    (r"r=\begin{cases}2,&L=2,\\3\mu,&L\ge3.\end{cases}", "r = { 2, L=2; 3μ, L≥3. }"),
    (r'\log\frac{K-1}{\varepsilon}\quad(\texttt{mode="a-b"})', 'log((K − 1)/ε) (mode="a-b")'),
    (r"a=1,\qquad\\ b=2", "a = 1,\nb = 2"),
])
def test_latex_to_unicode(tex, text):
    from grokclocks._helpmaths import UnknownLatex, latex_to_unicode

    assert latex_to_unicode(tex, strict=True) == text
    with pytest.raises(UnknownLatex, match="nosuchcommand"):
        latex_to_unicode(r"x\nosuchcommand y", strict=True)
    assert latex_to_unicode(r"x\nosuchcommand y") == "xnosuchcommandy"
