"""What storing runs costs an interrupt round trip, side by side with memory.

A round trip is the turn that stops on a question plus the answer that
resumes it. In memory only (how 0.1.0 kept runs): the interrupted Agent is
held in a dict and resumed. With a store (since 0.2.0; Strands' snapshots
since 0.4.0): the run is stored when it stops (one record: Strands'
snapshot of the agent and the questions); the answer claims it and resumes
the agent the process still holds, or, after a restart, a new agent loaded
from the snapshot. The folder store is measured against its targets; the
S3 store against an S3 server on this machine (moto, over HTTP) is
reported, without a target: its cost is the network's. All sides run in
one process of the generated project, with the same scripted model, tool
(ask_human), schema check and wire; runs alternate; medians.
Targets: storing adds at most 15 % to a round trip, resuming after a
restart at most 20 %.

    uv run python bench/resume.py [round trips per side] [--smoke]   # default 41; 1 with --smoke
"""

import asyncio
import os
import sys
import time
from pathlib import Path
from statistics import median

PERSIST_TARGET = 0.15
RESUME_TARGET = 0.20
TURN = {"messages": [{"role": "user", "content": [{"text": "<@U1>: where am I?"}]}]}


async def measure(rounds: int) -> None:
    """Runs in the project's environment, with the settings main() gives it."""
    import logging
    from dataclasses import replace

    import boto3
    from moto.server import ThreadedMotoServer
    from my_welt_agent.factory import agent_of_yours, registry_of_yours, stored_runs
    from my_welt_agent.gate.run_limits import TurnCaps
    from my_welt_agent.model.scripted import ScriptedModel, call, reply, use
    from my_welt_agent.settings import Settings
    from my_welt_agent.turns.conversations import Conversations
    from my_welt_agent.wire.events import reply_events
    from my_welt_agent.wire.payload import payload_problem

    # The parts the factory's create_app builds the app from, minus HTTP:
    # what is measured is the runs' work, not Starlette's.
    settings = Settings.from_environment()
    registry = registry_of_yours(settings)
    caps = TurnCaps(settings.max_model_calls_per_turn, settings.max_tool_calls_per_turn)
    new_agent = agent_of_yours(registry, caps)

    def script() -> ScriptedModel:
        return ScriptedModel(use(call("ask_human", "t1", question="Which city?")), reply("Noted."))

    def answer_to(events: list[dict]) -> dict:
        (question,) = [event["interrupt"] for event in events if "interrupt" in event]
        return {"interrupt_responses": {question["id"]: {"value": "Oslo", "source": "input"}}}

    async def in_memory(session: str, held: dict) -> tuple[float, float]:
        model = script()
        start = time.perf_counter()
        assert payload_problem(TURN) is None
        held[session] = agent = new_agent(model)
        asked = [event async for event in reply_events(agent, TURN, registry.files_from, caps)]
        stopped = time.perf_counter()
        answer = answer_to(asked)
        assert payload_problem(answer) is None
        agent = held.pop(session)
        resumed = [event async for event in reply_events(agent, answer, registry.files_from, caps)]
        assert resumed[-1] == {"data": "Noted."}, resumed
        return stopped - start, time.perf_counter() - stopped

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # the S3 server's access log
    s3 = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    s3.start()
    host, port = s3.get_host_and_port()
    os.environ.update(
        AWS_ENDPOINT_URL_S3=f"http://{host}:{port}",
        AWS_ACCESS_KEY_ID="bench",
        AWS_SECRET_ACCESS_KEY="bench",
        AWS_DEFAULT_REGION="us-east-1",
    )
    boto3.client("s3").create_bucket(Bucket="bench-runs")
    stores = {
        "folder": replace(settings, run_store="session-storage"),
        "bucket": replace(settings, run_store="s3", state_bucket="bench-runs"),
    }
    models: dict[str, ScriptedModel] = {}
    current = [""]

    def server(store: str) -> Conversations:
        """One server's conversations, as create_app builds them; the model is per thread."""
        return Conversations(
            lambda: models[current[0]], new_agent, registry, stored_runs(stores[store]), caps
        )

    servers = {store: server(store) for store in stores}

    async def stored(session: str, store: str, restart: bool) -> tuple[float, float]:
        models[session] = script()
        current[0] = session
        conversations = servers[store]
        start = time.perf_counter()
        asked = [event async for event in conversations.respond(TURN, session)]
        stopped = time.perf_counter()
        answer = answer_to(asked)
        if restart:  # a new process: nothing held in memory, the run comes back from the store
            conversations = server(store)
            stopped = time.perf_counter()
        resumed = [event async for event in conversations.respond(answer, session)]
        assert resumed[-1] == {"data": "Noted."}, resumed
        return stopped - start, time.perf_counter() - stopped

    held: dict = {}
    await in_memory("warm", held)
    for store in stores:
        await stored(f"warm-{store}", store, restart=False)
        await stored(f"warm-{store}-r", store, restart=True)
    sides = {
        "memory only": lambda n: in_memory(f"m{n}", held),
        "folder, same process": lambda n: stored(f"s{n}", "folder", restart=False),
        "folder, after a restart": lambda n: stored(f"r{n}", "folder", restart=True),
        "S3, same process": lambda n: stored(f"bs{n}", "bucket", restart=False),
        "S3, after a restart": lambda n: stored(f"br{n}", "bucket", restart=True),
    }
    times: dict[str, list[tuple[float, float]]] = {side: [] for side in sides}
    for n in range(rounds):
        order = list(sides.items())
        for side, run in order[n % len(order) :] + order[: n % len(order)]:
            times[side].append(await run(n))
    s3.stop()

    memory_stop = median(stop for stop, _ in times["memory only"])
    memory_answer = median(answer for _, answer in times["memory only"])
    memory_trip = memory_stop + memory_answer
    print(
        f"{rounds} round trips per side; medians; added cost as a share of the "
        f"memory-only round trip ({memory_trip * 1e3:.2f} ms)"
    )
    for side, measured in times.items():
        stop = median(stop for stop, _ in measured)
        answer = median(answer for _, answer in measured)
        print(
            f"  {side:25} stop {stop * 1e3:6.2f} ms ({(stop - memory_stop) / memory_trip:+6.1%})"
            f"   answer {answer * 1e3:6.2f} ms ({(answer - memory_answer) / memory_trip:+6.1%})"
            f"   round trip x{(stop + answer) / memory_trip:.2f}"
        )
    print(
        f"Targets (folder): storing adds at most {PERSIST_TARGET:.0%} (stop), resuming after "
        f"a restart at most {RESUME_TARGET:.0%} (answer). S3 is reported, not targeted."
    )


def main(rounds: int) -> None:
    from _project import measure_in_project  # the benchmark's environment only

    measure_in_project(__file__, str(rounds))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--measure"]:
        asyncio.run(measure(int(sys.argv[2])))
    else:
        sys.path.insert(0, str(Path(__file__).parent))
        from _project import arguments

        main(arguments(__doc__, {"round_trips": (41, 1)}).round_trips)
