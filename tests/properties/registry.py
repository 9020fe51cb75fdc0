"""The property registry: every public callable of grokclocks has an :class:`~kinds.Entry` here or
an :class:`~kinds.Exempt` with its reason (``tests/test_properties.py`` enforces it)."""

from __future__ import annotations

import tempfile

from hypothesis import strategies as st

from .entries_clocks import ENTRIES as _CLOCKS
from .entries_coverage import ENTRIES as _COVERAGE
from .entries_forecast import ENTRIES as _FORECAST
from .entries_io import ENTRIES as _IO
from .entries_kramers import ENTRIES as _KRAMERS
from .entries_levi import ENTRIES as _LEVI
from .entries_repulsion import ENTRIES as _REPULSION
from .entries_sim import ENTRIES as _SIM
from .entries_spectral import ENTRIES as _SPECTRAL
from .kinds import Choice, Entry, Exempt, Fixed, Flag


def _rows():
    from grokclocks.verification import Row

    return [Row("levi:eq8", "x", "agree", 1.0, 1.01, 0.01, 0.05, "rel", "src", True),
            Row("levi:eq11", "y", "agree", 2.0, float("inf"), float("inf"), 0.1, "rel", "src", False)]


def _erratum():
    from grokclocks.errata import ERRATA

    return ERRATA[0]


_OTHER = [
    Entry("errata.check_erratum", build=lambda n: st.just(None).map(lambda _: {"e": _erratum()}),
          bad={"e": lambda n, kw: st.sampled_from([None, "levi-1", 3, __import__("dataclasses").replace(
              kw["e"], spec_ids=("levi:nope",))])}, names={"e": ("spec ID", "e.spec_ids")}),
    Entry("errata.errata_for", {"spec_id": Fixed("levi:eq15", "levi:eq8", bad=("levi:nope", None, 3, ""))}),
    Entry("errata.to_markdown"),
    Entry("verification.format_table", {"markdown": Flag()}, build=lambda n: st.just(None).map(lambda _: {"rows": _rows()}),
          nan=None, inf="a row may carry a measured inf (shown as such)"),
    Entry("verification.write_report", {"scale": Choice("cpu", "gpu")},
          build=lambda n: st.just(None).map(lambda _: {"rows": _rows(), "directory": tempfile.mkdtemp(prefix="gc-prop-")}),
          cost=5),
    # citations.py is owned by another helper: its invalid inputs raise ValueError / KeyError (reported), so only
    # typical calls are drawn here
    Entry("citations.cite", {"obj_or_id": Fixed("levi:eq8", "levi"), "format": Fixed("bibtex", "text")}),
    Entry("citations.spec_ids", {"paper": Fixed(None, "levi", "clocks")}),
    Entry("citations.citations_of", {"obj": Fixed(len, "x", None)}),
    Entry("citations.coverage", {"paper": Fixed(None, "levi")}, cost=20),
    # grokclocks.symbolic: lookups by key, spec ID, function name or object; an unknown, ambiguous or
    # closed-form-less target is an UnknownKey (a DomainError); values are sympy objects (checked against the
    # numeric functions by tests/test_symbolic.py)
    *[Entry(f"symbolic.{name}", {"target": Fixed("levi:eq11", "levi:eq6/edges", "grok_time_asymptotic", "clocks:thm4.9",
                                                 bad=("levi:nope", "levi:eq6", "grok_time", None, 3, ""))}, cost=3)
      for name in ("formula", "formula_record", "latex")],
    Entry("symbolic.formula_records", {"target": Fixed(None, "levi", "levi:eq6", "loss_train",
                                                       bad=("levi:nope", "grok_time", 3, ""))}, cost=3),
    Entry("symbolic.formulas", cost=3),
]

ENTRIES: list[Entry] = [*_LEVI, *_CLOCKS, *_SPECTRAL, *_KRAMERS, *_COVERAGE, *_REPULSION, *_SIM, *_IO, *_FORECAST,
                        *_OTHER]

_ENGINE = "engine (owned by the engine helper): covered by tests/test_sim*.py and verify/"
_RECORD = "record type (frozen dataclass / NamedTuple): its fields are checked by the function that consumes it"
_TRACED = ("pure JAX function traced inside jit/vmap by the engine: its arguments are tracers, so no value check "
           "is possible there; exercised by tests/test_sim*.py")
_EXC = "exception or warning class"

