"""Flight-recorder dumps: loading them safely, and matching collectives and p2p ops across ranks."""
