"""deploy/environments.toml: each environment's settings are checked before anything is built.

These run without the CDK (CI synthesizes both environments with `make synth`);
they read the settings the way the synth does.
"""

import ast
import importlib
import re
from pathlib import Path

import pytest
from synthesized import without_user_tokens

from deploy import project, runtime
from deploy.settings import ENVIRONMENTS, SETTINGS_FILE, SettingError, load_environment


@pytest.mark.parametrize("name", ENVIRONMENTS)
def test_each_environment_of_the_project_loads_and_names_its_model(name):
    environment = load_environment(name)

    assert environment.name == name
    assert environment.model_id
    assert environment.runtime_name.startswith(project.AGENT_NAME)


@pytest.mark.parametrize("name", ENVIRONMENTS)
def test_the_runtimes_variables_fit_the_platforms_budget(name):
    variables = runtime.environment_variables(load_environment(name))

    budget = runtime.ENV_BUDGET_BYTES[runtime.platform_version()]
    assert runtime.environment_bytes(variables) <= budget
    assert variables["MODEL_ID"] == load_environment(name).model_id


def with_setting(tmp_path: Path, old: str, new: str) -> Path:
    text = SETTINGS_FILE.read_text()
    assert old in text
    edited = tmp_path / "environments.toml"
    edited.write_text(text.replace(old, new, 1))
    return edited


def test_an_unknown_environment_is_refused():
    with pytest.raises(SettingError, match=r"ENV must be one of staging, prod \(got 'dev'\)"):
        load_environment("dev")


def test_a_misspelt_key_is_named(tmp_path):
    path = with_setting(tmp_path, "log_retention_days =", "log_retention =")

    with pytest.raises(SettingError, match=r"\[staging\] has unknown keys log_retention"):
        load_environment("staging", path)


def test_an_account_that_is_not_twelve_digits_is_named(tmp_path):
    text = SETTINGS_FILE.read_text()
    staging = text.split("[prod]")[0]
    account = next(line for line in staging.splitlines() if line.startswith("account = "))
    path = with_setting(tmp_path, account, 'account = "1234"')

    with pytest.raises(SettingError, match=r"\[staging\] account must be 12 digits \(got '1234'\)"):
        load_environment("staging", path)


def test_an_empty_model_is_refused_because_it_would_run_the_strands_default(tmp_path):
    model = load_environment("staging").model_id
    path = with_setting(tmp_path, f'model_id = "{model}"', 'model_id = ""')

    with pytest.raises(SettingError, match=r"\[staging\] model_id must be .* never empty"):
        load_environment("staging", path)


def test_every_error_is_one_line(tmp_path):
    path = with_setting(tmp_path, "[staging]", "[staging\n")

    with pytest.raises(SettingError) as refused:
        load_environment("staging", path)

    assert "\n" not in str(refused.value)
    assert str(refused.value).startswith("environments.toml is not valid TOML")


def test_approvers_reach_the_runtime_as_its_approvers_setting(tmp_path):
    users = '["slack:T0123ABCD:U0123ABCD", "slack:T0123ABCD:U0456EFGH"]'
    path = with_setting(tmp_path, "[staging]\n", f"[staging]\napprovers = {users}\n")

    variables = runtime.environment_variables(load_environment("staging", path))

    assert variables["APPROVERS"] == "slack:T0123ABCD:U0123ABCD,slack:T0123ABCD:U0456EFGH"
    assert variables["ON_AGENTCORE"] == "true"
    # What the deployment writes is what the agent's own settings take.
    taken = runtime_settings(variables)
    assert taken.approvers == {"slack:T0123ABCD:U0123ABCD", "slack:T0123ABCD:U0456EFGH"}


def test_an_approver_not_named_as_welt_names_them_is_refused(tmp_path):
    path = with_setting(tmp_path, "[staging]\n", '[staging]\napprovers = ["U0123ABCD"]\n')

    with pytest.raises(SettingError, match=r"\[staging\] approvers must be a list of Slack users"):
        load_environment("staging", path)


def test_a_log_level_reaches_the_runtime_as_the_setting_it_reads(tmp_path):
    path = with_setting(tmp_path, "[staging]\n", '[staging]\nlog_level = "debug"\n')

    variables = runtime.environment_variables(load_environment("staging", path))

    assert variables["LOG_LEVEL"] == "DEBUG"
    assert runtime_settings(variables).log_level == "DEBUG"
    assert "LOG_LEVEL" not in runtime.environment_variables(load_environment("prod", path))


def test_a_log_level_the_runtime_would_refuse_is_refused_before_the_deploy(tmp_path):
    path = with_setting(tmp_path, "[staging]\n", '[staging]\nlog_level = "verbose"\n')

    with pytest.raises(SettingError, match=r"\[staging\] log_level must be one of DEBUG, INFO"):
        load_environment("staging", path)


