"""10,000 text deltas over real HTTP: the generated entrypoint against a bare app.

The generated side runs the real path, a Strands agent with a scripted model
streaming 10,000 deltas through the wire module and AgentCore's SSE; the
bare side is a BedrockAgentCoreApp yielding the same 10,000 `data` events.
Runs alternate against two live servers. Target: within 1.2 times.

    uv run python bench/streaming.py [runs]
"""

import sys
import time

import httpx
from _project import free_port, median, rendered_project, serve, wait_until_healthy

DELTAS = 10_000

GENERATED = f"""
import os

import uvicorn

import main
from my_welt_agent.conversations import Conversations
from my_welt_agent.scripted_model import ScriptedModel, reply

chunks = [f"w{{n}} " for n in range({DELTAS})]
main.conversations = Conversations(
    new_model=lambda: ScriptedModel(reply(*chunks)), registry=main.registry
)
uvicorn.run(main.app, port=int(os.environ["PORT"]), log_level="warning")
"""

BARE = f"""
import os

import uvicorn
from bedrock_agentcore.runtime import BedrockAgentCoreApp

app = BedrockAgentCoreApp()
chunks = [f"w{{n}} " for n in range({DELTAS})]


@app.entrypoint
async def invoke(payload, context):
    for chunk in chunks:
        yield {{"data": chunk}}


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


def main(runs: int) -> None:
    project = rendered_project()
    ports = {"generated": free_port(), "bare": free_port()}
    servers = [serve(project, GENERATED, ports["generated"]), serve(project, BARE, ports["bare"])]
    try:
        for port in ports.values():
            wait_until_healthy(port)
            stream_once(port)  # warm up
        times = {"generated": [], "bare": []}
        for _ in range(runs):
            for side, port in ports.items():
                seconds, events = stream_once(port)
                assert events == DELTAS, f"{side} sent {events} events, not {DELTAS}"
                times[side].append(seconds)
    finally:
        for server in servers:
            server.terminate()
            server.wait()
    g, b = median(times["generated"]), median(times["bare"])
    print(f"{DELTAS} deltas, median of {runs}: generated {g:.3f}s, bare {b:.3f}s")
    print(f"ratio generated/bare: {g / b:.2f} (target <= 1.2)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
