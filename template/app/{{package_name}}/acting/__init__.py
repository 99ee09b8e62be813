"""Tools that act as the person who asked: their own OAuth token, consented in Slack.

`consent_link` seals the state a consent link carries (stdlib only: the
session-binding endpoint, binding/, imports it too); `user_tokens` fetches
the run's starter's token from AgentCore Identity and asks for consent.
"""
