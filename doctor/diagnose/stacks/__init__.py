"""Per-rank Python stacks of a live job (what `pgdoctor hang` read, or wrote with --save): the
roll-call of where every rank is, and the rank(s) the others wait for."""
