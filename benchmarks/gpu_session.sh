#!/usr/bin/env bash
# One GPU window of the grokclocks verification tier, as one command of at most 540 s on one H100.
#
#   benchmarks/gpu_session.sh OUT_DIR            # run it (from anywhere; the checkout is this script's parent)
#   benchmarks/gpu_session.sh OUT_DIR --dry-run  # print the estimates and the commands, run nothing
#
# (b) the engine benchmark in its quick GPU mode (bench_modular_engine.py --scale gpu-quick: canonical config, the
#     engine, the plain jit(vmap(scan)) and a PyTorch eager loop of 1000 timed epochs, at 1, 16 and 256 seeds),
#     stopped at 120 s;
# (a) then the planner with the budget left: `grokclocks verify --scale gpu --budget SECONDS` runs the suites whose
#     certificate is missing or stale, oldest first, as many as fit, one pytest process per suite; each suite's
#     certificate is written as soon as the suite finishes, so a run cut off by a time limit keeps every finished
#     suite;
# (c) everything lands in OUT_DIR in the repository's own layout, so committing the results is one copy:
#       OUT_DIR/docs/verification/gpu/<suite>.json, .md     the suite certificates
#       OUT_DIR/benchmarks/results/modular_engine_gpu_quick.json
#     (cp -r OUT_DIR/docs OUT_DIR/benchmarks <checkout>/), plus OUT_DIR/gpu_session.json (the times of each part
#     against their estimates) and OUT_DIR/gpu_session.log.
#
# The first line printed is the estimated time of each part. The script checks its own clock: it starts no part
# that would end past 540 s (GPU_SESSION_LIMIT_S), and it never runs past 570 s (GPU_SESSION_HARD_S): every child
# runs under `timeout`, the planner stops its last suite at its budget.
#
# Environment (for testing the control flow without a GPU; the defaults are the GPU window's):
#   GPU_SESSION_LIMIT_S=540  GPU_SESSION_HARD_S=570  GPU_SESSION_BENCH_S=120  GPU_SESSION_SCALE=gpu
#   GPU_SESSION_ONLY=suite,suite (the planner's --only)  PYTHON=python
#   GPU_SESSION_FAKE_BENCH=1: part (b) is a stand-in that sleeps past its cap (no JAX), to test the time limits.
#   GROKCLOCKS_COMMIT=<40 hex>: the commit of a copy without .git, stamped on gpu_session.json and the certificates.
set -u

OUT=${1:?usage: benchmarks/gpu_session.sh OUT_DIR [--dry-run]}
MODE=${2:-}
LIMIT=${GPU_SESSION_LIMIT_S:-540}
HARD=${GPU_SESSION_HARD_S:-570}
BENCH_MAX=${GPU_SESSION_BENCH_S:-120}
SCALE=${GPU_SESSION_SCALE:-gpu}
PY=${PYTHON:-python}
ONLY=${GPU_SESSION_ONLY:-}
MARGIN=10          # seconds kept at the end: the planner's summary, this script's summary, Python exits
BENCH_EST=105      # the quick mode's expected seconds (see below); it stops itself at BENCH_MAX - 10

ROOT=$(cd "$(dirname "$0")/.." && pwd)
# The commit this tree is: git's answer, else GROKCLOCKS_COMMIT (a copy sent to a GPU machine without .git),
# which verify/conftest.py also stamps on the suite certificates.
COMMIT=$(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo "${GROKCLOCKS_COMMIT:-unknown}")
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"  # this checkout's grokclocks, installed or not
START=$(date +%s)
elapsed() { echo $(( $(date +%s) - START )); }
left() { echo $(( LIMIT - $(elapsed) )); }

mkdir -p "$OUT" || exit 2
OUT=$(cd "$OUT" && pwd)
CERTS="$OUT/docs/verification/$SCALE"
RESULTS="$OUT/benchmarks/results"
LOG="$OUT/gpu_session.log"
mkdir -p "$CERTS" "$RESULTS"
: > "$LOG"
say() { echo "$*" | tee -a "$LOG"; }

if [ "$SCALE" = gpu ]; then BENCH_SCALE=gpu-quick; else BENCH_SCALE=cpu-quick; fi
ONLY_ARGS=()
if [ -n "$ONLY" ]; then ONLY_ARGS=(--only "$ONLY"); fi

# The planner's budget if (b) takes all it may: what the first line can promise.
PLAN_BUDGET=$(( LIMIT - BENCH_MAX - MARGIN - $(elapsed) ))
PLAN_LINE=$(cd "$ROOT" && timeout 60 "$PY" -m grokclocks verify --scale "$SCALE" --budget "$PLAN_BUDGET" --dry-run \
            --report-dir "$CERTS" ${ONLY_ARGS[@]+"${ONLY_ARGS[@]}"} 2>&1 | head -1)
