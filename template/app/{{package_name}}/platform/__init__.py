"""The platform: AgentCore V2's snapshot and warm-up, tracing, and the log lines CloudWatch reads."""
