"""The instrumentation library for training scripts (NVTX ranges) and per-rank event files merged
into one Chrome/Perfetto trace.

Imports nothing of pgdoctor's other rooms, so a training job that imports it pays for little.
"""
