"""Escape-time helpers shared by verify/kramers (Delta F/T = 4, 6) and verify/kramers_barrier8 (Delta F/T = 8):
the exact references, the Eyring-Kramers time, the GPU recipe (walkers at two step sizes, Richardson) and its
GPU-budget items."""

from __future__ import annotations

import functools
import math

from grokclocks import kramers as K

DW_COEF = [1.0, 0.0, -2.0, 0.0, 1.0]
SADDLE_2D = {"h": 1.0, "k": 1.0, "c": 3.0}


@functools.lru_cache(maxsize=None)
def exact_1d(T, b=1.0):
    """Exact MFPT (quadrature) of the 1-D double well from -1 to `b` at temperature T."""
    return K.mfpt_1d_exact(DW_COEF, -1.0, b, T)


@functools.lru_cache(maxsize=None)
def exact_2d(T, b=1.0):
    """Exact MFPT (finite-volume backward-equation solve) of saddle_2d(1, 1, 3) from (-1, 0) to x >= `b`."""
    sd = K.test_potential("saddle_2d", **SADDLE_2D)
    return K.mfpt_2d_exact(sd["F_xy"], (-1.0, 0.0), b, T)


def ek(name, T, **kw):
    """The Eyring-Kramers time of a test potential at temperature T."""
    tp = K.test_potential(name, **kw)
    return K.eyring_kramers_time(tp["hess_min"], tp["hess_saddle"], tp["delta_F"], T)


def richardson_stderr(walkers: int, ratio: float) -> float:
    """Relative standard error of the Richardson-extrapolated MFPT of `walkers` walkers per step size, escape
    times exponential (CV 1): tau = (r tau(dt/r) - tau(dt)) / (r - 1), two independent runs."""
    return math.sqrt(ratio**2 + 1.0) / (ratio - 1.0) / math.sqrt(walkers)


def gpu_richardson(name, prm, x0, T, dts, seed, walkers=2**21):
    """`walkers` walkers at two step sizes, Richardson-extrapolated (spec GPU recipe: 2^21 walkers)."""
    from grokclocks.sim import langevin as L

    r1 = L.mean_first_passage_time(name, prm, x0, {"coord": 0, "threshold": 1.0}, T, dts[0], walkers, seed=seed)
    r2 = L.mean_first_passage_time(name, prm, x0, {"coord": 0, "threshold": 1.0}, T, dts[1], walkers, seed=seed + 1)
    return L.richardson_extrapolate(r1.mean, dts[0], r2.mean, dts[1], r1.stderr, r2.stderr)


# ------------------------------------------------------------------------------------------ GPU budget
# Walker items: "seeds" = walkers / 2^14, "steps" = Euler-Maruyama steps of both step sizes together.


def _budget_walkers(name, prm, x0, T, dt):
    def build(n, steps):
        import jax
        import jax.numpy as jnp

        from grokclocks.sim import langevin as L

        _, grad = L.potential_fns(name, prm)
        run = L._chunk_fn(grad, 0, 1.0, math.sqrt(2.0 * T * dt), dt, steps, jnp.float32)

        def make_inputs():
            M = n * 2**14
            return (jnp.broadcast_to(jnp.asarray(x0, jnp.float32), (M, len(x0))), -jnp.ones(M, jnp.int32),
                    jax.random.key(0), jnp.int32(0))

        return run, make_inputs

    return build


# H100 seconds per (2^14 walkers x step), from the 2026-11-24 run (upper bounds, parallel processes on the GPU):
# 1-D, Delta F/T = 4, 6, 8 at dt 0.01/0.005: 2.86e6 steps of 2^21 walkers in <= 170 s (28 ps per walker-step);
# 2-D at dt 0.01/0.0025: 2.39e6 steps in <= 488 s with 14 processes (97 ps)
WALKER_RATE = {1: (170.0 / (2.86e6 * 128), "H100 rate of the 2026-11-24 1-D run (<= 28 ps per walker-step)"),
               2: (488.0 / (2.39e6 * 128), "H100 rate of the 2026-11-24 2-D run (<= 97 ps per walker-step, 14 "
                                           "processes on the GPU)")}


def walker_items(test, name, prm, x0, pairs, barriers, walkers=2**21):
    """GPU-budget items of a walker test: one per barrier height, horizon 2.5 tau_EK at both step sizes."""
    from grokclocks.verification import BudgetItem as B

    items = []
    for b in barriers:
        T = 1 / b
        horizon = 2.5 * ek(name, T, **prm)
        steps = sum(int(math.ceil(horizon / dt)) for dt in pairs)
        chunks = steps // 1000
        rate, src = WALKER_RATE[len(x0)]
        items.append(B(test, _budget_walkers(name, prm, x0, T, pairs[-1]), walkers // 2**14, steps, 4, 2000,
                       gpu_rate=rate, host_s=1e-3 * chunks,
                       config=f"{name}, Delta F/T={b}: 2^{int(math.log2(walkers))} walkers, dt={pairs}, horizon 2.5 "
                              f"tau_EK = {horizon:.0f}",
                       note=f"{src}; {chunks} chunks of 1000 steps, host check of each (1 ms)"))
    return items
