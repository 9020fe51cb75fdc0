"""Errata as data: one record per paper statement grokclocks corrects, with its evidence.

`docs/errata.md` is generated from `ERRATA` (`python docs/gen_pages.py`), and
`tests/test_errata.py` checks that every record names a test or verify check that exists, so the
page and the evidence cannot drift apart.  Each record says how the correction is established
(`Erratum.proof`): "measured", or the test that derives it symbolically from the paper's own starting
equation (`SYMBOLIC_PROOFS`; the derivations are in tests/test_symbolic_errata.py).
"""

from __future__ import annotations

import dataclasses

from . import _validate as V
from ._fielddocs import document_records
from ._papers import Erratum, paper_modules
from .citations import PAPERS, SPEC

__all__ = ["Erratum", "ERRATA", "SYMBOLIC_PROOFS", "check_erratum", "errata_for", "to_markdown"]


def __dir__() -> list[str]:
    """`dir()` of this module: its API (`__all__`) and its private names, not the names it imports."""
    return sorted({*__all__, *(n for n in globals() if n.startswith("_"))})


def check_erratum(e: Erratum) -> Erratum:
    """Check an erratum record: its spec IDs exist and its number is `<paper>-<n>` of their paper.

    Parameters
    ----------
    e : Erratum
        The record to check.

    Returns
    -------
    Erratum
        `e` itself, unchanged.

    Raises
    ------
    DomainError
        If `e` is not an `Erratum`.
    UnknownKey
        If a spec ID of `e` is not registered, or `e.number` does not start with the paper key
        of its spec IDs (a `DomainError` and a `KeyError`).
    """
    if not isinstance(e, Erratum):
        raise V.DomainError(f"e must be an Erratum record (got {V.show(e)})")
    for i in e.spec_ids:
        if i not in SPEC:
            raise V.UnknownKey(f"erratum {e.number} names unknown spec ID {i!r} (e.spec_ids must be registered)")
        if not e.number.startswith(i.split(":", 1)[0] + "-"):
            raise V.UnknownKey(f"erratum {e.number}: number it '<paper>-<n>' after its spec ID {i!r} (e.number)")
    return e

_SE = "tests/test_symbolic_errata.py::"
SYMBOLIC_PROOFS: dict[str, str] = {
    "levi-1": _SE + "test_levi_1_weight_decay_plateaus_are_gamma_squared_over_8",
    "levi-3": _SE + "test_levi_3_weight_decay_plateaus_above_lambda_one",
    "levi-4": _SE + "test_levi_4_label_noise_is_fitted",
    "levi-5": _SE + "test_levi_5_gradient_flow_solution",
    "levi-6": _SE + "test_levi_6_two_layer_hdot",
    "levi-7": _SE + "test_levi_7_two_layer_prefactor",
    "levi-8": _SE + "test_levi_8_eq19_for_every_lambda",
    "levi-9": _SE + "test_levi_9_gen_loss_has_a_closed_form",
    "levi-10": _SE + "test_levi_10_accuracy_is_erf_of_sqrt_eps_over_2L",
    "levi-11": _SE + "test_levi_11_incomplete_gamma_argument_order",
    "levi-12": _SE + "test_levi_12_eigenvectors_live_in_d_in",
    "levi-13": _SE + "test_levi_13_validity_of_the_late_time_forms",
    "levi-15": _SE + "test_levi_15_grokking_time_is_finite_at_lambda_one",
    "levi-16": _SE + "test_levi_16_erf_sqrt2_level_gives_eps_over_4",
    "levi-17": _SE + "test_levi_17_gen_train_derivative_identity",
    "levi-19": _SE + "test_levi_19_lambert_w_times_carry_eta0",
    "levi-21": _SE + "test_levi_21_weight_decay_conventions",
    "clocks-2": _SE + "test_clocks_2_weight_decay_tail_is_exponential",
    "clocks-3": _SE + "test_clocks_3_kl_clock_worked_example",
    "clocks-4": _SE + "test_clocks_4_smoothness_constant_is_attained",
    "clocks-6": _SE + "test_clocks_6_balanced_drift_of_a_layer_trained_network",
    "kramers-2": _SE + "test_kramers_2_readout_residual_is_forced",
    "kramers-3": _SE + "test_kramers_3_separation_exponents_by_power_counting",
    "kramers-5": _SE + "test_kramers_5_ridge_grokking_time",
    "kramers-6": _SE + "test_kramers_6_eq2_penalty_decays_at_two_lambda",
    "kramers-9": _SE + "test_kramers_9_sgd_temperature_per_coordinate",
    "kramers-11": _SE + "test_kramers_11_prefactor_from_laplace_on_the_exact_mfpt",
    "uniformity-2": _SE + "test_uniformity_2_coverage_fraction_on_torus_and_grid",
    "repulsion-1": _SE + "test_repulsion_1_woodbury_form",
    "repulsion-2": _SE + "test_repulsion_2_sign_rule_is_an_identity",
    "repulsion-4": _SE + "test_repulsion_4_loss_forms_are_not_proportional",
}
"""Erratum number -> the test that derives the correction with sympy from the paper's own starting equation
(a limit, a series, a gradient flow, a matrix identity) and shows the paper's printed form differs.  The
algebraic errata are here; the others rest on measurements (`Erratum.proof` = "measured")."""


