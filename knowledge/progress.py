"""Training progress lines: how a job says it is still making steps, and how fast.

The shapes, as the libraries print them:
- tqdm (and Lightning, HF Trainer, accelerate's bars): "45%|####5     | 450/1000 [03:00<03:40,
  2.50it/s, loss=2.3]", "1234it [00:12, 98.70it/s]", slow bars "24.00s/it"; a unit other than
  "it" ("12.3ba/s", "3.2s/step") is `unit_scale`/`unit` at work.
- Megatron-LM: " [2024-05-01 10:00:00] iteration      100/  500000 | consumed samples: ... |
  elapsed time per iteration (ms): 1234.5 | learning rate: ... | lm loss: 2.3E+00 |"
- OpenMMLab's mmengine: "2024/01/24 02:50:32 - mmengine - INFO - Epoch(train)  [83][ 350/2693]
  base_lr: 2.0000e-03 lr: 3.9620e-04  eta: 8:51:35  time: 0.5674 ... loss: 1913.7995"
- HF Trainer's log dict "{'loss': 2.3, 'grad_norm': 1.1, 'learning_rate': 2e-05, 'epoch': 0.5}"
- the loops people write: "step 100 loss 2.31 lr 3e-4 tokens/s 41234", "Epoch 3 | iter 120/500 |
  loss: 2.3", "global_step=1200, train_loss=2.3": a step counter and a training metric on one line.
"""

from __future__ import annotations

import datetime as _dt
import re
from typing import Optional

_TQDM = re.compile(
    r"\d{1,3}%\|[^|]{0,200}\|\s*\d+(?:\.\d+)?[kMG]?/\d+(?:\.\d+)?[kMG]? \[[\d:]+<[\d:?]+|"
    r"\b\d+(?:\.\d+)?[kMG]?\w{0,8} \[[\d:]+, [\d.]+(?:\w{1,8}/s|s/\w{1,8})"
)
_MEGATRON = re.compile(r"\biteration\s+\d+/\s*\d+ \|")
# OpenMMLab's mmengine logger: "Epoch(train)  [83][ 350/2693]  base_lr: ...", "Iter(train) [ 50/1000]"
_MMENGINE = re.compile(r"\b(?:Epoch|Iter)\((?:train|val|test)\)\s*\[\s*\d+(?:/\d+)?\]")
_HF_DICT = re.compile(r"""\{['"](?:train_)?loss['"]: -?[\d.]""")
# A step counter: "step 12", "iter: 12", "global_step=12", "epoch [3", or a bar's "[120/5000]".
# Group 2 or 3 holds the number. The one pattern of a step counter: diagnose's progress lines and
# `pgdoctor run`'s live watch (doctor/hang/progress.py) both read it.
STEP_COUNTER = re.compile(
    r"(?i)\b(global_step|steps?|iter(?:ation)?|it|epoch|batch|update)\b\s*[:=#]?\s*\[?\s*(\d+)"
    r"|\[\s*(\d+)\s*/\s*\d+\s*\]"
)
_METRIC = re.compile(
    r"(?i)\b(?:(?:train|lm|val)?[_ ]?loss|lr|learning[_ ]rate|grad[_ ]norm|ppl|perplexity|"
    r"tokens?/s(?:ec)?|samples?/s(?:ec)?|tflops|throughput|it/s|s/it)\b"
)

# How long one step takes, as the line itself says it.
_MS_PER_ITER = re.compile(r"elapsed time per iteration \(ms\): ([\d.]+)")
_PER_STEP = re.compile(r"\b(\d+(?:\.\d+)?)\s?s/(?:it|step|iter|batch)\b")
_PER_SECOND = re.compile(r"\b(\d+(?:\.\d+)?)\s?(?:it|steps?|iters?|batch(?:es)?)/s\b")

# A wall-clock time inside the message, where no prefix gave one (Megatron's " [%F %T] iteration").
# mmengine writes the date with slashes: "2024/01/24 02:50:32 - mmengine - INFO - ...".
_INLINE_TIME = re.compile(r"\b(\d{4}[-/]\d\d[-/]\d\d[T ]\d\d:\d\d:\d\d)(?:[.,]\d+)?(Z|[+-]\d\d:?\d\d)?")


def is_progress(text: str) -> bool:
    """Whether the line is a training progress report (a step was made)."""
    if _TQDM.search(text) or _MEGATRON.search(text) or _MMENGINE.search(text) or _HF_DICT.search(text):
        return True
    return bool(STEP_COUNTER.search(text)) and bool(_METRIC.search(text))


_OF_TOTAL = re.compile(r"\b(\d+)/\s*(\d+)\b")


def last_step(text: str) -> bool:
    """Whether a progress line reports the last step of its total ("iteration 50/ 50", tqdm's
    "1000/1000 ["): a job idle after it hung on the way out (checkpoint, teardown, exit)."""
    m = _OF_TOTAL.search(text)
    return m is not None and int(m.group(1)) == int(m.group(2)) > 0


def is_bar(text: str) -> bool:
    """Whether the line is a progress bar (tqdm and its kin), which redraws on every step: its rate
    is also the time between its updates."""
    return _TQDM.search(text) is not None


def step_seconds(text: str) -> Optional[float]:
    """Seconds per step that the progress line states (Megatron's elapsed time per iteration,
    tqdm's rate), or None."""
    m = _MS_PER_ITER.search(text)
    if m:
        return float(m.group(1)) / 1e3
    m = _PER_STEP.search(text)
    if m:
        return float(m.group(1))
    m = _PER_SECOND.search(text)
    if m and float(m.group(1)) > 0:
        return 1.0 / float(m.group(1))
    return None


def inline_time(text: str) -> Optional[tuple[float, bool]]:
    """(seconds on the naive local clock, whether the text gave a zone) of the first ISO time in
    the first 80 characters of the message, or None."""
    m = _INLINE_TIME.search(text, 0, 80)
    if m is None:
        return None
    try:
        sec = _dt.datetime.fromisoformat(m.group(1).replace(" ", "T").replace("/", "-")).timestamp()
    except ValueError:
        return None
    return sec, m.group(2) is not None


def fmt_idle(seconds: float) -> str:
    """A long duration as a person says it: "4 h 02 min", "17 min", "45 s"."""
    s = round(seconds)
    if s >= 3600:
        return f"{s // 3600} h {s % 3600 // 60:02d} min"
    if s >= 60:
        return f"{s // 60} min"
    return f"{s} s"
