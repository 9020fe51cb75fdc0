"""`dense`: the product x @ w with its weight gradient contracted in the fast orientation on the CPU.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp


def _weight_tangent_cpu(dw: jax.Array, x: jax.Array) -> jax.Array:
    # x @ dw written against the (m, k) transpose of dw behind a barrier: its transpose (reverse mode) is the
    # product G^T x of shape (m, k), which the barrier keeps from being rewritten into x^T G.
    dwt = jax.lax.optimization_barrier(jnp.swapaxes(dw, -1, -2))
    return jax.lax.dot_general(x, dwt, (((x.ndim - 1,), (dwt.ndim - 1,)), ((), ())))


@jax.custom_jvp
def dense(x: jax.Array, w: jax.Array) -> jax.Array:
    r"""The product `x @ w` whose weight gradient is contracted in the fast orientation on the CPU.

    In reverse mode the weight gradient is formed as the (m, k) product Gᵀx and then transposed,
    where G is the gradient of the loss with respect to the output x·w:

    .. math::
        \frac{\partial \mathcal L}{\partial w} = \big(G^{\top} x\big)^{\top}\ \text{(an (m, k) product, then a
        transpose of the small result)}, \qquad G = \frac{\partial \mathcal L}{\partial (x w)}

    The value, and every derivative (forward and reverse mode, any order), equal those of `x @ w`
    up to float rounding; only the order of the reverse-mode weight-gradient product differs.
    XLA's CPU backend runs the default orientation, xᵀG contracting the long row axis of x into a
    (k, m) result, about 2.5× slower than Gᵀx for Tian's net (N = 2016 rows, k = 2048, m = 71: 9
    against 3.5 ms on a 2-core EPYC), and its algebraic simplifier turns a plain (Gᵀx)ᵀ back into
    the slow form; the `optimization_barrier` on the (m, k) weight tangent keeps it.  Training
    steps of Tian's net are 19-20 % faster at 2 and 4 vmapped seeds (25.3 → 20.4 ms per seed-step
    at 4, 30-step Adam scans on a 2-core EPYC; engine timings in
    `benchmarks/results/modular_engine_cpu.json`); `tests/test_sim_engine_speed.py` checks the
    derivatives and the compiled orientation.  On other platforms the tangent is the plain
    `x @ dw` (`jax.lax.platform_dependent`), so GPU programs are unchanged.

    Parameters
    ----------
    x : jax.Array
        Left factor, shape (..., N, k) (e.g. the hidden features of N samples).
    w : jax.Array
        Weight matrix, shape (k, m).

    Returns
    -------
    jax.Array
        `x @ w`, shape (..., N, m).
    """
    return x @ w


@dense.defjvp
def _dense_jvp(primals: tuple[jax.Array, jax.Array], tangents: tuple[jax.Array, jax.Array]) -> tuple:
    x, w = primals
    dx, dw = tangents
    dw_term = jax.lax.platform_dependent(dw, x, cpu=_weight_tangent_cpu, default=lambda dw, x: x @ dw)
    return x @ w, dx @ w + dw_term
