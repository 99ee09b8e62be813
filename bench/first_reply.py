"""Process start to the first streamed words of a new thread: the generated agent against a floor.

A new Slack thread is a new AgentCore microVM, so its user waits for the
process to start, /ping to answer, and the first request to stream its
first `data` event. Each run starts a server, polls GET /ping every
millisecond (as AgentCore does before it routes), sends the first POST
/invocations the moment /ping answers and stops the clock at the first
`data` event; then it sends a second turn of the same thread (the whole
thread so far, as Welt sends it) and times that to its first `data` event.

Both sides serve with the same interpreter and releases and play the same
scripted model (a short text reply to every call), so neither pays for a
model client:
- generated: main.py run as a script, unchanged, with model.build_model
  swapped for the scripted model, the way MODEL_PROVIDER=rehearsal swaps it;
  the schema check, registry, gate, tools and wire all run.
- floor: a BedrockAgentCoreApp entrypoint that imports strands, builds a
  fresh Agent with the scripted model per request and yields its text as
  {"data": ...} events: the least a Strands agent on AgentCore pays.

Bytecode is compiled first and both sides are warmed once. Runs alternate
(and alternate which side goes first) in rounds; medians over all runs.
Target: first reply within 1.05 times the floor.

    uv run python bench/first_reply.py [rounds] [runs per round]   # default 3 7
"""

import json
import sys
import time

import httpx
from _project import free_port, median, rendered_project, serve

MODEL = '''
from my_welt_agent.scripted_model import ScriptedModel, reply


class Echo(ScriptedModel):
    def next_turn(self, messages, tool_specs=None):
        return reply("Hello", " from", " a", " scripted", " model.")
'''

GENERATED = MODEL + """
import runpy

from my_welt_agent import model

model.build_model = lambda env=None: Echo()
runpy.run_path("main.py", run_name="__main__")
"""

FLOOR = MODEL + """
import os

from bedrock_agentcore.runtime import BedrockAgentCoreApp
from strands import Agent

app = BedrockAgentCoreApp()


@app.entrypoint
async def invoke(payload):
    agent = Agent(model=Echo(), callback_handler=None)
    async for event in agent.stream_async(payload["messages"]):
        if "data" in event:
            yield {"data": event["data"]}


app.run(port=int(os.environ["PORT"]))
"""

FIRST = [{"role": "user", "content": [{"text": "<@U1>: hello"}]}]
SECOND = [
    *FIRST,
    {"role": "assistant", "content": [{"text": "Hello from a scripted model."}]},
    {"role": "user", "content": [{"text": "<@U1>: and again"}]},
]
HEADERS = {
    "Accept": "text/event-stream",
    "X-Amzn-Bedrock-AgentCore-Runtime-Session-Id": "slack_T1_C1_1700000000.000100",
}


def first_data(client: httpx.Client, messages: list[dict], start: float) -> float:
    """Seconds from start to the first {"data": ...} event; reads the stream to its end."""
    first = None
    with client.stream("POST", "/invocations", json={"messages": messages}, headers=HEADERS) as response:
        for line in response.iter_lines():
            if first is None and line.startswith("data: "):
                event = json.loads(line[len("data: "):])
                assert isinstance(event, dict) and "data" in event, f"first event was {event!r}"
                first = time.perf_counter() - start
    assert first is not None, "the stream carried no data event"
    return first


def one_run(project, script) -> tuple[float, float, float]:
    """(start to /ping, start to first reply, second turn to its first data event)."""
    port = free_port()
    start = time.perf_counter()
    server = serve(project, script, port)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
            while True:
                try:
                    if client.get("/ping").status_code == 200:
                        break
                except httpx.TransportError:
                    time.sleep(0.001)
                if time.perf_counter() - start > 60:
                    raise TimeoutError("the server never answered /ping")
            ping = time.perf_counter() - start
            reply = first_data(client, FIRST, start)
            second_start = time.perf_counter()
            second = first_data(client, SECOND, second_start)
        return ping, reply, second
    finally:
        server.terminate()
        server.wait()


def main(rounds: int, runs: int) -> None:
    project = rendered_project()
    sides = {"generated": GENERATED, "floor": FLOOR}
    for script in sides.values():  # warm the file cache, check both work
        one_run(project, script)
    results = {side: [] for side in sides}
    for round_number in range(rounds):
        for run in range(runs):
            order = list(sides) if run % 2 == 0 else list(reversed(sides))
            for side in order:
                results[side].append(one_run(project, sides[side]))
        done = {side: [r[1] for r in rows[-runs:]] for side, rows in results.items()}
        print(f"round {round_number + 1}: first reply generated {median(done['generated']):.3f}s, "
              f"floor {median(done['floor']):.3f}s")

    def column(side, index):
        return median([row[index] for row in results[side]])

    total = rounds * runs
    print(f"medians of {total} runs each ({rounds} rounds x {runs}), generated vs floor:")
    for label, index in (("start to /ping", 0), ("start to first reply", 1)):
        g, f = column("generated", index), column("floor", index)
        print(f"  {label:<28} {g:.3f}s vs {f:.3f}s  ratio {g / f:.2f}")
    after = {side: median([row[1] - row[0] for row in results[side]]) for side in sides}
    print(f"  {'/ping to first reply':<28} {after['generated'] * 1000:.0f} ms vs {after['floor'] * 1000:.0f} ms"
          f"  (+{(after['generated'] - after['floor']) * 1000:.0f} ms)")
    g, f = column("generated", 2), column("floor", 2)
    print(f"  {'second turn to first data':<28} {g * 1000:.1f} ms vs {f * 1000:.1f} ms  ratio {g / f:.2f}")
    ratio = column("generated", 1) / column("floor", 1)
    print(f"first reply ratio {ratio:.2f} (target <= 1.05): {'met' if ratio <= 1.05 else 'NOT met'}")


if __name__ == "__main__":
    given = [int(value) for value in sys.argv[1:3]]
    main(*given, *[3, 7][len(given):])
