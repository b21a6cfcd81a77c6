#!/bin/bash
# pgdoctor on a Slurm node, shared by prolog.sh and epilog.sh: `pgdoctor-node-check.sh prolog|epilog`.
#
# A failing check (pgdoctor exit 1) drains the node with the first failing finding as the
# reason, "pgdoctor: <CODE> <title>". pgdoctor's own trouble (2: usage or configuration error,
# 3: incomplete, a timeout, not installed) is logged and the node stays in service: a broken
# health check must not drain a cluster. If scontrol cannot drain, the script exits 1, on which
# Slurm drains the node itself ("Prolog error" / "Epilog error").
#
# Settings, from slurmd's environment or edited here:
#   PGDOCTOR           the pgdoctor executable (Slurm runs prologs without a search path)
#   PGDOCTOR_TIMEOUT   seconds pgdoctor may take in all (default 60)
#   PGDOCTOR_GRACE     seconds past that before pgdoctor is killed (default 15)
#   PGDOCTOR_SKIP      areas not to check (default launch,knobs,software: prologs and epilogs run
#                      in slurmd's environment, not in the job's, so the job's launch variables,
#                      NCCL settings and Python are not what it would see)
#   PGDOCTOR_CONFIG    TOML file of thresholds (pgdoctor list --config)
#   PGDOCTOR_ARGS      more arguments, split on spaces, e.g. "--expect-gpus 8"
#   PGDOCTOR_LOG_DIR   where the JSON report of a failed or broken run is kept
#                      (default /var/log/pgdoctor; reports of clean runs are removed)
#   PGDOCTOR_FAIL_JOB  after draining, exit 1 (fail the job: a prolog's default, so the job is
#                      requeued elsewhere) or 0 (an epilog's default)
set -u
PATH="${PATH:+$PATH:}/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
export PATH

WHAT="${1:?usage: pgdoctor-node-check.sh prolog|epilog}"
PGDOCTOR="${PGDOCTOR:-pgdoctor}"
TIMEOUT="${PGDOCTOR_TIMEOUT:-60}"
GRACE="${PGDOCTOR_GRACE:-15}"
SKIP="${PGDOCTOR_SKIP-launch,knobs,software}"
LOG_DIR="${PGDOCTOR_LOG_DIR:-/var/log/pgdoctor}"
# A prolog fails the job by default so Slurm requeues it elsewhere; an epilog job is over.
if [ "$WHAT" = prolog ]; then FAIL_JOB="${PGDOCTOR_FAIL_JOB:-1}"; else FAIL_JOB="${PGDOCTOR_FAIL_JOB:-0}"; fi
NODE="${SLURMD_NODENAME:-$(hostname -s)}"
JOB="${SLURM_JOB_ID:-nojob}"

log() {
  echo "pgdoctor-$WHAT: $*" >&2
  logger -t "pgdoctor-$WHAT" -- "$*" 2>/dev/null || true
}

mkdir -p "$LOG_DIR" 2>/dev/null
if [ -d "$LOG_DIR" ] && [ -w "$LOG_DIR" ]; then
  report="$LOG_DIR/$WHAT-$JOB.json"
else
  report="$(mktemp "/tmp/pgdoctor-$WHAT-$JOB.XXXXXX")"
fi
errors="$report.stderr"

args=(check --level quick --json --timeout "$TIMEOUT")
[ -n "$SKIP" ] && args+=(--skip "$SKIP")
[ -n "${PGDOCTOR_CONFIG:-}" ] && args+=(--config "$PGDOCTOR_CONFIG")
read -r -a extra <<< "${PGDOCTOR_ARGS:-}"

timeout -k 5 "$((TIMEOUT + GRACE))" "$PGDOCTOR" "${args[@]}" ${extra[@]+"${extra[@]}"} >"$report" 2>"$errors"
rc=$?

case "$rc" in
  0)
    rm -f "$report" "$errors"
    exit 0
    ;;
  1)
    # The first finding at fail severity (findings come sorted, worst first), or at warn
    # when PGDOCTOR_ARGS has --fail-on warn. python3 is on every node; jq is not.
    reason="$(python3 -c '
import json, sys
try:
    with open(sys.argv[1]) as fh:
        findings = json.load(fh).get("findings", [])
except Exception:
    sys.exit(1)
for severity in ("fail", "warn"):
    hits = [f for f in findings if isinstance(f, dict) and f.get("severity") == severity]
    if hits:
        f = hits[0]
        more = " (+%d more)" % (len(hits) - 1) if len(hits) > 1 else ""
        text = "pgdoctor: %s %s%s" % (f.get("code", "?"), f.get("title", ""), more)
        print(" ".join(text.split())[:240])
        sys.exit(0)
sys.exit(1)
' "$report" 2>/dev/null)"
    if [ -z "$reason" ]; then
      log "job $JOB: pgdoctor exited 1 but $report names no failing finding; node left in service"
      exit 0
    fi
    log "job $JOB: draining $NODE: $reason (report: $report)"
    if ! scontrol update nodename="$NODE" state=drain reason="$reason"; then
      log "job $JOB: scontrol could not drain $NODE; failing the $WHAT so that Slurm drains it"
      exit 1
    fi
    [ "$FAIL_JOB" = 1 ] && exit 1
    exit 0
    ;;
  124|137)
    log "job $JOB: pgdoctor did not finish within $((TIMEOUT + GRACE)) s and was killed; node left in service"
    ;;
  2)
    log "job $JOB: pgdoctor usage or configuration error, node left in service: $(head -c 400 "$errors")"
    ;;
  3)
    log "job $JOB: pgdoctor run incomplete (a probe could not run), node left in service (report: $report)"
    ;;
  126|127)
    log "job $JOB: cannot run $PGDOCTOR (exit $rc); node left in service"
    ;;
  *)
    log "job $JOB: pgdoctor exited $rc, node left in service: $(head -c 400 "$errors")"
    ;;
esac
exit 0
