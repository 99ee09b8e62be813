"""The agent's own behaviours, scored as cases with strands-agents-evals (see README)."""
