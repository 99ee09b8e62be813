"""Any valid answers render a project that passes its own CI untouched.

Each seed draws ANSWER_SETS answer sets (tests/answer_sets.py): a name at
an import-sorting boundary or made up, crossed with every other question.
Each set is rendered and checked as the project's CI checks it: `make
install lint test`, which is `uv sync`, ruff check, ruff format --check,
mypy and the quick suite. The seeds are ANSWER_SEEDS, or three fresh ones
that the run's header prints; a failure names its answers and the command
that draws them again. Projects of one Python and provider share an
environment (conftest's `shared_environments`).
"""

import json
import os
import random
import shlex

import pytest
from answer_sets import boundary_names, draw, reserved
from conftest import RICHEST, TEMPLATE, render, run

pytestmark = pytest.mark.slow

SEEDS = [int(seed) for seed in os.environ["ANSWER_SEEDS"].split(",")]
PER_SEED = int(os.environ.get("ANSWER_SETS", "2"))
DRAWS = [(seed, index) for seed in SEEDS for index in range(PER_SEED)]


@pytest.fixture(scope="module")
def names(tmp_path_factory) -> list[str]:
    """The boundary names, around the modules the richest rendering imports."""
    richest = render(tmp_path_factory.mktemp("imports") / "agent", **RICHEST)
    return boundary_names(richest, reserved(TEMPLATE / "copier.yml"))


def drawn(seed: int, index: int, names: list[str]) -> dict:
    """The seed's index-th answer set: the sets before it are drawn, and dropped."""
    rng, refused = random.Random(seed), reserved(TEMPLATE / "copier.yml")
    for _ in range(index):
        draw(rng, names, refused)
    return draw(rng, names, refused)


@pytest.mark.parametrize("seed, index", DRAWS, ids=[f"seed={s}-set={i}" for s, i in DRAWS])
def test_the_answers_drawn_render_a_project_whose_own_checks_pass(
    names, tmp_path, shared_environments, seed, index
):
    answers = drawn(seed, index, names)
    again = (
        f"ANSWER_SEEDS={seed} ANSWER_SETS={index + 1} uv run pytest tests/test_any_answers.py "
        f"-k 'seed={seed}-set={index}'"
    )
    data = " ".join(f"-d {shlex.quote(f'{key}={value}')}" for key, value in answers.items())
    told = (
        f"\nanswers: {json.dumps(answers)}\ndrawn again by: {again}"
        f'\nrendered by: uvx copier copy --vcs-ref HEAD --defaults {data} "$PWD" /tmp/agent'
    )
    project = render(tmp_path / "agent", **answers)

    done = run(
        ["make", "install", "lint", "test"],
        project,
        **shared_environments(answers["python_version"], answers["model_provider"]),
    )

    assert done.returncode == 0, f"{done.stdout[-5000:]}\n{done.stderr[-3000:]}{told}"
