"""The verification report: one row per theorem-vs-simulation check, and its certificates.

`pytest verify` collects rows through `Report` (the `report` fixture of verify/) and ends with one table --
spec ID, prediction, measurement, error, tolerance, verdict, tolerance source -- written as JSON and Markdown:
a verification certificate (`write_report`, `write_certificate`).

Three kinds of row:

* `Report.check` -- the prediction must agree with the measurement within a tolerance whose measured source
  is stated ("agree");
* `Report.reject` -- a plausible wrong variant (a factor 2 in the rate, the paper's uncorrected form) must lie
  outside the same tolerance, which shows the check can fail ("reject");
* `Report.observe` -- a measurement with no prediction to test ("report"); it is shown, never counted as a
  pass, and cannot fail.

`check` and `reject` record the row and raise `AssertionError` when the verdict is negative.

The GPU tier is certified suite by suite (one directory verify/<suite>/ each), because a GPU window is short:
`suite_certificate` stamps a suite's certificate with the fingerprint of every file its results depend on
(`suite_files`), `suite_statuses` tells passed / failed / stale / incomplete / never run against the files of
today, and `plan_run` chooses the suites a window runs (missing or stale, oldest first, as many as fit its
budget, timed by the latest measurement or verify/budget.py's estimate). A run of the whole tier can also be
cut into slices (`shard_plan`) whose partial certificates are merged (`merge_certificates`).

A certificate read back (`read_certificate`, `merge_certificates`, `read_suite_certificate`) is read with the
limits of the log readers -- a regular file of at most 64 MiB, UTF-8 JSON nested at most 64 levels -- and is
verified, not trusted: every field of its type, every row's error, `passed` and verdict recomputed from its
prediction, measurement, metric and tolerance and found to be the ones stated, the counts those of its rows.
Anything else is a one-line `CertificateError` naming the file and the field.  Its Markdown page
(`certificate_markdown`, what `write_certificate` writes beside the JSON) escapes every text it holds.
"""

from __future__ import annotations

from .._facade import set_home
from ._budget import (
    GPU_BENCH_S,
    GPU_COMMAND_HARD_S,
    GPU_COMMAND_S,
    GPU_COMPILE_LIMIT_S,
    GPU_SUITE_LIMIT_S,
    GPU_TEST_LIMIT_S,
    SUITE_START_S,
    BudgetItem,
    budget_warnings,
)
from ._certificate import (
    _cpu_model,
    _environment,
    _row_from_dict,
    certificate,
    certificate_markdown,
    write_certificate,
    write_report,
)
from ._checked import read_certificate
from ._planner import (
    DEFAULT_TEST_S,
    PlanItem,
    budget_estimates,
    function_of_node,
    plan_run,
    suite_tests,
    time_estimates,
)
from ._read import CertificateError
from ._report import LEGEND, Report, Row, _errors, format_table
from ._shards import merge_certificates, parse_shard, partial_certificates, shard_plan
from ._suites import (
    STATES,
    SuiteStatus,
    check_suite,
    read_suite_certificate,
    status_markdown,
    suite_certificate,
    suite_files,
    suite_fingerprint,
    suite_status,
    suite_statuses,
    suites,
)

__all__ = [
    "DEFAULT_TEST_S",
    "GPU_BENCH_S",
    "GPU_COMMAND_HARD_S",
    "GPU_COMMAND_S",
    "GPU_COMPILE_LIMIT_S",
    "GPU_SUITE_LIMIT_S",
    "GPU_TEST_LIMIT_S",
    "LEGEND",
    "STATES",
    "SUITE_START_S",
    "BudgetItem",
    "CertificateError",
    "PlanItem",
    "Report",
    "Row",
    "SuiteStatus",
    "budget_estimates",
    "budget_warnings",
    "certificate",
    "certificate_markdown",
    "check_suite",
    "format_table",
    "function_of_node",
    "merge_certificates",
    "parse_shard",
    "partial_certificates",
    "plan_run",
    "read_certificate",
    "read_suite_certificate",
    "shard_plan",
    "status_markdown",
    "suite_certificate",
    "suite_files",
    "suite_fingerprint",
    "suite_status",
    "suite_statuses",
    "suite_tests",
    "suites",
    "time_estimates",
    "write_certificate",
    "write_report",
]

# private helpers other parts of the project import from here (benchmarks, docs generators, tests)
_ = (_cpu_model, _environment, _errors, _row_from_dict)

set_home(__name__, globals(), __all__)  # shown and documented as grokclocks.verification.<name>
del annotations, set_home  # not part of the API
