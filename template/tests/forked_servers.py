"""Serve main.app from processes forked after `import main`: a restart costs a fork.

Starting a server imports strands and bedrock-agentcore, which takes
seconds, and the restart tests need several servers. This process imports
main once and loads the tools it imports lazily; then for each line `serve`
on its standard input it forks a child that serves main.app on a socket
bound here first, and prints the child's pid and port. A child holds
nothing of another's memory: each new one is the agent restarted on the
same storage (SESSION_STORAGE_DIR), which is what the tests need.
"""

import os
import signal
import socket
import sys

import uvicorn

import main

for tool in main.registry.tools:
    getattr(tool, "tool_spec", None)  # imports a LazyTool's module once, before the forks

signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped as they end

for _ in sys.stdin:
    # Bound and listening before the child exists, so a request sent as
    # soon as the port is known waits in the backlog instead of failing.
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    child = os.fork()
    if child == 0:
        # Nobody reads a child's output; a full pipe would stall it.
        quiet = os.open(os.devnull, os.O_WRONLY)
        os.dup2(quiet, sys.stdout.fileno())
        os.dup2(quiet, sys.stderr.fileno())
        config = uvicorn.Config(main.app, log_level="warning", lifespan="off")
        uvicorn.Server(config).run(sockets=[listener])
        os._exit(0)
    print(child, listener.getsockname()[1], flush=True)
    listener.close()
