#!/bin/bash
# Slurm Epilog: pgdoctor on this node after a job ended on it.
#
#   slurm.conf:  Epilog=/etc/slurm/pgdoctor-epilog.sh
#   install this file as /etc/slurm/pgdoctor-epilog.sh and pgdoctor-node-check.sh beside it (0755).
#
# The epilog catches what a job leaves broken or what broke under it: a GPU that fell off the
# bus, uncorrectable ECC errors, fatal Xids, a link that went down, /dev/shm filled up. A failing
# check drains the node with the finding as the reason, so that no next job lands on it.
# Settings (PGDOCTOR, PGDOCTOR_TIMEOUT, PGDOCTOR_SKIP, ...) are described in pgdoctor-node-check.sh.
exec "$(dirname "$(readlink -f "$0")")/pgdoctor-node-check.sh" epilog
