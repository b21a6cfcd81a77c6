"""One module per failure family: turns the lines around a trigger into events with facts."""
