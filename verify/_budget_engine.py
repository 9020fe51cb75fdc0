"""GPU-budget items (``verify/budget.py``) for tests whose program is one call of the training engine.

:func:`engine_build` turns a front-end call of :mod:`grokclocks.sim` (``train_modular``, ``train_tian``,
``run_deep_linear``, ...) into the ``build(n_seeds, n_steps) -> (program, make_inputs)`` of a
:class:`grokclocks.verification.BudgetItem`: the engine's :func:`~grokclocks.sim.train.simulate` is
intercepted at its entry, and the program is the engine's own compiled chunk (``lax.scan`` over records
of a ``lax.scan`` over steps, vmapped over the batch axes) applied to the initial state and inputs the
front-end built -- the same program the test runs, at any size, without training anything.
``make_inputs`` runs the front-end up to that point, so under :func:`jax.eval_shape` nothing of the
full size is allocated.

:func:`host_item` registers a test whose cost is host time only (a program run on the host CPU, numpy
analysis, or runs another test of the module trained and cached), with the measured seconds and
their source in ``note``.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from grokclocks.verification import BudgetItem

# every grokclocks.sim module that imports simulate by name
_ENGINE_USERS = ("grokclocks.sim.train", "grokclocks.sim.modular", "grokclocks.sim.deep_linear",
                 "grokclocks.sim.landscapes", "grokclocks.sim.linear")


class _Captured(Exception):
    """Raised by the intercepted ``simulate`` once it holds the program's arguments."""


@contextlib.contextmanager
def _intercept_simulate():
    box: dict[str, Any] = {}

    def capture(step, metrics, state0, inputs=None, *, steps, record_every, batch_axes=(), **_):
        box.update(step=step, metrics=metrics, state0=state0, inputs=inputs, steps=int(steps),
                   record_every=int(record_every), batch_axes=tuple(batch_axes))
        raise _Captured

    mods = [importlib.import_module(m) for m in _ENGINE_USERS]
    saved = [(m, m.simulate) for m in mods if hasattr(m, "simulate")]
    for m, _ in saved:
        m.simulate = capture
    try:
        yield box
    finally:
        for m, f in saved:
            m.simulate = f


def engine_build(front_end: Callable[[int, int], Any]) -> Callable[[int, int], tuple[Callable, Callable]]:
    """``BudgetItem.build`` for a test whose program is ``front_end(n_seeds, n_steps)`` (one engine call).

    ``front_end`` makes the call with ``n_seeds`` seeds and ``n_steps`` steps (a multiple of its
    ``record_every``); everything else is the test's configuration.
    """
    from grokclocks.sim import train as T

    def build(n_seeds: int, n_steps: int) -> tuple[Callable, Callable]:
        box: dict[str, Any] = {}

        def make_inputs() -> tuple:
            with _intercept_simulate() as cap:
                try:
                    front_end(n_seeds, n_steps)
                except _Captured:
                    pass
            if "step" not in cap:
                raise RuntimeError("the front-end finished without calling grokclocks.sim.train.simulate")
            leaves, box["treedef"] = jax.tree_util.tree_flatten((cap["state0"], cap["inputs"]))
            box.update({k: v for k, v in cap.items() if k not in ("state0", "inputs")})
            return tuple(leaves)

        def program(*leaves: Any) -> Any:
            state0, inputs = jax.tree_util.tree_unflatten(box["treedef"], leaves)
            chunk = T._compiled_chunk(box["step"], box["metrics"], box["record_every"],
                                      box["steps"] // box["record_every"], box["batch_axes"])
            return chunk(state0, inputs)

        return program, make_inputs

    return build


def _no_program(n_seeds: int, n_steps: int) -> tuple[Callable, Callable]:
    return (lambda x: x + 1.0), (lambda: (jnp.zeros((), jnp.float32),))


def host_item(test: str, host_s: float, note: str, config: str = "") -> BudgetItem:
    """A test whose GPU-tier cost is ``host_s`` seconds of host time (no device program of its own)."""
    return BudgetItem(test, _no_program, seeds=1, steps=1, cpu_seeds=1, cpu_steps=1, config=config,
                      host_s=float(host_s), note=note)