def _with_proof(e: Erratum) -> Erratum:
    """`e` with its `proof` set from `SYMBOLIC_PROOFS` (and that test added to its `checks`)."""
    test = SYMBOLIC_PROOFS.get(e.number)
    if test is None:
        return e
    return dataclasses.replace(e, proof=test, checks=e.checks if test in e.checks else (*e.checks, test))


ERRATA: tuple[Erratum, ...] = tuple(
    check_erratum(_with_proof(e)) for m in paper_modules() for e in getattr(m, "ERRATA", ()))
"""Every erratum of the implemented papers, in paper order (each checked by `check_erratum` at import)."""
if set(SYMBOLIC_PROOFS) - {e.number for e in ERRATA}:  # pragma: no cover - a typo in the table above
    raise AssertionError(f"SYMBOLIC_PROOFS names unknown errata: {sorted(set(SYMBOLIC_PROOFS) - {e.number for e in ERRATA})}")


def errata_for(spec_id: str) -> list[Erratum]:
    """All errata that touch a spec ID.

    Parameters
    ----------
    spec_id : str
        A registered spec ID, `"<paper>:<label>"`, e.g. `"levi:eq15"`.

    Returns
    -------
    list of Erratum
        The records whose `spec_ids` include `spec_id`, in `ERRATA` order; `[]` if none.

    Raises
    ------
    UnknownKey
        If `spec_id` is not a registered spec ID (a `DomainError` and a `KeyError`).
    """
    if not isinstance(spec_id, str) or spec_id not in SPEC:
        raise V.UnknownKey(f"spec_id must be a registered spec ID such as 'levi:eq15' (got {V.show(spec_id)})")
    return [e for e in ERRATA if spec_id in e.spec_ids]


def to_markdown() -> str:
    """The errata page `docs/errata.md` as Markdown, generated from `ERRATA`.

    Returns
    -------
    str
        One table per paper with errata: number, spec IDs, where, what the paper says, what is
        correct, the evidence, the proof ("proven symbolically" by a named test, or "measured") and the
        checks that show it.
    """
    proven = sum(e.proof != "measured" for e in ERRATA)
    lines = [
        "# Errata",
        "",
        "Statements of the source papers that grokclocks corrects. This page is generated from",
        "`grokclocks.errata.ERRATA` (`python docs/gen_pages.py`); each row names",
        "the test or verify check that shows the correction and says how it is established:",
        f"**proven symbolically** ({proven} of {len(ERRATA)}: a test derives the corrected form with sympy from the",
        "paper's own starting equation and shows that the printed form differs) or **measured** (simulations,",
        "exact quadrature or root finding, with the numbers in the evidence column).",
        "",
    ]
    for key, paper in PAPERS.items():
        rows = [e for e in ERRATA if e.number.startswith(key + "-")]
        if not rows:
            continue
        lines += [f"## {paper.text}", ""]
        lines += ["| # | spec IDs | where | paper says | correct | evidence | proof | shown by |",
                  "|---|---|---|---|---|---|---|---|"]
        for e in rows:
            proof = "measured" if e.proof == "measured" else f"proven symbolically (`{e.proof.split('::', 1)[1]}`)"
            cells = [e.number, ", ".join(f"`{i}`" for i in e.spec_ids), e.where, e.paper, e.correct,
                     e.evidence, proof, "<br>".join(f"`{c}`" for c in e.checks)]
            lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
        lines.append("")
    return "\n".join(lines)


document_records(globals(), __all__)  # help() of each record class lists its fields


if __name__ == "__main__":  # pragma: no cover
    print(to_markdown())
