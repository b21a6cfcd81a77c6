"""`python -m pgdoctor.trace DIR -o trace.json`: merge per-rank event files into one trace."""

from __future__ import annotations

import sys

from pgdoctor.trace.events import main

sys.exit(main())
