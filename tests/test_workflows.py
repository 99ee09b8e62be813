"""Workflows: valid against GitHub's workflow schema, hardened, secret-free.

The generated project's CI and Deploy, and the template repository's own CI
and Release.
"""

import json
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from conftest import TEMPLATE

GENERATED = "generated project"
TEMPLATE_REPO = "template repository"
# Linters installed with the suite (zizmor, actionlint), beside its Python.
TOOLS = Path(sys.executable).parent
ENVIRONMENTS = ("staging", "prod")


def workflow_path(project, owner: str, name: str) -> Path:
    root = project() if owner == GENERATED else TEMPLATE
    return root / ".github" / "workflows" / name


@pytest.fixture(
    params=[
        (GENERATED, "ci.yml"),
        (GENERATED, "deploy.yml"),
        (TEMPLATE_REPO, "ci.yml"),
        (TEMPLATE_REPO, "release.yml"),
    ],
    ids=lambda param: f"{param[0]}: {param[1]}",
)
def workflow(request, project):
    """Every workflow: what holds for all of them."""
    return workflow_path(project, *request.param)


@pytest.fixture(params=[GENERATED, TEMPLATE_REPO])
def ci_workflow(request, project):
    """The CI workflows: checks that read, and make way for newer pushes."""
    return workflow_path(project, request.param, "ci.yml")


@pytest.fixture
def deploy(project) -> dict:
    return load(workflow_path(project, GENERATED, "deploy.yml"))


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


def linted(tool: str, *arguments: str) -> subprocess.CompletedProcess:
    """A linter installed with the suite, run on its arguments."""
    return subprocess.run([TOOLS / tool, *arguments], capture_output=True, text=True)


def test_actionlint_finds_nothing(workflow):
    # No shellcheck or pyflakes: whether they are installed must not matter.
    checked = linted("actionlint", "-shellcheck=", "-pyflakes=", str(workflow))

    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_ci_grants_nothing_by_default_and_only_reads_per_job(ci_workflow):
    data = load(ci_workflow)

    assert data["permissions"] == {}
    for name, job in data["jobs"].items():
        assert job.get("permissions") == {"contents": "read"}, name


def test_superseded_ci_runs_are_cancelled(ci_workflow):
    concurrency = load(ci_workflow)["concurrency"]

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


def test_the_template_draws_more_answer_sets_on_a_schedule_than_ci_does():
    """CI (.ci/run) checks three seeds' default draw; a weekly run, and one by hand, draws more."""
    ci = load(TEMPLATE / ".github" / "workflows" / "ci.yml")
    job = ci["jobs"]["answers"]

    assert ci["on"]["schedule"] and "workflow_dispatch" in ci["on"]
    assert "schedule" in job["if"] and "workflow_dispatch" in job["if"]
    assert "schedule" in ci["jobs"]["template"]["if"]  # the suite runs on pushes, not weekly
    assert int(job["env"]["ANSWER_SETS"]) > 2
    assert job["steps"][-1]["run"] == "uv run pytest tests/test_any_answers.py"


def test_generated_ci_synthesizes_both_environments_offline(project):
    job = load(project() / ".github" / "workflows" / "ci.yml")["jobs"]["synth"]

    commands = [step["run"] for step in job["steps"] if "run" in step]
    assert commands[-2:] == ["make synth ENV=staging", "make synth ENV=prod"]
    assert any(step.get("uses", "").startswith("actions/setup-node@") for step in job["steps"])
    assert "aws-actions" not in json.dumps(job)  # no credentials: a synth makes no AWS call


def test_zizmor_finds_nothing_offline(workflow):
    audited = linted("zizmor", "--offline", "--no-progress", str(workflow))

    assert audited.returncode == 0, audited.stdout + audited.stderr


def test_every_action_is_pinned_to_a_full_commit_sha(workflow):
    steps = [step for job in load(workflow)["jobs"].values() for step in job["steps"]]

    used = [step["uses"] for step in steps if "uses" in step]
    assert used
    for action in used:
        assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", action), action


def push(ref: str) -> SimpleNamespace:
    return SimpleNamespace(event_name="push", ref=ref, inputs={})


def dispatch(environment: str) -> SimpleNamespace:
    return SimpleNamespace(
        event_name="workflow_dispatch",
        ref="refs/heads/main",
        inputs={"environment": environment},
    )


EVENTS = {
    "push to main": push("refs/heads/main"),
    "push to a branch": push("refs/heads/feature"),
    "push of a v tag": push("refs/tags/v1.2.0"),
    "push of another tag": push("refs/tags/nightly"),
    "dispatch of staging": dispatch("staging"),
    "dispatch of prod": dispatch("prod"),
}


def runs_on(job: dict, event: SimpleNamespace) -> bool:
    """Whether a job's `if:` lets it run on an event.

    Only the part of GitHub's expression syntax these conditions use: it reads
    as Python once && and || are spelled `and` and `or`.
    """
    condition = job.get("if")
    if condition is None:
        return True
    condition = condition.strip().removeprefix("${{").removesuffix("}}")
    python = condition.replace("&&", " and ").replace("||", " or ")
    names = {
        "github": SimpleNamespace(event_name=event.event_name, ref=event.ref),
        "inputs": SimpleNamespace(environment=event.inputs.get("environment")),
        "startsWith": lambda text, prefix: str(text).startswith(prefix),
    }
    return bool(eval(python, {"__builtins__": {}}, names))


def triggering(job: dict) -> set[str]:
    return {name for name, event in EVENTS.items() if runs_on(job, event)}


