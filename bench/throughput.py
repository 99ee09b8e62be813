"""Many Slack threads at once on one process: the generated agent against a floor.

The local server is ONE process for every thread, and Welt resends the whole
thread with every turn, so a busy channel costs the server more per request
as its threads grow. The load: 20 threads at once, 10 turns each; turn k
carries the thread so far (2k-1 messages: user and assistant alternating,
the assistant's being the reply the server streamed, ending with the new
user message). Each thread sends its next turn when the previous reply has
ended, as Welt does.

Both sides run in the project's environment with the same scripted model
(a short text reply to every call), as bench/first_reply.py sets them up:
- generated: main.py's app, built by the package's factory as main.py
  builds it, with the scripted model for its model. Schema check,
  stored-run record, registry, gate, wire and logging all run.
- floor: a BedrockAgentCoreApp entrypoint that builds a fresh Strands Agent
  with the scripted model per request and yields its text as data events.

- floor with its tools: the floor's app, its fresh Agent given the tools
  the generated project offers (the same rows, read by the factory). What
  Strands itself spends per request on those tools' specs shows here.

The servers start once and are warmed. Then, in rounds, each side takes
the whole load in turn (the order rotates), with new session ids every
time. Per load: requests per second, the 95th percentile of request
latency (request sent to the stream's end) and the server's CPU seconds per
request (/proc/<pid>/stat, Linux). Ratios are over the floor, and the
generated project's also over the floor with its tools; medians over
rounds. Targets (issue 18): requests/s >= 0.9 of the floor's, CPU per
request <= 1.2 times.

    uv run python bench/throughput.py [rounds] [--lean] [--smoke]   # default 8 rounds
    # --lean renders the project without the sample tools and image generation
    # --smoke: one round of 2 threads x 2 turns
"""

import asyncio
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
    median,
    rendered_project,
    running,
    serve,
    wait_until_healthy,
)


class Shape(NamedTuple):
    threads: int  # at once
    turns: int  # each


LOAD = Shape(threads=20, turns=10)
SMOKE = Shape(threads=2, turns=2)

# Replies quote the message they answer, so no two threads share a message:
# a real thread's messages are its own, and a server that remembers what it
# has seen must not get the other threads' turns for free.
MODEL = """
from my_welt_agent.model.scripted import ScriptedModel, reply


class Echo(ScriptedModel):
    records_requests = False

    def next_turn(self, messages, tool_specs=None):
        said = messages[-1]["content"][0]["text"]
        return reply("You", " said", ": ", said.split(": ", 1)[1], ". Noted.")
"""

GENERATED = MODEL + GENERATED_SERVER
FLOOR = MODEL + FLOOR_SERVER
# The floor's agent with the generated project's tools, read once as the
# generated server reads them: nothing else changes.
TOOLS = """
from my_welt_agent.factory import registry_of_yours
from my_welt_agent.settings import Settings

TOOLS = registry_of_yours(Settings.from_environment()).tools
"""
FLOOR_WITH_TOOLS = MODEL + FLOOR_SERVER.replace(
    "from strands import Agent\n", "from strands import Agent\n" + TOOLS
).replace(
    "agent = Agent(model=Echo(), callback_handler=None)",
    "agent = Agent(model=Echo(), tools=TOOLS, callback_handler=None)",
)
assert "tools=TOOLS" in FLOOR_WITH_TOOLS and "TOOLS = registry_of_yours" in FLOOR_WITH_TOOLS


class Load(NamedTuple):
    requests_per_second: float
    p95: float  # seconds, request sent to the stream's last byte
    cpu_per_request: float  # server CPU seconds


