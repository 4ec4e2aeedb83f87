#!/usr/bin/env bash
# The long soak of docs/RELIABILITY.md ("Memory over a long run"): a Base policy (SFT on a small
# web pretrain pool), then `adaroll train hybrid` on web tasks with CRIU snapshots, routed so that
# every task stays on Suffix (tau_low 0, tau_high 1, tau_suffix 1: every group restores CRIU
# branches) with an RL budget that never runs out, and `benchmarks/soak.py sample` recording the
# memory of every process of the run every 30 s. Stop it with `kill PID` (the pid in OUT/train.pid)
# whenever enough hours are in; `benchmarks/soak.py report --csv OUT/memory.csv --plot PNG` draws
# it (re-runnable, also while the run goes on). Usage: benchmarks/soak_run.sh OUT
set -euo pipefail
OUT=${1:?usage: benchmarks/soak_run.sh OUT}
PY=${PY:-python}
mkdir -p "$OUT"
TEMPLATES="login-user, email-inbox-forward-nl, click-shades, multi-orderings, choose-date-nodelay"
SETS=(--set env.name=web --set env.snapshot_backend=criu
      --set "env.suite_options={train_seeds: 2, eval_seeds: 1, pretrain_seeds: 3, templates: [$TEMPLATES]}"
      --set sft.epochs=4
      --set "rl.budget={env_steps: 100000000, policy_samples: 100000000}"
      --set rl.eval.every_env_steps=20000 --set rl.eval.every_policy_samples=20000
      --set rl.scheduler.tau_low=0 --set rl.scheduler.tau_high=1 --set rl.scheduler.tau_suffix=1
      --set rl.scheduler.tasks_per_iteration=4)
[ -d "$OUT/policies/base" ] || $PY -m adaroll train sft --out "$OUT" "${SETS[@]}" >"$OUT/sft.log" 2>&1
$PY -m adaroll train hybrid --policy "$OUT/policies/base" --name soak --out "$OUT" "${SETS[@]}" \
  >"$OUT/train.log" 2>&1 &
echo $! >"$OUT/train.pid"
$PY "$(dirname "$0")/soak.py" sample --pid "$(cat "$OUT/train.pid")" --csv "$OUT/memory.csv" --every 30 \
  >"$OUT/sample.log" 2>&1 &
echo $! >"$OUT/sample.pid"
wait
