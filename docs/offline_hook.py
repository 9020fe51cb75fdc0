"""MkDocs hook: the built site loads nothing from the network.

After the build, every HTML and CSS file of the site is read; a script, style sheet, font, image or
frame that a browser would fetch from an `http://` or `https://` address (a CDN, web fonts) fails the
build with the file and the address. Links a reader follows (`<a href>`, `<link rel="canonical">`)
are not loads and are allowed. MathJax is part of the site (`docs/javascripts/mathjax/`), and the
theme's web fonts are off (`theme.font: false` in `mkdocs.yml`).

`tests/test_docs_offline.py` runs `external_loads` on the pages and on crafted HTML without building
the site; CI's `mkdocs build --strict` runs it on the built site.
"""

from __future__ import annotations

import re
from pathlib import Path

_URL = r"""(?P<url>(?:https?:)?//[^"'\s>)]+)"""
# <script src>, <img src>, <iframe src>, <source src>, <embed src>, <audio/video src>: fetched on load
_SRC = re.compile(r"<(?:script|img|iframe|source|embed|audio|video|track)\b[^>]*?\bsrc\s*=\s*[\"']?" + _URL, re.IGNORECASE)
_LINK = re.compile(r"<link\b[^>]*>", re.IGNORECASE)
_LOADING_REL = {"stylesheet", "preload", "modulepreload", "prefetch", "preconnect", "dns-prefetch", "icon",
                "shortcut", "apple-touch-icon", "manifest", "mask-icon"}
_CSS_URL = re.compile(r"""(?:@import\s+|url\(\s*)["']?""" + _URL, re.IGNORECASE)


def external_loads(text: str, *, css: bool = False) -> list[str]:
    """The network addresses an HTML page (or, with `css`, a style sheet) would fetch when opened.

    Parameters
    ----------
    text : str
        The HTML or CSS source.
    css : bool
        `True` for a style sheet: only `@import` and `url(...)` are read; `False` (the default) for an
        HTML page: `src` of scripts, images, frames and media, `href` of `<link>` elements whose `rel`
        loads something (style sheets, preloads, preconnects, icons), and the `url(...)` of inline styles.

    Returns
    -------
    list of str
        The addresses, in order of appearance; empty when the page stands alone.
    """
    found = [m.group("url") for m in _CSS_URL.finditer(text)]
    if css:
        return found
    found += [m.group("url") for m in _SRC.finditer(text)]
    for tag in _LINK.findall(text):
        rel = re.search(r"""\brel\s*=\s*["']?([^"'>]+)""", tag, re.IGNORECASE)
        href = re.search(r"""\bhref\s*=\s*["']?""" + _URL, tag, re.IGNORECASE)
        if href and rel and set(rel.group(1).lower().split()) & _LOADING_REL:
            found.append(href.group("url"))
    return found


def site_external_loads(site_dir: str | Path) -> list[str]:
    """Every `file: address` of a built site whose HTML or CSS would fetch from the network.

    Parameters
    ----------
    site_dir : str or os.PathLike
        The built site (`mkdocs build --site-dir`).

    Returns
    -------
    list of str
        One `relative/path.html: address` per load from the network; empty for a site that works offline.
    """
    root = Path(site_dir)
    out = []
    for path in sorted(root.rglob("*")):
        if path.suffix not in (".html", ".css") or not path.is_file():
            continue
        rel = path.relative_to(root).as_posix()
        out += [f"{rel}: {u}" for u in external_loads(path.read_text(errors="replace"), css=path.suffix == ".css")]
    return out


def on_post_build(config, **kwargs):
    """Fail the build when a page of the site would load a script, style, font or image from the network."""
    from mkdocs.exceptions import PluginError

    bad = site_external_loads(config["site_dir"])
    if bad:
        shown = "\n  ".join(bad[:20]) + (f"\n  ... and {len(bad) - 20} more" if len(bad) > 20 else "")
        raise PluginError(f"the site would load {len(bad)} file(s) from the network (it must work offline):\n  {shown}")
