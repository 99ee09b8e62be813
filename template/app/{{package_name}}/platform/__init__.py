"""The platform: AgentCore V2's snapshots and warm-up, tracing, and JSON log lines."""
