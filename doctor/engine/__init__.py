"""The engine: runs probes and checks under their timeouts, loads config and plugins, and runs
the multi-node check."""
