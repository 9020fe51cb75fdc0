"""The accuracy contract (tests/accuracy/harness.py): every case at its domain's corners and fixed
points, then hypothesis draws (the profile sets how many: ``--hypothesis-profile=thorough`` for a long
run; a case with a slow reference may ask for fewer draws in the default ``ci`` profile), stratified
across the pieces of each declared branch."""

from __future__ import annotations

import importlib
import pathlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness import AccuracyCase, draw_point, evaluate, fixed_points

_HERE = pathlib.Path(__file__).parent
CASES: list[AccuracyCase] = [c for f in sorted(_HERE.glob("cases_*.py"))
                             for c in importlib.import_module(f.stem).CASES]


def _skip_in_ci(case: AccuracyCase) -> None:
    """``ci_examples=0``: a case whose single evaluation takes seconds runs only in the thorough profile
    (and in docs/gen_accuracy.py), not in the default CI run."""
    if case.ci_examples == 0 and settings._current_profile == "ci":
        pytest.skip("slow reference: run with --hypothesis-profile=thorough (or docs/gen_accuracy.py)")


def _switch_points(case: AccuracyCase) -> int:
    """Number of fixed points beside the case's switch points (two per switch point)."""
    return sum(2 * len(b.cuts(case.args[b.arg])) for b in case.branches)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_corners(case: AccuracyCase):
    _skip_in_ci(case)
    corners = fixed_points(case)
    bad = [(pt, s) for pt in corners for s, _ in [evaluate(case, pt)] if s.startswith("bad")]
    assert not bad, bad[:3]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_draws(case: AccuracyCase):
    _skip_in_ci(case)
    n = settings().max_examples
    if case.ci_examples is not None and settings._current_profile == "ci":
        # a slow case spends its CI budget on the points beside its switch points first (test_corners),
        # the rest on draws (at least one)
        n = max(1, min(n, case.ci_examples) - _switch_points(case))

    @settings(max_examples=n)
    @given(data=st.data())
    def draw(data):
        us = [data.draw(st.floats(0.0, 1.0), label=nm) for nm in case.args]
        pieces = [data.draw(st.integers(0, b.pieces(case.args[b.arg])), label=f"{b.arg} piece")
                  for b in case.branches]
        bus = [data.draw(st.floats(0.0, 1.0), label=f"{b.arg} in piece") for b in case.branches]
        pt = draw_point(case, us, pieces, bus)
        status, _ = evaluate(case, pt)
        assert not status.startswith("bad"), (pt, status)

    draw()
