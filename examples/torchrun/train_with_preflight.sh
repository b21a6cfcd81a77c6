#!/bin/bash
# A training job with a pgdoctor pre-flight on every node before torchrun starts.
#
#   sbatch --nodes=4 --gpus-per-node=8 train_with_preflight.sh train.py --your-args
#   bash train_with_preflight.sh train.py --your-args        (one node, no Slurm)
#
# The pre-flight runs once per node in the job's own environment (its Python and torch, its
# NCCL_* settings), so it sees what the ranks will see. If any node fails, the job stops
# before torchrun with the nodes and findings listed, instead of hanging in the first
# collective twenty minutes later. pgdoctor's own trouble (usage error, incomplete run,
# timeout) is reported and the job goes on, unless PREFLIGHT_STRICT=1.
#
# Settings (environment):
#   PGDOCTOR           pgdoctor executable (default: pgdoctor on PATH)
#   PREFLIGHT_ONLY     areas checked (default software,knobs,host,gpu,net; `launch` is left out
#                      because the launch variables are torchrun's to set, after the pre-flight)
#   PREFLIGHT_LEVEL    quick|standard|full (default standard)
#   PREFLIGHT_TIMEOUT  seconds per node (default 120)
#   PREFLIGHT_DIR      where each node's JSON report goes (default ./preflight-<job id>)
#   PREFLIGHT_STRICT   1: also stop on pgdoctor's own errors (exit 2/3, timeout)
#   NPROC_PER_NODE     ranks per node (default: the GPUs Slurm gave, else 1)
#   MASTER_PORT        rendezvous port (default 29500)
#SBATCH --ntasks-per-node=1
set -euo pipefail

PGDOCTOR="${PGDOCTOR:-pgdoctor}"
ONLY="${PREFLIGHT_ONLY:-software,knobs,host,gpu,net}"
LEVEL="${PREFLIGHT_LEVEL:-standard}"
TIMEOUT="${PREFLIGHT_TIMEOUT:-120}"
JOB="${SLURM_JOB_ID:-local}"
DIR="${PREFLIGHT_DIR:-$PWD/preflight-$JOB}"
STRICT="${PREFLIGHT_STRICT:-0}"
[ $# -ge 1 ] || { echo "usage: $0 TRAIN_SCRIPT [ARGS...]" >&2; exit 2; }
mkdir -p "$DIR"

if [ -n "${SLURM_JOB_ID:-}" ]; then
  NODES="${SLURM_JOB_NUM_NODES:-1}"
  MASTER_ADDR="$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)"
  GPUS="${SLURM_GPUS_ON_NODE:-}"
else
  NODES=1
  MASTER_ADDR=127.0.0.1
  GPUS=""
fi
export MASTER_ADDR MASTER_PORT="${MASTER_PORT:-29500}"
NPROC="${NPROC_PER_NODE:-${GPUS:-1}}"

# --- pre-flight: one pgdoctor per node, each writing <dir>/<node>.json --------------------
pre=("$PGDOCTOR" check --only "$ONLY" --level "$LEVEL" --timeout "$TIMEOUT" --json)
set +e
if [ -n "${SLURM_JOB_ID:-}" ]; then
  # %N is srun's file-name pattern for the node name: one report per node. The step gets a
  # hard time limit in minutes so that a hung node cannot hold the whole allocation.
  # Its own port: torchrun's rendezvous must not meet the pre-flight's store in TIME_WAIT.
  MASTER_PORT=$((MASTER_PORT + 1)) srun --nodes="$NODES" --ntasks="$NODES" --ntasks-per-node=1 --time="$(( (TIMEOUT + 59) / 60 + 1 ))" \
    --output="$DIR/%N.json" --error="$DIR/%N.stderr" "${pre[@]}"
else
  timeout -k 5 "$((TIMEOUT + 15))" "${pre[@]}" >"$DIR/$(hostname -s).json" 2>"$DIR/$(hostname -s).stderr"
fi
rc=$?
set -e

# The verdict per node from the reports themselves: srun's exit code is only the worst one.
# FAIL lines: failing findings; INCOMPLETE lines: why a node's run was incomplete (exit 3), from
# the report's "incomplete" list (pgdoctor's stderr holds only progress there).
summary="$(python3 - "$DIR" <<'EOF'
import json, pathlib, sys
bad, incomplete = [], []
for path in sorted(pathlib.Path(sys.argv[1]).glob("*.json")):
    try:
        report = json.loads(path.read_text())
    except (OSError, ValueError):
        incomplete.append("INCOMPLETE %s: no readable report (see %s.stderr)" % (path.stem, path.stem))
        continue
    for f in report.get("findings", []):
        if f.get("severity") == "fail":
            bad.append("FAIL %s: %s %s: %s" % (path.stem, f.get("code"), f.get("title"), f.get("message")))
    for reason in report.get("incomplete", []):
        incomplete.append("INCOMPLETE %s: %s" % (path.stem, reason))
print("\n".join(bad + incomplete))
EOF
)"
failed="$(printf '%s\n' "$summary" | sed -n 's/^FAIL //p')"
incomplete="$(printf '%s\n' "$summary" | sed -n 's/^INCOMPLETE //p')"

if [ -n "$failed" ]; then
  echo "pre-flight FAILED; not starting training. Findings (pgdoctor explain CODE for the fix):" >&2
  echo "$failed" >&2
  echo "reports: $DIR" >&2
  exit 1
fi
if [ "$rc" -ne 0 ]; then
  # Exit 3 (incomplete) means pgdoctor could not check something, not that the node is bad: the
  # job goes on (a pre-flight that cannot run must not keep training from starting) unless
  # PREFLIGHT_STRICT=1. The reasons are in each node's report.
  echo "pre-flight: pgdoctor exited $rc (2 usage, 3 incomplete, 124 timeout) without a failing finding" >&2
  if [ -n "$incomplete" ]; then
    echo "$incomplete" >&2
  else
    echo "see $DIR/*.stderr" >&2
  fi
  [ "$STRICT" = 1 ] && exit "$rc"
fi
echo "pre-flight: no failing finding on $NODES node(s); reports in $DIR" >&2

# --- training ------------------------------------------------------------------------------
launch=(torchrun --nnodes="$NODES" --nproc-per-node="$NPROC")
if [ "$NODES" -gt 1 ]; then
  launch+=(--rdzv-backend=c10d --rdzv-endpoint="$MASTER_ADDR:$MASTER_PORT" --rdzv-id="$JOB")
else
  launch+=(--standalone)
fi
if [ -n "${SLURM_JOB_ID:-}" ]; then
  exec srun --nodes="$NODES" --ntasks="$NODES" --ntasks-per-node=1 "${launch[@]}" "$@"
fi
exec "${launch[@]}" "$@"
