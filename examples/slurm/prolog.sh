#!/bin/bash
# Slurm Prolog: pgdoctor pre-flight on this node before a job starts on it.
#
#   slurm.conf:  Prolog=/etc/slurm/pgdoctor-prolog.sh
#   install this file as /etc/slurm/pgdoctor-prolog.sh and pgdoctor-node-check.sh beside it (0755).
#
# A failing check drains the node with the finding as the reason and fails the prolog, so that
# Slurm requeues the job on other nodes (PGDOCTOR_FAIL_JOB=0: drain, but let this job run).
# slurmctld's own drain on a prolog failure ("Prolog error") skips a node that is drained
# already, so the finding stays the reason `sinfo -R` shows.
# Settings (PGDOCTOR, PGDOCTOR_TIMEOUT, PGDOCTOR_SKIP, ...) are described in pgdoctor-node-check.sh.
exec "$(dirname "$(readlink -f "$0")")/pgdoctor-node-check.sh" prolog
