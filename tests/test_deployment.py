"""The deployment as code (deploy/): synthesized offline for every rendering, and linted.

Each rendering is synthesized once, for staging and prod, with the function
`make synth` calls, by the suite's own Python (which has the CDK), with no
AWS credentials and any outbound connection pointed at a closed port. The
tests read the CloudFormation templates it writes.
"""

import ast
import contextlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from cloudformation_api import DeployedStack
from conftest import TEMPLATE, UV, render

# The synth starts the CDK's Node.js process: CI runs these, a quick
# `-m "not slow"` leaves them out. The renderings are synthesized once, together.
pytestmark = pytest.mark.slow

ENVIRONMENTS = ("staging", "prod")
TOOLS = Path(sys.executable).parent

RENDERINGS = {
    "default": {},
    "s3": {"run_store": "s3", "state_bucket": "acme-agent-runs", "memory": "agentcore"},
    "container": {"deploy_build": "Container"},
    "anthropic": {"model_provider": "anthropic", "include_image_generation": False},
    "lean": {"include_sample_tools": False, "include_image_generation": False, "include_mcp": True},
    "openai-history-312": {
        "model_provider": "openai", "python_version": "3.12", "agent_manages_history": True,
    },  # fmt: skip
}

# What cfn-lint 1.58.0 reports on the templates that is not a fault of theirs.
ALLOWED_FINDINGS = {
    # cfn-lint's resource schema predates HooksConfiguration (mid-November
    # 2026), which CloudFormation accepts; nothing else may be unknown.
    ("E3002", ("Resources", "Runtime", "Properties", "HooksConfiguration")),
}
# The CDK's own LogRetention function names its role in DependsOn and in a
# GetAtt; the construct is the CDK's, and the duplicate is harmless.
ALLOWED_CDK_RULES = {("W3005", "LogRetentionaae0aa3c5b4d4f87b02d85b201efdd8a")}


def offline_env(**extra: str) -> dict[str, str]:
    """An environment with no AWS credentials or config, where a connection out would fail."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("AWS_", "VIRTUAL_ENV", "UV_PYTHON"))
    }
    env.update(
        AWS_EC2_METADATA_DISABLED="true",
        AWS_CONFIG_FILE=os.devnull,
        AWS_SHARED_CREDENTIALS_FILE=os.devnull,
        HTTP_PROXY="http://127.0.0.1:9",
        HTTPS_PROXY="http://127.0.0.1:9",
        JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION="20",
        PATH=os.pathsep.join([str(Path(UV).parent), str(TOOLS), env.get("PATH", "")]),
    )
    env.update(extra)
    return env


def deploy_command(root: Path, *arguments: str, **env: str) -> subprocess.CompletedProcess:
    """`python -m deploy ...` in a rendered project, as its Makefile runs it."""
    return subprocess.run(
        [sys.executable, "-m", "deploy", *arguments],
        cwd=root,
        env=offline_env(**env),
        capture_output=True,
        text=True,
        timeout=300,
    )


SYNTH_ALL = """
import os
import sys
from pathlib import Path
environments, roots = sys.argv[1].split(","), sys.argv[2:]
for root in roots:
    os.chdir(root)
    sys.path.insert(0, root)
    from deploy.app import synthesize
    from deploy.settings import load_environment
    for name in environments:
        synthesize(load_environment(name), Path(root).parent / "cdk.out" / name)
    sys.path.remove(root)
    for module in [name for name in sys.modules if name.split(".")[0] == "deploy"]:
        del sys.modules[module]
