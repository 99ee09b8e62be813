"""The playground: this agent in a browser, as Welt would show it in Slack, on this machine only.

`make playground` runs `python -m playground`. It is a tool for trying the
agent, never part of it: it lives outside app/, so neither the code zip
nor the image carries it, and it uses the standard library alone.
"""
