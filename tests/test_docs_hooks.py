"""The docs build hook (docs/mkdocs_hooks.py): display maths, and code spans that become API links."""

from __future__ import annotations

import importlib.util
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
