"""Runs and their storage: one request of a thread, and the runs that wait hours for an answer."""
