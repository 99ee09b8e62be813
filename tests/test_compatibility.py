"""Declared floors are tested claims: the generated suite passes at both ends of each range.

The floor environment is resolved with uv's lowest-direct resolution on the
lowest supported Python (3.12), the latest with every release upgraded on the
newest offered (3.13, in test_newest_releases.py, a module of its own so the
two ends run side by side); the tests read the installed metadata to prove
each ran where it says.
"""

import json
import re
import shutil

import pytest
from conftest import RICHEST, python_for, render, run_in

pytestmark = pytest.mark.slow

PINNED = (
    "strands-agents",
    "strands-agents-tools",
    "welt-io-strands",
    "bedrock-agentcore",
    "jsonschema",
    "boto3",
)
# SnapshotSessionManager over a Storage (stored runs) arrived here; per-invocation
# limits (1.45) and vended steering (1.30) are older.
STRANDS_FLOOR = "1.54.0"


RENDERINGS = {
    "default": {},
    "richest": RICHEST,
}


@pytest.fixture(scope="module", params=RENDERINGS.values(), ids=RENDERINGS.keys())
def rendered(request, tmp_path_factory):
    return render(tmp_path_factory.mktemp("compat") / "agent", **request.param)


def declared_floors(project) -> dict[str, str]:
    text = (project / "pyproject.toml").read_text()
    return dict(
        re.findall(
            r'"([a-z0-9-]+)(?:\[[a-z,]+\])?>=([0-9.]+)[,"]', text.split("[dependency-groups]")[0]
        )
    )


def pip_list(project, python, *options) -> list[dict]:
    """uv pip list for the project's own environment, not the bare interpreter."""
    venv_python = str(project / ".venv" / "bin" / "python")
    listed = run_in(
        ["uv", "pip", "list", "--python", venv_python, *options], project, python
    )
    assert listed.returncode == 0, listed.stderr
    return json.loads(listed.stdout)


def installed(project, python) -> dict[str, str]:
    return {
        entry["name"]: entry["version"]
        for entry in pip_list(project, python, "--format", "json")
    }


def environment(rendered, tmp_path, python, *sync_options):
    project = tmp_path / "agent"
    shutil.copytree(rendered, project)
    synced = run_in(["uv", "sync", *sync_options], project, python)
    assert synced.returncode == 0, synced.stderr
    pinned = run_in(["make", "pins"], project, python)  # as CI's floor and latest jobs do
    assert pinned.returncode == 0, pinned.stdout + pinned.stderr
    return project


def assert_checks_pass(project, python):
    """ruff, ruff format, the suite and the evals, untouched, as CI's floor and latest jobs run them."""
    for command in (
        ["uv", "run", "--no-sync", "ruff", "check", "."],
        ["uv", "run", "--no-sync", "ruff", "format", "--check", "."],
        ["uv", "run", "--no-sync", "pytest", "-q", "-p", "no:cacheprovider"],
        ["make", "evals"],
    ):
        result = run_in(command, project, python)
        assert result.returncode == 0, (command, result.stdout[-4000:], result.stderr[-2000:])


def test_strands_floor_is_the_release_with_snapshot_sessions(project):
    assert declared_floors(project())["strands-agents"] == STRANDS_FLOOR


def test_adapter_range_starts_at_start_reply_and_stops_below_the_next_welt_minor(project):
    pyproject = (project() / "pyproject.toml").read_text()

    assert '"welt-io-strands>=0.9.0,<0.11"' in pyproject


def test_generated_suite_passes_at_the_floors_on_the_lowest_python(rendered, tmp_path):
    python = python_for("3.12")
    project = environment(rendered, tmp_path, python, "--resolution", "lowest-direct")

    versions = installed(project, python)
    floors = declared_floors(project)
    assert {name: versions[name] for name in PINNED} == {
        name: floors[name] for name in PINNED
    }
    assert_checks_pass(project, python)