def cpu_seconds(pid: int) -> float:
    """CPU seconds a process has used so far, all threads (Linux /proc, 10 ms ticks)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def one_thread(
    client: httpx.AsyncClient, session: str, turns: int, latencies: list[float]
) -> None:
    """The turns of one Slack thread, each resending the thread so far."""
    headers = {
        "Accept": "text/event-stream",
        "X-Amzn-Bedrock-AgentCore-Runtime-Session-Id": session,
    }
    thread: list[dict] = []
    for turn in range(turns):
        text = f"<@U0123456>: message {turn + 1} of thread {session}"
        thread.append({"role": "user", "content": [{"text": text}]})
        reply = []
        start = time.perf_counter()
        async with client.stream(
            "POST", "/invocations", json={"messages": thread}, headers=headers
        ) as response:
            async for line in response.aiter_lines():
                if line.startswith("data: "):
                    event = json.loads(line.removeprefix("data: "))
                    assert isinstance(event, dict) and "data" in event, f"{session}: {event!r}"
                    reply.append(event["data"])
        latencies.append(time.perf_counter() - start)
        thread.append({"role": "assistant", "content": [{"text": "".join(reply)}]})


async def drive(port: int, label: str, shape: Shape) -> tuple[float, list[float]]:
    """Wall seconds of the whole load, and the latency of every request."""
    latencies: list[float] = []
    limits = httpx.Limits(max_connections=shape.threads, max_keepalive_connections=shape.threads)
    async with httpx.AsyncClient(
        base_url=f"http://127.0.0.1:{port}", timeout=120, limits=limits
    ) as client:
        start = time.perf_counter()
        await asyncio.gather(
            *(
                one_thread(client, f"slack_T0BENCH_C0BENCH_{label}.{n:06d}", shape.turns, latencies)
                for n in range(shape.threads)
            )
        )
        return time.perf_counter() - start, latencies


def load(port: int, pid: int, label: str, shape: Shape) -> Load:
    cpu_before = cpu_seconds(pid)
    wall, latencies = asyncio.run(drive(port, label, shape))
    cpu = cpu_seconds(pid) - cpu_before
    return Load(len(latencies) / wall, percentile(latencies, 0.95), cpu / len(latencies))


LEAN = {"include_sample_tools": False, "include_image_generation": False}


def main(rounds: int, lean: bool, shape: Shape) -> None:
    project = rendered_project(**(LEAN if lean else {}))
    scripts = {"generated": GENERATED, "floor": FLOOR, "floor with its tools": FLOOR_WITH_TOOLS}
    ports = {side: free_port() for side in scripts}
    servers = {side: serve(project, script, ports[side]) for side, script in scripts.items()}
    with running(*servers.values()):
        for side in scripts:
            wait_until_healthy(ports[side], servers[side])
            load(
                ports[side], servers[side].pid, f"{side.replace(' ', '')}warm", shape
            )  # imports, first-request work
        results: dict[str, list[Load]] = {side: [] for side in scripts}
        names = list(scripts)
        for round_number in range(rounds):
            shift = round_number % len(names)
            for side in names[shift:] + names[:shift]:
                label = f"{side.replace(' ', '')}{round_number}"
                results[side].append(load(ports[side], servers[side].pid, label, shape))
            print(
                f"round {round_number + 1}: "
                + "; ".join(
                    f"{side} {results[side][-1].requests_per_second:.0f} req/s, "
                    f"{results[side][-1].cpu_per_request * 1e3:.2f} ms CPU"
                    for side in names
                )
            )

    rendering = "lean project (no sample tools, no image generation)" if lean else "default project"
    print(
        f"{rendering}: medians of {rounds} rounds, {shape.threads} threads x {shape.turns} turns each"
    )
    for label, figure, scale, unit, target in (
        ("requests/s", lambda r: r.requests_per_second, 1, "", (">=", 0.9)),
        ("p95 latency", lambda r: r.p95, 1e3, " ms", None),
        ("server CPU/request", lambda r: r.cpu_per_request, 1e3, " ms", ("<=", 1.2)),
    ):
        values = "  ".join(
            f"{side} {median([figure(r) for r in results[side]]) * scale:.2f}{unit}"
            for side in names
        )
        print(f"  {label}: {values}")
        for side, over in (
            ("generated", "floor"),
            ("floor with its tools", "floor"),
            ("generated", "floor with its tools"),
        ):
            pairs = [(figure(a), figure(b)) for a, b in zip(results[side], results[over])]
            if not all(b for _, b in pairs):  # a smoke run's few requests can read as no CPU at all
                print(f"    {side} / {over}: not measured, a round read zero")
                continue
            ratios = [a / b for a, b in pairs]
            line = f"    {side} / {over}: {median(ratios):.2f} (rounds {min(ratios):.2f}-{max(ratios):.2f})"
            if target and (side, over) == ("generated", "floor"):
                sign, bound = target
                met = median(ratios) >= bound if sign == ">=" else median(ratios) <= bound
                line += f", target {sign} {bound}: {'met' if met else 'NOT met'}"
            print(line)


if __name__ == "__main__":
    given = arguments(
        __doc__,
        {"rounds": (8, 1)},
        lambda parser: parser.add_argument(
            "--lean", action="store_true", help="no sample tools, no image generation"
        ),
    )
    main(given.rounds, given.lean, SMOKE if given.smoke else LOAD)
