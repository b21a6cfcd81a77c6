"""The planner: memory and communication per GPU for dp x tp x pp x ZeRO layouts."""