"""


# A model API key as a developer might have it in .env and in the shell that
# synthesizes: it must reach no template, no code zip and no asset.
KEY_IN_THE_SHELL = "sk-test-0123456789-in-the-shell-never-in-a-template"


def synth_all(roots: list[Path]) -> None:
    """Each rendering's templates, for each environment, in cdk.out/ beside its root.

    One process writes them all: each rendering's own deploy/ is imported for
    its synth and forgotten before the next one's, so one Python and one
    Node.js (the CDK's jsii) start, not one per rendering; the templates are
    byte for byte those of a process per rendering.
    """
    synthesized = subprocess.run(
        [sys.executable, "-c", SYNTH_ALL, ",".join(ENVIRONMENTS), *map(str, roots)],
        env=offline_env(ANTHROPIC_API_KEY=KEY_IN_THE_SHELL, OPENAI_API_KEY=KEY_IN_THE_SHELL),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert synthesized.returncode == 0, synthesized.stderr[-3000:]


def templates_in(outdir: Path) -> dict[str, dict[str, dict]]:
    """Each environment's templates in a cloud assembly folder, by stack name."""
    return {
        name: {
            path.name.removesuffix(".template.json"): json.loads(path.read_text())
            for path in (outdir / name).glob("*.template.json")
        }
        for name in ENVIRONMENTS
    }


# Budgets the s3 rendering's prod sets (its staging sets none), so every test
# of that rendering, the role's grants and cfn-lint's included, sees them.
PROD_BUDGETS = {
    "thread_budget_tokens": "200000",
    "thread_budget_usd": "2.5",
    "user_daily_budget_tokens": "1000000",
    "user_daily_budget_usd": "10",
    "budget_exempt": '["slack:T0123ABCD:U0123ABCD", "slack:T0123ABCD:U0456EFGH"]',
}


def with_prod_budgets(root: Path) -> None:
    settings = root / "deploy" / "environments.toml"
    lines = "".join(f"{key} = {value}\n" for key, value in PROD_BUDGETS.items())
    settings.write_text(settings.read_text().replace("[prod]\n", f"[prod]\n{lines}", 1))


@pytest.fixture(scope="module")
def synthesized(tmp_path_factory):
    """A factory: the named rendering's root and templates; every rendering is synthesized at once."""
    base = tmp_path_factory.mktemp("synthesized")
    roots = {name: render(base / name / "project", **RENDERINGS[name]) for name in RENDERINGS}
    with_prod_budgets(roots["s3"])
    for root in roots.values():  # a developer's keys, where .env.example says to put them
        for env_file in (root / ".env", root / "app" / ".env"):
            env_file.write_text(
                f"ANTHROPIC_API_KEY={KEY_IN_THE_SHELL}\nOPENAI_API_KEY={KEY_IN_THE_SHELL}\n"
            )
    synth_all(list(roots.values()))

    def of(rendering: str) -> tuple[Path, dict[str, dict[str, dict]]]:
        return roots[rendering], templates_in(roots[rendering].parent / "cdk.out")

    return of


def runtime_stack(templates: dict[str, dict], environment: str) -> dict:
    (name,) = [name for name in templates if not name.endswith("-ci-role")]
    assert name.endswith(f"-{environment}")
    return templates[name]


def resources(template: dict, kind: str) -> dict[str, dict]:
    return {
        name: resource
        for name, resource in template["Resources"].items()
        if resource["Type"] == kind
    }


def the_runtime(template: dict) -> dict:
    (runtime,) = resources(template, "AWS::BedrockAgentCore::Runtime").values()
    return runtime["Properties"]


def listed(value) -> list:
    return value if isinstance(value, list) else [value]


def text_of(value) -> str:
    """A template value with its intrinsic functions flattened: Fn::Join, Fn::Sub and Ref as text."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and "Fn::Join" in value:
        separator, parts = value["Fn::Join"]
        return separator.join(text_of(part) for part in parts)
    if isinstance(value, dict) and "Ref" in value:
        return "{" + value["Ref"] + "}"
    if isinstance(value, dict) and "Fn::GetAtt" in value:
        return "{" + ".".join(value["Fn::GetAtt"]) + "}"
    if isinstance(value, dict) and isinstance(value.get("Fn::Sub"), str):
        return re.sub(r"\$\{([^}]+)\}", r"{\1}", value["Fn::Sub"])
    return json.dumps(value)


def role_statements(template: dict, role_prefix: str) -> list[dict]:
    """The statements of the policies attached to the role whose logical id starts so."""
    statements = []
    for policy in resources(template, "AWS::IAM::Policy").values():
        roles = [text_of(role) for role in policy["Properties"]["Roles"]]
        if any(role.startswith("{" + role_prefix) for role in roles):
            statements += policy["Properties"]["PolicyDocument"]["Statement"]
    return statements


def granted(statements: list[dict]) -> set[str]:
    return {action for statement in statements for action in listed(statement["Action"])}


def permissions_of(root: Path) -> dict:
    """The rendered deploy/permissions.py's constants, read as data."""
    namespace: dict = {}
    exec((root / "deploy" / "permissions.py").read_text(), namespace)
    return namespace


# ---------------------------------------------------------------- lint


@pytest.fixture(scope="module")
def lint_findings(synthesized) -> dict[str, list[dict]]:
    """cfn-lint's findings on every rendering's templates, by template path: one run for all."""
    paths = sorted(
        str(path)
        for rendering in RENDERINGS
        for path in synthesized(rendering)[0].parent.glob("cdk.out/*/*.template.json")
    )
    linted = subprocess.run(
        [TOOLS / "cfn-lint", "--format", "json", *paths], capture_output=True, text=True
    )
    by_path: dict[str, list[dict]] = {path: [] for path in paths}
    for finding in json.loads(linted.stdout or "[]"):
        by_path[finding["Filename"]].append(finding)
    return by_path


@pytest.mark.parametrize("rendering", RENDERINGS)
def test_cfn_lint_finds_nothing_in_any_template_of_either_environment(
    synthesized, lint_findings, rendering
):
    root, _ = synthesized(rendering)
    paths = sorted(str(path) for path in root.parent.glob("cdk.out/*/*.template.json"))
    assert len(paths) == 2 * len(ENVIRONMENTS)

    findings = [finding for path in paths for finding in lint_findings[path]]
    unexpected = [
        finding
        for finding in findings
        if (finding["Rule"]["Id"], tuple(finding["Location"]["Path"])) not in ALLOWED_FINDINGS
        and not any(
            finding["Rule"]["Id"] == rule and finding["Location"]["Path"][1].startswith(resource)
            for rule, resource in ALLOWED_CDK_RULES
        )
    ]
    assert unexpected == [], json.dumps(unexpected, indent=1)[:3000]


# ---------------------------------------------------------------- the runtime


@pytest.mark.parametrize("environment", ENVIRONMENTS)
def test_a_codezip_runtime_is_declared_on_v2_with_the_warmup_hook_the_app_serves(
    synthesized, environment
):
    root, templates = synthesized("default")
    runtime = the_runtime(runtime_stack(templates[environment], environment))

    warmup = (root / "app" / "my_welt_agent" / "platform" / "warmup.py").read_text()
    (served,) = re.findall(r'^WARMUP_PATH = "(.+)"$', warmup, re.M)
    assert runtime["PlatformVersion"] == "V2"
    hook = runtime["HooksConfiguration"]["Build"]["Warmup"]["Action"]["HttpPost"]
    assert hook == {"Path": served, "Port": 8080}
    assert len(hook["Path"]) <= 32 and hook["Path"] not in ("/invocations", "/ping")


def test_a_container_runtime_stays_on_v1_and_has_no_hook(synthesized):
    _, templates = synthesized("container")
    runtime = the_runtime(runtime_stack(templates["prod"], "prod"))

    assert runtime["PlatformVersion"] == "V1"
    assert "HooksConfiguration" not in runtime
    assert "ContainerUri" in json.dumps(runtime["AgentRuntimeArtifact"])


def test_a_codezip_runtime_runs_main_under_opentelemetry_on_the_answered_python(synthesized):
    _, templates = synthesized("default")
    code = the_runtime(runtime_stack(templates["staging"], "staging"))["AgentRuntimeArtifact"]

    assert code["CodeConfiguration"]["EntryPoint"] == ["opentelemetry-instrument", "main.py"]
    assert code["CodeConfiguration"]["Runtime"] == "PYTHON_3_13"


@pytest.mark.parametrize("rendering", RENDERINGS)
def test_the_runtimes_variables_fit_its_platforms_budget_and_name_the_model(
    synthesized, rendering
):
    _, templates = synthesized(rendering)
    for environment in ENVIRONMENTS:
        runtime = the_runtime(runtime_stack(templates[environment], environment))
        variables = runtime["EnvironmentVariables"]

        size = sum(len(name) + len(value) for name, value in variables.items())
        budget = 1536 if runtime["PlatformVersion"] == "V2" else 4096
        assert size <= budget, (rendering, environment, size)
        assert variables["MODEL_ID"], "an empty MODEL_ID runs the Strands default model"
        assert variables["MODEL_PROVIDER"] != "rehearsal"


def test_session_storage_and_lifetime_are_declared_by_default(synthesized):
    _, templates = synthesized("default")
    runtime = the_runtime(runtime_stack(templates["prod"], "prod"))

    (storage,) = runtime["FilesystemConfigurations"]
    mount = storage["SessionStorage"]["MountPath"]
    assert re.fullmatch(r"/mnt/[a-zA-Z0-9._-]+", mount)
    assert runtime["EnvironmentVariables"]["SESSION_STORAGE_DIR"] == mount
    assert runtime["LifecycleConfiguration"] == {"IdleRuntimeSessionTimeout": 900, "MaxLifetime": 28800}


def test_agentcore_json_for_the_cli_agrees_with_the_deployment(synthesized):
    root, templates = synthesized("default")
    runtime = the_runtime(runtime_stack(templates["staging"], "staging"))

    (cli,) = json.loads((root / "agentcore" / "agentcore.json").read_text())["runtimes"]
    code = runtime["AgentRuntimeArtifact"]["CodeConfiguration"]
    assert cli["runtimeVersion"] == code["Runtime"]
    assert cli["entrypoint"] == code["EntryPoint"][-1]
    assert cli["build"] == "CodeZip" and cli["codeLocation"] == "app/"
    assert runtime["AgentRuntimeName"].startswith(cli["name"] + "_")
    assert cli["networkMode"] == runtime["NetworkConfiguration"]["NetworkMode"]
    # Only the deployment sets variables, storage and lifetime: nothing to drift.
    assert not {"envVars", "filesystemConfigurations", "lifecycleConfiguration"} & set(cli)


# ---------------------------------------------------------------- who may do what


def execution_role_trust(synthesized) -> dict:
    """The one statement of the default staging execution role's trust policy."""
    _, templates = synthesized("default")
    template = runtime_stack(templates["staging"], "staging")
    (role,) = [
        r for name, r in resources(template, "AWS::IAM::Role").items()
        if name.startswith("ExecutionRole")
    ]  # fmt: skip
    (trust,) = role["Properties"]["AssumeRolePolicyDocument"]["Statement"]
    return trust


def test_the_execution_role_is_assumable_only_by_agentcore_in_this_account(synthesized):
    trust = execution_role_trust(synthesized)
    assert trust["Principal"] == {"Service": "bedrock-agentcore.amazonaws.com"}
    assert trust["Condition"]["StringEquals"] == {"aws:SourceAccount": "000000000000"}
    assert text_of(trust["Condition"]["ArnLike"]["aws:SourceArn"]).endswith(
        ":bedrock-agentcore:us-east-1:000000000000:runtime/MyWeltAgent_staging-??????????"
    )


def arn_like(pattern: str, arn: str) -> bool:
    """IAM's ArnLike: `*` any run of characters, `?` any one character, the rest as it is."""
    as_regex = "".join(
        ".*" if part == "*" else "." if part == "?" else re.escape(part) for part in pattern
    )
    return re.fullmatch(as_regex, arn) is not None


def test_the_execution_role_trusts_this_environments_runtime_and_no_other(synthesized):
    trust = execution_role_trust(synthesized)
    pattern = text_of(trust["Condition"]["ArnLike"]["aws:SourceArn"]).replace(
        "{AWS::Partition}", "aws"
    )
    runtimes = "arn:aws:bedrock-agentcore:us-east-1:000000000000:runtime/"

    assert arn_like(pattern, runtimes + "MyWeltAgent_staging-a1B2c3D4e5")
    assert not arn_like(pattern, runtimes + "MyWeltAgent_staging2-a1B2c3D4e5")
    assert not arn_like(pattern, runtimes + "MyWeltAgent_staging_old-a1B2c3D4e5")
    assert not arn_like(pattern, runtimes + "MyWeltAgent_prod-a1B2c3D4e5")


@pytest.mark.parametrize("rendering", RENDERINGS)
def test_the_execution_role_grants_exactly_what_the_agent_and_its_platform_call(
    synthesized, rendering
):
    root, templates = synthesized(rendering)
    permissions = permissions_of(root)
    statements = role_statements(runtime_stack(templates["prod"], "prod"), "ExecutionRole")

    expected = {
        *permissions["LOG_GROUP_ACTIONS"],
        *permissions["LOG_STREAM_ACTIONS"],
        *permissions["LOG_LISTING_ACTIONS"],
        *permissions["TRACE_ACTIONS"],
        *permissions["METRIC_ACTIONS"],
        *permissions["RUN_KEY_ACTIONS"],
    }
    if RENDERINGS[rendering].get("model_provider", "bedrock") == "bedrock":
        expected |= set(permissions["MODEL_ACTIONS"])
    else:  # the key from AgentCore Identity, and Identity's read of its vault
        expected |= {*permissions["API_KEY_ACTIONS"], *permissions["API_KEY_VAULT_ACTIONS"]}
    if RENDERINGS[rendering].get("include_image_generation", True):
        expected |= set(permissions["IMAGE_MODEL_ACTIONS"])
    if RENDERINGS[rendering].get("run_store") == "s3":
        expected |= {*permissions["RUN_STORE_OBJECT_ACTIONS"], *permissions["RUN_STORE_BUCKET_ACTIONS"]}
    if RENDERINGS[rendering].get("memory") == "agentcore":
        expected |= set(permissions["MEMORY_ACTIONS"])
    if RENDERINGS[rendering].get("deploy_build") == "Container":  # pulling its image
        expected |= {
            "ecr:BatchCheckLayerAvailability", "ecr:GetDownloadUrlForLayer",
            "ecr:BatchGetImage", "ecr:GetAuthorizationToken",
        }  # fmt: skip
    assert granted(statements) == expected
    assert not any("*" in action for action in granted(statements))


def test_only_the_configured_model_may_be_invoked(synthesized):
    _, templates = synthesized("default")
    statements = role_statements(runtime_stack(templates["prod"], "prod"), "ExecutionRole")

    (model,) = [s for s in statements if s.get("Sid") == "InvokeTheModel"]
    arns = sorted(text_of(arn) for arn in listed(model["Resource"]))
    assert arns == [
        "arn:{AWS::Partition}:bedrock:*::foundation-model/anthropic.claude-sonnet-4-20250514-v1:0",
        "arn:{AWS::Partition}:bedrock:us-east-1:000000000000:inference-profile/"
        "us.anthropic.claude-sonnet-4-20250514-v1:0",
    ]


@pytest.mark.parametrize("rendering", ["default", "anthropic"])
def test_the_image_models_generate_image_calls_are_granted_in_its_region_alone(
    synthesized, rendering
):
    root, templates = synthesized(rendering)
    permissions = permissions_of(root)
    statements = role_statements(runtime_stack(templates["prod"], "prod"), "ExecutionRole")

    granted_images = [s for s in statements if s.get("Sid") == "GenerateImages"]
    if not RENDERINGS[rendering].get("include_image_generation", True):
        assert granted_images == []
        return
    (images,) = granted_images
    assert listed(images["Action"]) == list(permissions["IMAGE_MODEL_ACTIONS"])
    assert sorted(text_of(arn) for arn in listed(images["Resource"])) == sorted(
        f"arn:{{AWS::Partition}}:bedrock:us-west-2::foundation-model/{model}"
        for model in permissions["IMAGE_MODELS"]
    )


def test_the_key_that_seals_stored_runs_is_a_secret_only_the_runtime_may_read(synthesized):
    root, templates = synthesized("default")
    permissions = permissions_of(root)
    template = runtime_stack(templates["prod"], "prod")

    ((secret_id, secret),) = resources(template, "AWS::SecretsManager::Secret").items()
    assert secret["Properties"]["GenerateSecretString"]["PasswordLength"] >= 32
    (read,) = [
        s for s in role_statements(template, "ExecutionRole")
        if set(listed(s["Action"])) & set(permissions["RUN_KEY_ACTIONS"])
    ]  # fmt: skip
    assert listed(read["Action"]) == list(permissions["RUN_KEY_ACTIONS"])
    assert [text_of(r) for r in listed(read["Resource"])] == ["{" + secret_id + "}"]
    ((_, policy),) = resources(template, "AWS::SecretsManager::ResourcePolicy").items()
    assert text_of(policy["Properties"]["SecretId"]) == "{" + secret_id + "}"
    (deny,) = policy["Properties"]["ResourcePolicy"]["Statement"]
    assert (deny["Effect"], deny["Principal"]) == ("Deny", {"AWS": "*"})
    assert listed(deny["Action"]) == list(permissions["RUN_KEY_ACTIONS"])
    (role_id,) = [n for n in resources(template, "AWS::IAM::Role") if n.startswith("ExecutionRole")]
    assert text_of(deny["Condition"]["StringNotEquals"]["aws:PrincipalArn"]) == (
        "{" + role_id + ".Arn}"
    )
    variables = the_runtime(template)["EnvironmentVariables"]
    assert text_of(variables["RUN_KEY_SECRET"]) == "{" + secret_id + "}"


def test_logs_may_be_written_only_to_this_runtimes_groups(synthesized):
    _, templates = synthesized("default")
    statements = role_statements(runtime_stack(templates["staging"], "staging"), "ExecutionRole")

    for statement in statements:
        if any(action in ("logs:CreateLogStream", "logs:PutLogEvents") for action in listed(statement["Action"])):
            (resource,) = [text_of(r) for r in listed(statement["Resource"])]
            assert ":log-group:/aws/bedrock-agentcore/runtimes/MyWeltAgent_staging-*:log-stream:*" in resource


def test_with_s3_the_store_may_touch_only_its_prefix_in_its_bucket(synthesized):
    _, templates = synthesized("s3")
    template = runtime_stack(templates["prod"], "prod")

    (bucket_name,) = resources(template, "AWS::S3::Bucket")
    for statement in role_statements(template, "ExecutionRole"):
        actions = listed(statement["Action"])
        if not any(action.startswith("s3:") for action in actions):
            continue
        (resource,) = [text_of(r) for r in listed(statement["Resource"])]
        if actions == ["s3:ListBucket"]:
            assert resource == "{" + bucket_name + ".Arn}"
        else:
            assert resource == "{" + bucket_name + ".Arn}/my-welt-agent/*"


def test_with_s3_the_bucket_is_encrypted_private_and_expires_what_nobody_can_answer(synthesized):
    _, templates = synthesized("s3")
    template = runtime_stack(templates["prod"], "prod")

    ((name, bucket),) = resources(template, "AWS::S3::Bucket").items()
    properties = bucket["Properties"]
    assert properties["BucketName"] == "acme-agent-runs"
    assert properties["BucketEncryption"]["ServerSideEncryptionConfiguration"]
    assert properties["PublicAccessBlockConfiguration"] == {
        "BlockPublicAcls": True, "BlockPublicPolicy": True,
        "IgnorePublicAcls": True, "RestrictPublicBuckets": True,
    }  # fmt: skip
    (rule,) = properties["LifecycleConfiguration"]["Rules"]
    assert rule["Status"] == "Enabled" and rule["Prefix"] == "my-welt-agent/"
    assert rule["ExpirationInDays"] == 7 + 1  # ANSWER_WITHIN_DAYS + 1
    runtime = the_runtime(template)
    assert runtime["EnvironmentVariables"]["ANSWER_WITHIN_DAYS"] == "7"
    assert text_of(runtime["EnvironmentVariables"]["STATE_BUCKET"]) == "acme-agent-runs"
    assert "FilesystemConfigurations" not in runtime
    assert bucket["DeletionPolicy"] == "Retain"  # runs still waiting outlive the stack
    (policy,) = resources(template, "AWS::S3::BucketPolicy").values()
    assert "aws:SecureTransport" in json.dumps(policy)


def test_budgets_an_environment_sets_reach_its_runtime_and_no_other_environments(synthesized):
    _, templates = synthesized("s3")
    prod = the_runtime(runtime_stack(templates["prod"], "prod"))["EnvironmentVariables"]
    staging = the_runtime(runtime_stack(templates["staging"], "staging"))["EnvironmentVariables"]

    assert {name: value for name, value in prod.items() if "BUDGET" in name} == {
        "THREAD_BUDGET_TOKENS": "200000",
        "THREAD_BUDGET_USD": "2.5",
        "USER_DAILY_BUDGET_TOKENS": "1000000",
        "USER_DAILY_BUDGET_USD": "10",
        "BUDGET_EXEMPT": "slack:T0123ABCD:U0123ABCD,slack:T0123ABCD:U0456EFGH",
    }
    assert [name for name in staging if "BUDGET" in name] == []
    # The person's totals are the run store's objects under its prefix
    # (usage/people/...): the grants that prefix has are theirs, and no more
    # (test_the_execution_role_grants_exactly_... and the generated
    # project's recorded S3 calls, made with a daily budget set).
    assert text_of(prod["STATE_PREFIX"]) == "my-welt-agent/"


def test_with_memory_the_stack_creates_it_and_the_runtime_is_told_its_id(synthesized):
    root, templates = synthesized("s3")
    template = runtime_stack(templates["prod"], "prod")

    ((name, memory),) = resources(template, "AWS::BedrockAgentCore::Memory").items()
    assert memory["Properties"]["Name"] == "MyWeltAgent_prod"
    variables = the_runtime(template)["EnvironmentVariables"]
    assert variables["MEMORY_ID"] == {"Fn::GetAtt": [name, "MemoryId"]}
    assert template["Outputs"]["MemoryId"]["Value"] == {"Fn::GetAtt": [name, "MemoryId"]}


def test_with_memory_its_strategies_extract_where_the_agent_reads(synthesized):
    root, templates = synthesized("s3")
    (memory,) = resources(runtime_stack(templates["prod"], "prod"), "AWS::BedrockAgentCore::Memory").values()

    namespaces = [
        namespace
        for strategy in memory["Properties"]["MemoryStrategies"]
        for kind in strategy.values()
        for namespace in kind["Namespaces"]
    ]
    kinds = [next(iter(strategy)) for strategy in memory["Properties"]["MemoryStrategies"]]
    assert kinds == ["UserPreferenceMemoryStrategy", "SemanticMemoryStrategy"]
    # The agent's own constant: what it reads is what the strategies write.
    source = ast.parse((root / "app" / "my_welt_agent" / "memory" / "per_user.py").read_text())
    (agent_reads,) = [
        ast.literal_eval(node.value)
        for node in source.body
        if isinstance(node, ast.Assign) and [t.id for t in node.targets if isinstance(t, ast.Name)] == ["NAMESPACES"]
    ]
    assert namespaces == list(agent_reads)
    assert all("{actorId}" in namespace for namespace in namespaces)


def test_with_memory_the_role_may_remember_and_recall_on_that_memory_alone(synthesized):
    root, templates = synthesized("s3")
    template = runtime_stack(templates["prod"], "prod")
    (memory_name,) = resources(template, "AWS::BedrockAgentCore::Memory")

    granted_on = [
        statement
        for statement in role_statements(template, "ExecutionRole")
        if any(action in permissions_of(root)["MEMORY_ACTIONS"] for action in listed(statement["Action"]))
    ]
    (statement,) = granted_on
    assert sorted(listed(statement["Action"])) == sorted(permissions_of(root)["MEMORY_ACTIONS"])
    assert listed(statement["Resource"]) == [{"Fn::GetAtt": [memory_name, "MemoryArn"]}]
    assert "Condition" not in statement


def test_without_memory_the_stack_has_none(synthesized):
    _, templates = synthesized("default")
    template = runtime_stack(templates["prod"], "prod")

    assert resources(template, "AWS::BedrockAgentCore::Memory") == {}
    assert "MEMORY_ID" not in the_runtime(template)["EnvironmentVariables"]


def test_staging_gets_its_own_bucket(synthesized):
    _, templates = synthesized("s3")

    names = {
        environment: next(iter(resources(runtime_stack(templates[environment], environment), "AWS::S3::Bucket").values()))["Properties"]["BucketName"]
        for environment in ENVIRONMENTS
    }  # fmt: skip
    assert names == {"staging": "acme-agent-runs-staging", "prod": "acme-agent-runs"}


@pytest.mark.parametrize("environment", ENVIRONMENTS)
def test_welts_policy_grants_the_two_invoke_actions_on_this_runtime_and_nothing_else(
    synthesized, environment
):
    _, templates = synthesized("default")
    template = runtime_stack(templates[environment], environment)

    (policy,) = resources(template, "AWS::IAM::ManagedPolicy").values()
    (statement,) = policy["Properties"]["PolicyDocument"]["Statement"]
    assert statement["Effect"] == "Allow"
    assert sorted(listed(statement["Action"])) == [
        "bedrock-agentcore:InvokeAgentRuntime",
        "bedrock-agentcore:InvokeAgentRuntimeForUser",
    ]
    assert sorted(text_of(r) for r in listed(statement["Resource"])) == [
        "{Runtime.AgentRuntimeArn}",
        "{Runtime.AgentRuntimeArn}/runtime-endpoint/*",
    ]
    assert "Roles" not in policy["Properties"] and "Users" not in policy["Properties"]


def test_the_outputs_give_welts_agent_arn_its_policy_and_the_log_group(synthesized):
    _, templates = synthesized("default")
    outputs = runtime_stack(templates["prod"], "prod")["Outputs"]

    assert text_of(outputs["AgentArn"]["Value"]) == "{Runtime.AgentRuntimeArn}"
    assert outputs["WeltPolicyArn"]["Value"]["Ref"].startswith("WeltInvokePolicy")
    assert text_of(outputs["LogGroup"]["Value"]) == (
        "/aws/bedrock-agentcore/runtimes/{Runtime.AgentRuntimeId}-live"
    )
    assert outputs["LiveEndpoint"]["Value"] == "live"
    assert text_of(outputs["LiveVersion"]["Value"]) == "{Runtime.AgentRuntimeVersion}"
    assert text_of(outputs["RuntimeVersion"]["Value"]) == "{Runtime.AgentRuntimeVersion}"


def test_the_log_retention_is_the_environments(synthesized):
    _, templates = synthesized("default")

    for environment, days in (("staging", 30), ("prod", 365)):
        template = runtime_stack(templates[environment], environment)
        retentions = resources(template, "Custom::LogRetention").values()
        assert {r["Properties"]["RetentionInDays"] for r in retentions} == {days}
        assert sorted(text_of(r["Properties"]["LogGroupName"]) for r in retentions) == [
            "/aws/bedrock-agentcore/runtimes/{Runtime.AgentRuntimeId}-DEFAULT",
            "/aws/bedrock-agentcore/runtimes/{Runtime.AgentRuntimeId}-live",
        ]


def test_the_ci_role_trusts_only_this_repositorys_jobs_in_that_environment(synthesized):
    _, templates = synthesized("default")

    for environment in ENVIRONMENTS:
        template = templates[environment][f"MyWeltAgent-{environment}-ci-role"]
        (role,) = resources(template, "AWS::IAM::Role").values()
        (trust,) = role["Properties"]["AssumeRolePolicyDocument"]["Statement"]
        assert trust["Action"] == "sts:AssumeRoleWithWebIdentity"
        assert trust["Condition"]["StringEquals"] == {
            "token.actions.githubusercontent.com:aud": "sts.amazonaws.com",
            "token.actions.githubusercontent.com:sub": (
                f"repo:your-org/my-welt-agent:environment:{environment}"
            ),
        }
        (statement,) = role_statements(template, "DeployRole")
        assert statement["Action"] == "sts:AssumeRole"
        assert text_of(statement["Resource"]).endswith(
            ":iam::000000000000:role/cdk-hnb659fds-*-role-000000000000-us-east-1"
        )


# ---------------------------------------------------------------- bad settings

BAD_SETTINGS = {
    "an account that is not 12 digits": (
        ('account = "000000000000"', 'account = "12345"'),
        "[staging] account must be 12 digits (got '12345')",
    ),
    "a made-up region": (
        ('region = "us-east-1"', 'region = "mars"'),
        "[staging] region must be an AWS Region such as us-east-1 (got 'mars')",
    ),
    "an empty model": (
        ('model_id = "us.anthropic.claude-sonnet-4-20250514-v1:0"', 'model_id = ""'),
        "[staging] model_id must be a model id or inference profile, never empty",
    ),
    "a misspelt key": (
        ("log_retention_days = 30", "log_retention = 30"),
        "[staging] has unknown keys log_retention",
    ),
    "a retention CloudWatch does not offer": (
        ("log_retention_days = 30", "log_retention_days = 31"),
        "[staging] log_retention_days must be one of CloudWatch's periods",
    ),
    "a daily budget with session storage, which the runtime would ignore": (
        ("log_retention_days = 30", "log_retention_days = 30\nuser_daily_budget_usd = 10"),
        "[staging] user_daily_budget_usd needs run_store=s3: a person's day is counted across "
        "their threads in the bucket every instance shares",
    ),
    "a budget of no dollars": (
        ("log_retention_days = 30", "log_retention_days = 30\nthread_budget_usd = -1"),
        "[staging] thread_budget_usd must be a number of US dollars above 0",
    ),
    "a number given as text": (
        ("log_retention_days = 30", 'log_retention_days = "30"'),
        "[staging] log_retention_days must be a whole number (got '30')",
    ),
}


@pytest.fixture(scope="module")
def fresh(tmp_path_factory) -> Path:
    return render(tmp_path_factory.mktemp("fresh") / "project")


@contextlib.contextmanager
def edited(path: Path, old: str, new: str):
    """The file with every `old` replaced by `new`, put back afterwards."""
    original = path.read_text()
    assert old in original
    path.write_text(original.replace(old, new))
    try:
        yield path
    finally:
        path.write_text(original)


@pytest.mark.parametrize("edit, message", BAD_SETTINGS.values(), ids=BAD_SETTINGS.keys())
def test_a_bad_setting_stops_the_synth_in_one_line_naming_it_and_leaves_nothing(
    fresh, tmp_path, edit, message
):
    with edited(fresh / "deploy" / "environments.toml", *edit):
        synthesized = deploy_command(fresh, "synth", "staging", "--outdir", str(tmp_path / "out"))

    assert synthesized.returncode == 2
    (line,) = synthesized.stderr.strip().splitlines()
    assert line.startswith("deploy: environments.toml")
    assert message in line
    assert not (tmp_path / "out").exists()
    assert list(tmp_path.iterdir()) == []


def test_an_unknown_environment_is_refused_in_one_line(fresh):
    refused = deploy_command(fresh, "synth", "production")

    assert refused.returncode == 2
    (line,) = refused.stderr.strip().splitlines()
    assert "ENV must be one of staging, prod (got 'production')" in line


def test_a_model_id_too_long_for_v2s_variables_stops_the_synth_in_one_line(fresh, tmp_path):
    with edited(fresh / "deploy" / "environments.toml", "us.anthropic", "us." + "a" * 1500 + ".anthropic"):
        refused = deploy_command(fresh, "synth", "staging", "--outdir", str(tmp_path / "out"))

    assert refused.returncode == 2, refused.stderr[-2000:]
    (line,) = refused.stderr.strip().splitlines()
    assert "over platform V2's 1536" in line
    assert not (tmp_path / "out").exists()


def test_make_deploy_runs_the_checked_deploy_command(fresh):
    dry_run = subprocess.run(["make", "-n", "deploy", "ENV=prod"], cwd=fresh, capture_output=True, text=True)

    assert dry_run.returncode == 0, dry_run.stderr
    assert dry_run.stdout.strip() == "uv run --group deploy python -m deploy deploy prod"


# Every task of the Makefile that acts on one environment.
NEEDS_ENV = ["synth", "deploy", "rollback", "api-key", "bootstrap", "ci-role", "outputs", "logs"]


@pytest.mark.parametrize("task", NEEDS_ENV)
def test_a_deploy_task_without_env_says_so_in_one_line_before_uv_runs(fresh, tmp_path, task):
    """Not argparse's usage: the line says how to name the environment, and nothing runs."""
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "uv").write_text("#!/bin/sh\necho uv ran >&2\nexit 97\n")  # a uv that only says it ran
    (tools / "uv").chmod(0o755)
    env = offline_env(PATH=os.pathsep.join([str(tools), os.environ["PATH"]]))

    refused = subprocess.run(["make", task], cwd=fresh, env=env, capture_output=True, text=True)

    assert refused.returncode == 2, refused.stderr
    assert refused.stdout == ""
    (line,) = refused.stderr.strip().splitlines()
    assert f"ENV is required: make {task} ENV=staging (or ENV=prod)" in line, line


