r"""MkDocs hook: docstrings render as Markdown, and code spans naming public objects link to them.

grokclocks docstrings follow the numpy convention with Markdown-friendly markup: inline code in single
backticks, inline maths as Unicode text, display formulas in `.. math::` blocks (LaTeX).  This hook

* adds a Markdown preprocessor (registered before mkdocstrings copies the site's extension list) that
  turns a `.. math::` block into a `$$ ... $$` display block for pymdownx.arithmatex.  As a safety net
  it also rewrites a reST role left in a docstring (`:math:` to an inline formula, `:func:` and the other
  reference roles to inline code); tests/test_docstrings.py fails on every such role in the source, so
  the net hides nothing;
* defines `CodeSpanLinks`, a griffe extension (loaded by mkdocstrings, see `mkdocs.yml`) that turns a
  code span holding the name of a public object shown in the API pages into a cross-reference
  (mkdocs-autorefs): a dotted name (`grokclocks.rmt.mp_edges`) as it is, a bare or partly dotted one
  (`t_star`, `rmt.mp_edges`, `GrokTimes.dt`) resolved against the documented object's own package
  face (`grokclocks.linear` for a function of `grokclocks/linear/_crossing.py`) and then its parents;
  it also escapes the asterisks of inline Unicode maths (t*_gen, L*), which Markdown would read as
  emphasis;
* defines `SpecIdsSection`, a griffe extension that shows the spec IDs of every `@cites`-decorated
  function in the API pages.

Text inside fenced code blocks and doctest lines is left alone.
"""

from __future__ import annotations

import re
from pathlib import Path

import griffe
from markdown import Extension
from markdown.preprocessors import Preprocessor
from mkdocs.plugins import event_priority

_ROLE_MATH = re.compile(r":math:`([^`]+)`")
_ROLE_REF = re.compile(r":(?:py:)?(?:func|mod|class|meth|attr|data|obj|exc|const|term|ref):`~?([^`]+)`")
_DIRECTIVE = re.compile(r"^(?P<indent>\s*)\.\.\s+math::\s*(?P<rest>.*)$")
_FENCE = re.compile(r"^\s*(```|~~~)")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def rst_to_markdown(lines: list[str]) -> list[str]:
    """Rewrite the `.. math::` blocks and any reST role left in `lines` (see the module docstring)."""
    out: list[str] = []
    i, n, fenced = 0, len(lines), False
    while i < n:
        line = lines[i]
        if _FENCE.match(line):
            fenced = not fenced
            out.append(line)
            i += 1
            continue
        if fenced:
            out.append(line)
            i += 1
            continue
        m = _DIRECTIVE.match(line)
        if m:
            base = len(m.group("indent"))
            body = [m.group("rest")] if m.group("rest").strip() else []
            i += 1
            while i < n and (not lines[i].strip() or _indent(lines[i]) > base):
                body.append(lines[i].strip())
                i += 1
            while body and not body[-1]:
                body.pop()
            while body and not body[0]:
                body.pop(0)
            pad = " " * base
            out += ["", pad + "$$"] + [pad + b for b in body if b] + [pad + "$$", ""]
            continue
        line = _ROLE_MATH.sub(lambda mm: r"\(" + mm.group(1) + r"\)", line)
        line = _ROLE_REF.sub(lambda mm: "`" + mm.group(1) + "`", line)
        out.append(line)
        i += 1
    return out


class _RstRoles(Preprocessor):
    def run(self, lines: list[str]) -> list[str]:
        return rst_to_markdown(lines)


class RstRolesExtension(Extension):
    """Markdown extension wrapping `rst_to_markdown` (runs before fenced code and arithmatex)."""

    def extendMarkdown(self, md):
        md.preprocessors.register(_RstRoles(md), "grokclocks_rst_roles", 40)


# Generated pages that are one wide table: long identifiers in code may break at separators.
WIDE_PAGES = {"errata.md", "coverage.md", "verification/cpu.md", "verification/gpu.md"}


_CODE = re.compile(r"<code>([^<]*)</code>")


def on_page_content(html, page, **kwargs):
    """On the wide pages, let long identifiers in code break only after `::`, `/` and `_`."""
    if page.file.src_uri not in WIDE_PAGES:
        return html
    return _CODE.sub(lambda m: "<code>" + re.sub(r"(::|/|_)", r"\1<wbr>", m.group(1)) + "</code>", html)


@event_priority(100)  # before mkdocstrings reads config.markdown_extensions
def on_config(config, **kwargs):
    if not any(isinstance(e, RstRolesExtension) for e in config.markdown_extensions):
        config.markdown_extensions.append(RstRolesExtension())
    return config


def _generated_pages():
    """docs/generated_pages.py (the parts of the site made at build time), loaded by path like this hook."""
    import importlib.util
    import sys

    name = "grokclocks_generated_pages"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).resolve().parent / "generated_pages.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return sys.modules[name]


