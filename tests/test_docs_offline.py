"""The documentation stands on the repository alone: offline, and without files or tools from outside it.

* The site loads nothing from the network: `mkdocs.yml` names no address among its scripts and style
  sheets and turns the theme's web fonts off; no page, style sheet or script of docs/ loads from one
  (`docs/offline_hook.py`, which also fails `mkdocs build` on a built page that would); MathJax is in
  `docs/javascripts/mathjax/` with every font and extension file it asks for at run time.
* README.md, docs/ and the package never send a reader to a file outside the clone (the project's
  specification folder, `shared/`, is not part of it) or to a tool the project does not provide.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
MATHJAX = DOCS / "javascripts" / "mathjax"


def _hook():
    spec = importlib.util.spec_from_file_location("offline_hook", DOCS / "offline_hook.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _mkdocs_list(key: str) -> list[str]:
    """The entries of a top-level list of mkdocs.yml (`extra_javascript`, `extra_css`, `hooks`)."""
    m = re.search(rf"^{key}:\n((?:[ \t]+-[^\n]*\n|[ \t]*#[^\n]*\n)+)", (ROOT / "mkdocs.yml").read_text(), re.MULTILINE)
    assert m, f"mkdocs.yml has no {key} list"
    return [x.strip()[1:].strip() for x in m.group(1).splitlines() if x.strip().startswith("-")]


# ------------------------------------------------------------------ offline
def test_mkdocs_yml_loads_nothing_from_the_network():
    text = (ROOT / "mkdocs.yml").read_text()
    addresses = [ln for ln in text.splitlines() if re.search(r"https?://", ln) and not ln.lstrip().startswith("#")]
    assert all(ln.startswith(("site_url:", "repo_url:")) for ln in addresses), addresses  # metadata, not loads
    assert re.search(r"^  font: false\s*$", text, re.MULTILINE), "theme.font must be false (web fonts come from a CDN)"
    assert "docs/offline_hook.py" in _mkdocs_list("hooks")
    for key in ("extra_javascript", "extra_css"):
        for entry in _mkdocs_list(key):
            assert not re.match(r"(https?:)?//", entry), f"{key}: {entry} is loaded from the network"
            assert (DOCS / entry).is_file(), f"{key}: docs/{entry} does not exist"
    assert "javascripts/mathjax/tex-chtml.js" in _mkdocs_list("extra_javascript")


def test_no_page_style_or_script_of_docs_loads_from_the_network():
    hook = _hook()
    bad = []
    for path in sorted(DOCS.rglob("*")):
        if MATHJAX in path.parents or not path.is_file():
            continue
        if path.suffix in (".md", ".html"):
            bad += [f"{path.relative_to(ROOT)}: {u}" for u in hook.external_loads(path.read_text())]
        elif path.suffix == ".css":
            bad += [f"{path.relative_to(ROOT)}: {u}" for u in hook.external_loads(path.read_text(), css=True)]
        elif path.suffix == ".js":
            bad += [f"{path.relative_to(ROOT)}: {u}" for u in re.findall(r"https?://[^\s\"')]+", path.read_text())]
    assert not bad, bad


def test_the_hook_finds_what_a_browser_would_fetch(tmp_path):
    """The loads a CDN-based site has (the MathJax script, the theme's Google fonts) are found; links are not."""
    hook = _hook()
    page = """<html><head>
    <link rel="canonical" href="https://grokclocks.readthedocs.io/">
    <link rel="preconnect" href="https://fonts.gstatic.com" crossorigin>
    <link rel="stylesheet" href="https://fonts.googleapis.com/css?family=Roboto:300,400&display=fallback">
    <script src="https://unpkg.com/mathjax@3/es5/tex-mml-chtml.js"></script>
    <script src="../javascripts/mathjax/tex-chtml.js"></script>
    <style>body { background: url('//example.org/bg.png') }</style>
    </head><body><a href="https://arxiv.org/abs/2310.16441">paper</a><img src=https://example.org/x.png></body></html>"""
    assert hook.external_loads(page) == ["//example.org/bg.png", "https://unpkg.com/mathjax@3/es5/tex-mml-chtml.js",
                                         "https://example.org/x.png", "https://fonts.gstatic.com",
                                         "https://fonts.googleapis.com/css?family=Roboto:300,400&display=fallback"]
    assert hook.external_loads("@import url(https://fonts.googleapis.com/css2);", css=True) == \
        ["https://fonts.googleapis.com/css2"]
    site = tmp_path / "site"
    (site / "a").mkdir(parents=True)
    (site / "a" / "index.html").write_text(page)
    (site / "ok.html").write_text('<script src="javascripts/mathjax/tex-chtml.js"></script><a href="https://x.org">x</a>')
    assert len(hook.site_external_loads(site)) == 5 and hook.site_external_loads(site)[0].startswith("a/index.html: ")
    (site / "a" / "index.html").unlink()
    assert hook.site_external_loads(site) == []
    pytest.importorskip("mkdocs")
    (site / "a" / "index.html").write_text(page)
    from mkdocs.exceptions import PluginError

    with pytest.raises(PluginError, match="would load 5 file"):
        hook.on_post_build({"site_dir": str(site)})


def test_mathjax_bundle_has_every_file_it_asks_for():
    main = (MATHJAX / "tex-chtml.js").read_text()
    fonts = set(re.findall(r"MathJax_[A-Za-z0-9-]+\.woff", main))
    assert len(fonts) >= 20, "the font table of tex-chtml.js was not found"
    missing = [f for f in fonts if not (MATHJAX / "output" / "chtml" / "fonts" / "woff-v2" / f).is_file()]
    assert not missing, missing
    assert 'resolvePath("output/chtml/fonts/woff-v2"' in main  # fonts are found beside the script
    config = (DOCS / "javascripts" / "mathjax.js").read_text()
    for ext in re.findall(r'"\[tex\]/(\w+)"', config):  # extensions the configuration loads
        assert (MATHJAX / "input" / "tex" / "extensions" / f"{ext}.js").is_file(), ext
    # extensions MathJax loads when a page first uses one of their macros (its autoload table): the
    # bundle has each, except mhchem (\ce, \pu) and bussproofs (prooftree), which no page or docstring uses
    autoload = set(re.findall(r'"\[tex\]/(\w+)"', main)) & {
        "action", "amscd", "bbox", "boldsymbol", "braket", "bussproofs", "cancel", "color", "enclose", "extpfeil",
        "html", "mhchem", "unicode", "verb"}
    assert len(autoload) == 14, autoload
    absent = {e for e in autoload if not (MATHJAX / "input" / "tex" / "extensions" / f"{e}.js").is_file()}
    assert absent == {"mhchem", "bussproofs"}, absent
    sources = [p for p in [*DOCS.rglob("*.md"), *(ROOT / "grokclocks").rglob("*.py")]]
    users = [p.relative_to(ROOT).as_posix() for p in sources
             if re.search(r"\\(ce|pu)\{|\\begin\{prooftree\}", p.read_text())]
    assert not users, f"these use mhchem or bussproofs, which the MathJax bundle leaves out: {users}"
    assert (MATHJAX / "LICENSE").is_file() and "Apache License" in (MATHJAX / "LICENSE").read_text()
    size = sum(p.stat().st_size for p in MATHJAX.rglob("*") if p.is_file())
    assert size < 2_000_000, f"the MathJax bundle grew to {size} bytes"


# ------------------------------------------------------------------ nothing from outside the clone
# the project's specification folder and the tools of the workplace it is developed in
OUTSIDE = re.compile(r"(?<![\w.-])(?:\.\./)?shared/(?:spec|gpu-runs|DESIGN\.md|hooks|seeds)\b|`shared/`|\.\./shared\b"
                     r"|\bspec/(?:\*|<[\w ]+>|[a-z]+)\.md\b|\bduplicates --|\bfind_string\b|\bgive_back\b")


def _published_files() -> list[Path]:
    files = [ROOT / "README.md", ROOT / "CITATION.cff", ROOT / "mkdocs.yml", ROOT / "pyproject.toml"]
    files += [p for p in DOCS.rglob("*") if p.is_file() and p.suffix in (".md", ".py", ".js", ".css", ".json", ".txt")
              and MATHJAX not in p.parents]
    files += sorted((ROOT / "grokclocks").rglob("*.py"))
    return files


def test_readme_docs_and_package_need_nothing_outside_the_clone():
    bad = []
    for path in _published_files():
        for no, line in enumerate(path.read_text().splitlines(), 1):
            if OUTSIDE.search(line):
                bad.append(f"{path.relative_to(ROOT)}:{no}: {line.strip()[:120]}")
    assert not bad, "\n".join(bad)


def test_the_outside_pattern_catches_each_form():
    for line in ("The specs live in `shared/spec/` beside the repository.", "see ../shared/spec/levi.md",
                 "as tabulated in ``shared/spec/*.md``", "(`spec/kramers.md`, authoritative)",
                 "duplicates --change   # repeated logic", "Every result of `shared/spec/<paper>.md`"):
        assert OUTSIDE.search(line), line
    for line in ("spec ID `levi:eq19`", "the shared inputs are replicated", "docs/theory/levi.md",
                 "a shared/global array", "the shared-memory layout"):
        assert not OUTSIDE.search(line), line