@pytest.mark.parametrize(
    "command", ["deploy", "rollback", "ci-role", "bootstrap", "outputs", "logs"]
)
def test_a_command_on_the_placeholder_account_is_refused_in_one_line(fresh, command):
    refused = deploy_command(fresh, command, "prod")

    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines() == [
        "deploy: deploy/environments.toml [prod] account is the placeholder 000000000000: "
        "set your 12-digit AWS account before deploying"
    ]


@pytest.fixture
def real_account(fresh):
    """The fresh project with a real-looking account and app/ pinned, restored afterwards."""
    with (
        edited(fresh / "deploy" / "environments.toml", "000000000000", "111122223333"),
        edited(fresh / "app" / "pyproject.toml", "dependencies = []", 'dependencies = ["boto3==1.44.0"]'),
    ):
        yield fresh


def test_a_deploy_without_credentials_says_so_in_one_line(real_account):
    refused = deploy_command(real_account, "deploy", "staging")

    assert refused.returncode == 2
    (line,) = refused.stderr.strip().splitlines()
    assert line.startswith("deploy: no AWS credentials: sign in to account 111122223333")


def test_a_deploy_of_a_project_never_pinned_says_to_run_make_install(fresh):
    with edited(fresh / "deploy" / "environments.toml", "000000000000", "111122223333"):
        refused = deploy_command(fresh, "deploy", "staging")

    assert refused.returncode == 2
    (line,) = refused.stderr.strip().splitlines()
    assert "app/pyproject.toml pins nothing yet: run make install" in line


