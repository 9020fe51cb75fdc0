"""The default accuracy levels of the two clocks: t_train (= t_mem) at train accuracy 1.0, t_test (= t_grok) at 0.99.
"""

from __future__ import annotations


TRAIN_LEVEL: float = 1.0
"""Default train-accuracy level 1.0 of t_train (= t_mem): every training pair classified correctly.

It makes t_mem the zero-one clock t_01 of spec ID `clocks:appF4-acc-clock`."""
TEST_LEVEL: float = 0.99
"""Default test-accuracy level 0.99 of t_test (= t_grok), spec ID `kramers:milestones`."""
