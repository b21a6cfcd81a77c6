"""`python -m pgdoctor`, and the `pgdoctor` command (pyproject's entry point): a Ctrl-C while the CLI
is still being imported (a tenth of a second, before main() installs its handlers) ends the run with
one line and exit 130, not a KeyboardInterrupt traceback from an import. Nothing has started yet that
needs cleaning up."""

import os
import signal
from typing import Any


def _interrupted_while_starting(signum: int, frame: Any) -> None:
    os.write(2, b"pgdoctor: interrupted\n")
    os._exit(130)


def run() -> None:
    signal.signal(signal.SIGINT, _interrupted_while_starting)
    from pgdoctor.cli import main

    main()


if __name__ == "__main__":
    run()
