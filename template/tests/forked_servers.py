"""Serve main.app from processes forked after `import main`: a restart costs a fork.

Starting a server imports strands and bedrock-agentcore, which takes
seconds, and the restart tests need several servers. This process imports
main once; then for each line `serve PORT` on its standard input it forks a
child that serves main.app on that port, and prints the child's pid. A child
holds nothing of another's memory: each new one is the agent restarted on
the same storage (SESSION_STORAGE_DIR), which is what the tests need.
"""

import os
import signal
import sys

import uvicorn

import main

signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped as they end

for line in sys.stdin:
    port = int(line.split()[1])
    child = os.fork()
    if child == 0:
        # Nobody reads a child's output; a full pipe would stall it.
        quiet = os.open(os.devnull, os.O_WRONLY)
        os.dup2(quiet, sys.stdout.fileno())
        os.dup2(quiet, sys.stderr.fileno())
        uvicorn.run(main.app, host="127.0.0.1", port=port, log_level="warning")
        os._exit(0)
    print(child, flush=True)
