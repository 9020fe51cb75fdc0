"""Registry data of spec ``uniformity`` (Gu, Chen, Zhang, Hu, Cao, arXiv:2504.03162): IDs, modules, errata."""

from __future__ import annotations

from . import Erratum

# Every registered result of the paper: ID -> (status tag, title).  The spec tags most statements
# [RECON] (reconstructed from surviving proof steps); reconstructed-and-pinned definitions carry "V"/"C"
# here and say "reconstructed" in the title (a dedicated tag would need citations.py).
SPEC_IDS: dict[str, tuple[str, str]] = {
    "uniformity:task": ("C", "task (a, b) -> f(a, b) mod p and the label functions add/sub/mul/sq_sum/xy/sq_of_sum"),
    "uniformity:def3.1": ("V", "Def. 3.1 (reconstructed): equivalence relation f(x) = f(x') and its label classes"),
    "uniformity:lemma3.2": ("E", "Lemma 3.2 (reconstructed, qualitative): correct outputs lie near a class vector c_r"),
    "uniformity:lemma3.4": ("V", "Lemma 3.4: ||A||_2 <= ||A||_F <= sqrt(rank A) ||A||_2"),
    "uniformity:thm3.5": ("E", "Thm. 3.5 (reconstructed, qualitative): linear class targets of the residual output"),
    "uniformity:thm3.8": ("E", "Thm. 3.8 (reconstructed, qualitative): equally spaced consecutive embeddings (uniformity)"),
    "uniformity:lemmaB.1": ("V", "Lemma B.1 (reconstructed): minimal operator norm ||c||/(2R) for one class, rank-1 minimiser"),
    "uniformity:thm3.10": ("V-corr", "Thm. 3.10 as an exact test-accuracy ceiling (torus reading; token-coverage factor)"),
    "uniformity:thm3.12": ("V-corr", "Thm. 3.12 coverage bound r >= ln(p^2)/C(n) and the exact E[uncovered] (torus and grid)"),
    "uniformity:def4.1": ("C", "Def. 4.1 (reconstructed): progress measure, threshold form with agreement score"),
    "uniformity:def4.2": ("C", "Def. 4.2: main embedding diff (MED), paper form and the authors' code variants"),
    "uniformity:designs": ("C", "SQUARE / STRIP / random training-set designs exactly as the authors' code builds them"),
    "uniformity:table1": ("R", "Table 1: U-Acc / L-Acc / GO-epoch of the designed splits, with their exact ceilings"),
    "uniformity:setup": ("C", "experimental setup: 1-layer transformer, AdamW(lr 1e-3, wd 1), p = 97, vocab layouts"),
}

MODULES: tuple[str, ...] = ("grokclocks.coverage",)

# Where each registered result stands in the paper (ASCII, no TeX specials: it goes into BibTeX notes).  Every
# registered result is the paper's (NOT_IN_PAPER is empty).
WHERE: dict[str, str] = {
    "uniformity:task": "Sec. 3.1, eqs. (1)-(2)",
    "uniformity:def3.1": "Definition 3.1",
    "uniformity:lemma3.2": "Lemma 3.2",
    "uniformity:lemma3.4": "Lemma 3.4, eq. (3)",
    "uniformity:thm3.5": "Theorem 3.5, eq. (4)",
    "uniformity:thm3.8": "Theorem 3.8",
    "uniformity:lemmaB.1": "Lemma B.1, App. B.4",
    "uniformity:thm3.10": "Theorem 3.10",
    "uniformity:thm3.12": "Theorem 3.12, App. B.6",
    "uniformity:def4.1": "Definition 4.1",
    "uniformity:def4.2": "Definition 4.2, eq. (5)",
    "uniformity:designs": "Sec. 6.1 and Fig. 3 (SQUARE and STRIP training sets)",
    "uniformity:table1": "Table 1, Sec. 6.1",
    "uniformity:setup": "Sec. 6.1 (experimental setup)",
}

NOT_IN_PAPER: dict[str, tuple[str, str]] = {}

_T = "tests/test_coverage.py"
_V = "verify/uniformity/test_coverage.py"

