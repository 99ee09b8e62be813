"""A thread's turns, one request at a time: a new turn, a stored run resumed, the warm-up."""
