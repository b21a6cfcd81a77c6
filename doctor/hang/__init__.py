"""`pgdoctor hang` (what every live rank of a job is doing, and the rank the others wait for)
and `pgdoctor run` (the job-script wrapper that takes that snapshot before the job is killed).
The /proc and stack reading is in probes/ (ranks, stacks, live); the roll-call verdict is pure,
in pgdoctor.diagnose.stacks, so `diagnose` reads a saved snapshot the same way."""
