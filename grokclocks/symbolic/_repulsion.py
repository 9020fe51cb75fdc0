"""Xu (2026), *Feature repulsion and spectral lock-in* (testing Tian's Theorem 6): the centred features, the
Woodbury form of B = (F̃ᵀF̃ + ηI)⁻¹, the sign rule and the full-projector identity (`grokclocks.repulsion`) as
sympy.  Matrices are matrix symbols: F̃ is n × K (samples × hidden units), η > 0 the weight decay."""

from __future__ import annotations

import sympy as sp
from sympy import Identity, MatrixSymbol, OneMatrix

from . import _symbols as S
from ._record import Formula

__all__: list[str] = []

RP = "grokclocks.repulsion."
n, K = sp.Symbol("n", integer=True, positive=True), sp.Symbol("K", integer=True, positive=True)
eta = sp.Symbol("eta", positive=True)
F = MatrixSymbol("F", n, K)  # raw features
Ft = MatrixSymbol("Ftilde", n, K)  # centred features
alpha, beta, c = sp.Symbol("alpha", positive=True), sp.Symbol("beta", positive=True), sp.Symbol("c", real=True)
LATEX_NAMES = dict({Ft: r"\widetilde F"})

gram_inverse = (Ft.T * Ft + eta * Identity(K)).I
woodbury = (Identity(K) - Ft.T * (Ft * Ft.T + eta * Identity(n)).I * Ft) / eta

FORMULAS: tuple[Formula, ...] = (
    Formula("repulsion:ftilde", "repulsion:ftilde", (Identity(n) - OneMatrix(n, n) / n) * F, r"\widetilde F",
            None, RP + "center_features", (("F", "F"),), note="P₁^⊥F: columns centred over the training samples"),
    Formula("repulsion:woodbury", "repulsion:woodbury", gram_inverse, r"B", "4", RP + "feature_gram_inverse",
            (("Ftilde", "F_tilde"), ("eta", "eta")), (("method", "direct"),)),
    Formula("repulsion:woodbury/identity", "repulsion:woodbury", woodbury, r"B", "4", RP + "feature_gram_inverse",
            (("Ftilde", "F_tilde"), ("eta", "eta")), (("method", "woodbury"),),
            note="the paper prints (1/η)I - (1/η²)F̃ᵀ(F̃F̃ᵀ+ηI)⁻¹F̃, equal to B only at η = 1 (erratum repulsion-1)"),
    Formula("repulsion:sign-rule", "repulsion:sign-rule", -c / (alpha * beta - c**2), r"B_{j\ell}", "1",
            RP + "sign_rule_terms", (("c", "c"), ("alpha", "alpha"), ("beta", "beta")),
            note="α = f̃_jᵀP_{η,-jl}f̃_j + η, β likewise, c = f̃_jᵀP_{η,-jl}f̃_l, αβ - c² > 0: sgn B_jl = -sgn c exactly "
                 "(erratum repulsion-2)"),
    Formula("repulsion:full-projector", "repulsion:full-projector",
            eta * Ft.T * (Ft * Ft.T + eta * Identity(n)).I * Ft,
            r"\big[\tilde f_j^\top P_\eta\tilde f_\ell\big]_{j\ell}=\widetilde F^\top P_\eta\widetilde F", None,
            RP + "full_projector_residual", (("Ftilde", "F_tilde"), ("eta", "eta")),
            note="P_η = η(F̃F̃ᵀ+ηI)⁻¹; the (j, l) entry is η(δ_jl - ηB_jl), so -η²B_jl off the diagonal"),
)
