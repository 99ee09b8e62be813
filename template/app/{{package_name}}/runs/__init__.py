"""Stored runs: the runs that wait hours for an answer, and what to say when one cannot go on."""
