"""A thread's turn: one request of a Slack thread, run or resumed, on an agent it is handed."""