def test_deploy_runs_on_pushes_to_main_on_v_tags_and_by_hand(deploy):
    on = deploy["on"]

    assert set(on) == {"push", "workflow_dispatch"}  # no workflow_run
    assert on["push"] == {"branches": ["main"], "tags": ["v*"]}
    chosen = on["workflow_dispatch"]["inputs"]["environment"]
    assert chosen["type"] == "choice"
    assert chosen["options"] == list(ENVIRONMENTS)


def test_deploy_grants_nothing_by_default(deploy):
    assert deploy["permissions"] == {}


def test_deploy_tests_only_read_the_code(deploy):
    assert deploy["jobs"]["test"]["permissions"] == {"contents": "read"}


@pytest.mark.parametrize("environment", ENVIRONMENTS)
def test_deploy_job_only_reads_the_code_and_requests_an_oidc_token(
    deploy, environment
):
    assert deploy["jobs"][environment]["permissions"] == {
        "contents": "read",
        "id-token": "write",
    }


def test_the_tests_run_on_every_trigger(deploy):
    assert triggering(deploy["jobs"]["test"]) == set(EVENTS)


@pytest.mark.parametrize("environment", ENVIRONMENTS)
def test_deploy_job_waits_for_the_tests(deploy, environment):
    needs = deploy["jobs"][environment]["needs"]

    assert "test" in ([needs] if isinstance(needs, str) else needs)


def test_staging_deploys_on_a_push_to_main_or_by_hand(deploy):
    assert triggering(deploy["jobs"]["staging"]) == {
        "push to main",
        "dispatch of staging",
    }


def test_prod_deploys_only_from_a_v_tag_or_by_hand(deploy):
    assert triggering(deploy["jobs"]["prod"]) == {
        "push of a v tag",
        "dispatch of prod",
    }


@pytest.mark.parametrize("environment", ENVIRONMENTS)
def test_deploy_job_runs_in_the_github_environment_its_role_trusts(
    deploy, environment
):
    # The role trusts repo:<owner>/<repo>:environment:<environment> only.
    assert deploy["jobs"][environment]["environment"] == environment


@pytest.mark.parametrize("environment", ENVIRONMENTS)
def test_deploy_job_assumes_the_role_its_environment_names_through_oidc(
    deploy, environment
):
    credentials = [
        step
        for step in deploy["jobs"][environment]["steps"]
        if step.get("uses", "").startswith("aws-actions/configure-aws-credentials@")
    ]

    assert len(credentials) == 1
    assert credentials[0]["with"] == {
        "role-to-assume": "${{ vars.AWS_DEPLOY_ROLE_ARN }}",
        "aws-region": "${{ vars.AWS_REGION }}",
    }


@pytest.mark.parametrize("environment", ENVIRONMENTS)
def test_deploy_job_runs_make_deploy_for_its_environment_once_it_has_credentials(
    deploy, environment
):
    steps = deploy["jobs"][environment]["steps"]
    uses = [step.get("uses", "").partition("@")[0] for step in steps]
    runs = [step.get("run", "") for step in steps]

    deploying = runs.index(f"make deploy ENV={environment} ARGS=--ci")
    assert uses.index("aws-actions/configure-aws-credentials") < deploying
    assert runs.index("uv sync --locked --group deploy") < deploying
    # The CDK CLI runs through npx.
    assert "actions/setup-node" in uses[:deploying]


@pytest.mark.parametrize("environment", ENVIRONMENTS)
def test_a_running_deploy_is_never_cancelled(deploy, environment):
    concurrency = deploy["jobs"][environment]["concurrency"]

    assert concurrency["cancel-in-progress"] is False
    assert "github.workflow" in concurrency["group"]
    assert concurrency["group"].endswith(environment)
    assert deploy.get("concurrency", {}).get("cancel-in-progress") is not True


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


@pytest.fixture
def release() -> dict:
    return load(workflow_path(None, TEMPLATE_REPO, "release.yml"))


def test_release_runs_when_main_s_version_or_changelog_changes_or_by_hand(release):
    on = release["on"]

    assert on["push"] == {"branches": ["main"], "paths": ["copier.yml", "CHANGELOG.md"]}
    assert set(on) == {"push", "workflow_dispatch"}
    (job,) = release["jobs"].values()
    assert runs_on(job, push("refs/heads/main"))
    assert runs_on(job, dispatch("any"))  # from main
    from_a_branch = SimpleNamespace(
        event_name="workflow_dispatch", ref="refs/heads/feature", inputs={}
    )
    assert not runs_on(job, from_a_branch)


def test_release_may_write_only_where_it_tags_and_is_never_cancelled(release):
    assert release["permissions"] == {}
    (job,) = release["jobs"].values()
    assert job["permissions"] == {"contents": "write"}
    assert release["concurrency"]["cancel-in-progress"] is False


def test_release_tags_with_the_script_on_the_whole_history_then_pushes_the_tags(release):
    (job,) = release["jobs"].values()
    steps = job["steps"]
    checkout = steps[0]
    runs = [step.get("run", "") for step in steps]

    assert checkout["uses"].startswith("actions/checkout@")
    assert checkout["with"]["fetch-depth"] == 0  # history and tags
    tagging = runs.index("python3 .ci/release_tags.py")
    (pushing,) = [index for index, run in enumerate(runs) if run.startswith("git push ")]
    assert tagging < pushing
    assert runs[pushing].endswith(" --tags")
    assert (TEMPLATE / ".ci" / "release_tags.py").is_file()
