"""Per-rank profiler traces (Kineto JSON from torch.profiler, pgdoctor's own rank event files)
-> where each rank's time goes, the straggler and why, exposed communication, findings.

Read rank by rank in one streaming pass each (`reader.py`), so a job's worth of large traces
needs the memory of one rank's kernel intervals, never of the whole set.
"""
