"""Reading logs as users paste them: sources to byte chunks, literal triggers, line cleanup."""
