"""What usage accounting adds to a turn, side by side with it off, in the folder run store.

Since 0.14.0 every request ends with its usage counted (accounting/budgets.py's
Accounting, built by the factory's `accounting_of`): Strands' metrics for
the turn are read and priced (accounting/usage.py), one JSON log line is written
and one span is started; with a thread budget set, the thread's total is
also read from the run store before the turn starts and written back after
it (accounting/totals.py). A turn pays for all of it, so this bench measures
what it costs against the same app with accounting switched off
(`Conversations(..., accounting=None)`).

Three apps, each built by the package's `create_app` from the same
settings, with the default run store (session-storage, a local folder, a
folder of its own per app) and the same scripted model, which reports its
usage as Bedrock does (`with_usage`) under a model id the price table
prices:
- off: `accounting_of` returns None while the app is built, so its
  Conversations count nothing; everything else is the same app;
- on, no budget: the accounting as built by default (a log line and a span);
- on, thread budget: THREAD_BUDGET_TOKENS set far above what is used, so
  every turn reads the thread's total and adds to it, and none is refused.

A turn is one POST /invocations handed to the app's ASGI interface in this
process, as a server hands it over (no socket: its noise would bury a 2 %
figure), with the AgentCore session header; the threads have 5 turns, each
resending the thread so far, as Welt does, and no two share a message.
Each turn is timed to its last text event (what the person waits for: the
accounting runs after it) and to the response's end (the whole turn), and
the process's CPU is read per sample. Logging is main.py's (JSON lines,
here to a file) and spans are recorded, as on AgentCore, by an SDK tracer
provider with a batch processor whose exporter drops them. Before the
clock, a check that the arms do what they say: usage lines from the two
on, thread totals from the budget's alone, and a priced cost.

A sample is one batch of turns per app; the apps take turns, the one that
goes first rotating; medians per turn, their ratios over off and the
median of each round's ratio. Target: accounting adds under 2 % to a turn
(the rounds' median ratio at most 1.02, by wall time to the response's end
and by CPU; when the two disagree, the script says it is unclear). Then
a few more samples of each side that counts, with the accounting's parts
timed apart (the check before the turn, the log line and span, the
total's read and write), to say where its time goes.

    uv run python bench/usage.py [rounds] [turns per sample] [--folder DIR] [--smoke]
    # default 41 rounds of 30 turns; 1 of 5 with --smoke
    # --folder: where the run stores' folders go (/dev/shm, say, to take the disk out)
"""

import asyncio
import sys
from pathlib import Path
from typing import NamedTuple

TARGET = 1.02
TURNS_PER_THREAD = 5
BUDGET = 10**12  # tokens: never reached, so each turn reads and writes the total
MODEL_ID = "global.anthropic.claude-sonnet-4-6"  # priced in yours/model_prices.py


class Sample(NamedTuple):
    """Seconds per turn, averaged over one sample's turns."""

    text: float  # request to its last text event: what the person waits for
    end: float  # request to the response's end: the whole turn, accounting included
    cpu: float  # this process's CPU (span export thread included)


