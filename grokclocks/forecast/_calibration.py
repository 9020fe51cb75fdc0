"""The shipped forecast model, written by `benchmarks/forecast_calibration.py --write-model` (do not edit by hand).

PROVISIONAL: an intercept-only placeholder until the calibration study has run.
"""

MODEL = {
    "family": "lognormal",
    "groups": ["clock", "test_acc"],
    "dropped": {},
    "summary": "provisional placeholder (no calibration yet)",
    "profiles": [
        {"family": "lognormal", "features": ["elapsed"], "beta": [1.0, 0.0], "scale_features": [], "gamma": [0.0],
         "mean": [1.0], "scale": [1.0], "clip": [[0.0, 5.0]], "n_rows": 0, "n_censored": 0},
    ],
}
