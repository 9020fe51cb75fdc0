"""Properties of every public function, enumerated from the package itself.

For each function in ``tests/properties/registry.py`` one hypothesis run draws, example by example,

one of

* typical valid input -> a result with no NaN and no inf (unless the entry documents why inf is
  returned), and no exception;
* extreme valid input (5e-324, 1e300, a boundary's neighbour) -> a finite result, a documented
  inf, or ``DomainError`` (a documented numerical limit); never NaN, never another exception;
* invalid input (NaN, +-inf, out of range, wrong shape, empty, complex, string, bool where a
  number is meant, huge integers) -> ``DomainError`` whose message names the parameter.

``test_registry_covers_the_public_api`` walks ``grokclocks`` and every submodule's ``__all__``:
a public callable with neither an entry nor an exemption (with its reason) fails it.

Example counts come from the hypothesis profile (root conftest.py: ``ci`` 60, ``thorough``
2000); an entry with ``cost`` c runs ``max(1, examples / c)`` examples of each kind.
"""

from __future__ import annotations

import importlib
import pkgutil

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import grokclocks
from grokclocks import DomainError
from properties.registry import ENTRIES, EXEMPT
from properties.runner import call, extreme_call, invalid_call, invalid_names, ok_message, short, typical_call

BY_NAME = {e.name: e for e in ENTRIES}


def _public_modules() -> list[str]:
    """Every importable module of grokclocks whose name has no leading underscore, plus _mpgrid."""
    names = ["grokclocks"]
    for info in pkgutil.walk_packages(grokclocks.__path__, "grokclocks."):
        if info.name == "grokclocks._mpgrid" or not any(p.startswith("_") for p in info.name.split(".")[1:]):
            names.append(info.name)
    return sorted(names)


def public_callables() -> dict[str, object]:
    """``"module.name"`` (relative to grokclocks) -> callable, one name per object (where it is defined,
    or the first module that exports it)."""
    found: dict[int, str] = {}
    objs: dict[int, object] = {}
    for modname in _public_modules():
        mod = importlib.import_module(modname)
        exported = getattr(mod, "__all__", None)
        if exported is None:
            exported = [n for n in vars(mod) if not n.startswith("_")]
        for n in exported:
            obj = getattr(mod, n)
            if not callable(obj) or isinstance(obj, type(grokclocks)):
                continue
            short_mod = modname.removeprefix("grokclocks").lstrip(".") or "grokclocks"
            key = f"{short_mod}.{n}"
            home = getattr(obj, "__module__", None) == modname and getattr(obj, "__name__", None) == n
            if id(obj) not in found or home:
                found[id(obj)] = key
                objs[id(obj)] = obj
    return {found[i]: objs[i] for i in found}


def test_registry_covers_the_public_api():
    api = public_callables()
    covered = set(BY_NAME) | {x.name for x in EXEMPT}
    missing = sorted(set(api) - covered)
    assert not missing, f"public callables with no property entry or exemption: {missing}"
    stale = sorted(covered - set(api))
    assert not stale, f"registry names that are not public callables: {stale}"
    assert all(x.reason.strip() for x in EXEMPT)
    assert not set(BY_NAME) & {x.name for x in EXEMPT}


def _examples(entry, cost: float | None = None) -> int:
    return max(1, int(settings.default.max_examples / max(entry.cost if cost is None else cost, 1.0)))


def _run(entry, strategy, body, kind: str, cost: float | None = None):
    """Run ``body`` under hypothesis with the profile's example count (scaled by the entry's cost)."""

    def test(drawn):
        body(drawn)

    test._hypothesis_internal_add_digest = f"{entry.name}:{kind}".encode()  # one database key per entry
    settings(max_examples=_examples(entry, cost))(given(strategy)(test))()


def _func(entry):
    f = entry.resolve()
    assert f is not None, f"{entry.name} does not resolve"
    return f


def check_typical(entry, kw, out) -> None:
    """Typical valid input: a result, no NaN, inf only where documented, no DomainError."""
    if out.kind == "domain" and entry.raises is not None and entry.raises(**kw):
        return
    if out.kind != "value" and entry.known_defect(kw):
        return
    assert out.kind not in ("error", "domain", "diverged"), f"typical input: {out.kind}: {out.detail} <- {short(kw)}"
    assert out.kind != "inf" or entry.inf, f"typical input: inf returned without a documented reason <- {short(kw)}"
    assert out.kind != "nan" or entry.nan, f"typical input: NaN returned <- {short(kw)}"
    assert out.kind != "suspect", f"typical input: suspect value: {out.detail} <- {short(kw)}"


def check_extreme(entry, kw, out) -> None:
    """Extreme valid input: a result or a DomainError, never NaN or another exception."""
    if out.kind not in ("value", "domain", "diverged") and entry.known_defect(kw):
        return
    assert out.kind != "error", f"extreme input: {out.detail} <- {short(kw)}"
    assert out.kind != "inf" or entry.inf, f"extreme input: inf returned without a documented reason <- {short(kw)}"
    assert out.kind != "nan" or entry.nan, f"extreme input: NaN returned <- {short(kw)}"
    assert out.kind != "suspect", f"extreme input: suspect value: {out.detail} <- {short(kw)}"


