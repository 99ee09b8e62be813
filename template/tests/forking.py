"""Fork a started app into servers on demand: the one loop forked_servers.py and
restored_instances.py share.

For each line on standard input, bind a socket here (so a request sent as
soon as the port is known waits in the backlog instead of failing), fork a
child that serves the app on it, and print the child's pid and port.
"""

import os
import signal
import socket
import sys
from collections.abc import Callable

import uvicorn


def serve_forks(app, in_child: Callable[[], None] = lambda: None) -> None:
    """Serve `app` from a new child per line of input; `in_child` runs first in each child."""
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped as they end
    for _ in sys.stdin:
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        child = os.fork()
        if child == 0:
            in_child()
            # Nobody reads a child's output; a full pipe would stall it.
            quiet = os.open(os.devnull, os.O_WRONLY)
            os.dup2(quiet, sys.stdout.fileno())
            os.dup2(quiet, sys.stderr.fileno())
            config = uvicorn.Config(app, log_level="warning", lifespan="off")
            uvicorn.Server(config).run(sockets=[listener])
            os._exit(0)
        print(child, listener.getsockname()[1], flush=True)
        listener.close()
