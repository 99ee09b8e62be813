"""Process start to a healthy /ping: the generated agent against a bare app.

Every Slack thread is a new AgentCore microVM, so start-up is paid once per
conversation. The bare app is the least any Strands agent on AgentCore pays:
BedrockAgentCoreApp plus `import strands`. Runs alternate, and so does the
side that goes first, so both see the same machine state. Target: the
generated agent within 1.10 times.

    uv run python bench/startup.py [runs] [--smoke]   # default 7; 1 with --smoke
"""

from _project import (
    arguments,
    free_port,
    median,
    rendered_project,
    running,
    serve,
    wait_until_healthy,
)

GENERATED = "import runpy; runpy.run_path('main.py', run_name='__main__')"
BARE = """
import os
import strands
from bedrock_agentcore.runtime import BedrockAgentCoreApp

app = BedrockAgentCoreApp()


@app.entrypoint
async def invoke(payload):
    yield {"data": "hi"}


app.run(port=int(os.environ["PORT"]))
"""


def time_to_healthy(project, script) -> float:
    port = free_port()
    server = serve(project, script, port)
    with running(server):
        return wait_until_healthy(port, server)


def startup_medians(project, runs: int) -> tuple[float, float]:
    """Median seconds to a healthy /ping, generated and bare, runs alternating."""
    time_to_healthy(project, GENERATED)  # warm the file cache for both
    generated, bare = [], []
    for run in range(runs):
        order = [(generated, GENERATED), (bare, BARE)]
        for times, script in order if run % 2 == 0 else reversed(order):
            times.append(time_to_healthy(project, script))
    return median(generated), median(bare)


def main(runs: int) -> None:
    g, b = startup_medians(rendered_project(), runs)
    print(f"start to healthy /ping, median of {runs}: generated {g:.3f}s, bare {b:.3f}s")
    print(f"ratio generated/bare: {g / b:.2f} (target <= 1.10)")


if __name__ == "__main__":
    main(arguments(__doc__, {"runs": (7, 1)}).runs)
