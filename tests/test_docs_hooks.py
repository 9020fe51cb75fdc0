"""The docs build hook (docs/mkdocs_hooks.py): display maths, and code spans that become API links."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

pytest.importorskip("mkdocs")
markdown = pytest.importorskip("markdown")
griffe = pytest.importorskip("griffe")

ROOT = Path(__file__).resolve().parents[1]


def _hooks():
    spec = importlib.util.spec_from_file_location("grokclocks_mkdocs_hooks", ROOT / "docs" / "mkdocs_hooks.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


H = _hooks()
LINKABLE = {"grokclocks.linear", "grokclocks.linear.t_star", "grokclocks.linear.GrokTimes",
            "grokclocks.linear.GrokTimes.dt", "grokclocks.rmt", "grokclocks.rmt.mp_edges"}


def test_code_spans_link_by_face_and_dotted_name():
    scopes = ["grokclocks.linear", "grokclocks"]
    text = "Uses `t_star`, `grokclocks.rmt.mp_edges`, `rmt.mp_edges`, `t_star()` and `lam`; `x + 1` stays."
    out = H.link_code_spans(text, scopes, LINKABLE, local={"lam"})
    assert out == ("Uses [`t_star`][grokclocks.linear.t_star], [`grokclocks.rmt.mp_edges`][grokclocks.rmt.mp_edges], "
                   "[`rmt.mp_edges`][grokclocks.rmt.mp_edges], [`t_star()`][grokclocks.linear.t_star] and `lam`; "
                   "`x + 1` stays.")


def test_parameters_unknown_names_fences_maths_and_doctests_stay_code():
    scopes = ["grokclocks.linear", "grokclocks"]
    lines = ["`t_star` is a parameter here; `nowhere` is no object.", "```", "`t_star`", "```",
             ".. math::", "    `t_star`", ">>> `t_star`", "[`t_star`][grokclocks.linear.t_star]",
             "After the block: `GrokTimes.dt`."]
    out = H.link_code_spans("\n".join(lines), scopes, LINKABLE, local={"t_star"}).split("\n")
    assert out[:8] == lines[:8]
    assert out[8] == "After the block: [`GrokTimes.dt`][grokclocks.linear.GrokTimes.dt]."
    # without the parameter, the same span links; a span inside a link is not linked twice
    assert H.link_code_spans("`t_star`", scopes, LINKABLE) == "[`t_star`][grokclocks.linear.t_star]"


def test_linkable_paths_are_the_rendered_public_objects():
    pkg = griffe.load("grokclocks", search_paths=[str(ROOT)], resolve_aliases=True)
    modules = H.rendered_modules()
    assert "grokclocks.linear" in modules and "grokclocks.sim.train" in modules
    paths = H.linkable_paths(pkg, modules)
    assert {"grokclocks.linear.t_star", "grokclocks.rmt.mp_edges", "grokclocks.kramers.mfpt_2d_exact",
            "grokclocks.linear.GrokTimes.dt"} <= paths
    assert not [p for p in paths if any(part.startswith("_") for part in p.split("."))]
    # grokclocks itself has no API page: its re-export grokclocks.t_star is not a target
    assert "grokclocks.t_star" not in paths


def test_scopes_start_at_the_class_then_the_package_face():
    pkg = griffe.load("grokclocks", search_paths=[str(ROOT)], resolve_aliases=True)
    t_star = pkg["linear"].members["t_star"].final_target
    assert H._scopes(t_star) == ["grokclocks.linear", "grokclocks"]
    cls = pkg["sim.train"].members["Trajectory"].final_target  # defined in grokclocks.runfile
    method = next(m for n, m in cls.members.items() if m.is_function and not n.startswith("_"))
    assert H._scopes(method) == ["grokclocks.runfile.Trajectory", "grokclocks.runfile", "grokclocks"]
    assert H._scopes(cls) == ["grokclocks.runfile.Trajectory", "grokclocks.runfile", "grokclocks"]
    assert H._scopes(pkg["linear"]) == ["grokclocks.linear", "grokclocks"]


def test_math_directive_becomes_a_display_block():
    out = H.rst_to_markdown(["Text.", "", ".. math::", "", "    x = 1", "", "More."])
    assert out == ["Text.", "", "", "$$", "x = 1", "$$", "", "More."]


def test_prose_stars_are_escaped_outside_code_maths_bullets_and_starred_parameters():
    # Python-Markdown reads any two asterisks of a paragraph as emphasis: t*_gen - t*_tr lost both stars
    assert H.escape_prose_stars("Δt = t*_gen − t*_tr; `a*b` stays") == r"Δt = t\*_gen − t\*_tr; `a*b` stays"
    lines = ["**params : float", "    *args : any", ".. math:: t^*", "    L^*", ">>> 2*3", "```", "x*y", "```"]
    assert H.escape_prose_stars("\n".join(lines)).split("\n") == lines
    assert H.escape_prose_stars("* a bullet with L* in it") == r"* a bullet with L\* in it"
    # rendered: the stars stay, no <em>
    md = markdown.Markdown()
    assert md.convert(H.escape_prose_stars("t*_gen − t*_tr")) == "<p>t*_gen − t*_tr</p>"
    assert "<em>" in md.convert("t*_gen − t*_tr")


# ---------------------------------------------------------------------------------------------------
# Building the docs changes no tracked file; every page is in the navigation or deliberately out of it;
# the API pages list functions first.

def _generated_pages():
    spec = importlib.util.spec_from_file_location("grokclocks_generated_pages_test",
                                                  ROOT / "docs" / "generated_pages.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _tracked_docs() -> dict[str, bytes] | None:
    import subprocess

    try:
        out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "docs"], capture_output=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0 or not out.stdout:
        return None
    return {p: (ROOT / p).read_bytes() for p in out.stdout.decode().split("\0") if p and (ROOT / p).is_file()}


def test_building_the_docs_changes_no_tracked_file():
    """`python docs/gen_pages.py` (what CI runs before `mkdocs build`) and the pages the build generates leave every
    tracked file of docs/ as it was: a certificate made after a docs build is not 'with uncommitted changes'."""
    before = _tracked_docs()
    if before is None:
        pytest.skip("not a git checkout")
    G = _generated_pages()
    G.gen_pages().main([])
    filled = G.show("architecture.md")  # the other generated parts are made by CI's `mkdocs build --strict`
    assert "| `grokclocks.linear` |" in filled and "Import cycles between files" in filled
    assert _tracked_docs() == before
    for name in G.PAGES:  # generated at build time, so never stored: a stored copy would go stale
        assert f"docs/{name}" not in before, f"docs/{name} is generated at build time and must not be tracked"
    for name, parts in G.PARTS.items():  # a tracked page holds only a note where its generated part goes
        text = (ROOT / "docs" / name).read_text()
        for part in parts:
            body = G._marker(part).search(text).group(2)
            assert "|---" not in body and len(body.splitlines()) <= 3, f"docs/{name}: stored content in '{part}'"
    with pytest.raises(ValueError, match="no '<!-- modules:begin -->'"):
        G.fill("architecture.md", "# Architecture\n\nno markers\n")


def test_every_page_is_in_the_navigation_or_deliberately_out_of_it():
    import fnmatch

    yaml = pytest.importorskip("yaml")
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())

    def pages(node):
        if isinstance(node, str):
            yield node
        elif isinstance(node, list):
            for x in node:
                yield from pages(x)
        elif isinstance(node, dict):
            for x in node.values():
                yield from pages(x)

    nav = set(pages(config["nav"]))
    out = [ln.strip() for ln in config.get("not_in_nav", "").splitlines() if ln.strip()]
    excluded = [ln.strip() for ln in config.get("exclude_docs", "").splitlines() if ln.strip()]
    generated = set(_generated_pages().PAGES)
    docs = ROOT / "docs"
    files = {p.relative_to(docs).as_posix() for p in docs.rglob("*.md")} | generated
    assert out, "mkdocs.yml: not_in_nav names the pages reached by a link"
    for page in sorted(files):
        if any(fnmatch.fnmatch(page, pat) for pat in excluded):
            continue
        assert page in nav or any(fnmatch.fnmatch(page, pat) for pat in out), \
            f"docs/{page} is neither in mkdocs.yml's nav nor in its not_in_nav/exclude_docs"
    missing = [p for p in nav if p not in files]
    assert not missing, f"nav entries without a page: {missing}"


def test_the_docs_build_commands_set_what_ci_sets():
    """CI exports NO_MKDOCS_2_WARNING=1 (the theme's 10-line banner); a reader's `mkdocs build` line does too."""
    ci = (ROOT / ".ci" / "run").read_text()
    assert "NO_MKDOCS_2_WARNING=1" in ci
    for page in ("README.md", "docs/getting-started.md", "docs/architecture.md"):
        lines = [ln for ln in (ROOT / page).read_text().splitlines() if "mkdocs build" in ln and "`" not in ln]
        assert lines, page
        for ln in lines:
            assert "NO_MKDOCS_2_WARNING=1 mkdocs build --strict" in ln, f"{page}: {ln}"


def test_api_pages_list_functions_first_and_do_not_repeat_the_module_docstring():
    pkg = griffe.load("grokclocks", search_paths=[str(ROOT)], resolve_aliases=True)
    H.FunctionsFirst().on_package(pkg=pkg, loader=None)
    for path in ("grokclocks.linear", "grokclocks.rmt", "grokclocks.sim.modular", "grokclocks.verification"):
        mod = pkg.modules_collection[path]
        kinds = [H._target(mod.members[str(n)]).kind.value for n in mod.exports if str(n) in mod.members]
        rank = [{"function": 0, "class": 1}.get(k, 2) for k in kinds]
        assert rank == sorted(rank) and rank[0] == 0, (path, kinds)
    linear = [str(n) for n in pkg.modules_collection["grokclocks.linear"].exports]
    assert linear.index("grok_time") < linear.index("GrokTimes") < linear.index("ERF_SQRT2")
    # the page's own text points elsewhere and does not describe the module again (its docstring follows)
    def describes(prose: str, docstring: str) -> bool:
        words = lambda t: re.findall(r"[\w'–-]+", t.lower())[:3]  # noqa: E731
        return any("spec `" in par or "](" not in par or words(par) == words(docstring)
                   for par in prose.split("\n\n") if par.strip())

    for page in sorted((ROOT / "docs" / "api").glob("*.md")):
        text = page.read_text()
        prose = re.sub(r"^# .*\n", "", text.split("\n::: ")[0]).strip()
        for module in H._DIRECTIVE_LINE.findall(text):
            doc = pkg.modules_collection[module].docstring.value
            assert not describes(prose, doc), f"docs/api/{page.name} describes {module} before its docstring does"
    # the pages as they were: each one said the docstring's first sentence again in other words
    old = {"grokclocks.linear": "Formulas of the linear teacher–student model (spec `levi`): losses, accuracy maps. "
                                "See the [equation → function table](../theory/levi.md).",
           "grokclocks.sim.models": "The papers' models as pure init/apply pairs (linear, two-layer) and their losses."}
    for module, prose in old.items():
        assert describes(prose, pkg.modules_collection[module].docstring.value), module