@pytest.fixture(scope="module")
def sts_server(aws_server):
    """STS on this machine, which answers for account 123456789012."""
    return aws_server


def check_with_sts(root: Path, sts: str, environment: str) -> subprocess.CompletedProcess:
    """`python -m deploy check ENV` with credentials that the STS on this machine accepts."""
    return deploy_command(
        root,
        "check",
        environment,
        AWS_ACCESS_KEY_ID="offline-test",
        AWS_SECRET_ACCESS_KEY="offline-test",
        AWS_ENDPOINT_URL_STS=sts,
        NO_PROXY="127.0.0.1",
    )


def test_credentials_for_another_account_are_refused_in_one_line(real_account, sts_server):
    refused = check_with_sts(real_account, sts_server, "prod")

    assert refused.returncode == 2, refused.stderr
    (line,) = refused.stderr.strip().splitlines()
    assert line == (
        "deploy: the AWS credentials are for account 123456789012, but "
        "deploy/environments.toml [prod] deploys to 111122223333"
    )


def test_credentials_for_the_right_account_pass_the_check(real_account, sts_server):
    settings = real_account / "deploy" / "environments.toml"
    settings.write_text(settings.read_text().replace("111122223333", "123456789012"))

    checked = check_with_sts(real_account, sts_server, "prod")

    assert checked.returncode == 0, checked.stderr
    assert "prod: deploying as arn:aws:sts::123456789012:" in checked.stdout


