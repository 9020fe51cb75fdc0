"""Symbols shared by the formulas of every paper, with their assumptions, and the special functions
sympy lacks in a usable form (Marcum's Q).

One symbol per quantity across the papers: ``lam`` is the same :math:`\\lambda` in every Levi et al.
formula, so a theorist can combine them (``formula("levi:eq24") - formula("levi:eq23")``).  Assumptions
are the ones sympy can carry (positive, nonnegative, integer); an interval such as
:math:`0<\\lambda<1` is stated in each formula's ``domain``.  Names are Python-friendly (``eta_0``,
``d_out``); :data:`LATEX_NAMES` gives the typeset names.
"""

from __future__ import annotations

import mpmath
import sympy as sp

__all__: list[str] = []

# --------------------------------------------------------------------------- Levi et al. (and rmt)
lam = sp.Symbol("lambda", positive=True)  # aspect ratio d_in / N_tr
s = sp.Symbol("s", nonnegative=True)  # spectral variable 4 eta_0 t / d_out
nu = sp.Symbol("nu", nonnegative=True)  # an eigenvalue of Sigma_tr
w = sp.Symbol("w", positive=True)  # resolvent shift
t = sp.Symbol("t", nonnegative=True)  # time in GD steps (gradient-flow time at rate eta_0)
eta0 = sp.Symbol("eta_0", positive=True)
d_out = sp.Symbol("d_out", positive=True, integer=True)
gamma = sp.Symbol("gamma", nonnegative=True)  # weight decay, paper convention
eps = sp.Symbol("epsilon", positive=True)  # accuracy threshold on a sample's squared error
level = sp.Symbol("ell", positive=True)  # accuracy level in (0, 1)
L = sp.Symbol("L", nonnegative=True)  # a loss value
L_star = sp.Symbol("L_star", positive=True)  # loss threshold
alpha = sp.Symbol("alpha", real=True)  # student initialisation scale
sigma2 = sp.Symbol("sigma2", nonnegative=True)  # label-noise variance per output
h = sp.Symbol("h", positive=True)  # frozen second-layer factor of the two-layer network
D0_sq = sp.Symbol("D0_sq", nonnegative=True)  # squared Frobenius norm of the initial error
p = sp.Symbol("p", positive=True, integer=True)  # modulus
k = sp.Symbol("k", positive=True, integer=True)  # a moment order / an index
t_star = sp.Symbol("t_star", positive=True)  # a crossing time
gamma_max = sp.Symbol("gamma_max", positive=True)
n = sp.Symbol("n", positive=True, integer=True)  # a count (eigenvalues, samples, ...)
i = sp.Idx("i")  # summation index over eigenvalues / singular values
eig = sp.IndexedBase("nu")  # the eigenvalues nu_i of a finite spectrum
proj = sp.IndexedBase("w")  # their projections w_i = ||(V^T D_0)_i||^2

LATEX_NAMES: dict[sp.Symbol, str] = {
    d_out: r"d_{\rm out}",
    eps: r"\epsilon",
    level: r"\ell",
    L: r"\mathcal L",
    L_star: r"\mathcal L^*",
    sigma2: r"\sigma^2",
    D0_sq: r"\lVert D_0\rVert_F^2",
    t_star: r"t^*",
    gamma_max: r"\gamma_{\max}",
    sp.Symbol("z_gen", positive=True): r"z_{\rm gen}",
}
"""Typeset names of the symbols whose Python name does not print well (`d_out` -> d_{\\rm out})."""


# --------------------------------------------------------------------------- Marcum's Q of order 1
def _mp_marcumq1(a, b):
    """Q_1(a, b) in mpmath at the working precision: a series of positive terms in the ratio below 1,
    quadrature near a = b (where neither series converges fast)."""
    a, b = mpmath.mpf(a), mpmath.mpf(b)
    if b == 0:
        return mpmath.mpf(1)
    if a == 0:
        return mpmath.exp(-b * b / 2)
    pref = mpmath.exp(-(a - b) ** 2 / 2)  # e^{-(a^2+b^2)/2} I_k(ab) = pref * besseli(k, ab) e^{-ab}
    x = a * b

    def scaled_i(order):
        return mpmath.besseli(order, x) * mpmath.exp(-x)

    if b < 0.7 * a:  # 1 - Q_1 = e^{-(a^2+b^2)/2} sum_{k>=1} (b/a)^k I_k(ab)
        return 1 - pref * mpmath.nsum(lambda j: (b / a) ** j * scaled_i(j), [1, mpmath.inf])
    if a < 0.7 * b:  # Q_1 = e^{-(a^2+b^2)/2} sum_{k>=0} (a/b)^k I_k(ab)
        return pref * mpmath.nsum(lambda j: (a / b) ** j * scaled_i(j), [0, mpmath.inf])
    f = lambda u: u * mpmath.exp(-(u - a) ** 2 / 2) * mpmath.besseli(0, a * u) * mpmath.exp(-a * u)  # noqa: E731
    return mpmath.quad(f, [b, b + 1, b + 10, mpmath.inf])


class MarcumQ1(sp.Function):
    r"""Marcum's Q-function of order 1, :math:`Q_1(a,b)=\int_b^\infty x\,e^{-(x^2+a^2)/2}I_0(ax)\,dx`.

    sympy's ``marcumq`` neither evaluates numerically nor knows its derivative in :math:`a` in closed
    form; this one does both: :math:`\partial_aQ_1=b\,e^{-(a^2+b^2)/2}I_1(ab)`,
    :math:`\partial_bQ_1=-b\,e^{-(a^2+b^2)/2}I_0(ab)`, and ``evalf`` through mpmath.
    """

    nargs = 2

    def fdiff(self, argindex=1):
        a, b = self.args
        if argindex == 1:
            return b * sp.exp(-(a**2 + b**2) / 2) * sp.besseli(1, a * b)
        if argindex == 2:
            return -b * sp.exp(-(a**2 + b**2) / 2) * sp.besseli(0, a * b)
        raise sp.ArgumentIndexError(self, argindex)

    @classmethod
    def eval(cls, a, b):
        if b.is_zero:
            return sp.S.One
        if a.is_zero:
            return sp.exp(-b**2 / 2)
        return None

    def _eval_evalf(self, prec):
        a, b = (x.evalf(prec) for x in self.args)
        if not (a.is_Number and b.is_Number):
            return None
        with mpmath.workprec(prec):
            return sp.Float(_mp_marcumq1(a._to_mpmath(prec), b._to_mpmath(prec)), precision=prec)

    def _latex(self, printer):
        a, b = self.args
        return rf"Q_1\left({printer._print(a)}, {printer._print(b)}\right)"


MPMATH_FUNCTIONS: dict[str, object] = {"MarcumQ1": _mp_marcumq1}
"""What `sympy.lambdify(..., modules=[MPMATH_FUNCTIONS, "mpmath"])` needs for the functions defined here."""
