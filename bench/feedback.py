"""How long a generated project's test loop takes: `make test` against `make test-all`.

`make test` is what someone runs while they work (the budget is 15 seconds
on 2 cores); `make test-all` is every test, as the project's CI runs them.
One rendered default project gives both sides; runs alternate, and so does
the side that goes first, after one unmeasured run of each (the first run
writes bytecode for the tests). Prints each side's median wall time, the
ratio of the two and the quick side against its budget.

    uv run python bench/feedback.py [runs] [--smoke]   # default 5
    # --smoke: 1 run per side, each side running one test module only
"""

import subprocess
import time

from _project import arguments, median, project_python, python_for, rendered_project, uv_env

BUDGET_SECONDS = 15.0
SIDES = {"make test": ["make", "test"], "make test-all": ["make", "test-all"]}
# What the smoke run's sides test: one quick module, through the same make targets.
SMOKE_TESTS = "tests/test_settings.py"


def main(runs: int, smoke: bool) -> None:
    project = rendered_project()
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    env = uv_env(python_for(project_python(project)))
    if smoke:
        env["PYTEST_ADDOPTS"] = SMOKE_TESTS
    # As the README says: the environment, then app/'s pins (a test checks them).
    subprocess.run(["make", "install"], cwd=project, env=env, check=True, capture_output=True)

    def seconds(command: list[str]) -> float:
        start = time.perf_counter()
        done = subprocess.run(
            command, cwd=project, env=env, capture_output=True, text=True, check=False
        )
        elapsed = time.perf_counter() - start
        if done.returncode != 0:
            raise SystemExit(
                f"{' '.join(command)} failed:\n{done.stdout[-3000:]}{done.stderr[-2000:]}"
            )
        return elapsed

    for command in SIDES.values():
        seconds(command)
    names = list(SIDES)
    results: dict[str, list[float]] = {name: [] for name in names}
    for run in range(runs):
        for name in names if run % 2 == 0 else reversed(names):
            results[name].append(seconds(SIDES[name]))
    quick, every = (median(results[name]) for name in names)
    tested = f", {SMOKE_TESTS} only" if smoke else ""
    print(f"medians of {runs} runs each, on the default project{tested}:")
    print(
        f"  make test      {quick:6.2f}s   ({quick / BUDGET_SECONDS:.2f} of the {BUDGET_SECONDS:.0f} s budget)"
    )
    print(f"  make test-all  {every:6.2f}s")
    print(f"  ratio          {quick / every:.2f}")


if __name__ == "__main__":
    given = arguments(__doc__, {"runs": (5, 1)})
    main(given.runs, given.smoke)
