"""Diagnosis: turn the logs and flight-recorder dumps of a failed distributed job into a root
cause, its facts and a playbook.

Pipeline: `text/reader` opens sources (files, directories, stdin, gzip) as byte chunks;
`text/scan` finds the few lines worth reading with literal triggers over big chunks (the only
code that touches every byte); `text/normalize` cleans the lines around each hit (prefixes,
ANSI, wraps, escaped tracebacks); one module per failure family in `rules/` turns a hit into
events with facts (`analyze` runs them in order); `causality` orders events into a root cause
and its cascade; `flight/` reads flight-recorder dumps. The stable entry points are in `api`.
"""