def runtime_settings(variables: dict[str, str]):
    """The agent's own settings, read from what the deployment gives the runtime.

    With the scripted model and the folder store, which need no key and no
    bucket, and what the stack creates and names: the memory's id, when
    there is a memory, and the secret that seals stored runs.
    """
    settings = importlib.import_module(f"{project.PACKAGE_NAME}.settings")
    offline = {
        **variables,
        "MODEL_PROVIDER": "rehearsal",
        "RUN_STORE": "session-storage",
        "MEMORY_ID": "offlineMemory-0123456789",
        "RUN_KEY_SECRET": "arn:aws:secretsmanager:us-east-1:000000000000:secret:RunKey-AbCdEf",
    }
    return settings.Settings.from_environment(offline)


def with_store(tmp_path: Path, monkeypatch, store: str, *lines: str) -> Path:
    """environments.toml as a project with that run store has it, lines added to [staging]."""
    monkeypatch.setattr(project, "RUN_STORE", store)
    text = re.sub(r"^state_bucket = .*\n", "", SETTINGS_FILE.read_text(), flags=re.M)
    if store == "s3":
        lines = ('state_bucket = "acme-agent-runs-staging"', *lines)
        text = text.replace("[prod]\n", '[prod]\nstate_bucket = "acme-agent-runs"\n', 1)
    edited = tmp_path / "environments.toml"
    edited.write_text(text.replace("[staging]\n", "\n".join(["[staging]", *lines, ""]), 1))
    return edited


BUDGETS = (
    "thread_budget_tokens = 200000",
    "thread_budget_usd = 2.5",
    'budget_exempt = ["slack:T0123ABCD:U0123ABCD", "slack:T0123ABCD:U0456EFGH"]',
)


@pytest.mark.parametrize("store", ["session-storage", "s3"])
def test_budgets_set_reach_the_runtime_as_the_settings_it_reads_and_none_else(
    tmp_path, monkeypatch, store
):
    daily = ("user_daily_budget_tokens = 1000000", "user_daily_budget_usd = 10")
    path = with_store(tmp_path, monkeypatch, store, *BUDGETS, *(daily if store == "s3" else ()))

    variables = runtime.environment_variables(load_environment("staging", path))

    budgets = {name: value for name, value in variables.items() if "BUDGET" in name}
    assert budgets == {
        "THREAD_BUDGET_TOKENS": "200000",
        "THREAD_BUDGET_USD": "2.5",
        "BUDGET_EXEMPT": "slack:T0123ABCD:U0123ABCD,slack:T0123ABCD:U0456EFGH",
        **(
            {"USER_DAILY_BUDGET_TOKENS": "1000000", "USER_DAILY_BUDGET_USD": "10"}
            if store == "s3"
            else {}
        ),
    }
    taken = runtime_settings(variables)
    assert (taken.thread_budget_tokens, taken.thread_budget_usd) == (200_000, 2.5)
    assert taken.budget_exempt == {"slack:T0123ABCD:U0123ABCD", "slack:T0123ABCD:U0456EFGH"}
    if store == "s3":
        assert (taken.user_daily_budget_tokens, taken.user_daily_budget_usd) == (1_000_000, 10)
    # Prod sets none, and gets none: each variable costs the platform's bytes.
    unset = runtime.environment_variables(load_environment("prod", path))
    assert [name for name in unset if "BUDGET" in name] == []


BAD_BUDGETS = {
    "tokens as a fraction": (
        "thread_budget_tokens = 1.5",
        "[staging] thread_budget_tokens must be a whole number of tokens above 0 "
        "(leave it out for none) (got 1.5)",
    ),
    "dollars as text": (
        'thread_budget_usd = "2.50"',
        "[staging] thread_budget_usd must be a number of US dollars above 0, such as 2.5 "
        "(leave it out for no budget) (got '2.50')",
    ),
    "a negative budget": (
        "thread_budget_tokens = -100",
        "[staging] thread_budget_tokens must be a whole number of tokens above 0",
    ),
    "a budget of nothing, which would set none": (
        "thread_budget_usd = 0",
        "[staging] thread_budget_usd must be a number of US dollars above 0",
    ),
    "an endless budget": (
        "thread_budget_usd = inf",
        "[staging] thread_budget_usd must be a number of US dollars above 0",
    ),
    "an exempt user not named as Welt names them": (
        'budget_exempt = ["U0123ABCD"]',
        "[staging] budget_exempt must be a list of Slack users as Welt names them, "
        """such as ["slack:T0123ABCD:U0123ABCD"] (got ['U0123ABCD'])""",
    ),
    "one exempt user rather than a list": (
        'budget_exempt = "slack:T0123ABCD:U0123ABCD"',
        "[staging] budget_exempt must be a list of Slack users",
    ),
}