def test_the_template_offers_the_deploy_tasks_and_no_platform_patch():
    makefile = (TEMPLATE / "template" / "Makefile").read_text()

    for task in NEEDS_ENV:
        assert re.search(rf"^{task}:  ## ", makefile, re.M), task
    assert not re.search(r"^platform", makefile, re.M)
    assert not (TEMPLATE / "template" / "scripts" / "platform.py").exists()


def test_the_runtime_runs_on_the_python_the_project_answered(synthesized):
    _, templates = synthesized("openai-history-312")
    code = the_runtime(runtime_stack(templates["prod"], "prod"))["AgentRuntimeArtifact"]

    assert code["CodeConfiguration"]["Runtime"] == "PYTHON_3_12"


# ---------------------------------------------------------------- the model's API key

KEYED = ["anthropic", "openai-history-312"]


def the_provider(template: dict) -> tuple[str, dict]:
    ((name, provider),) = resources(template, "AWS::BedrockAgentCore::ApiKeyCredentialProvider").items()
    return name, provider["Properties"]


@pytest.mark.parametrize("rendering", KEYED)
@pytest.mark.parametrize("environment", ENVIRONMENTS)
def test_the_key_is_an_identity_provider_made_from_the_secret_make_api_key_fills(
    synthesized, rendering, environment
):
    _, templates = synthesized(rendering)
    template = runtime_stack(templates[environment], environment)

    _, provider = the_provider(template)
    assert provider["Name"] == f"MyWeltAgent-{environment}-model-key"
    # A dynamic reference CloudFormation resolves while it deploys: the key
    # itself never stands in the template.
    assert provider["ApiKey"] == (
        f"{{{{resolve:secretsmanager:MyWeltAgent-{environment}/model-api-key:SecretString:::}}}}"
    )
    variables = the_runtime(template)["EnvironmentVariables"]
    assert variables["MODEL_API_KEY_PROVIDER"] == provider["Name"]
    assert not {"ANTHROPIC_API_KEY", "OPENAI_API_KEY"} & set(variables)