def on_files(files, config, **kwargs):
    """Add the pages generated at build time (docs/generated_pages.py), in memory: nothing is written into docs/.
    A file of the same name left in docs/ (an old checkout's copy) is replaced."""
    from mkdocs.structure.files import File

    gp = _generated_pages()
    for name in gp.PAGES:
        old = files.get_file_from_path(name)
        if old is not None:
            files.remove(old)
        files.append(File.generated(config, name, content=gp.page(name)))
    return files


def on_page_markdown(markdown, page, **kwargs):
    """Fill the generated parts of a tracked page (between its `<!-- NAME:begin -->` / `<!-- NAME:end -->`)."""
    return _generated_pages().fill(page.file.src_uri, markdown)


_SPEC_ID_ARG = re.compile(r"""['"]([a-z]+:[\w.-]+)['"]""")


class SpecIdsSection(griffe.Extension):
    """Griffe extension: add a `Spec IDs` section built from the `@cites(...)` decorator.

    mkdocstrings reads the source statically, so it does not see the `Spec IDs` section that `@cites`
    appends to `__doc__` at import time. This extension reads the decorator's arguments instead and
    appends the same information (ID and status, from `grokclocks.citations.SPEC`) as a numpy-style
    section of its own.
    """

    def on_instance(self, *, obj, **kwargs):
        decorators = getattr(obj, "decorators", None) or []
        ids: list[str] = []
        for dec in decorators:
            if dec.callable_path.rpartition(".")[2] == "cites":
                ids += _SPEC_ID_ARG.findall(str(dec.value))
        if not ids or obj.docstring is None or "\nSpec IDs" in obj.docstring.value:
            return
        from grokclocks.citations import SPEC  # light import: no JAX

        tags = ", ".join(f"`{i}` ({SPEC[i].status})" if i in SPEC else f"`{i}`" for i in ids)
        obj.docstring.value = obj.docstring.value.rstrip() + "\n\nSpec IDs\n--------\n" + tags + "."


# ---------------------------------------------------------------------------------------------------
# Code spans that name a public object become links to its API entry.

_API_DIR = Path(__file__).resolve().parent / "api"
_DIRECTIVE_LINE = re.compile(r"^:::\s+(grokclocks(?:\.\w+)*)\s*$", re.MULTILINE)
# a code span (not part of a longer run of backticks, not already the text of a link)
_CODE_SPAN = re.compile(r"(?<![`\[])`(?P<name>[A-Za-z_][\w.]*)(?P<call>\(\))?`(?![`\]])")
_DOCTEST = re.compile(r"^\s*(>>>|\.\.\.)( |$)")


def rendered_modules(api_dir: Path = _API_DIR) -> list[str]:
    """The modules the API pages render (their `::: grokclocks.x` directives)."""
    return sorted({m for page in api_dir.glob("*.md") for m in _DIRECTIVE_LINE.findall(page.read_text("utf-8"))})


def _public_face(path: str) -> str:
    """`path` up to its first private part (`grokclocks.linear._crossing.t_star` -> `grokclocks.linear`)."""
    parts = path.split(".")
    for i, part in enumerate(parts):
        if part.startswith("_"):
            return ".".join(parts[:i])
    return path


def _target(obj: griffe.Object | griffe.Alias) -> griffe.Object | None:
    try:
        return obj.final_target if obj.is_alias else obj
    except (griffe.AliasResolutionError, griffe.CyclicAliasError):
        return None


def linkable_paths(pkg: griffe.Module, modules: list[str]) -> set[str]:
    """Identifiers the API pages define: each rendered module, its exported names, their public members.

    Only objects the pages show are included (one without a docstring is not rendered), so that a
    link never points at a missing target (`mkdocs build --strict` fails on one).
    """
    out: set[str] = set()
    for path in modules:
        try:
            mod = pkg.modules_collection[path] if path != pkg.path else pkg
        except KeyError:
            continue
        out.add(path)
        names = [str(n) for n in mod.exports] if mod.exports is not None else [
            n for n, m in mod.members.items() if not n.startswith("_") and not m.is_alias]
        for name in names:
            target = _target(mod.members[name]) if name in mod.members else None
            if target is None or target.is_module or not _shown(target):
                continue
            out.add(f"{path}.{name}")
            if target.is_class:
                out |= {f"{path}.{name}.{n}" for n, m in target.members.items()
                        if not n.startswith("_") and _shown(_target(m))}
    return out


def _shown(obj: griffe.Object | None) -> bool:
    """Whether mkdocstrings renders `obj` (it skips an object without a docstring, `show_if_no_docstring`)."""
    return obj is not None and (obj.has_docstrings if obj.is_class else obj.has_docstring)


def _scopes(obj: griffe.Object) -> list[str]:
    """Where a bare name in the docstring of `obj` is looked up: its class, its face, the face's parents."""
    face = _public_face(obj.module.path)
    out = []
    if obj.parent is not None and obj.parent.is_class:
        out.append(f"{face}.{obj.parent.name}")
    if obj.is_class:
        out.append(f"{face}.{obj.name}")
    parts = face.split(".")
    out += [".".join(parts[:i]) for i in range(len(parts), 0, -1)]
    return out