@pytest.mark.parametrize("line, message", BAD_BUDGETS.values(), ids=BAD_BUDGETS.keys())
def test_a_bad_budget_is_refused_in_one_line_naming_it(tmp_path, monkeypatch, line, message):
    path = with_store(tmp_path, monkeypatch, "s3", line)

    with pytest.raises(SettingError) as refused:
        load_environment("staging", path)

    assert message in str(refused.value)
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize("key", ["user_daily_budget_tokens = 1000", "user_daily_budget_usd = 10"])
def test_a_daily_budget_with_session_storage_is_refused_naming_why(tmp_path, monkeypatch, key):
    path = with_store(tmp_path, monkeypatch, "session-storage", key)

    with pytest.raises(SettingError) as refused:
        load_environment("staging", path)

    (line,) = str(refused.value).splitlines()
    assert line.startswith(f"environments.toml [staging] {key.split()[0]} needs run_store=s3: ")
    assert "the runtime would ignore it" in line


# docs/deploying.md: what a deployment's reader is shown must be what it does.
DEPLOYING = Path(__file__).resolve().parent.parent / "docs" / "deploying.md"


def set_variables() -> set[str]:
    """Every variable the stack may set on the runtime, read from deploy/'s code.

    runtime.py sets most, some only with an answer or a setting; the stack adds
    the ids of what it creates (runtime_stack.py). Read from the source, since
    the stack's module needs the CDK.
    """
    found: set[str] = set()
    for module in ("runtime.py", "runtime_stack.py"):
        tree = ast.parse((Path(runtime.__file__).parent / module).read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
                named = node.value.id if isinstance(node.value, ast.Name) else ""
                if named == "variables" and isinstance(node.slice, ast.Constant):
                    found.add(str(node.slice.value))
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict):
                targets = {target.id for target in node.targets if isinstance(target, ast.Name)}
                if targets & {"variables", "TELEMETRY"}:
                    found |= {str(k.value) for k in node.value.keys if isinstance(k, ast.Constant)}
    return found


def test_deploying_md_lists_every_variable_the_runtime_may_get():
    text = DEPLOYING.read_text().split("**Its variables**", 1)[1].split("\n\n")[1]
    listed = {
        name
        for row in text.splitlines()
        if row.startswith("| `")
        for name in re.findall(r"`([A-Z][A-Z0-9_]+)`", row.split("|")[1])
    }

    assert listed == set_variables()


def test_the_errors_deploying_md_shows_are_those_the_settings_raise(tmp_path):
    """The page's one-line errors, each made here from the mistake it shows."""
    blocks = [
        block
        for block in DEPLOYING.read_text().split("```text\n")[1:]
        if block.startswith("deploy: environments.toml")
    ]
    (block,) = blocks
    shown = block.split("\n```")[0].splitlines()

    text = SETTINGS_FILE.read_text()
    staging, prod = text.split("[prod]")
    account = next(line for line in staging.splitlines() if line.startswith("account = "))
    model = next(line for line in prod.splitlines() if line.startswith("model_id = "))
    mistakes = [
        ("staging", text.replace(account, 'account = "1234"', 1)),
        ("prod", staging + "[prod]" + prod.replace(f"{model}\n", "", 1)),
        ("staging", text.replace("[staging]\n", '[staging]\nbucket = "x"\n', 1)),
        ("dev", text),
    ]
    made = []
    for environment, edited in mistakes:
        path = tmp_path / str(len(made)) / "environments.toml"  # the name the errors give
        path.parent.mkdir()
        path.write_text(edited)
        with pytest.raises(SettingError) as refused:
            load_environment(environment, path)
        made.append(f"deploy: {refused.value}")

    # The page shows a rendering without run_store=s3, whose tables also take state_bucket.
    assert shown == [line.replace(", state_bucket", "") for line in made]


# User tokens (docs/deploying.md, "Acting as the person who asked"): GitHub declared in staging.
GITHUB = ('vendor = "github"', 'client_id = "Ov23liAbCdEfGhIjKlMn"')
SLACK_CLIENT_ID = 'slack_client_id = "1234567890123.1234567890123"'