@pytest.mark.parametrize("rendering", KEYED)
def test_the_role_may_fetch_this_providers_key_and_identity_read_its_secret_alone(
    synthesized, rendering
):
    root, templates = synthesized(rendering)
    permissions = permissions_of(root)
    template = runtime_stack(templates["prod"], "prod")
    provider_id, _ = the_provider(template)
    statements = role_statements(template, "ExecutionRole")

    (fetch,) = [s for s in statements if set(listed(s["Action"])) & set(permissions["API_KEY_ACTIONS"])]
    assert listed(fetch["Action"]) == list(permissions["API_KEY_ACTIONS"])
    arns = "arn:{AWS::Partition}:bedrock-agentcore:us-east-1:000000000000:"
    assert sorted(text_of(r) for r in listed(fetch["Resource"])) == sorted([
        "{" + provider_id + ".CredentialProviderArn}",
        arns + "token-vault/default",
        arns + "workload-identity-directory/default",
        arns + "workload-identity-directory/default/workload-identity/MyWeltAgent_prod-*",
    ])  # fmt: skip
    (vault,) = [s for s in statements if s.get("Sid") == "IdentityReadsTheKeyFromItsVault"]
    assert listed(vault["Action"]) == list(permissions["API_KEY_VAULT_ACTIONS"])
    assert [text_of(r) for r in listed(vault["Resource"])] == [
        "arn:{AWS::Partition}:secretsmanager:us-east-1:000000000000:secret:"
        "bedrock-agentcore-identity!default/apikey/MyWeltAgent-prod-model-key-??????"
    ]
    assert "Condition" not in fetch and "Condition" not in vault


