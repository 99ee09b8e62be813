"""Serve main.app from processes forked after `import main`: a restart costs a fork.

Starting a server imports strands and bedrock-agentcore, which takes
seconds, and the restart tests need several servers. This process imports
main once and loads the tools it imports lazily; then for each line `serve`
on its standard input it forks a child that serves main.app on a socket
bound here first, and prints the child's pid and port. A child holds
nothing of another's memory: each new one is the agent restarted on the
same storage (SESSION_STORAGE_DIR), which is what the tests need.
"""

from forking import serve_forks

import main

for tool in main.app.state.registry.tools:
    getattr(tool, "tool_spec", None)  # imports a LazyTool's module once, before the forks

serve_forks(main.app)
