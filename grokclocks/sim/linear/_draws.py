"""Linear teacher-student simulations: convenience constructors of teacher-student data."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...citations import cites
from ..data import (
    make_teacher_student,
    make_two_layer_teacher_student,
    teacher_student_keys,
    TeacherStudentData,
    TwoLayerData,
)


@cites("levi:conv-data")
def draw_teacher_student(d_in: int, lam: float, d_out: int = 1, *, seeds: int | Sequence[int] = (0,),
                         init_scale: float = 1.0, sigma2: float = 0.0) -> TeacherStudentData:
    r"""Teacher-student draws for the given seeds, with the keys `PRNGKey(1000 d_in + seed)` of spec section 7.1.

    Inputs x_i ~ N(0, I), teacher T and initial student S0/α with entries of variance
    1/(2 d_in d_out), and N_tr = round(d_in/λ) training samples:

    .. math::
        x_i \sim \mathcal N(0, I),\quad T, S_0/\alpha \sim \mathcal N\big(0, 1/(2 d_{\rm in} d_{\rm out})\big),
        \quad N_{\rm tr} = \mathrm{round}(d_{\rm in}/\lambda)

    A shorthand for `make_teacher_student(teacher_student_keys(d_in, seeds), ...)` that records
    the seeds.

    Parameters
    ----------
    d_in : int
        Input dimension d_in ≥ 1.
    lam : float
        λ = d_in/N_tr, input dimension over training-set size; 0 < λ ≤ 2 d_in (so that N_tr ≥ 1).
    d_out : int
        Output dimension d_out ≥ 1; default 1.
    seeds : int or sequence of int
        Seeds ≥ 0, distinct.  A sequence gives a leading seed axis (even of length 1); an int
        gives one unbatched draw.  Default `(0,)`.
    init_scale : float
        Student scale α: the initial student is α times a draw of the teacher's law (any finite
        real, 0 allowed); default 1.
    sigma2 : float
        Variance σ² ≥ 0 of the fixed label noise δ, drawn once; default 0 (noiseless labels).

    Returns
    -------
    TeacherStudentData
        The draws (float64), with `seeds` recorded.

    Raises
    ------
    DomainError
        If an argument is outside its domain.

    References
    ----------
    Spec `levi:conv-data`, section 7.1.
    """
    keys = teacher_student_keys(d_in, seeds)
    seed_tuple = (int(seeds),) if np.ndim(seeds) == 0 else tuple(int(s) for s in seeds)
    return make_teacher_student(keys, d_in, lam, d_out, init_scale=init_scale, sigma2=sigma2, seeds=seed_tuple)


@cites("levi:eq16")
def draw_two_layer(d_in: int, lam: float, d_h: int, d_out: int = 1, *,
                   seeds: int | Sequence[int] = (0,)) -> TwoLayerData:
    r"""Two-layer teacher-student draws for the given seeds (keys `PRNGKey(1000 d_in + seed)`).

    First layers S0, T0 with entries of variance 1/(2 d_in d_h), second layers S1, T1 of variance
    1/(2 d_out d_h):

    .. math::
        S_0, T_0 \sim \mathcal N\big(0, 1/(2 d_{\rm in} d_h)\big),\quad S_1, T_1 \sim \mathcal N\big(0, 1/(2 d_{\rm out} d_h)\big)

    A shorthand for `make_two_layer_teacher_student(teacher_student_keys(d_in, seeds), ...)` that
    records the seeds.

    Parameters
    ----------
    d_in : int
        Input dimension d_in ≥ 1.
    lam : float
        λ = d_in/N_tr, input dimension over training-set size; 0 < λ ≤ 2 d_in.
    d_h : int
        Hidden width d_h ≥ 1.
    d_out : int
        Output dimension d_out ≥ 1; default 1.
    seeds : int or sequence of int
        Seeds ≥ 0, distinct.  A sequence gives a leading seed axis (even of length 1); an int
        gives one unbatched draw.  Default `(0,)`.

    Returns
    -------
    TwoLayerData
        The draws (float64), with `seeds` recorded.

    Raises
    ------
    DomainError
        If an argument is outside its domain.

    References
    ----------
    Spec `levi:eq16` (paper eq. 16).
    """
    keys = teacher_student_keys(d_in, seeds)
    seed_tuple = (int(seeds),) if np.ndim(seeds) == 0 else tuple(int(s) for s in seeds)
    return make_two_layer_teacher_student(keys, d_in, lam, d_h, d_out, seeds=seed_tuple)
