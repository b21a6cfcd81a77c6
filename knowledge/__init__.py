"""Facts and formulas that several parts need (Xid catalogue, launch-environment parsing, units,
collective sizes and bus-bandwidth factors, hardware expectations, interconnect presets).

Pure: imports only the standard library and pgdoctor.model; no I/O.
"""