@pytest.mark.parametrize("rendering", KEYED)
def test_the_secret_make_api_key_fills_may_be_read_by_the_deploys_cloudformation_alone(
    synthesized, rendering
):
    root, templates = synthesized(rendering)
    permissions = permissions_of(root)
    template = runtime_stack(templates["prod"], "prod")

    (policy,) = [
        p["Properties"] for p in resources(template, "AWS::SecretsManager::ResourcePolicy").values()
        if p["Properties"]["SecretId"] == "MyWeltAgent-prod/model-api-key"
    ]  # fmt: skip
    assert policy["BlockPublicPolicy"] is True
    (deny,) = policy["ResourcePolicy"]["Statement"]
    assert (deny["Effect"], deny["Principal"], deny["Resource"]) == ("Deny", {"AWS": "*"}, "*")
    assert listed(deny["Action"]) == list(permissions["MODEL_KEY_READ_ACTIONS"])
    # The role CloudFormation deploys with, which resolves the provider's
    # dynamic reference: cdk bootstrap's, in this account and Region.
    assert text_of(deny["Condition"]["StringNotEquals"]["aws:PrincipalArn"]) == (
        "arn:{AWS::Partition}:iam::000000000000:role/cdk-hnb659fds-cfn-exec-role-000000000000-us-east-1"
    )


def test_bedrock_has_no_key_to_fetch(synthesized):
    _, templates = synthesized("default")
    template = runtime_stack(templates["prod"], "prod")

    assert resources(template, "AWS::BedrockAgentCore::ApiKeyCredentialProvider") == {}
    assert "MODEL_API_KEY_PROVIDER" not in the_runtime(template)["EnvironmentVariables"]


@pytest.mark.parametrize("rendering", RENDERINGS)
def test_no_key_material_is_in_any_template_asset_or_code_zip(synthesized, rendering):
    """A key in .env, in app/.env and in the shell that synthesized is nowhere in what ships."""
    root, _ = synthesized(rendering)
    assert KEY_IN_THE_SHELL in (root / "app" / ".env").read_text()  # it was there to leak

    shipped = [
        path
        for folder in (root.parent / "cdk.out", root / "cdk.out")
        for path in folder.rglob("*")
        if path.is_file()
    ]
    assert any(path.name.endswith(".template.json") for path in shipped)
    assert any(path.name == "main.py" for path in shipped) or RENDERINGS[rendering].get(
        "deploy_build"
    ) == "Container"  # a CodeZip's folder holds the code
    leaked = [path for path in shipped if KEY_IN_THE_SHELL.encode() in path.read_bytes()]
    assert leaked == []


@pytest.mark.parametrize("rendering", KEYED)
def test_the_ci_role_may_read_which_version_of_the_key_is_current_and_nothing_else(
    synthesized, rendering
):
    root, templates = synthesized(rendering)
    template = templates["prod"]["MyWeltAgent-prod-ci-role"]

    version = [s for s in role_statements(template, "DeployRole") if s.get("Sid", "").startswith("ReadWhich")]
    (statement,) = version
    assert listed(statement["Action"]) == list(permissions_of(root)["MODEL_KEY_VERSION_ACTIONS"])
    assert text_of(statement["Resource"]).endswith(
        ":secretsmanager:us-east-1:000000000000:secret:MyWeltAgent-prod/model-api-key-??????"
    )


# ---------------------------------------------------------------- versions and rollback


@pytest.mark.parametrize("rendering", ["default", "anthropic"])
def test_the_live_endpoint_serves_the_version_each_deploy_makes(synthesized, rendering):
    _, templates = synthesized(rendering)
    template = runtime_stack(templates["prod"], "prod")

    ((_, endpoint),) = resources(template, "AWS::BedrockAgentCore::RuntimeEndpoint").items()
    properties = endpoint["Properties"]
    assert properties["Name"] == "live"
    assert text_of(properties["AgentRuntimeId"]) == "{Runtime.AgentRuntimeId}"
    assert text_of(properties["AgentRuntimeVersion"]) == "{Runtime.AgentRuntimeVersion}"
    # Welt may invoke it: its policy covers the runtime's endpoints.
    (policy,) = resources(template, "AWS::IAM::ManagedPolicy").values()
    (statement,) = policy["Properties"]["PolicyDocument"]["Statement"]
    assert "{Runtime.AgentRuntimeArn}/runtime-endpoint/*" in [text_of(r) for r in listed(statement["Resource"])]


@pytest.fixture(scope="module")
def cloudformation():
    """The CloudFormation reads of the deploy commands, answered on this machine."""
    from cloudformation_api import start_cloudformation_api

    api, server = start_cloudformation_api()
    yield api
    server.shutdown()


@pytest.fixture
def deployed_anthropic(synthesized, cloudformation):
    """The anthropic rendering, on STS's account, deployed as `make deploy` would leave it.

    The deployed template is the synthesized one as a deploy pins it: the
    account, and the key's secret at version v1. LiveVersion is what the
    stack reports once its runtime is at version 4.
    """
    root, templates = synthesized("anthropic")
    deployed = json.loads(
        json.dumps(runtime_stack(templates["prod"], "prod"))
        .replace("000000000000", "123456789012")
        .replace("model-api-key:SecretString:::}}", "model-api-key:SecretString:::v1}}")
    )
    stack = cloudformation.stacks["MyWeltAgent-prod"] = DeployedStack(
        outputs={"LiveEndpoint": "live", "LiveVersion": "4", "RuntimeVersion": "4"},
        template=deployed,
    )
    with edited(root / "deploy" / "environments.toml", "000000000000", "123456789012"):
        yield root, stack
    del cloudformation.stacks["MyWeltAgent-prod"]


