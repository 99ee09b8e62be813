"""CI workflows: valid against GitHub's workflow schema, hardened, secret-free."""

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import TEMPLATE

GENERATED = "generated project"
TEMPLATE_REPO = "template repository"
# Linters installed with the suite (zizmor), beside its Python.
TOOLS = Path(sys.executable).parent


@pytest.fixture(params=[GENERATED, TEMPLATE_REPO])
def workflow(request, project):
    if request.param == GENERATED:
        return project() / ".github" / "workflows" / "ci.yml"
    return TEMPLATE / ".github" / "workflows" / "ci.yml"


def load(path: Path) -> dict:
    # PyYAML reads the bare key `on` as True.
    data = yaml.safe_load(path.read_text())
    data["on"] = data.pop(True)
    return data


def test_workflow_matches_the_github_workflow_schema(workflow):
    checked = subprocess.run(
        [
            sys.executable,
            "-m",
            "check_jsonschema",
            "--builtin-schema",
            "vendor.github-workflows",
            str(workflow),
        ],
        capture_output=True,
        text=True,
    )

    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_workflow_grants_nothing_by_default_and_only_reads_per_job(workflow):
    data = load(workflow)

    assert data["permissions"] == {}
    for name, job in data["jobs"].items():
        assert job.get("permissions") == {"contents": "read"}, name


def test_superseded_runs_are_cancelled(workflow):
    concurrency = load(workflow)["concurrency"]

    assert concurrency["cancel-in-progress"] is True
    assert "github.ref" in concurrency["group"]


def test_workflow_uses_no_secrets_and_keeps_no_checkout_credentials(workflow):
    text = workflow.read_text()

    assert "secrets." not in text
    for job in load(workflow)["jobs"].values():
        for step in job["steps"]:
            if step.get("uses", "").startswith("actions/checkout@"):
                assert step["with"]["persist-credentials"] is False


def test_generated_matrix_runs_floors_on_the_lowest_python_and_latest_on_the_newest(
    project,
):
    jobs = load(project() / ".github" / "workflows" / "ci.yml")["jobs"]["test"][
        "strategy"
    ]["matrix"]["include"]

    by_kind = {job["dependencies"]: job for job in jobs}
    assert by_kind["floor"]["python"] == "3.12"
    assert "--resolution lowest-direct" in by_kind["floor"]["sync"]
    assert by_kind["latest"]["python"] == "3.13"
    assert "--upgrade" in by_kind["latest"]["sync"]
    assert by_kind["locked"]["python"] == ""  # uv reads .python-version
    assert "--locked" in by_kind["locked"]["sync"]


def test_zizmor_finds_nothing_offline(workflow):
    audited = subprocess.run(
        [TOOLS / "zizmor", "--offline", "--no-progress", str(workflow)],
        capture_output=True,
        text=True,
    )

    assert audited.returncode == 0, audited.stdout + audited.stderr


def test_every_action_is_pinned_to_a_full_commit_sha(workflow):
    steps = [step for job in load(workflow)["jobs"].values() for step in job["steps"]]

    used = [step["uses"] for step in steps if "uses" in step]
    assert used
    for action in used:
        assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", action), action


@pytest.fixture(params=[GENERATED, TEMPLATE_REPO])
def dependabot(request, project):
    if request.param == GENERATED:
        return project() / ".github" / "dependabot.yml"
    return TEMPLATE / ".github" / "dependabot.yml"


def test_dependabot_config_matches_its_schema(dependabot):
    checked = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.dependabot"]
        + [str(dependabot)],
        capture_output=True,
        text=True,
    )

    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_dependabot_keeps_the_lock_and_the_actions_current_in_groups(dependabot):
    updates = yaml.safe_load(dependabot.read_text())["updates"]

    assert {update["package-ecosystem"] for update in updates} == {"uv", "github-actions"}
    for update in updates:
        assert update["directory"] == "/"
        assert update["groups"], update["package-ecosystem"]
