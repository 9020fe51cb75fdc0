"""Named results of spec ``uniformity``'s functions (NamedTuples: unpack as before, read by field)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["AccuracyExtremes", "ClassResiduals", "CodeMED", "OperatorNormBounds", "ThresholdRule", "TokensSeen"]


class OperatorNormBounds(NamedTuple):
    r"""Lemma 3.4's sandwich :math:`\|A\|_2\le\|A\|_F\le\sqrt{\operatorname{rank}A}\,\|A\|_2` (:func:`operator_norm_bounds`)."""

    op_norm: float
    fro_norm: float
    rank: int
    sqrt_rank_op_norm: float


class ClassResiduals(NamedTuple):
    r"""Per-class residuals :math:`\varepsilon_r` of Lemma 3.2 (:func:`class_target_residuals`)."""

    classes: np.ndarray
    eps: np.ndarray
    in_cone: np.ndarray


class TokensSeen(NamedTuple):
    """Whether each operand token occurs in a training pair (:func:`token_seen`)."""

    seen_a: np.ndarray
    seen_b: np.ndarray


class ThresholdRule(NamedTuple):
    r"""Best rule :math:`h(v)=\mathbb 1[v\ \mathrm{direction}\ \tau]` of Def. 4.1 and its agreement (:func:`progress_measure_fit`)."""

    tau: float
    direction: str
    agreement: float


class CodeMED(NamedTuple):
    """MED of the authors' MLP code and the Frobenius norm beside it (:func:`med_code_mlp`)."""

    med: float
    fro: float


class AccuracyExtremes(NamedTuple):
    """Table 1's U-Acc, L-Acc and the record index of U-Acc (:func:`u_acc_l_acc`)."""

    u_acc: float
    l_acc: float
    u_acc_index: int