def rollback(root: Path, sts: str, cloudformation, *arguments: str) -> subprocess.CompletedProcess:
    return deploy_command(
        root, "rollback", "prod", *arguments,
        AWS_ACCESS_KEY_ID="offline-test", AWS_SECRET_ACCESS_KEY="offline-test",
        AWS_ENDPOINT_URL_STS=sts, AWS_ENDPOINT_URL_CLOUDFORMATION=cloudformation.url,
        NO_PROXY="127.0.0.1",
    )  # fmt: skip


def test_make_rollback_synthesizes_the_previous_version_on_the_endpoint_and_nothing_else(
    deployed_anthropic, sts_server, cloudformation, tmp_path
):
    root, _ = deployed_anthropic

    rolled = rollback(root, sts_server, cloudformation, "--dry-run", "--outdir", str(tmp_path / "out"))

    assert rolled.returncode == 0, rolled.stderr[-3000:]
    assert rolled.stdout.strip().splitlines() == [
        "prod: the live endpoint moves from version 4 to 3; nothing else changes"
    ]
    template = json.loads((tmp_path / "out" / "MyWeltAgent-prod.template.json").read_text())
    ((_, endpoint),) = resources(template, "AWS::BedrockAgentCore::RuntimeEndpoint").items()
    assert endpoint["Properties"]["AgentRuntimeVersion"] == "3"
    assert template["Outputs"]["LiveVersion"]["Value"] == "3"
    # The key stays the version the stack was deployed with.
    _, provider = the_provider(template)
    assert provider["ApiKey"].endswith(":SecretString:::v1}}")


def test_make_rollback_with_no_earlier_version_is_refused_in_one_line(
    deployed_anthropic, sts_server, cloudformation
):
    root, stack = deployed_anthropic
    stack.outputs["LiveVersion"] = "1"

    refused = rollback(root, sts_server, cloudformation, "--dry-run")

    assert refused.returncode == 2, refused.stderr[-3000:]
    assert refused.stderr.strip().splitlines() == [
        "deploy: the live endpoint of MyWeltAgent-prod serves version 1, the runtime's first: "
        "there is no earlier version to roll back to"
    ]


def test_make_rollback_from_a_checkout_that_changes_more_is_refused_naming_what(
    deployed_anthropic, sts_server, cloudformation
):
    root, stack = deployed_anthropic
    the_runtime(stack.template)["EnvironmentVariables"]["MODEL_ID"] = "claude-older"

    refused = rollback(root, sts_server, cloudformation, "--dry-run")

    assert refused.returncode == 2, refused.stderr[-3000:]
    (line,) = refused.stderr.strip().splitlines()[-1:]
    assert line.startswith("deploy: this checkout would change 'Runtime' as well as the endpoint")
    assert "Check out the commit the stack was deployed from" in line


def test_make_outputs_says_which_version_each_endpoint_serves(
    deployed_anthropic, sts_server, cloudformation
):
    root, stack = deployed_anthropic
    stack.outputs.update(LiveVersion="3", RuntimeVersion="4")

    shown = deploy_command(
        root, "outputs", "prod",
        AWS_ACCESS_KEY_ID="offline-test", AWS_SECRET_ACCESS_KEY="offline-test",
        AWS_ENDPOINT_URL_CLOUDFORMATION=cloudformation.url, NO_PROXY="127.0.0.1",
    )  # fmt: skip

    assert shown.returncode == 0, shown.stderr
    assert "LiveEndpoint=live" in shown.stdout.splitlines()
    assert shown.stderr.strip().splitlines()[-1] == (
        "prod: endpoint live serves version 3; DEFAULT serves version 4, the newest"
    )


# ---------------------------------------------------------------- make api-key


def with_aws(root: Path, aws: str, *arguments: str, stdin: str = "") -> subprocess.CompletedProcess:
    """`python -m deploy ...` against STS and Secrets Manager on this machine, stdin piped."""
    return subprocess.run(
        [sys.executable, "-m", "deploy", *arguments],
        cwd=root,
        input=stdin,
        env=offline_env(
            AWS_ACCESS_KEY_ID="offline-test", AWS_SECRET_ACCESS_KEY="offline-test",
            AWS_ENDPOINT_URL_STS=aws, AWS_ENDPOINT_URL_SECRETS_MANAGER=aws, NO_PROXY="127.0.0.1",
        ),  # fmt: skip
        capture_output=True,
        text=True,
        timeout=300,
    )


def stored_key(aws: str, name: str) -> dict:
    import boto3

    client = boto3.client(
        "secretsmanager", endpoint_url=aws, region_name="us-east-1",
        aws_access_key_id="offline-test", aws_secret_access_key="offline-test",
    )  # fmt: skip
    return client.get_secret_value(SecretId=name)


@pytest.fixture
def keyed_on_sts_account(synthesized):
    root, _ = synthesized("openai-history-312")
    with edited(root / "deploy" / "environments.toml", "000000000000", "123456789012"):
        yield root


def test_make_api_key_stores_a_piped_key_and_never_shows_it(keyed_on_sts_account, aws_server):
    first, rotated = "sk-test-first-0123456789", "sk-test-rotated-0123456789"

    stored = with_aws(keyed_on_sts_account, aws_server, "api-key", "staging", stdin=first + "\n")
    again = with_aws(keyed_on_sts_account, aws_server, "api-key", "staging", stdin=rotated + "\n")

    assert stored.returncode == 0 and again.returncode == 0, stored.stderr + again.stderr
    secret = stored_key(aws_server, "MyWeltAgent-staging/model-api-key")
    assert secret["SecretString"] == rotated
    assert again.stdout.startswith(
        "staging: the key is stored in secret MyWeltAgent-staging/model-api-key (version "
    )
    assert secret["VersionId"] in again.stdout
    for shown in (stored, again):
        assert first not in shown.stdout + shown.stderr and rotated not in shown.stdout + shown.stderr


def test_make_api_key_refuses_an_empty_key_in_one_line(keyed_on_sts_account, aws_server):
    refused = with_aws(keyed_on_sts_account, aws_server, "api-key", "prod", stdin="\n")

    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines() == [
        "deploy: no key was given: paste it at the prompt, or pipe it in"
    ]


def test_a_deploy_before_make_api_key_says_to_run_it_in_one_line(keyed_on_sts_account, aws_server):
    pinned = keyed_on_sts_account / "app" / "pyproject.toml"
    with edited(pinned, "dependencies = []", 'dependencies = ["boto3==1.44.0"]'):
        refused = with_aws(keyed_on_sts_account, aws_server, "deploy", "prod")

    assert refused.returncode == 2, refused.stderr[-2000:]
    assert refused.stderr.strip().splitlines() == [
        "deploy: no model API key is stored for prod (secret MyWeltAgent-prod/model-api-key): "
        "run make api-key ENV=prod first"
    ]


def test_bedrock_has_no_api_key_to_store(fresh, aws_server):
    refused = with_aws(fresh, aws_server, "api-key", "prod", stdin="sk-never\n")

    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines() == [
        "deploy: model_provider bedrock calls the model with the runtime's role: there is no API "
        "key to store"
    ]