ERRATA: tuple[Erratum, ...] = (
    Erratum(
        "uniformity-1", ("uniformity:thm3.10", "uniformity:table1"), "Thm. 3.10 / App. B.6 / Table 1",
        "D is 'a two-dimensional grid of size p x p' with Manhattan distance (bounded-grid reading)",
        "the Manhattan distance must be read on the torus Z_p x Z_p (metric='torus', the library default)",
        "authors' exact splits (python shuffle, seed 0): bounded-grid ceiling at every n <= p = 97 is 91.4 % (SQUARE k=30), "
        "89.3 % (SQUARE 35), 76.4 % (STRIP 50), 85.6 % (STRIP 40), below the paper's U-Acc 99.04 / 91.07 / 80.10 / 89.89 %; "
        "implied grid radius 98 > p; the torus ceiling covers every row (implied torus radius 7..41)",
        (f"{_V}::test_table1_grid_reading_rejected", f"{_V}::test_table1_ceilings_exact"),
    ),
    Erratum(
        "uniformity-2", ("uniformity:thm3.12",), "Thm. 3.12 / App. B.6",
        "r >= ln(p^2)/C(n), C(n) = 2n^2 - 2n + 1, makes the expected number of uncovered points < 1",
        "sufficient on the torus only; on the bounded grid border points have fewer coverers: use expected_uncovered / "
        "required_train_fraction(method='grid_exact')",
        "p=97, n=5, m=2100 (= ceil(r_paper p^2)): exact E[U] = 0.292 (torus), 1.264 (grid) > 1; "
        "the proof's with-replacement expression p^2 (1 - C/p^2)^m = 0.979 is 3.4x the exact torus value; "
        "Monte-Carlo (1000 sets) 0.286 +- 0.025 torus, 1.364 +- 0.063 grid. The grid failure is p-dependent: "
        "p=193 fails from n=6 on (E[U] = 1.531; n=5 gives 0.793)",
        (f"{_T}::test_expected_uncovered_spec_table", f"{_V}::test_thm312_monte_carlo"),
    ),
    Erratum(
        "uniformity-3", ("uniformity:designs",), "Sec. 6.1 (Table 1 setup)",
        "'from the remaining data, 30 % is randomly selected' for training",
        "the code takes int(0.3 p^2) = 2822 pairs (30 % of the full grid) from the remainder; "
        "STRIP k=67 then uses the whole remainder (2813 points)",
        "square_design/strip_design reproduce the code: 2822 train points, test sets 6587 (SQUARE any k, STRIP 40/50/60) and "
        "6596 (STRIP 67)",
        (f"{_T}::test_design_sizes", f"{_V}::test_table1_ceilings_exact"),
    ),
    Erratum(
        "uniformity-4", ("uniformity:thm3.10", "uniformity:designs", "uniformity:table1"), "transformer/str.py",
        "STRIP experiments with token offset d = 60 (second operand ids j + 60)",
        "with d = 60 the first-operand tokens 0..k (k < 60) never occur in training; the published STRIP accuracies need a "
        "shared vocabulary (b_offset = 0)",
        "token-coverage factor: combined ceiling of STRIP k=40 with b_offset=60 is 39.6 % (non-strip share of the test set) "
        "< the paper's 89.89 %; spec run: 14.1 % with d = 60 vs 78.9 % shared",
        (f"{_T}::test_token_factor_strip", f"{_V}::test_table1_token_factor_offset_layout"),
    ),
    Erratum(
        "uniformity-5", ("uniformity:task",), "transformer/base.py vs transformer/rec.py",
        "the same key 'xy' names the label function",
        "'xy' = a^2 + ab + b^2 in base.py but (a + b)^2 in rec.py; the library names them 'xy' and 'sq_of_sum'",
        "label_table(p, 'xy') and label_table(p, 'sq_of_sum') differ exactly where ab != 0 mod p: (p-1)^2 of p^2 entries "
        "(16 of 25 at p=5, 9216 of 9409 at p=97)",
        (f"{_T}::test_xy_vs_sq_of_sum_differ",),
    ),
    Erratum(
        "uniformity-6", ("uniformity:def4.2",), "Def. 4.2 vs transformer/{base,rec,str}.py",
        "MED = mean norm of consecutive embedding differences over the p tokens",
        "the code drops the last token (p-2 differences of tokens 0..p-2) and scales by 1/2 (base), p-1 (rec), 1 (str); "
        "main_embedding_diff(variant='paper' | 'cyclic' | 'code_base' | 'code_rec' | 'code_str')",
        "on a random embedding the code variants equal the hand-written code formula to 1e-15 and differ from 'paper'; "
        "code_rec / code_base = 2 (p-1), code_str / code_base = 2 exactly",
        (f"{_T}::test_med_variants_code_formulas", f"{_T}::test_med_variant_scalings"),
    ),
    Erratum(
        "uniformity-7", ("uniformity:setup",), "transformer/base.py",
        "paper setup: 1 layer, train fraction 0.3",
        "base.py defaults are num_layers = 2, frac_train = 0.5, seed = 11; use the rec/str values (experimental_setup)",
        "experimental_setup('base') records the discrepancy fields; experimental_setup('rec') is the paper's setup",
        (f"{_T}::test_experimental_setup_discrepancy",),
    ),
    Erratum(
        "uniformity-8", ("uniformity:task", "uniformity:designs"), "gen_train_test / full_loss of the authors' code",
        "labels f(a, b) of the operands",
        "the code computes labels from the second operand's token id, f(i, j + d); with d = 60 the addition labels shift by 60; "
        "the library always labels by operands (label_table) and keeps the token offset a model-side option",
        "code_labels(p, 'add', d=60) == (a + b + 60) mod p, != label_table(p, 'add')",
        (f"{_T}::test_code_labels_shift",),
    ),
)