# Quick benchmark estimate: measured 91 s on the 2026-11-27 H100 (JAX, CUDA and PyTorch start-up included), plus
# the engine's compiled program timed alone (engine_program: 4 calls a seed count, ~13 s at 256 seeds from that run's
# 2.5 s per call) ~ 105 s; --max-seconds (cap - 10) starts nothing after 110 s.
say "gpu_session: estimated: (b) benchmark ${BENCH_EST} s (stopped at ${BENCH_MAX} s); (a) verify, if (b) takes" \
    "all ${BENCH_MAX} s: ${PLAN_LINE#plan }; limit ${LIMIT} s, never past ${HARD} s"

if [ "$MODE" = "--dry-run" ]; then
  say "dry run: (b) timeout -s INT <min(${BENCH_MAX}, left)> $PY benchmarks/bench_modular_engine.py --scale $BENCH_SCALE" \
      "--max-seconds $(( BENCH_MAX - 10 )) --out $RESULTS/modular_engine_${SCALE}_quick.json"
  say "dry run: (a) timeout -s INT <budget + 5> $PY -m grokclocks verify --scale $SCALE --budget <left - ${MARGIN}>" \
      "--report-dir $CERTS ${ONLY_ARGS[*]}"
  exit 0
fi

# ---------------------------------------------------------------------------------------------- (b) benchmark
B0=$(elapsed)
CAP=$(( BENCH_MAX < $(left) - MARGIN ? BENCH_MAX : $(left) - MARGIN ))
BENCH_RC=0
if [ "$CAP" -gt 10 ]; then
  if [ -n "${GPU_SESSION_FAKE_BENCH:-}" ]; then
    BENCH_CMD=("$PY" -c "import time; time.sleep($BENCH_MAX + 30)")
  else
    BENCH_CMD=("$PY" benchmarks/bench_modular_engine.py --scale "$BENCH_SCALE" --max-seconds "$(( CAP - 10 ))"
               --out "$RESULTS/modular_engine_${SCALE}_quick.json")
  fi
  say "(b) benchmark: ${BENCH_CMD[*]} (stopped at ${CAP} s)"
  (cd "$ROOT" && timeout -s INT -k 5 "$CAP" "${BENCH_CMD[@]}") >> "$LOG" 2>&1
  BENCH_RC=$?
else
  say "(b) benchmark: not started, $(left) s left"
  BENCH_RC=-1
fi
B1=$(elapsed)

# ---------------------------------------------------------------------------------------------- (a) the planner
BUDGET=$(( $(left) - MARGIN ))
VERIFY_RC=0
if [ "$BUDGET" -gt 20 ]; then
  say "(a) verify: $PY -m grokclocks verify --scale $SCALE --budget $BUDGET --report-dir $CERTS ${ONLY_ARGS[*]}"
  (cd "$ROOT" && timeout -s INT -k 3 $(( BUDGET + 5 )) "$PY" -m grokclocks verify --scale "$SCALE" \
      --budget "$BUDGET" --report-dir "$CERTS" ${ONLY_ARGS[@]+"${ONLY_ARGS[@]}"}) 2>&1 | tee -a "$LOG"
  VERIFY_RC=${PIPESTATUS[0]}
else
  say "(a) verify: not started, $(left) s left"
  VERIFY_RC=-1
fi
V1=$(elapsed)

# ---------------------------------------------------------------------------------------------- (c) summary
SESSION_JSON="$OUT/gpu_session.json" PLAN_LINE="$PLAN_LINE" LIMIT="$LIMIT" HARD="$HARD" SCALE="$SCALE" \
BENCH_EST="$BENCH_EST" BENCH_MAX="$BENCH_MAX" BENCH_WALL=$(( B1 - B0 )) BENCH_RC="$BENCH_RC" BUDGET="$BUDGET" \
VERIFY_WALL=$(( V1 - B1 )) VERIFY_RC="$VERIFY_RC" TOTAL="$V1" COMMIT="$COMMIT" "$PY" - <<'PYJSON'
import json
import os

e = os.environ
json.dump({"commit": e["COMMIT"], "limit_s": int(e["LIMIT"]), "hard_limit_s": int(e["HARD"]), "scale": e["SCALE"],
           "bench": {"estimate_s": int(e["BENCH_EST"]), "cap_s": int(e["BENCH_MAX"]), "wall_s": int(e["BENCH_WALL"]),
                     "exit": int(e["BENCH_RC"])},
           "verify": {"plan_at_start": e["PLAN_LINE"], "budget_s": int(e["BUDGET"]), "wall_s": int(e["VERIFY_WALL"]),
                      "exit": int(e["VERIFY_RC"])},
           "total_s": int(e["TOTAL"])}, open(e["SESSION_JSON"], "w"), indent=1)
PYJSON
say "gpu_session: done in $(elapsed) s (limit ${LIMIT} s): benchmark $(( B1 - B0 )) s (exit $BENCH_RC)," \
    "verify $(( V1 - B1 )) s of a ${BUDGET} s budget (exit $VERIFY_RC); commit with: cp -r $OUT/docs $OUT/benchmarks $ROOT/"