def check_invalid(entry, kw, out, name) -> None:
    """Invalid input: DomainError whose message names the parameter."""
    assert out.kind == "domain", f"invalid {name}: {out.kind} {out.detail} (not DomainError) <- {short(kw)}"
    names = (name,) + tuple(entry.names.get(name, ()))
    assert ok_message(out.detail, names), f"invalid {name}: message {out.detail!r} does not name {names}"


def modes(entry) -> list[str]:
    out = ["typical"]
    if any(p.extreme for p in entry.params.values()):
        out.append("extreme")
    if invalid_names(entry):
        out.append("invalid")
    return out


def call_strategy(entry, only: tuple[str, ...] | None = None):
    """``(mode, kwargs, invalid parameter or None)``: one mode per example, drawn uniformly."""
    strategies = {"typical": lambda: typical_call(entry).map(lambda nk: ("typical", nk[1], None)),
                  "extreme": lambda: extreme_call(entry).map(lambda kw: ("extreme", kw, None)),
                  "invalid": lambda: invalid_call(entry).map(lambda kn: ("invalid", kn[0], kn[1]))}
    return st.one_of(*(strategies[m]() for m in modes(entry) if only is None or m in only))


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.name)
def test_properties(entry):
    """One hypothesis run per function, each example typical, extreme or invalid (see the module docstring)."""
    f = _func(entry)

    def body(drawn):
        mode, kw, name = drawn
        out = call(entry, f, kw)
        if mode == "typical":
            check_typical(entry, kw, out)
        elif mode == "extreme":
            check_extreme(entry, kw, out)
        else:
            check_invalid(entry, kw, out, name)

    if entry.cheap_invalid and "invalid" in modes(entry):
        _run(entry, call_strategy(entry, ("typical", "extreme")), body, "valid")
        _run(entry, call_strategy(entry, ("invalid",)), body, "invalid", cost=3.0)  # a third, as in the mixed run
    else:
        _run(entry, call_strategy(entry), body, "all")


def test_domain_error_is_the_only_error_type():
    assert issubclass(DomainError, ValueError)


KNOWN = [(e, k) for e in ENTRIES for k in e.known]


@pytest.mark.xfail(strict=True, reason="a defect found by this suite, owned elsewhere; when it is fixed this "
                                       "test XPASSes: remove its Known record from the registry")
@pytest.mark.parametrize(("entry", "known"), KNOWN, ids=[f"{e.name}: {k.what[:60]}" for e, k in KNOWN])
def test_known_defects_are_still_there(entry, known):
    from properties.kinds import Lazy

    example = {k: (v.build() if isinstance(v, Lazy) else v) for k, v in known.example.items()}
    out = call(entry, _func(entry), example)
    assert out.kind in ("value", "domain") or (out.kind == "inf" and entry.inf), f"{out.kind}: {out.detail}"


def test_reliability_page_lists_every_documented_inf_and_nan():
    """docs/reliability.md lists each function whose inf (other than overflow) or NaN is a documented answer."""
    import pathlib

    page = (pathlib.Path(__file__).parents[1] / "docs" / "reliability.md").read_text()
    inf = [e.name for e in ENTRIES if e.inf and not e.inf.startswith("overflow")]
    nan = [e.name for e in ENTRIES if e.nan]
    missing = [n for n in inf + nan if f"`grokclocks.{n}`" not in page]
    assert not missing, f"documented inf/NaN not on docs/reliability.md: {missing}"


# The defects of the first API fuzz (issue 15): each input must now be a DomainError (or, for float32
# probabilities, an answer).
def _listed():
    import numpy as np

    from grokclocks import clocks, kramers, repulsion, spectral

    F = np.array([[1.0, 0.2, -0.3], [0.1, 0.9, 0.4], [-1.1, -1.1, -0.1]])
    F = F - F.mean(axis=0)
    return {
        "accuracy_clock: accuracies in percent": lambda: clocks.accuracy_clock([1.0, 2.0, 3.0], [50.0, 90.0, 100.0]),
        "nngp_kernel_matrix: index out of range": lambda: kramers.nngp_kernel_matrix([0, 7], [1, 2], 5),
        "class_separation_ratio: NaN labels": lambda: clocks.class_separation_ratio(
            np.arange(8.0).reshape(4, 2), [0, 1, np.nan, 1]),
        "sign_rule_terms: complex j": lambda: repulsion.sign_rule_terms(F, 0.1, 1 + 1j, 2),
        "balanced_factorization: depth 1e18": lambda: spectral.balanced_factorization(np.eye(2), 1e18),
        "delay_scaling_estimate: missing params": lambda: kramers.delay_scaling_estimate("ridge", lam=0.1),
        "mean_first_passage_time: target without threshold": lambda: __import__(
            "grokclocks.sim.langevin", fromlist=["x"]).mean_first_passage_time(
            "double_well_1d", None, (-1.0,), {"coord": 0}, 1.0, 0.05, 4, horizon=1.0),
        "draw_teacher_student: lam > 2 d_in": lambda: __import__(
            "grokclocks.sim.linear", fromlist=["x"]).draw_teacher_student(20, 1e6),
    }


@pytest.mark.parametrize("case", sorted(_listed()))
def test_first_fuzz_defects_are_domain_errors(case):
    with pytest.raises(DomainError):
        _listed()[case]()


def test_float32_probabilities_accepted():
    import numpy as np

    from grokclocks.clocks import softmax_logit_hessian

    z = np.array([[0.5, -1.0, 2.0], [3.0, 0.0, -2.0]], np.float32)
    p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    assert np.all(np.isfinite(softmax_logit_hessian(p)))
