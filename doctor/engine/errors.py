"""The exit codes (a public contract, see the README) and the one exception for user errors."""

from __future__ import annotations

import click

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_INCOMPLETE = 0, 1, 2, 3
EXIT_INTERRUPTED = 130
# A bug in pgdoctor, never 1: a job script must tell a crash of the tool from a diagnosis.
EXIT_INTERNAL = 4


class UserError(click.ClickException):
    """A usage or configuration problem: one line on stderr, exit 2."""

    exit_code = EXIT_USAGE
