"""Process start to the first streamed words of a new thread: the generated agent against a floor.

A new Slack thread is a new AgentCore microVM, so its user waits for the
process to start and the first request to stream its first `data` event.
Each run starts a server, polls GET /ping every millisecond, sends the first
POST /invocations the moment /ping answers and stops the clock at the first
`data` event; then it sends a second turn of the same thread (the whole
thread so far, as Welt sends it) and times that to its first `data` event.

Both sides run on the project's interpreter and releases and play the same
scripted model (a short text reply to every call), so neither pays for a
model client or the network:
- generated: main.py's app, built by the package's factory as main.py
  builds it (JSON logs, settings from the environment), with the scripted
  model in place of the provider's, as the factory's `new_model` lets tests
  swap it (MODEL_PROVIDER=rehearsal is not used: its first turn asks a
  question through a tool, which the floor cannot match). The schema check,
  registry, gate, tools and wire all run.
- floor: a BedrockAgentCoreApp entrypoint that imports strands, builds a
  fresh Agent with the scripted model per request and yields its text as
  {"data": ...} events: the least a Strands agent on AgentCore pays.

Bytecode is compiled first and both sides are warmed once. Runs alternate,
and so does the side that goes first, in rounds; medians over all runs.
Beside wall time, the server's CPU seconds at its first `data` event are
read from /proc (Linux): when other work shares the machine, wall time moves
by a tenth between runs and CPU time much less.
Target: first reply within 1.05 times the floor, in wall time and in CPU.

    uv run python bench/first_reply.py [rounds] [runs per round] [--smoke]   # default 3 7; 1 1 with --smoke
"""

import json
import os
import time
from pathlib import Path
from typing import NamedTuple

import httpx
from _project import (
    FLOOR_SERVER,
    GENERATED_SERVER,
    arguments,
    free_port,
    interleaved,
    print_start_figures,
    rendered_project,
    running,
    seconds_to_ping,
    serve,
)

MODEL = """
from my_welt_agent.model.scripted import ScriptedModel, reply


class Echo(ScriptedModel):
    records_requests = False

    def next_turn(self, messages, tool_specs=None):
        return reply("Hello", " from", " a", " scripted", " model.")
"""

GENERATED = MODEL + GENERATED_SERVER
FLOOR = MODEL + FLOOR_SERVER

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


class Run(NamedTuple):
    ping: float  # process start to a healthy /ping
    reply: float  # process start to the first data event of the first request
    cpu: float  # the server's CPU seconds at that moment
    second: float  # the thread's second turn to its first data event


def cpu_seconds(pid: int) -> float:
    """CPU seconds a process has used so far, all threads (Linux /proc, 10 ms ticks)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def first_data(
    client: httpx.Client, messages: list[dict], start: float, pid: int
) -> tuple[float, float]:
    """Seconds from start to the first {"data": ...} event, and the server's CPU then.

    The stream is read to its end, so the next request finds the server idle.
    """
    first = None
    with client.stream(
        "POST", "/invocations", json={"messages": messages}, headers=HEADERS
    ) as response:
        for line in response.iter_lines():
            if first is None and line.startswith("data: "):
                first = time.perf_counter() - start, cpu_seconds(pid)
                event = json.loads(line.removeprefix("data: "))
                assert isinstance(event, dict) and "data" in event, f"first event was {event!r}"
    assert first is not None, "the stream carried no data event"
    return first


def one_run(project: Path, script: str) -> Run:
    port = free_port()
    start = time.perf_counter()
    server = serve(project, script, port)
    with running(server), httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
        ping = seconds_to_ping(client, server, start)
        reply, cpu = first_data(client, FIRST, start, server.pid)
        second, _ = first_data(client, SECOND, time.perf_counter(), server.pid)
    return Run(ping, reply, cpu, second)


def main(rounds: int, runs: int) -> None:
    project = rendered_project()
    sides = {"generated": GENERATED, "floor": FLOOR}
    for script in sides.values():  # warm the file cache, check both work
        one_run(project, script)
    results = interleaved(sides, rounds, runs, lambda script: one_run(project, script))
    medians = print_start_figures(results)
    g, f = medians(lambda r: r.second)
    print(
        f"  {'second turn to first data':<27} {g * 1e3:.1f} ms vs {f * 1e3:.1f} ms   ratio {g / f:.2f}"
    )

    wall = medians(lambda r: r.reply)
    cpu = medians(lambda r: r.cpu)
    ratios = wall[0] / wall[1], cpu[0] / cpu[1]
    verdict = (
        "met"
        if max(ratios) <= 1.05
        else "NOT met"
        if min(ratios) > 1.05
        else ("unclear: wall time and CPU disagree, other work shares the machine; run more rounds")
    )
    print(
        f"first reply ratio: wall {ratios[0]:.3f}, server CPU {ratios[1]:.3f}; target <= 1.05: {verdict}"
    )


if __name__ == "__main__":
    given = arguments(__doc__, {"rounds": (3, 1), "runs": (7, 1)})
    main(given.rounds, given.runs)
