"""`grokclocks time`: the grokking time of the linear estimator (Levi et al.)."""

from __future__ import annotations

import argparse
import math

from .._escape import json_text
from ._common import FORMATTER, _positive_float, emit


def _cmd_time(args: argparse.Namespace) -> int:
    from ..linear import grok_time, t_star

    kw = dict(d_out=args.d_out, gamma=args.gamma, level=args.level)
    t_tr = float(t_star("train", args.lam, args.eps, args.eta, **kw))
    t_gen = float(t_star("gen", args.lam, args.eps, args.eta, **kw))
    dt = float(grok_time(args.lam, args.eps, args.eta, **kw))
    if args.json:
        js = lambda x: x if math.isfinite(x) else repr(x)  # noqa: E731
        emit(json_text(dict(lam=args.lam, eps=args.eps, eta0=args.eta, d_out=args.d_out, gamma=args.gamma,
                             level=args.level, t_train=js(t_tr), t_gen=js(t_gen), grok_time=js(dt)), indent=None))
        return 0
    def fmt(x: float) -> str:
        if math.isnan(x):
            return "undefined (neither accuracy reaches the level)"
        if math.isinf(x):
            return "never (the accuracy stays below the level)"
        return f"{x:.6g} GD steps"

    emit(f"linear estimator (Levi et al.): lambda={args.lam:g}, eps={args.eps:g}, eta0={args.eta:g}, "
          f"d_out={args.d_out}, gamma={args.gamma:g}, accuracy level={args.level:.6g}")
    emit(f"  train accuracy reaches the level at t = {fmt(t_tr)}")
    emit(f"  test accuracy reaches the level at  t = {fmt(t_gen)}")
    emit(f"  grokking time Delta t = {fmt(dt)}   [grokclocks.linear.grok_time, spec levi:grok-def]")
    return 0



def add_parser(sub: argparse._SubParsersAction) -> None:
    """Add the `time` subcommand to `sub`, the subparsers of the `grokclocks` parser."""
    fmt = FORMATTER
    t = sub.add_parser(
        "time", formatter_class=fmt, help="grokking time of the linear estimator (Levi et al.)",
        description="Exact grokking time Delta t = t_gen - t_train of the linear teacher-student model of Levi, "
                    "Beck and Bar-Sinai (grokclocks.linear.grok_time): full-batch GD on an MSE loss, a sample "
                    "counts as correct when its squared error is below eps, and each clock is the first time "
                    "the accuracy reaches the level. Times are in GD steps of learning rate eta.",
        epilog="examples:\n"
               "  grokclocks time --lam 0.5 --eps 1e-3              # Delta t = 431 steps (eta 0.01)\n"
               "  grokclocks time --lam 0.9 --eps 1e-3 --d-out 100  # wider output\n"
               "  grokclocks time --lam 0.5 --eps 1e-3 --gamma 0.01 # with weight decay (paper convention)\n")
    t.add_argument("--lam", type=_positive_float("--lam"), required=True,
                   help="lambda = d_in / N_train, input dimension over training-set size (> 0)")
    t.add_argument("--eps", type=_positive_float("--eps"), required=True,
                   help="accuracy threshold on a sample's squared error (> 0)")
    t.add_argument("--eta", type=_positive_float("--eta"), default=0.01,
                   help="GD learning rate eta0 (> 0; default 0.01, as in the paper's Fig. 1)")
    t.add_argument("--gamma", type=float, default=0.0, help="weight decay in the paper's convention (>= 0; default 0)")
    t.add_argument("--d-out", type=int, default=1, help="output dimension (integer >= 1; default 1)")
    t.add_argument("--level", type=float, default=None,
                   help="accuracy level of both clocks in (0, 1) (default erf(sqrt 2) = 0.9545, the paper's)")
    t.add_argument("--json", action="store_true", help="print the result as JSON")
    t.set_defaults(func=_cmd_time)