def link_code_spans(text: str, scopes: list[str], linkable: set[str], local: set[str] = frozenset()) -> str:
    """Turn the code spans of `text` naming a public object into `[`name`][identifier]` links.

    A name in `local` (the documented function's own parameters) is left as code.  Fenced code,
    `.. math::` blocks and doctest lines are left alone.
    """
    def resolve(match: re.Match) -> str:
        name = match.group("name")
        if name in local:
            return match.group(0)
        for candidate in [name] + [f"{s}.{name}" for s in scopes]:
            if candidate in linkable:
                return f"[{match.group(0)}][{candidate}]"
        return match.group(0)

    return _map_prose_lines(text, lambda line: _CODE_SPAN.sub(resolve, line))


def _map_prose_lines(text: str, func) -> str:
    """Apply `func` to every line of `text` outside fenced code, `.. math::` blocks and doctest lines."""
    out, fenced, math_indent = [], False, None
    for line in text.split("\n"):
        stripped = line.strip()
        if math_indent is not None and stripped and _indent(line) <= math_indent:
            math_indent = None
        if _FENCE.match(line):
            fenced = not fenced
        elif _DIRECTIVE.match(line):
            math_indent = _indent(line)
        elif not fenced and math_indent is None and not _DOCTEST.match(line):
            line = func(line)
        out.append(line)
    return "\n".join(out)


# A Parameters entry of a starred parameter ("**params : float") or a list bullet ("* item") keeps its stars.
_LEADING_STARS = re.compile(r"^(\s*(?:\*{1,2}(?=[A-Za-z_]\w*\s*:)|\*\s))")
_ANY_CODE_SPAN = re.compile(r"(`+).+?\1")


def escape_prose_stars(text: str) -> str:
    """Escape the asterisks of prose (`t*_gen`, `L*`) so that Markdown does not read two of them as emphasis.

    The convention writes inline maths as Unicode text, where `*` is a superscript star (t*_gen − t*_tr
    rendered as "t<em>_gen − t</em>_tr" before).  Code spans, fenced code, `.. math::` blocks, doctest lines,
    list bullets and the stars of a `*args` / `**kwargs` Parameters entry are left alone; docstrings use no
    Markdown emphasis (`help()` shows it as raw asterisks anyway).
    """
    def line_stars(line: str) -> str:
        lead = _LEADING_STARS.match(line)
        head, rest = (lead.group(1), line[lead.end():]) if lead else ("", line)
        parts, pos = [], 0
        for m in _ANY_CODE_SPAN.finditer(rest):
            parts += [rest[pos:m.start()].replace("*", r"\*"), m.group(0)]
            pos = m.end()
        parts.append(rest[pos:].replace("*", r"\*"))
        return head + "".join(parts)

    return _map_prose_lines(text, line_stars)


def _walk(obj: griffe.Object):
    yield obj
    for member in obj.members.values():
        if not member.is_alias:
            yield from _walk(member)


_KIND_ORDER = {"function": 0, "class": 1}  # then attributes, type aliases, modules


class FunctionsFirst(griffe.Extension):
    """Griffe extension: an API page lists a module's functions first, then its classes, then its constants.

    mkdocs.yml renders members ungrouped in `__all__` order (`group_by_category: false`,
    `members_order: [__all__, source]`); this reorders each rendered module's `__all__` (as griffe sees it; the
    package is untouched) by kind, keeping the package's own order within a kind. A module without `__all__` gets
    one: its public names defined in it (aliases excluded), the set the page shows, reordered the same way.
    """

    def on_package(self, *, pkg, loader, **kwargs):
        if pkg.name != "grokclocks":
            return
        for path in rendered_modules():
            try:
                mod = pkg.modules_collection[path] if path != pkg.path else pkg
            except KeyError:
                continue
            names = list(mod.exports) if mod.exports is not None else [
                n for n, m in mod.members.items() if not n.startswith("_") and not m.is_alias]

            def kind(name, mod=mod) -> int:
                target = _target(mod.members[str(name)]) if str(name) in mod.members else None
                return _KIND_ORDER.get(target.kind.value, 2) if target is not None else 3

            mod.exports = sorted(names, key=kind)


class CodeSpanLinks(griffe.Extension):
    """Griffe extension: code spans naming a public object become cross-references, prose stars are escaped.

    See the module docstring and `escape_prose_stars`.
    """

    def on_package(self, *, pkg, loader, **kwargs):
        if pkg.name != "grokclocks":
            return
        linkable = linkable_paths(pkg, rendered_modules())
        for obj in _walk(pkg):
            if obj.docstring is None:
                continue
            local = {p.name for p in obj.parameters} if obj.is_function else set()
            if obj.is_class:
                local |= {p.name for p in obj.parameters}
            value = link_code_spans(obj.docstring.value, _scopes(obj), linkable, local)
            obj.docstring.value = escape_prose_stars(value)
