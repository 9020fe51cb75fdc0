"""The shared argument checks: one message style naming parameter, value and domain."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from grokclocks import DomainError
from grokclocks._validate import (
    as_float_array,
    choice,
    finite,
    in_open_interval,
    integer_at_least,
    nonnegative,
    not_equal,
    positive,
    scalar_or_array,
)

finite_floats = st.floats(allow_nan=False, allow_infinity=False, width=64)


def test_domain_error_is_a_value_error():
    assert issubclass(DomainError, ValueError)
    with pytest.raises(ValueError):
        positive(-1.0, "lam")


# ---------------------------------------------------------------- messages: parameter, value, domain


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: positive(-1.5, "lam"), "lam must be > 0 (got -1.5)"),
        (lambda: positive(0, "eta0"), "eta0 must be > 0 (got 0.0)"),
        (lambda: nonnegative(-0.25, "gamma"), "gamma must be >= 0 (got -0.25)"),
        (lambda: in_open_interval(1.3, "lam", 0, 1, context="for the late-time expansion"),
         "lam must be in (0, 1) for the late-time expansion (got 1.3)"),
        (lambda: in_open_interval(0.0, "level", 0, 1), "level must be in (0, 1) (got 0.0)"),
        (lambda: positive(-2.0, "t", context="for the late-time form"), "t must be > 0 for the late-time form (got -2.0)"),
        (lambda: not_equal(np.asarray(1.0), "lam", 1.0, context="(the inverse moments diverge)"),
         "lam must be != 1 (the inverse moments diverge) (got 1.0)"),
        (lambda: integer_at_least(0, "d_out"), "d_out must be an integer >= 1 (got 0)"),
        (lambda: integer_at_least(2.5, "d_out"), "d_out must be an integer >= 1 (got 2.5)"),
        (lambda: integer_at_least(1, "p", minimum=2), "p must be an integer >= 2 (got 1)"),
        (lambda: choice("both", "which", {"train": "train", "tr": "train", "gen": "gen"}),
         "which must be one of 'train', 'tr', 'gen' (got 'both')"),
        (lambda: as_float_array([], "t"), "t must not be empty"),
        (lambda: finite(float("nan"), "eps"), "eps must be finite (got nan)"),
        (lambda: finite(float("-inf"), "eps"), "eps must be finite (got -inf)"),
    ],
)
def test_messages(call, message):
    with pytest.raises(DomainError) as info:
        call()
    assert str(info.value) == message


def test_array_message_names_the_first_bad_element():
    with pytest.raises(DomainError, match=r"^lam must be > 0 \(got -2\.0\)$"):
        positive([1.0, 3.0, -2.0, -7.0], "lam")
    with pytest.raises(DomainError, match=r"^t must be >= 0 \(got -1\.0\)$"):
        nonnegative(np.array([[0.0, 1.0], [-1.0, 2.0]]), "t")
    with pytest.raises(DomainError, match=r"^lam must be in \(0, 1\) \(got 1\.0\)$"):
        in_open_interval([0.5, 1.0, 0.2], "lam", 0.0, 1.0)
    with pytest.raises(DomainError, match=r"^lam must be != 1 \(got 1\.0\)$"):
        not_equal(np.array([0.5, 1.0]), "lam", 1.0)


# ---------------------------------------------------------------- non-finite, empty, non-numeric


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, [1.0, math.nan], np.array([0.1, np.inf])])
@pytest.mark.parametrize("check", [finite, positive, nonnegative, lambda x, n: in_open_interval(x, n, -10, 10)])
def test_non_finite_rejected_by_every_check(check, bad):
    with pytest.raises(DomainError, match=r"^x must be finite \(got (nan|inf|-inf)\)$"):
        check(bad, "x")


@pytest.mark.parametrize("empty", [[], (), np.array([]), np.zeros((0, 3))])
@pytest.mark.parametrize("check", [finite, positive, nonnegative, as_float_array])
def test_empty_rejected(check, empty):
    with pytest.raises(DomainError, match=r"^x must not be empty$"):
        check(empty, "x")


def test_empty_allowed_on_request():
    a = as_float_array([], "x", allow_empty=True)
    assert a.shape == (0,) and a.dtype == np.float64


@pytest.mark.parametrize("bad", ["abc", 1 + 2j, [1.0, "x"], {"a": 1}])
def test_non_numeric_rejected(bad):
    with pytest.raises(DomainError, match=r"^x must be a real number or array of real numbers \(got "):
        as_float_array(bad, "x")


def test_none_is_reported_as_none():
    # np.asarray(None, dtype=float) is nan: the message must still show what the caller passed
    with pytest.raises(DomainError) as info:
        as_float_array(None, "x")
    assert "None" in str(info.value), str(info.value)


def test_conversion_to_float64():
    a = as_float_array([1, 2, 3], "x")
    assert a.dtype == np.float64 and a.tolist() == [1.0, 2.0, 3.0]
    assert as_float_array(np.float32(0.5), "x").dtype == np.float64
    assert positive(2, "x").dtype == np.float64
    # boundary values accepted where the domain is closed
    assert nonnegative(0.0, "gamma") == 0.0
    assert in_open_interval(0.999, "lam", 0, 1) == 0.999


# ---------------------------------------------------------------- integers


@pytest.mark.parametrize("value", [1, 7, np.int64(3), np.int32(2), 4.0, np.float64(5.0), np.asarray(3), np.asarray(6.0)])
def test_integer_accepted(value):
    out = integer_at_least(value, "d_out")
    assert type(out) is int and out == int(value)


@pytest.mark.parametrize("value", [True, False, np.bool_(True)])
def test_bool_is_not_an_integer(value):
    with pytest.raises(DomainError, match=r"^d_out must be an integer >= 1 \(got "):
        integer_at_least(value, "d_out")


@pytest.mark.parametrize("value", [2.5, math.nan, math.inf, "3", None, [1], -1, 0, np.int64(0), np.asarray([3]),
                                   np.asarray(True), np.asarray(2.5), np.asarray(0)])
def test_integer_rejected(value):
    with pytest.raises(DomainError, match=r"^d_out must be an integer >= 1 \(got "):
        integer_at_least(value, "d_out")


def test_integer_minimum():
    assert integer_at_least(0, "k", minimum=0) == 0
    assert integer_at_least(2, "p", minimum=2) == 2
    with pytest.raises(DomainError, match="p must be an integer >= 2"):
        integer_at_least(1, "p", minimum=2)


# ---------------------------------------------------------------- choice and scalar_or_array


def test_choice_aliases_and_tuple():
    table = {"train": "train", "tr": "train", "gen": "gen"}
    assert choice("tr", "which", table) == "train"
    assert choice("gen", "which", table) == "gen"
    assert choice("fixed", "mode", ("fixed", "fresh", "paper")) == "fixed"
    with pytest.raises(DomainError, match=r"^mode must be one of 'fixed', 'fresh', 'paper' \(got 'Fixed'\)$"):
        choice("Fixed", "mode", ("fixed", "fresh", "paper"))


def test_scalar_or_array():
    out = scalar_or_array(np.asarray(2.5))
    assert type(out) is float and out == 2.5
    arr = scalar_or_array(np.array([1.0, 2.0]))
    assert isinstance(arr, np.ndarray) and arr.tolist() == [1.0, 2.0]
    one = scalar_or_array(np.array([3.0]))
    assert isinstance(one, np.ndarray) and one.shape == (1,)


# ---------------------------------------------------------------- properties


@given(finite_floats)
def test_positive_accepts_exactly_the_positive_floats(x):
    if x > 0:
        assert float(positive(x, "x")) == x
    else:
        with pytest.raises(DomainError) as info:
            positive(x, "x")
        assert str(info.value) == f"x must be > 0 (got {float(x)!r})"


@given(finite_floats)
def test_nonnegative_accepts_exactly_the_nonnegative_floats(x):
    if x >= 0:
        assert float(nonnegative(x, "x")) == x
    else:
        with pytest.raises(DomainError, match=r"^x must be >= 0"):
            nonnegative(x, "x")


@given(st.lists(finite_floats, min_size=1, max_size=20))
def test_open_interval_on_arrays(xs):
    inside = all(0 < x < 1 for x in xs)
    if inside:
        assert in_open_interval(xs, "lam", 0, 1).tolist() == xs
    else:
        first_bad = next(x for x in xs if not 0 < x < 1)
        with pytest.raises(DomainError) as info:
            in_open_interval(xs, "lam", 0, 1)
        assert str(info.value) == f"lam must be in (0, 1) (got {float(first_bad)!r})"


@given(st.integers(min_value=-10**6, max_value=10**6))
def test_integer_at_least_property(n):
    if n >= 1:
        assert integer_at_least(n, "n") == n
    else:
        with pytest.raises(DomainError, match=rf"^n must be an integer >= 1 \(got {n}\)$"):
            integer_at_least(n, "n")


def test_index_array():
    from grokclocks._validate import index_array

    np.testing.assert_array_equal(index_array([0, 2.0, 4], "y", 5), [0, 2, 4])
    assert index_array(np.array([1, 3]), "y", 5).dtype == np.int64
    with pytest.raises(DomainError, match=r"y must be in \[0, 5\) \(got 5\)"):
        index_array([0, 5], "y", 5)
    with pytest.raises(DomainError, match="non-integer"):
        index_array([0.5], "y", 5)
    with pytest.raises(DomainError, match="y must be in"):
        index_array([-1], "y", 5)
    with pytest.raises(DomainError, match="finite"):
        index_array([np.nan], "y", 5)


# ---------------------------------------------------------------- reals: what is not a real number


@pytest.mark.parametrize("bad", [True, np.bool_(False), np.array([True, False]), 1 + 2j, np.array([1.0 + 0j]),
                                 np.array(["1", "2"]), np.datetime64("2020-01-01"), b"1", [1.0, None]])
def test_non_reals_rejected(bad):
    with pytest.raises(DomainError, match=r"^x must be a real number or array of real numbers \(got "):
        as_float_array(bad, "x")


def test_huge_python_int_is_not_finite_float():
    with pytest.raises(DomainError, match=r"^x must be finite"):
        as_float_array(10**400, "x")
    assert float(as_float_array(10**30, "x")) == 1e30


def test_scalar_keyword():
    assert positive(2, "eta", scalar=True) == 2.0 and type(positive(2, "eta", scalar=True)) is float
    with pytest.raises(DomainError, match=r"^eta must be a scalar \(got an array of shape \(2,\)\)$"):
        positive([1.0, 2.0], "eta", scalar=True)


def test_allow_nan_and_inf():
    from grokclocks._validate import as_float_array as f

    assert np.isnan(f([1.0, np.nan], "r", allow_nan=True)[1])
    with pytest.raises(DomainError, match="must be finite or NaN"):
        f([1.0, np.inf], "r", allow_nan=True)
    for both in ([np.nan, np.inf, -np.inf], np.array([-np.inf, 0.5, np.inf])[::-1]):  # -inf + inf is NaN
        with pytest.raises(DomainError, match="must be finite or NaN"):
            f(both, "r", allow_nan=True)
    assert np.isinf(f(np.inf, "t", allow_inf=True))
    with pytest.raises(DomainError, match="must be finite or \\+-inf"):
        f(np.nan, "t", allow_inf=True)


# ---------------------------------------------------------------- integers, flags, indices, sequences


def test_integer_maximum_and_int64_cap():
    assert integer_at_least(5, "depth", 1, maximum=10) == 5
    with pytest.raises(DomainError, match=r"^depth must be an integer in \[1, 10\] \(got 11\)$"):
        integer_at_least(11, "depth", 1, maximum=10)
    with pytest.raises(DomainError, match=r"^n must be an integer in \[1, 9223372036854775807\]"):
        integer_at_least(2**63, "n", 1)


@pytest.mark.parametrize("bad", ["yes", 1, 0.0, None, np.array([True])])
def test_flag_rejects_truthy_non_bools(bad):
    from grokclocks._validate import flag

    with pytest.raises(DomainError, match=r"^sharp must be True or False \(got "):
        flag(bad, "sharp")
    assert flag(np.bool_(True), "sharp") is True


def test_integer_and_index_arrays():
    from grokclocks._validate import index_array, integer_array

    assert integer_array([3, -2.0], "labels").tolist() == [3, -2]
    for bad, msg in (([0.5], "non-integer"), ([np.nan], "finite"), ([True], "booleans"), ("a", "integers"),
                     ([1 + 1j], "real number")):
        with pytest.raises(DomainError, match=msg):
            integer_array(bad, "labels")
    with pytest.raises(DomainError, match=r"j must be in \[0, 3\) \(got 3\)"):
        index_array([0, 3], "j", 3)


def test_sequence():
    from grokclocks._validate import sequence

    assert sequence((1, 2), "ns") == [1, 2]
    for bad in (None, "ab", {"a": 1}, 3):
        with pytest.raises(DomainError, match="^ns must be "):
            sequence(bad, "ns")
    with pytest.raises(DomainError, match="at least 1 item"):
        sequence([], "ns")


# ---------------------------------------------------------------- probabilities: tolerance of the dtype


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
def test_probabilities_tolerance_scales_with_dtype(dtype):
    from grokclocks._validate import probabilities

    z = np.linspace(-3.0, 5.0, 7).astype(dtype)
    p = (np.exp(z - z.max()) / np.exp(z - z.max()).sum()).astype(dtype)  # a softmax in the caller's precision
    assert probabilities(p, "probs").dtype == np.float64
    off = (p.astype(np.float64) * (1 + 50 * 7 * float(np.finfo(dtype).eps))).astype(dtype)
    with pytest.raises(DomainError, match="^probs must sum to 1"):
        probabilities(off, "probs")
    with pytest.raises(DomainError, match="^probs must be >= 0"):
        probabilities(np.array([1.5, -0.5]), "probs")


def test_float32_softmax_accepted_by_the_logit_hessian():
    from grokclocks.clocks import softmax_logit_hessian

    z = np.array([0.3, -1.2, 2.0, 0.1], np.float32)
    p = np.exp(z) / np.exp(z).sum()
    assert abs(float(p.astype(np.float64).sum()) - 1.0) > 1e-12  # the old 1e-12 tolerance rejected it
    H = softmax_logit_hessian(p)
    assert H.shape == (4, 4) and np.all(np.isfinite(H))


# ---------------------------------------------------------------- one-line values, sizes, error classes


def test_show_is_one_line_and_short():
    from grokclocks._validate import show

    text = show(np.arange(10000.0).reshape(100, 100))
    assert "\n" not in text and len(text) <= 60 and "(100, 100)" in text
    assert show("a\nb") == "'a\\nb'"


def test_max_size():
    from grokclocks._validate import MAX_ELEMENTS, max_size

    max_size(MAX_ELEMENTS, "p", 1)
    with pytest.raises(DomainError, match=r"^p is too large or too fine: the result would have"):
        max_size(MAX_ELEMENTS + 1, "p", 10**6)
    with pytest.raises(DomainError):
        max_size(float("nan"), "h", 0.0)


def test_error_subclasses_keep_old_except_clauses():
    from grokclocks._validate import ResultOverflow, UnknownKey

    assert issubclass(ResultOverflow, DomainError) and issubclass(ResultOverflow, OverflowError)
    assert issubclass(UnknownKey, DomainError) and issubclass(UnknownKey, KeyError)
    assert str(UnknownKey("spec_id must be registered")) == "spec_id must be registered"


def test_roundoff_tolerance_follows_the_input_dtype():
    from grokclocks._validate import roundoff_tol

    assert roundoff_tol(np.zeros(3), 3, floor=1e-10) == 1e-10  # float64: the old tolerance stands
    assert roundoff_tol(np.zeros(3, np.float32), 3, floor=1e-10) == pytest.approx(24 * float(np.finfo(np.float32).eps))
    assert roundoff_tol([1.0, 2.0], 2) == 16 * float(np.finfo(np.float64).eps)


def test_float32_kernels_and_spectra_accepted():
    from grokclocks import kramers, linear

    A = np.random.default_rng(0).standard_normal((5, 5)).astype(np.float32)
    S = (A @ A.T).astype(np.float32)  # symmetric to float32 round-off only
    assert kramers.t_eff_sgd_direction(0.1, S, np.ones(5), 4) > 0
    nu = np.linalg.eigvalsh(A[:, :2] @ A[:, :2].T).astype(np.float32)  # rank 2: three round-off eigenvalues
    assert np.isfinite(linear.loss_train_equal_proj(1.0, nu, 0.01))
    with pytest.raises(DomainError, match="must be >= 0"):
        linear.loss_train_equal_proj(1.0, np.array([1.0, -1e-3]), 0.01)


def test_as_float_array_and_finite_hand_back_the_extremes_they_reduced():
    from grokclocks import _validate as V

    x = np.array([[3.0, np.nan, -2.0], [7.5, 0.25, np.nan]])
    a, ext = V.as_float_array(x, "x", allow_nan=True, extrema=True)
    assert a is not x and np.shares_memory(a, x) and ext == (-2.0, 7.5)  # NaN skipped
    assert V.as_float_array(x[:, ::-1], "x", allow_nan=True, extrema=True)[1] == (-2.0, 7.5)  # a reversed view
    assert V.as_float_array([np.nan, np.nan], "x", allow_nan=True, extrema=True)[1] == (pytest.approx(np.nan, nan_ok=True),) * 2
    assert V.as_float_array([1.0, np.inf, -np.inf], "x", allow_inf=True, extrema=True)[1] == (-np.inf, np.inf)
    assert V.as_float_array([1.0, np.nan, np.inf], "x", allow_nan=True, allow_inf=True, extrema=True)[1] == (1.0, np.inf)
    assert V.as_float_array([], "x", allow_empty=True, extrema=True)[1] == (1.0, 1.0)  # as in_domain
    assert V.as_float_array(2.5, "x", scalar=True, extrema=True) == (2.5, (2.5, 2.5))
    v, ext = V.finite(np.array([4, -1, 9]), "x", extrema=True)
    assert v.dtype == np.float64 and ext == (-1.0, 9.0)
    assert V.finite(1.5, "x", scalar=True, extrema=True) == (1.5, (1.5, 1.5))
    # the same checks and messages as without extrema
    with pytest.raises(DomainError, match=r"x must be finite or NaN \(got inf"):
        V.as_float_array([1.0, np.nan, np.inf], "x", allow_nan=True, extrema=True)
    with pytest.raises(DomainError, match="x must be finite"):
        V.finite([1.0, -np.inf], "x", extrema=True)


def test_nonnegative_allow_inf_takes_plus_inf_and_keeps_the_messages():
    from grokclocks import _validate as V

    x = np.array([0.0, 3.0, np.inf])
    assert V.nonnegative(x, "t", allow_inf=True) is not x
    assert V.nonnegative(np.inf, "t", allow_inf=True, scalar=True) == math.inf
    assert V.nonnegative(x, "t", allow_inf=True, extrema=True)[1] == (0.0, math.inf)
    for bad, msg in ((np.array([1.0, np.nan, np.inf]), r"t must be finite or \+-inf \(got nan\)"),
                     (float("nan"), r"t must be finite or \+-inf \(got nan\)"),
                     (np.array([1.0, -np.inf]), r"t must be >= 0 or inf \(got -inf\)"),
                     (-2.0, r"t must be >= 0 or inf \(got -2.0\)")):
        with pytest.raises(DomainError, match=msg):
            V.nonnegative(bad, "t", context="or inf", allow_inf=True)
    with pytest.raises(DomainError, match="t must be finite"):  # without allow_inf, +inf stays refused
        V.nonnegative(x, "t")


def test_broadcasting_fast_path_keeps_the_check():
    from grokclocks import _validate as V

    @V.broadcasting("a", "b")
    def f(a, b, c=None):
        return 1

    assert f(np.ones(3), np.ones(3), np.ones(7)) == 1 and f(1.0, np.ones(3)) == 1 and f(np.ones((2, 1)), [1, 2, 3]) == 1
    for args, kwargs in (((np.ones(3), np.ones(4)), {}), ((np.ones(3),), {"b": np.ones(4)}),
                         (([1, 2], np.ones(3)), {})):
        with pytest.raises(DomainError, match="a, b must broadcast against each other"):
            f(*args, **kwargs)