def with_user_token(
    tmp_path: Path, table: tuple[str, ...] = GITHUB, *lines: str, name: str = "github"
) -> Path:
    """environments.toml with lines added to [staging], then a [staging.user_tokens.<name>]."""
    staging, prod = without_user_tokens(SETTINGS_FILE.read_text()).split("[prod]\n")
    edited = tmp_path / "environments.toml"
    edited.write_text(
        "\n".join(
            [staging.rstrip(), *lines, "", f"[staging.user_tokens.{name}]", *table, "", "[prod]"]
        )
        + "\n"
        + prod
    )
    return edited


def test_a_user_token_reaches_the_runtime_as_its_identity_providers_name(tmp_path):
    path = with_user_token(tmp_path, GITHUB, SLACK_CLIENT_ID)

    staging = load_environment("staging", path)
    variables = runtime.environment_variables(staging)

    (github,) = staging.user_tokens
    assert (github.name, github.vendor, github.client_id) == (
        "github", "github", "Ov23liAbCdEfGhIjKlMn",
    )  # fmt: skip
    assert staging.slack_client_id == "1234567890123.1234567890123"
    assert variables["USER_TOKEN_PROVIDERS"] == f"github={project.AGENT_NAME}-staging-github"
    # Prod declares none, and gets none.
    prod = runtime.environment_variables(load_environment("prod", path))
    assert "USER_TOKEN_PROVIDERS" not in prod


BAD_USER_TOKENS = {
    "a vendor Identity has no provider for": (
        ('vendor = "gitlab"', 'client_id = "abc"'), (SLACK_CLIENT_ID,), "github",
        "environments.toml [staging.user_tokens.github] vendor must be one of atlassian, "
        "github, google, linkedin, microsoft, salesforce, slack (got 'gitlab')",
    ),
    "no client id": (
        ('vendor = "github"',), (SLACK_CLIENT_ID,), "github",
        "environments.toml [staging.user_tokens.github] needs client_id",
    ),
    "the client secret itself, which never goes in a file": (
        (*GITHUB, 'client_secret = "never-here"'), (SLACK_CLIENT_ID,), "github",
        "environments.toml [staging.user_tokens.github] has unknown keys client_secret; it takes "
        "vendor, client_id",
    ),
    "a client id with a space": (
        ('vendor = "github"', 'client_id = "Ov23 li"'), (SLACK_CLIENT_ID,), "github",
        "environments.toml [staging.user_tokens.github] client_id must be the OAuth app's "
        "client id, in quotes, without spaces",
    ),
    "a name a tool cannot give": (
        GITHUB, (SLACK_CLIENT_ID,), "GitHub_Enterprise",
        "environments.toml [staging.user_tokens] names a provider 'GitHub_Enterprise': a name is "
        "a lowercase letter, then up to 31 lowercase letters, digits or hyphens",
    ),
    "no Slack app to sign people in with": (
        GITHUB, (), "github",
        "environments.toml [staging] needs slack_client_id with user_tokens: ",
    ),
    "a Slack client id that is not one": (
        GITHUB, ('slack_client_id = "A0123ABCD"',), "github",
        "environments.toml [staging] slack_client_id must be the Slack app's client id, digits, "
        "a dot and digits, in quotes (got 'A0123ABCD')",
    ),
}  # fmt: skip


@pytest.mark.parametrize(
    "table, lines, name, message", BAD_USER_TOKENS.values(), ids=BAD_USER_TOKENS.keys()
)
def test_a_bad_user_token_is_refused_in_one_line_naming_its_key(
    tmp_path, table, lines, name, message
):
    path = with_user_token(tmp_path, table, *lines, name=name)

    with pytest.raises(SettingError) as refused:
        load_environment("staging", path)

    assert str(refused.value).startswith(message)
    assert "\n" not in str(refused.value)


def test_a_slack_client_id_without_a_user_token_is_refused_as_unused(tmp_path):
    text = without_user_tokens(SETTINGS_FILE.read_text())
    path = tmp_path / "environments.toml"
    path.write_text(text.replace("[staging]\n", f"[staging]\n{SLACK_CLIENT_ID}\n", 1))

    with pytest.raises(SettingError) as refused:
        load_environment("staging", path)

    assert str(refused.value) == (
        "environments.toml [staging] slack_client_id is used only with user tokens: declare one "
        "([staging.user_tokens.<name>]) or leave slack_client_id out"
    )


def test_user_tokens_that_are_not_tables_are_refused_in_one_line(tmp_path):
    text = without_user_tokens(SETTINGS_FILE.read_text())
    path = tmp_path / "environments.toml"
    path.write_text(text.replace("[staging]\n", '[staging]\nuser_tokens = "github"\n', 1))

    with pytest.raises(SettingError) as refused:
        load_environment("staging", path)

    assert str(refused.value) == (
        "environments.toml [staging] user_tokens must be tables, one per provider, such as "
        "[staging.user_tokens.github] (got 'github')"
    )
