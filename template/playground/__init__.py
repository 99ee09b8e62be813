"""The playground: this agent in a browser, as Welt would show it in Slack, on this machine only.

`make playground` runs `python -m playground`. It is a tool for trying the
agent, never part of it: it lives outside app/, so neither the code zip
nor the image carries it. Its server (server.py) uses the standard library
alone; the consent flow it starts for a rehearsal agent (consent.py, the
stand-ins in stand_ins/ and the package's session-binding endpoint) uses
what the project installs already: botocore, and authlib's joserfc.
"""
