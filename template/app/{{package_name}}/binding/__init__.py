"""The session-binding endpoint: a consent link finishes only for the person it was made for.

Deployed as its own Lambda function with a URL, beside the runtime; the
agent never imports it. It imports the standard library, boto3, authlib
and acting/consent_link.py, nothing that pulls Strands in.
"""
