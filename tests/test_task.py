"""grokclocks.task: the one training-mask convention and the default accuracy levels."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from grokclocks import DomainError
from grokclocks import coverage as COV
from grokclocks import kramers as K
from grokclocks import task as T


@given(p=st.integers(2, 9), seed=st.integers(0, 10_000))
def test_every_form_gives_the_same_mask_and_back(p, seed):
    m = np.random.default_rng(seed).random((p, p)) < 0.5
    forms = [m, m.reshape(-1), m.astype(np.int8), m.reshape(-1).astype(float), T.mask_indices(m),
             list(T.mask_indices(m))]
    pairs = T.mask_indices(m, pairs=True)
    if pairs.shape != (2, 2):  # p = 2 with two pairs: a square 0/1 array, read as a mask (documented)
        forms.append(pairs)
    for f in forms:
        np.testing.assert_array_equal(T.as_mask(f, p), m)
    np.testing.assert_array_equal(T.flat_mask(m), m.reshape(-1))
    np.testing.assert_array_equal(T.mask_from_indices(T.mask_indices(m), p), m)
    idx = T.mask_indices(m, pairs=True)
    assert np.all(idx[:, 0] * p + idx[:, 1] == T.mask_indices(m))


def test_square_01_array_is_a_mask():
    """The one ambiguous spelling (p = 2, two pairs given as rows) reads as a mask, as documented."""
    np.testing.assert_array_equal(T.as_mask([[1, 0], [1, 1]], 2), [[True, False], [True, True]])


def test_stacks_of_masks():
    m = np.random.default_rng(0).random((3, 5, 5)) < 0.5
    np.testing.assert_array_equal(T.as_mask_stack(m), m)
    np.testing.assert_array_equal(T.as_mask_stack(m.reshape(3, 25)), m)
    np.testing.assert_array_equal(T.as_mask_stack([T.mask_indices(x) for x in m], 5), m)
    assert T.as_mask_stack(m[0]).shape == (1, 5, 5)
    with pytest.raises(DomainError, match="different p"):
        T.as_mask_stack([np.ones((3, 3), bool), np.ones((5, 5), bool)])


@pytest.mark.parametrize("x, p, match", [
    ([0, 3], None, "looks like pair indices.*give p"),
    ([0, 0, 3], 2, "pair index 0 appears more than once"),
    ([0, 4], 2, r"index 4 at position 1 is outside \[0, p\*p\) = \[0, 4\)"),
    ([[0, 1], [2, 0]], 2, "pair row 1 = \\(2, 0\\) is outside \\[0, 2\\)"),
    (np.ones(10, bool), None, "p\\*p entries"),
    (np.eye(3, dtype=bool), 5, "is for p=3"),
    (np.full((3, 3), 0.5), None, "boolean mask or integer pair indices"),
    (["a", "b"], None, "boolean mask or integer pair indices"),
    (np.ones((2, 3, 4), bool), None, "shape"),
])
def test_errors_name_the_parameter(x, p, match):
    with pytest.raises(DomainError, match=match) as exc:
        T.as_mask(x, p, name="train_mask")
    assert "train_mask" in str(exc.value) or "p" in str(exc.value)


def test_default_levels_are_shared():
    assert (T.TRAIN_LEVEL, T.TEST_LEVEL) == (1.0, 0.99)
    import inspect

    from grokclocks.compare import run_data

    sig = inspect.signature(run_data)
    assert sig.parameters["train_level"].default == T.TRAIN_LEVEL
    assert sig.parameters["test_level"].default == T.TEST_LEVEL
    ms = inspect.signature(K.milestones)
    assert ms.parameters["q_train"].default == T.TRAIN_LEVEL and ms.parameters["q_test"].default == T.TEST_LEVEL


# ------------------------------------------------------------------------------------------ every split-taking function


def _forms(mask):
    """The training set in each spelling of :func:`as_mask`: (form, needs p)."""
    return [(mask, False), (mask.reshape(-1), False), (mask.astype(np.int64), False),
            (np.flatnonzero(mask), True), (np.argwhere(mask), True)]


def _same(a, b):
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return np.array_equal(np.asarray(a), np.asarray(b))


SPLIT_FUNCTIONS = {
    # name -> f(train_mask, labels, p_or_None): labels carry p where the function takes them
    "distance_to_set": lambda m, lab, p: COV.distance_to_set(m, p=p),
    "same_label_distance": lambda m, lab, p: COV.same_label_distance(m, lab),
    "token_seen": lambda m, lab, p: COV.token_seen(m, 2, p=p),
    "token_coverage_mask": lambda m, lab, p: COV.token_coverage_mask(m, p=p),
    "accuracy_ceiling": lambda m, lab, p: COV.accuracy_ceiling(m, lab, 3, b_offset=0),
    "accuracy_ceiling_curve": lambda m, lab, p: COV.accuracy_ceiling_curve(m, lab, 6, "grid"),
    "implied_radius": lambda m, lab, p: COV.implied_radius(m, lab, 0.5),
    "coverage_fraction": lambda m, lab, p: COV.coverage_fraction(m, 2, over="test", p=p),
    "analyse_run": lambda m, lab, p: COV.analyse_run(np.linspace(0, 0.8, 5), m, lab),
}


@pytest.mark.parametrize("name", sorted(SPLIT_FUNCTIONS))
def test_split_functions_accept_every_mask_form(name):
    p = 11
    lab = T.label_table(p, "add")
    mask = T.random_split_mask(p, 3, frac=0.3).reshape(p, p)
    fn = SPLIT_FUNCTIONS[name]
    base = fn(mask, lab, None)
    for form, needs_p in _forms(mask):
        assert _same(fn(form, lab, p if needs_p else None), base), (name, form.shape, form.dtype)
    if name in ("distance_to_set", "token_seen", "token_coverage_mask", "coverage_fraction"):
        with pytest.raises(DomainError, match="give p"):
            fn(np.flatnonzero(mask), lab, None)


def test_test_mask_forms():
    p = 7
    lab = T.label_table(p, "mul")
    train, test = T.square_design(p, 2, frac=0.4)
    base = COV.accuracy_ceiling(train, lab, 2, test_mask=test)
    for form, _ in _forms(test):
        assert COV.accuracy_ceiling(T.mask_indices(train), lab, 2, test_mask=form) == base
        assert COV.coverage_fraction(train, 2, over="test", test_mask=form) == \
            COV.coverage_fraction(train, 2, over="test", test_mask=test)


# ------------------------------------------------------------------------------------------ one home, old paths


def test_moved_functions_keep_their_old_paths():
    from grokclocks.sim import data as D

    for old, name in [(COV, "label_table"), (COV, "code_labels"), (COV, "token_ids"), (COV, "random_design"),
                      (COV, "square_design"), (COV, "strip_design"), (COV, "designed_split"), (COV, "MAX_MODULUS"),
                      (K, "modadd_inputs"), (K, "modadd_split"), (D, "token_inputs"), (D, "onehot_inputs"),
                      (D, "random_split_mask"), (D, "designed_split_mask"), (D, "modular_table"), (D, "OPERATIONS")]:
        assert getattr(old, name) is getattr(T, name), (old.__name__, name)
    assert COV.OPS is T.OPERATIONS


def test_random_splits_share_one_permutation():
    """kramers.modadd_split, random_split_mask and the engine's split draw one numpy permutation per seed."""
    p, rho, seed = 13, 0.3, 4
    train, test = K.modadd_split(p, rho, seed)
    mask = T.random_split_mask(p, seed, n_train=K.n_train(p, rho))
    assert np.array_equal(np.sort(train), T.mask_indices(mask))
    assert np.array_equal(np.sort(np.concatenate([train, test])), np.arange(p * p))


def test_tables_agree():
    p = 7
    a, b, y = T.modular_table(p, "sq_sum")
    assert np.array_equal(y.reshape(p, p), T.label_table(p, "sq_sum"))
    X, a2, b2, y2 = T.modadd_inputs(p)
    assert X.dtype == np.float64 and X.shape == (p * p, 2 * p)
    assert np.array_equal(X, T.onehot_inputs(a2, b2, p, dtype=np.float64))
    assert np.array_equal(y2.reshape(p, p), T.label_table(p, "add"))
    assert np.array_equal(T.token_inputs(a, b, p, equals=True)[:, 2], np.full(p * p, p))


def test_named_results_unpack():
    split = T.designed_split(7, "strip", 1)
    train, test = split
    assert split.train is train and split.test is test and np.array_equal(~train, test)
    layout = T.token_ids(5, 60, 170)
    assert (layout.equals_id, layout.d_vocab) == (169, 170) and layout.b_ids[0] == 60
    fit = COV.progress_measure_fit([0.0, 1.0, 2.0, 3.0], [0, 0, 1, 1])
    assert (fit.tau, fit.direction, fit.agreement) == tuple(fit) == (1.5, ">=", 1.0)
