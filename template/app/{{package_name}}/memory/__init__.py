"""Memory per Slack user: what each person told the agent before, recalled into their own runs."""
