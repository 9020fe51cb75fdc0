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
    """Teacher-student draws for the given seeds, keys ``PRNGKey(1000 d_in + seed)`` (spec section 7.1).

    .. math::
        x_i \\sim \\mathcal N(0, I),\\quad T, S_0/\\alpha \\sim \\mathcal N\\big(0, 1/(2 d_{\\rm in} d_{\\rm out})\\big),
        \\quad N_{\\rm tr} = \\mathrm{round}(d_{\\rm in}/\\lambda)

    Parameters
    ----------
    d_in : int >= 1; lam : float > 0; d_out : int >= 1
    seeds : int or sequence of int >= 0
        A sequence gives a leading seed axis (even of length 1); an int gives one unbatched draw.
    init_scale : float (alpha); sigma2 : float >= 0 (fixed label-noise variance)

    Returns
    -------
    TeacherStudentData

    References
    ----------
    Spec ``levi:conv-data``, section 7.1.
    """
    keys = teacher_student_keys(d_in, seeds)
    seed_tuple = (int(seeds),) if np.ndim(seeds) == 0 else tuple(int(s) for s in seeds)
    return make_teacher_student(keys, d_in, lam, d_out, init_scale=init_scale, sigma2=sigma2, seeds=seed_tuple)


@cites("levi:eq16")
def draw_two_layer(d_in: int, lam: float, d_h: int, d_out: int = 1, *,
                   seeds: int | Sequence[int] = (0,)) -> TwoLayerData:
    """Two-layer teacher-student draws for the given seeds (keys ``PRNGKey(1000 d_in + seed)``).

    .. math::
        S_0, T_0 \\sim \\mathcal N\\big(0, 1/(2 d_{\\rm in} d_h)\\big),\\quad S_1, T_1 \\sim \\mathcal N\\big(0, 1/(2 d_{\\rm out} d_h)\\big)

    Parameters
    ----------
    d_in, d_h, d_out : int >= 1; lam : float > 0; seeds : int or sequence of int >= 0

    Returns
    -------
    TwoLayerData

    References
    ----------
    Spec ``levi:eq16`` (paper eq. 16).
    """
    keys = teacher_student_keys(d_in, seeds)
    seed_tuple = (int(seeds),) if np.ndim(seeds) == 0 else tuple(int(s) for s in seeds)
    return make_two_layer_teacher_student(keys, d_in, lam, d_h, d_out, seeds=seed_tuple)