async def measure(rounds: int, turns: int, state: Path) -> None:
    """Runs in the project's environment, with the settings main() gives it."""
    import gc
    import json
    import logging
    import time
    from dataclasses import replace
    from statistics import median
    from unittest import mock

    from _asgi import post
    from my_welt_agent import factory
    from my_welt_agent.factory import create_app
    from my_welt_agent.model.scripted import ScriptedModel, reply, with_usage
    from my_welt_agent.platform.logs import log_json_lines
    from my_welt_agent.accounting import budgets, totals
    from my_welt_agent.settings import Settings
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

    class Dropped(SpanExporter):
        def export(self, spans):
            return SpanExportResult.SUCCESS

    # As on AgentCore: spans are recorded and exported in batches (here to nowhere).
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(Dropped()))
    trace.set_tracer_provider(provider)
    log_json_lines()  # as main.py: every line through JsonLines, here to a file
    log_file = state / "log.jsonl"
    logging.getLogger().handlers[0].setStream(log_file.open("a"))

    class Echo(ScriptedModel):
        records_requests = False

        def next_turn(self, messages, tool_specs=None):
            said = messages[-1]["content"][0]["text"]
            chunks = reply("You", " said", ": ", said.split(": ", 1)[1], ". Noted.")
            return with_usage(chunks, input=1200, output=40, cache_read=800)

    echo = Echo(model_id=MODEL_ID)
    settings = Settings.from_environment()
    assert settings.run_store == "session-storage", settings.run_store

    def app(name: str, accounting: bool, **changes):
        folder = state / name
        arm = replace(settings, session_storage_dir=folder, **changes)
        if accounting:
            return create_app(arm, new_model=lambda: echo), folder
        with mock.patch.object(factory, "accounting_of", lambda settings, store: None):
            return create_app(arm, new_model=lambda: echo), folder

    apps = {
        "off": app("off", accounting=False),
        "on, no budget": app("on", accounting=True),
        "on, thread budget": app("budget", accounting=True, thread_budget_tokens=BUDGET),
    }

    async def thread(built, session: str, length: int) -> tuple[float, float]:
        """The turns of one thread; seconds to their last text and to their ends, summed."""
        messages: list[dict] = []
        to_text = to_end = 0.0
        for turn in range(length):
            text = f"<@U0123456>: message {turn + 1} of thread {session}"
            messages.append({"role": "user", "content": [{"text": text}]})
            answered = await post(built, session, messages)
            reply_at, end, said = answered.last_text, answered.end, answered.text
            assert said.endswith("Noted."), (session, said)
            to_text, to_end = to_text + reply_at, to_end + end
            messages.append({"role": "assistant", "content": [{"text": said}]})
        return to_text, to_end

    async def sample(name: str, label: str) -> Sample:
        """Seconds per turn over `turns` turns, in threads of TURNS_PER_THREAD."""
        gc.collect()
        cpu = time.process_time()
        done = 0
        to_text = to_end = 0.0
        for number in range((turns + TURNS_PER_THREAD - 1) // TURNS_PER_THREAD):
            length = min(TURNS_PER_THREAD, turns - done)
            session = f"slack_T0BENCH_C0BENCH_{label}.{number:06d}"
            text, end = await thread(apps[name][0], session, length)
            to_text, to_end, done = to_text + text, to_end + end, done + length
        return Sample(to_text / turns, to_end / turns, (time.process_time() - cpu) / turns)

    def tag(name: str) -> str:
        return name.replace(", ", "-").replace(" ", "")

    for name in apps:  # imports, first requests, idle agents: all before the clock
        await sample(name, f"warm-{tag(name)}")

    # The arms do what they say: usage lines from the two on, none from off;
    # thread totals from the budget's alone.
    logging.getLogger().handlers[0].flush()
    lines = [json.loads(line) for line in log_file.read_text().splitlines()]
    counted = [line for line in lines if "usage" in line and "totalTokens" in line]
    by_session = {line["sessionId"] for line in counted}
    for name in apps:
        logged = any(f"warm-{tag(name)}." in session for session in by_session)
        assert logged == (name != "off"), f"{name}: usage lines {logged}"
        ledgers = list((apps[name][1] / "usage" / "threads").glob("*.jsonl"))
        assert bool(ledgers) == (name == "on, thread budget"), f"{name}: totals {ledgers}"
    assert all("costUsd" in line for line in counted), "the model was not priced"

    times: dict[str, list[Sample]] = {name: [] for name in apps}
    names = list(apps)
    for number in range(rounds):
        shift = number % len(names)
        for name in names[shift:] + names[:shift]:
            times[name].append(await sample(name, f"{tag(name)}{number}"))

    print(
        f"{rounds} rounds of {turns} turns per side (threads of {TURNS_PER_THREAD}, each turn "
        "resending the thread), folder run store; medians per turn; ratios over off are of "
        "the medians, and in brackets the median of the rounds' ratios"
    )
    off = {figure: median(getattr(s, figure) for s in times["off"]) for figure in Sample._fields}
    verdicts = []
    for name in names:
        line = f"  accounting {name:18}"
        ratios = []
        for figure, label in (("end", "turn"), ("text", "to last text"), ("cpu", "CPU")):
            value = median(getattr(s, figure) for s in times[name])
            line += f"  {label} {value * 1e3:6.3f} ms"
            if name != "off":
                paired = median(
                    getattr(a, figure) / getattr(b, figure)
                    for a, b in zip(times[name], times["off"], strict=True)
                )
                line += f" ({value / off[figure]:.3f} [{paired:.3f}]"
                line += f", {(value - off[figure]) * 1e6:+.0f} us)" if figure == "end" else ")"
                if figure != "text":
                    ratios.append(paired)
        print(line)
        if ratios:
            verdict = (
                "met"
                if max(ratios) <= TARGET
                else "NOT met"
                if min(ratios) > TARGET
                else "unclear: wall time and CPU disagree (other work shares the machine?)"
            )
            verdicts.append(f"{name}, {verdict}")
    print(
        f"Target: accounting adds under {TARGET - 1:.0%} to a turn (rounds' median ratio of the "
        f"turn and of CPU at most {TARGET}): " + "; ".join(verdicts)
    )
    # A scripted turn calls no model; a real one waits for it. What the
    # accounting adds is the same either way, so say from what turn on it is
    # under the target.
    for name in names[1:]:
        added = median(s.end for s in times[name]) - off["end"]
        shortest = max(added, 0.0) / (TARGET - 1)
        print(
            f"  {name}: adds {added * 1e6:+.0f} us a turn, under {TARGET - 1:.0%} of any turn of "
            f"{shortest * 1e3:.1f} ms or more (a model's reply of "
            f"{max(shortest - off['end'], 0.0) * 1e3:.1f} ms or more)"
        )

    # Where the time goes: the accounting's parts, timed apart in further samples.
    spent: dict[str, float] = {}

    def timed(owner, attribute: str, label: str) -> None:
        original = getattr(owner, attribute)

        async def wrapped(*args, **kwargs):
            start = time.perf_counter()
            try:
                return await original(*args, **kwargs)
            finally:
                spent[label] = spent.get(label, 0.0) + time.perf_counter() - start

        def wrapped_sync(*args, **kwargs):
            start = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                spent[label] = spent.get(label, 0.0) + time.perf_counter() - start

        is_async = asyncio.iscoroutinefunction(original)
        setattr(owner, attribute, wrapped if is_async else wrapped_sync)

    LABELS = (
        "before the turn (Accounting.admit)",
        "after it (Accounting.count), of which:",
        "  log line and span (usage.record_usage)",
        "  total read and written (FolderTotals.add)",
    )
    timed(budgets.Accounting, "admit", LABELS[0])
    timed(budgets.Accounting, "count", LABELS[1])
    timed(budgets, "record_usage", LABELS[2])
    timed(totals.FolderTotals, "add", LABELS[3])
    parts = max(1, rounds // 4)
    print(f"where the accounting's time goes, per turn (means over {parts} more samples each):")
    for name in names[1:]:
        spent.clear()
        for number in range(parts):
            await sample(name, f"parts-{tag(name)}{number}")
        print(f"  {name}:")
        for label in LABELS:
            if label in spent:
                print(f"    {label:48} {spent[label] / (parts * turns) * 1e6:6.0f} us")
    provider.shutdown()


def main(rounds: int, turns: int, folder: str | None) -> None:
    from _project import measure_in_project  # the benchmark's environment only

    measure_in_project(__file__, str(rounds), str(turns), folder=folder)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--measure"]:
        asyncio.run(measure(int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4])))
    else:
        sys.path.insert(0, str(Path(__file__).parent))
        from _project import arguments

        given = arguments(
            __doc__,
            {"rounds": (41, 1), "turns": (30, 5)},
            lambda parser: parser.add_argument(
                "--folder",
                help="where the run stores' folders go (default: the system's temporary folder)",
            ),
        )
        main(given.rounds, given.turns, given.folder)
