"""Named results of spec `uniformity`'s functions (NamedTuples: unpack as before, read by field)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["AccuracyExtremes", "ClassResiduals", "CodeMED", "OperatorNormBounds", "ThresholdRule", "TokensSeen"]


class OperatorNormBounds(NamedTuple):
    r"""Lemma 3.4's norm sandwich ‖A‖₂ ≤ ‖A‖_F ≤ √(rank A)·‖A‖₂ of a matrix, as returned by `operator_norm_bounds`.

    A named tuple; it unpacks like the plain tuple (op_norm, fro_norm, rank, sqrt_rank_op_norm).
    """

    op_norm: float
    r"""The operator (spectral) norm ‖A‖₂, the largest singular value; 0 for an empty spectrum."""
    fro_norm: float
    r"""The Frobenius norm ‖A‖_F, computed from the singular values without overflow."""
    rank: int
    r"""The numerical rank of A: the number of singular values above the tolerance."""
    sqrt_rank_op_norm: float
    r"""The upper end √(rank A)·‖A‖₂ of the sandwich."""


class ClassResiduals(NamedTuple):
    r"""Per-class residuals ε_r of Lemma 3.2, as returned by `class_target_residuals`.

    A named tuple; it unpacks like the plain tuple (classes, eps, in_cone).  The three arrays have one
    entry per distinct label, in the order of `classes`.
    """

    classes: np.ndarray
    r"""The distinct labels present, sorted (as `numpy.unique` returns them)."""
    eps: np.ndarray
    r"""float64 residual ε_r = max over the class of ‖out(x) − c_r‖, the largest distance of an output of class r to
    its class vector c_r.
    """
    in_cone: np.ndarray
    r"""float64 fraction of each class whose output's argmax is its label (meaningful only when the outputs are
    logits; 0 where the labels are not valid output indices).
    """


class TokensSeen(NamedTuple):
    r"""Whether each operand token occurs in some training pair, as returned by `token_seen`.

    A named tuple; it unpacks like the plain tuple (seen_a, seen_b).
    """

    seen_a: np.ndarray
    r"""Boolean array of shape (p,): entry a is `True` if the token of first-operand value a occurs in a training
    pair (in either position, for the vocabulary layout given).
    """
    seen_b: np.ndarray
    r"""Boolean array of shape (p,): entry b is `True` if the token of second-operand value b occurs in a training
    pair.
    """


class ThresholdRule(NamedTuple):
    r"""Best threshold rule h(v) = 𝟙[v direction τ] of Definition 4.1 and its agreement (`progress_measure_fit`).

    A named tuple; it unpacks like the plain tuple (tau, direction, agreement).
    """

    tau: float
    r"""The threshold τ on the measure's values."""
    direction: str
    r"""`"<="` (the rule predicts 1 where v ≤ τ) or `">="` (where v ≥ τ)."""
    agreement: float
    r"""Fraction of records, in [0, 1], where the rule's prediction equals the indicator."""


class CodeMED(NamedTuple):
    r"""MED of the authors' MLP code and the Frobenius norm beside it, as returned by `med_code_mlp`.

    A named tuple; it unpacks like the plain tuple (med, fro).
    """

    med: float
    r"""The MED of `MLP/base.py` and `MLP/rec.py`: (m̄₁ + m̄₂)/2, m̄ the mean norm of the p − 2 consecutive
    differences of tokens 0, …, p − 2 of each operand block (the code's off-by-one, erratum uniformity-6).
    """
    fro: float
    r"""The Frobenius norm ‖W_E[:, 0:p−1] − W_E[:, d:d+p−1]‖_F that the same scripts log beside it (d the second
    block's first token id).
    """


class AccuracyExtremes(NamedTuple):
    r"""Table 1's U-Acc and L-Acc of a run and the record index of U-Acc, as returned by `u_acc_l_acc`.

    A named tuple; it unpacks like the plain tuple (u_acc, l_acc, u_acc_index).
    """

    u_acc: float
    r"""U-Acc, the highest test accuracy from the first record with train accuracy 1 on (over the whole run when
    train accuracy is not given or never reaches 1).
    """
    l_acc: float
    r"""L-Acc, the lowest test accuracy from the record of U-Acc on."""
    u_acc_index: int
    r"""The record index at which U-Acc is first attained."""
