# Root conftest: makes the in-tree package importable when pytest runs from a checkout, and
# registers the hypothesis profiles.
#
#   ci        (default) bounded example counts, so `pytest` stays within the CI time budget, and
#             derandomized: the same examples on every run, so CI is reproducible (a failure found once
#             is found again)
#   thorough  a long, randomized run for nightly-style checks: `pytest tests --hypothesis-profile=thorough`
#
# Tests that need a fixed count keep their own @settings(max_examples=...); new property tests
# leave it out and take the count from the profile.
from __future__ import annotations

from hypothesis import HealthCheck, settings

settings.register_profile("ci", max_examples=60, deadline=None, print_blob=True, derandomize=True,
                          suppress_health_check=(HealthCheck.too_slow,))
settings.register_profile("thorough", max_examples=2000, deadline=None, print_blob=True,
                          suppress_health_check=(HealthCheck.too_slow,))
settings.load_profile("ci")
