"""grokclocks.task: the one training-mask convention and the default accuracy levels."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from grokclocks import DomainError
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