EXEMPT: list[Exempt] = [
    Exempt("grokclocks.DomainError", _EXC),
    Exempt("grokclocks.OutputExistsError", _EXC),
    *[Exempt(n, _EXC) for n in ("citations.CitationWarning", "logs.LogError", "logs.LogWarning", "sim.DivergenceWarning",
                                "runfile.RunExistsError", "runfile.RunFileError", "runfile.RunFileNotFoundError",
                                "runfile.RunFileWarning", "verification.CertificateError")],
    Exempt("compare.Verdict", _RECORD + " (compare_run)"),
    *[Exempt(f"forecast.{n}", _RECORD + f" ({f})") for n, f in (
        ("Forecast", "forecast"), ("Signal", "forecast"), ("SignalGroup", "the GROUPS table"),
        ("AFTModel", "fit_model; from_dict checks every field"), ("ForecastModel", "fit_model, default_model; "
                                                                                 "from_dict checks every field"),
        ("RunCurves", "fit_model's input, read by the validated clocks"))],
    *[Exempt(f"forecast.{n}", "stateful training-loop helper: update / should_stop / the hooks and their argument "
                              "checks are covered by tests/test_forecast.py (fake trainers)")
      for n in ("Monitor", "LightningHooks", "HuggingFaceHooks")],
    *[Exempt(f"forecast.{n}", "factory of a framework's callback class (lightning, transformers); a missing "
                              "framework is a one-line ImportError, tested in tests/test_forecast.py")
      for n in ("lightning_callback", "huggingface_callback")],
    # named results (issue 17): NamedTuples built by the function named beside each from its checked arguments
    *[Exempt(f"task.{n}", _RECORD + f" ({f})") for n, f in (
        ("Split", "designs, modadd_split"), ("TokenLayout", "token_ids"), ("PairTable", "modular_table"),
        ("OneHotTable", "modadd_inputs"))],
    *[Exempt(f"coverage.{n}", _RECORD + f" ({f})") for n, f in (
        ("OperatorNormBounds", "operator_norm_bounds"), ("ClassResiduals", "class_target_residuals"),
        ("TokensSeen", "token_seen"), ("ThresholdRule", "progress_measure_fit"), ("CodeMED", "med_code_mlp"),
        ("AccuracyExtremes", "u_acc_l_acc"))],
    *[Exempt(f"kramers.{n}", _RECORD + f" ({f})") for n, f in (
        ("Milestones", "milestones"), ("TwoLayerJacobian", "two_layer_jacobian"), ("NTKParts", "ntk_decomposition"),
        ("OneHotKernel", "relu_nngp_modadd, relu_feature_kernel_modadd"), ("RidgeTimescales", "ridge_timescales"))],
    Exempt("sim.data.ModularAdditionTable", _RECORD + " (modular_addition_table)"),
    Exempt("logs.RunLog", _RECORD + " (read_log builds it; merge_seeds, compare.run_data)"),
    Exempt("logs.read_logs", "several files as one run: each source goes through read_log's checks (its entry "
                             "above); the file formats, joins and refusals are covered by tests/test_logs_formats.py "
                             "and tests/test_logs_hostile.py"),
    *[Exempt(f"sim.train.{n}", "type alias (typing.Callable) of the engine's step / metrics functions, not a "
                               "function: nothing to call") for n in ("StepFn", "MetricsFn")],
    Exempt("sim.linear.SpectralDraws", _RECORD + " (spectral_draws)"),
    Exempt("verification.BudgetItem", _RECORD + " (verify/budget.py)"),
    Exempt("verification.SuiteStatus", _RECORD + " (suite_status, suite_statuses)"),
    Exempt("verification.PlanItem", _RECORD + " (plan_run)"),
    Exempt("sim.SimulationDiverged", _EXC),
    Exempt("spectral.SpectralStratumWarning", _EXC),
    Exempt("spectral.SingularValueDrift", _RECORD + " (returned by singular_value_drift_terms)"),
    Exempt("citations.Paper", _RECORD),
    Exempt("citations.SpecEntry", _RECORD),
    Exempt("citations.cites", "decorator applied at import time to every cited function; covered by "
                              "tests/test_citations.py (citations.py is owned by the citations helper)"),
    Exempt("errata.Erratum", _RECORD + " (check_erratum)"),
    Exempt("symbolic.Formula", _RECORD + " (formula_record; its expressions are checked by tests/test_symbolic.py)"),
    *[Exempt(n, "named result (a NamedTuple returned by " + f + "; issue 17): a record with no logic of its own, "
                "built from the checked arguments of that function, which the registry covers")
      for n, f in (("_mpgrid.DecayGrid", "mp_decay_grid"), ("clocks.ActiveAffineMap", "relu_active_affine_map"),
                   ("clocks.Bounds", "kl_gap_bounds & co., spectral.covering_number_ball_bounds"),
                   ("clocks.GapGrowthFit", "fit_gap_growth"), ("clocks.KLConstants", "kl_constants_critical_weight_decay"),
                   ("linear.DoutMax", "dout_max"), ("linear.GrokTimes", "grok_time_grid"),
                   ("linear.InverseSquareFit", "fit_inverse_square"),
                   ("linear.WDAsymptotes", "wd_asymptotes, wd_asymptotes_small_gamma"),
                   ("repulsion.AdamState", "adam_l2_update"), ("repulsion.PowerLawFit", "fit_power_law"),
                   ("repulsion.SignRuleTerms", "sign_rule_terms"), ("repulsion.SimilarPairs", "top_similar_pairs"),
                   ("repulsion.SlopeDetection", "slope_detector"), ("repulsion.TianInitBounds", "tian_init_bounds"),
                   ("repulsion.TianLossGrad", "tian_loss_grad"), ("repulsion.TianOutputs", "tian_forward"),
                   ("rmt.MPEdges", "mp_edges"), ("runfile.RunPaths", "check_run_path"),
                   ("sim.train.RecordPlan", "check_record_every"), ("sim.train.ShardedRuns", "shard_runs"))],
    Exempt("verification.Row", _RECORD + " (format_table, write_report)"),
    Exempt("verification.Report", "pytest-session collector used by verify/conftest.py; covered by "
                                  "tests/test_verification.py"),
    *[Exempt(f"cli.{n}", "command-line front end: argument parsing and exit codes covered by tests/test_cli.py")
      for n in ("build_parser", "main", "verify_command")],
    *[Exempt(f"compare.{n}", "owned by the compare helper: covered by tests/test_compare.py")
      for n in ("Comparison", "Entry", "RunData", "compare_run", "load_run", "run_data")],
    *[Exempt(f"sim.train.{n}", _ENGINE) for n in (
        "batched", "broadcast_batch", "first_crossing_step", "optax_init", "optax_step", "optimizer_factory",
        "record_times", "sgd_weight_decay", "shard_runs", "simulate", "weight_decay_coefficient")],
    *[Exempt(f"runfile.{n}", "run-file format (moved from sim.train, which re-exports it): every failure mode "
                             "covered by tests/test_run_files.py") for n in (
        "Trajectory", "config_from_json", "config_to_json", "load_trajectory", "save_trajectory")],
    *[Exempt(f"sim.modular.{n}", _ENGINE) for n in (
        "ModularConfig", "ModularModel", "TrainConfig", "modular_model", "quadratic_mlp_onehot_apply",
        "run_modular_addition", "train_modular")],
    *[Exempt(f"sim.trackers.{n}", _ENGINE) for n in (
        "SnapshotTracker", "Tracker", "UpdateGramTracker", "check_trackers", "rolling_eigenvalues", "select_leaf",
        "snapshot_tracker", "snapshots", "tracker_carry", "update_gram_tracker")],
    *[Exempt(f"sim.repulsion.{n}", _ENGINE) for n in (
        "TianRun", "rho_tian_hook", "rho_tian_jax", "rho_tian_relu_hook", "tian_features", "train_features",
        "train_tian", "training_pairs")],
    *[Exempt(f"sim.distributed.{n}", _ENGINE) for n in ("merge_seed_shards", "process_share")],
    *[Exempt(f"sim.data.{n}", _RECORD + " (run_gd, run_two_layer, ...)") for n in
      ("ModularData", "TeacherStudentData", "TwoLayerData")],
    *[Exempt(f"sim.linear.{n}", _RECORD + " (built by the run functions from their checked arguments)") for n in
      ("CrossingTimes", "FreshNoiseConfig", "LinearGDConfig", "SpectralConfig", "TwoLayerConfig")],
    *[Exempt(f"sim.langevin.{n}", _RECORD + " (mean_first_passage_time)") for n in ("FPTConfig", "FPTResult")],
    *[Exempt(f"sim.landscapes.{n}", _RECORD + " (power_landscape_gd, deep_linear_gd, softmax_regression, "
                                              "factorized_softmax_gd check every field)")
      for n in ("DeepLinearConfig", "FactorizedSoftmaxConfig", "PowerLandscapeConfig", "SoftmaxRegressionConfig")],
    *[Exempt(f"sim.deep_linear.{n}", _RECORD + " (run_deep_linear, run_end_to_end_flow)") for n in
      ("DeepLinearConfig", "DeepLinearData", "EndToEndFlowConfig")],
    Exempt("sim.models.Model", _RECORD + " (init, apply) pair"),
    *[Exempt(f"sim.models.{n}", _TRACED) for n in (
        "centred_mse", "cross_entropy", "dense", "embedding_mlp_apply", "linear_apply", "mean_field_quadratic_apply", "mse",
        "param_norm", "tian_features", "tian_mlp_apply", "transformer_apply", "two_layer_apply")],
    Exempt("sim.landscapes.end_to_end", _TRACED),
    Exempt("sim.landscapes.gap_form_cross_entropy", _TRACED),
    Exempt("sim.kramers.alpha_two_layer_apply", _TRACED),
]
