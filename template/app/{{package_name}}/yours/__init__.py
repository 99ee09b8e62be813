"""Yours: the agent's tools, its prompt, its MCP servers and its model options.

`copier update` never changes a file in this folder. It creates the ones
the template's code reads (this one, tools/__init__.py, prompt.py,
mcp_servers.py, model_options.py) when they are missing, and leaves every
other file here, the sample tools among them, to you. Code here imports
the template through one module, `<package>.api` (`from <package>.api
import Row, ASK`), whose names stay put when a release moves the rest.
"""
