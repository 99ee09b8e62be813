"""What sealing a stored run costs: writing and reading a record, sealed and plain, side by side.

Since 0.10.0 every record in the run store carries an HMAC-SHA256 over the
bytes of its JSON as written (runs/record.py): writing one hashes those
bytes once more, and reading one checks the hash before parsing them, so
nothing is serialized twice and what sealing adds is the hash of the
record each way. This bench measures that against what 0.9.0 did with the
same record: one `json.dumps` to write, one `json.loads` to read.

In the rendered default project's environment, it builds a waiting run's
record around a snapshot whose thread carries a document of each size
(nothing, 100 KB, 1 MB, 7 MB: the largest file one event carries), and
times, interleaved, `record.dump` + `record.parse` against `json.dumps` +
`json.loads` of the same fields. It prints the medians and their ratio.

    uv run python bench/seal.py [runs] [--smoke]   # default 15; 1 with --smoke
"""

import subprocess

from _project import arguments, rendered_project

MEASURE = r"""
import base64, json, sys, time
from my_welt_agent.runs import record

runs = int(sys.argv[1])
key = b"k" * 64
session = "slack_T0123_C0456_1700000000.000100"

def waiting(size):
    document = {"document": {"format": "txt", "name": "notes", "source": {"bytes": base64.b64encode(b"x" * size).decode()}}}
    messages = [{"role": "user", "content": [{"text": "<@U1>: please review"}, document]}] if size else []
    snapshot = {"scope": "agent", "data": {"messages": messages, "state": {"welt_started_by": "slack:T1:U1"}}}
    return record.Waiting("r" * 32, {"q": {"message": "Approve?"}}, time.time(), snapshot)

def plain(run):
    fields = {"format": 2, "run": run.run, "asked_at": run.asked_at, "questions": run.questions, "snapshot": run.snapshot}
    return json.loads(json.dumps(fields).encode())

def sealed(run):
    return record.parse(record.dump(run, session, key), session, key)

def median(values):
    return sorted(values)[len(values) // 2]

for label, size in (("no file", 0), ("100 KB", 100_000), ("1 MB", 1_000_000), ("7 MB", 7_000_000)):
    run = waiting(size)
    sides = {"sealed": sealed, "plain": plain}
    times = {name: [] for name in sides}
    for turn in range(runs):
        for name in (list(sides) if turn % 2 == 0 else list(reversed(sides))):
            started = time.perf_counter()
            sides[name](run)
            times[name].append(time.perf_counter() - started)
    a, b = median(times["sealed"]), median(times["plain"])
    print(f"{label:>8}: write + read sealed {a * 1e3:8.2f} ms, plain {b * 1e3:8.2f} ms, ratio {a / b:.2f}")
"""


def main(runs: int) -> None:
    project = rendered_project()
    print(f"median of {runs} runs each, interleaved, on the project's Python:")
    subprocess.run(
        [str(project / ".venv" / "bin" / "python"), "-c", MEASURE, str(runs)],
        cwd=project / "app",
        check=True,
    )


if __name__ == "__main__":
    main(arguments(__doc__, {"runs": (15, 1)}).runs)
