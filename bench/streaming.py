"""10,000 text deltas over real HTTP: the generated entrypoint against a bare app.

The generated side runs the real path, a Strands agent with a scripted model
streaming 10,000 deltas through the wire module and AgentCore's SSE; the
bare side is a BedrockAgentCoreApp yielding the same 10,000 `data` events.
Runs alternate against two live servers. Target: within 1.2 times.

    uv run python bench/streaming.py [runs] [--smoke]   # default 5; 1 run of 100 deltas with --smoke
"""

import time

import httpx
from _project import (
    arguments,
    free_port,
    median,
    rendered_project,
    running,
    serve,
    wait_until_healthy,
)

DELTAS = 10_000
SMOKE_DELTAS = 100

# main.py's app as the package's factory builds it, each turn's model a script
# of the deltas; both sides are served by the same uvicorn call.
GENERATED = """
import os

import uvicorn

from my_welt_agent.factory import create_app
from my_welt_agent.model.scripted import ScriptedModel, reply
from my_welt_agent.platform.logs import log_json_lines
from my_welt_agent.settings import Settings

chunks = [f"w{n} " for n in range(int(os.environ["DELTAS"]))]
log_json_lines()
app = create_app(Settings.from_environment(), new_model=lambda: ScriptedModel(reply(*chunks)))
uvicorn.run(app, port=int(os.environ["PORT"]), log_level="warning")
"""

BARE = """
import os

import uvicorn
from bedrock_agentcore.runtime import BedrockAgentCoreApp

app = BedrockAgentCoreApp()
chunks = [f"w{n} " for n in range(int(os.environ["DELTAS"]))]


@app.entrypoint
async def invoke(payload, context):
    for chunk in chunks:
        yield {"data": chunk}


uvicorn.run(app, port=int(os.environ["PORT"]), log_level="warning")
"""

PAYLOAD = {"messages": [{"role": "user", "content": [{"text": "<@U1>: stream"}]}]}


def stream_once(port: int) -> tuple[float, int]:
    start = time.perf_counter()
    events = 0
    with httpx.stream(
        "POST",
        f"http://127.0.0.1:{port}/invocations",
        json=PAYLOAD,
        headers={
            "Accept": "text/event-stream",
            "X-Amzn-Bedrock-AgentCore-Runtime-Session-Id": "slack_T1_C1_1700000000.000100",
        },
        timeout=120,
    ) as response:
        for line in response.iter_lines():
            events += line.startswith("data: ")
    return time.perf_counter() - start, events


def main(runs: int, deltas: int) -> None:
    project = rendered_project()
    ports = {"generated": free_port(), "bare": free_port()}
    servers = {
        side: serve(project, script, ports[side], DELTAS=str(deltas))
        for side, script in (("generated", GENERATED), ("bare", BARE))
    }
    with running(*servers.values()):
        for side, port in ports.items():
            wait_until_healthy(port, servers[side])
            stream_once(port)  # warm up
        times = {"generated": [], "bare": []}
        for _ in range(runs):
            for side, port in ports.items():
                seconds, events = stream_once(port)
                assert events == deltas, f"{side} sent {events} events, not {deltas}"
                times[side].append(seconds)
    g, b = median(times["generated"]), median(times["bare"])
    print(f"{deltas} deltas, median of {runs}: generated {g:.3f}s, bare {b:.3f}s")
    print(f"ratio generated/bare: {g / b:.2f} (target <= 1.2)")


if __name__ == "__main__":
    given = arguments(__doc__, {"runs": (5, 1)})
    main(given.runs, SMOKE_DELTAS if given.smoke else DELTAS)
