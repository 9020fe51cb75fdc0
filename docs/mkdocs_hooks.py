"""MkDocs hook: render the reStructuredText math and cross-reference roles used in docstrings.

grokclocks docstrings follow the numpy convention and write formulas as reStructuredText
(``:math:`\\lambda```, ``.. math::`` blocks) so that ``help()`` and Sphinx-style readers show
them.  mkdocstrings renders docstrings as Markdown, so this hook adds a small Markdown
preprocessor (before mkdocstrings copies the site's extension list) that rewrites

* ``:math:`x```                       -> ``\\(x\\)``        (pymdownx.arithmatex, inline)
* ``.. math:: x`` / indented block    -> ``$$ ... $$``     (pymdownx.arithmatex, display)
* ``:func:`f```, ``:mod:`m``` ...     -> ```f```           (inline code)

Text inside fenced code blocks is left alone.

It also defines :class:`SpecIdsSection`, a griffe extension (loaded by mkdocstrings, see
``mkdocs.yml``) that shows the spec IDs of every ``@cites``-decorated function in the API pages.
"""

from __future__ import annotations

import re

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
    """Rewrite the reST math/reference roles of ``lines`` (see the module docstring)."""
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
    """Markdown extension wrapping :func:`rst_to_markdown` (runs before fenced code and arithmatex)."""

    def extendMarkdown(self, md):  # noqa: N802 - Markdown API
        md.preprocessors.register(_RstRoles(md), "grokclocks_rst_roles", 40)


# Generated pages that are one wide table: long identifiers in code may break at separators.
WIDE_PAGES = {"errata.md", "coverage.md", "verification/cpu.md", "verification/gpu.md"}


_CODE = re.compile(r"<code>([^<]*)</code>")


def on_page_content(html, page, **kwargs):
    """On the wide pages, let long identifiers in code break only after ``::``, ``/`` and ``_``."""
    if page.file.src_uri not in WIDE_PAGES:
        return html
    return _CODE.sub(lambda m: "<code>" + re.sub(r"(::|/|_)", r"\1<wbr>", m.group(1)) + "</code>", html)


@event_priority(100)  # before mkdocstrings reads config.markdown_extensions
def on_config(config, **kwargs):
    if not any(isinstance(e, RstRolesExtension) for e in config.markdown_extensions):
        config.markdown_extensions.append(RstRolesExtension())
    return config


_SPEC_ID_ARG = re.compile(r"""['"]([a-z]+:[\w.-]+)['"]""")


class SpecIdsSection(griffe.Extension):
    """Griffe extension: add a ``Spec IDs`` section built from the ``@cites(...)`` decorator.

    mkdocstrings reads the source statically, so it does not see the ``Spec IDs: ...`` line that
    ``@cites`` appends to ``__doc__`` at import time. This extension reads the decorator's arguments
    instead and appends the same information (ID and status, from
    :data:`grokclocks.citations.SPEC`) as a numpy-style section of its own.
    """

    def on_instance(self, *, obj, **kwargs):  # noqa: D102 - griffe hook
        decorators = getattr(obj, "decorators", None) or []
        ids: list[str] = []
        for dec in decorators:
            if dec.callable_path.rpartition(".")[2] == "cites":
                ids += _SPEC_ID_ARG.findall(str(dec.value))
        if not ids or obj.docstring is None or "\nSpec IDs" in obj.docstring.value:
            return
        from grokclocks.citations import SPEC  # light import: no JAX

        tags = ", ".join(f"``{i}`` ({SPEC[i].status})" if i in SPEC else f"``{i}``" for i in ids)
        obj.docstring.value = obj.docstring.value.rstrip() + "\n\nSpec IDs\n--------\n" + tags + "."
