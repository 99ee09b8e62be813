"""A thread's second turn, warm, to its first words: the generated app against two floors.

bench/first_reply.py times one second turn per process, against a floor
with no tools; it cannot say how much of the difference is the template's
machinery (schema check, stored-run check, gate, wire, accounting, log
lines) and how much is what Strands spends on the project's tools at every
model call (their specs listed, checked and copied). This bench tells the
two apart, on apps that have served many threads already:
- generated: the package's `create_app` with the settings main.py reads
  and the scripted model (a short text reply to every call);
- floor: a BedrockAgentCoreApp entrypoint that builds a fresh Strands
  Agent with the same model per request and yields its text;
- floor with its tools: the same, the Agent given the project's tools
  (the rows the factory reads from yours/tools/).

Every app runs in this process, with main.py's JSON log lines (to a
file); a request is handed to its ASGI interface as a server hands it
over (bench/_asgi.py). A sample is one thread of two turns per app; the
apps take turns, the one that goes first rotating; each second turn is
timed to its first text event. Medians over all samples, with the
process's CPU per thread. Target: the second turn within 1.05 times the
floor with its tools.

    uv run python bench/second_turn.py [threads] [--smoke]   # default 400; 5 with --smoke
"""

import asyncio
import sys
from pathlib import Path

TARGET = 1.05
FIRST = [{"role": "user", "content": [{"text": "<@U1>: hello"}]}]
SECOND = [
    *FIRST,
    {"role": "assistant", "content": [{"text": "Hello from a scripted model."}]},
    {"role": "user", "content": [{"text": "<@U1>: and again"}]},
]


async def measure(threads: int, state: Path) -> None:
    """Runs in the project's environment, with the settings main() gives it."""
    import logging
    import time
    from statistics import median

    from _asgi import App, post
    from bedrock_agentcore.runtime import BedrockAgentCoreApp
    from my_welt_agent.factory import create_app, registry_of_yours
    from my_welt_agent.model.scripted import ScriptedModel, reply
    from my_welt_agent.platform.logs import log_json_lines
    from my_welt_agent.settings import Settings
    from strands import Agent

    class Echo(ScriptedModel):
        records_requests = False

        def next_turn(self, messages, tool_specs=None):
            return reply("Hello", " from", " a", " scripted", " model.")

    log_json_lines()  # as main.py: every line through JsonLines, here to a file
    logging.getLogger().handlers[0].setStream((state / "log.jsonl").open("a"))
    settings = Settings.from_environment()
    echo = Echo()

    def floor(tools: list) -> App:
        app = BedrockAgentCoreApp()

        @app.entrypoint
        async def invoke(payload):
            agent = Agent(model=Echo(), tools=tools, callback_handler=None)
            async for event in agent.stream_async(payload["messages"]):
                if "data" in event:
                    yield {"data": event["data"]}

        return app

    apps: dict[str, App] = {
        "generated": create_app(settings, new_model=lambda: echo),
        "floor": floor([]),
        "floor with its tools": floor(registry_of_yours(settings).tools),
    }

    async def thread(app: App, session: str) -> float:
        """Seconds from the second turn's request to its first text."""
        first = await post(app, session, FIRST)
        assert first.text == "Hello from a scripted model.", first.text
        second = await post(app, session, SECOND)
        return second.first_text

    names = list(apps)
    for name in names:  # imports, first requests, idle agents: all before the clock
        for number in range(10):
            await thread(apps[name], f"slack_T0_C0_warm.{names.index(name)}{number:04d}")
    seconds: dict[str, list[float]] = {name: [] for name in names}
    cpu: dict[str, float] = dict.fromkeys(names, 0.0)
    for number in range(threads):
        shift = number % len(names)
        for name in names[shift:] + names[:shift]:
            started = time.process_time()
            seconds[name].append(
                await thread(apps[name], f"slack_T0_C0_{names.index(name)}.{number:06d}")
            )
            cpu[name] += time.process_time() - started

    middle = {name: median(times) for name, times in seconds.items()}
    print(f"{threads} threads of two turns per app, in one process; medians:")
    for name in names:
        print(
            f"  {name:<21} second turn to first text {middle[name] * 1e3:6.3f} ms,"
            f"  CPU per thread {cpu[name] / threads * 1e3:6.3f} ms"
        )
    for floor_name in names[1:]:
        wall = middle["generated"] / middle[floor_name]
        spent = cpu["generated"] / cpu[floor_name]
        print(f"  generated over {floor_name}: second turn {wall:.2f}, CPU {spent:.2f}")
    wall = middle["generated"] / middle["floor with its tools"]
    spent = cpu["generated"] / cpu["floor with its tools"]
    verdict = (
        "met"
        if max(wall, spent) <= TARGET
        else "NOT met"
        if min(wall, spent) > TARGET
        else "unclear: wall time and CPU disagree (other work shares the machine?)"
    )
    print(f"Target: second turn within {TARGET} times the floor with its tools: {verdict}")


def main(threads: int) -> None:
    from _project import measure_in_project  # the benchmark's environment only

    measure_in_project(__file__, str(threads))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--measure"]:
        asyncio.run(measure(int(sys.argv[2]), Path(sys.argv[3])))
    else:
        sys.path.insert(0, str(Path(__file__).parent))
        from _project import arguments

        main(arguments(__doc__, {"threads": (400, 5)}).threads)
