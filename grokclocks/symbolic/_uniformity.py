"""Gu, Chen, Zhang, Hu & Cao (2025), *Beyond progress measures*: the coverage ball, Theorem 3.12's training
fraction and Lemma B.1 (`grokclocks.coverage`) as sympy."""

from __future__ import annotations

import sympy as sp
from sympy import Interval, binomial, exp, log

from . import _symbols as S
from ._record import Formula

__all__: list[str] = []

CV = "grokclocks.coverage."
p = sp.Symbol("p", integer=True, positive=True)  # modulus: the grid is Z_p x Z_p
n = sp.Symbol("n", integer=True, positive=True)  # coverage radius (Manhattan distance < n)
m = sp.Symbol("m", integer=True, nonnegative=True)  # number of training points
c_norm, R = sp.Symbol("c", nonnegative=True), sp.Symbol("R", positive=True)
C = sp.Function("C")
ball = 2 * n**2 - 2 * n + 1
DEF_C = ((C(n), ball),)
LATEX_NAMES = dict({c_norm: r"\lVert c\rVert"})

FORMULAS: tuple[Formula, ...] = (
    Formula("uniformity:thm3.12/ball", "uniformity:thm3.12", ball, r"C(n)=\big|\{z\in\mathbb Z^2:|z_1|+|z_2|<n\}\big|",
            None, CV + "ball_size", (("n", "n"),), note="coverers of a point on the unbounded lattice"),
    Formula("uniformity:thm3.12", "uniformity:thm3.12", None, r"r", "Theorem 3.12", CV + "required_train_fraction",
            (("p", "p"), ("n", "n")), display=log(p**2) / C(n), defs=DEF_C,
            note="sufficient for E[U] < 1 on the torus, not on the bounded grid (erratum uniformity-2)"),
    Formula("uniformity:thm3.12/nolog", "uniformity:thm3.12", None, r"r", "Theorem 3.12", CV + "required_train_fraction",
            (("p", "p"), ("n", "n")), (("method", "paper_nolog"),),
            display=-log(p**2) / (p**2 * log(1 - C(n) / p**2)), defs=DEF_C,
            domain=(("n", Interval(1, sp.oo)),), note="before ln(1 - C/p²) ≤ -C/p²; needs C(n) < p²"),
    Formula("uniformity:thm3.12/binomial", "uniformity:thm3.12", None, r"\mathbb E[U]\le", None,
            CV + "expected_uncovered_paper", (("p", "p"), ("n", "n"), ("m", "m")),
            display=p**2 * (1 - C(n) / p**2) ** m, defs=DEF_C, note="the proof's expression (with replacement)"),
    Formula("uniformity:thm3.12/exp", "uniformity:thm3.12", None, r"\mathbb E[U]\le", None,
            CV + "expected_uncovered_paper", (("p", "p"), ("n", "n"), ("m", "m")), (("form", "exp"),),
            display=p**2 * exp(-m * C(n) / p**2), defs=DEF_C),
    Formula("uniformity:thm3.12/torus", "uniformity:thm3.12", None, r"\mathbb E[U]", None,
            CV + "expected_uncovered", (("p", "p"), ("n", "n"), ("m", "m")), (("metric", "torus"),),
            display=p**2 * binomial(p**2 - C(n), m) / binomial(p**2, m), defs=DEF_C,
            note="exact on the torus Z_p², sampling without replacement, for 2n - 1 ≤ p (no wrap-around "
                 "overlap: every point has C(n) coverers)"),
    Formula("uniformity:lemmaB.1", "uniformity:lemmaB.1", c_norm / (2 * R), r"\min\lVert l\rVert_2", "Lemma B.1",
            CV + "min_opnorm_single_class", (("c", "c_norm"), ("R", "R"))),
)
