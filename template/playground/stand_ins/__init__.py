"""Stand-ins for the services a tool acting as the user talks to, served on this machine.

AgentCore Identity's data plane (`identity.py`), a GitHub-like API
(`resource_api.py`) and a Slack-like OpenID Connect issuer
(`slack_openid.py`): the playground and rehearsal play the whole consent
flow against them, and the tests use them as real HTTP servers that real
boto3 and authlib talk to. None of them is part of the agent: they live
outside app/, so neither the code zip nor the image carries them. Each
starts on a port the OS chose and records every call it answered.
"""
