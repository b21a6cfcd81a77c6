"""pgdoctor: diagnose and troubleshoot multi-GPU distributed PyTorch training.

Importing pgdoctor is cheap: it imports neither torch nor pynvml.
"""

from __future__ import annotations

__version__ = "0.1.0"
