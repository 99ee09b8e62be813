"""The gate: the tool rows, the approval gate, the turn's caps, and what a refused call says."""
