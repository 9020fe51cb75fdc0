"""The accuracy contract (tests/accuracy/harness.py): every case at its domain's corners, then
hypothesis draws (the profile sets how many: ``--hypothesis-profile=thorough`` for a long run)."""

from __future__ import annotations

import importlib
import pathlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness import AccuracyCase, evaluate, sample_points

_HERE = pathlib.Path(__file__).parent
CASES: list[AccuracyCase] = [c for f in sorted(_HERE.glob("cases_*.py"))
                             for c in importlib.import_module(f.stem).CASES]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_corners(case: AccuracyCase):
    corners = sample_points(case, 0)
    bad = [(pt, s) for pt in corners for s, _ in [evaluate(case, pt)] if s.startswith("bad")]
    assert not bad, bad[:3]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
@given(data=st.data())
def test_draws(case: AccuracyCase, data):
    pt = {nm: a.draw(data.draw(st.floats(0.0, 1.0), label=nm)) for nm, a in case.args.items()}
    status, _ = evaluate(case, pt)
    assert not status.startswith("bad"), (pt, status)
