"""User tokens, deployed: what the stack declares once an environment declares an OAuth app.

With `[staging.user_tokens.github]` in deploy/environments.toml, the stack
makes GitHub's AgentCore Identity credential provider from the secret `make
oauth-secret` filled, the session-binding endpoint (the package's handler on
Lambda, behind a public function URL) and its secrets, sets the runtime's
workload identity's one return URL to the endpoint's /callback, tells the
runtime where all of it is, and grants each role exactly what its code
calls. Synthesized once a session as `make synth` does, offline
(conftest's `deployed`, tests/synthesized.py), and linted with cfn-lint;
the synth needs the CDK, which `make synth` installs (the `deploy`
group). `make oauth-secret` and `make slack-secret` are run against
Secrets Manager and STS on this machine.
"""

import ast
import importlib
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import boto3
import pytest
from conftest import PROJECT, S3_CREDENTIALS, local_s3
from synthesized import (
    CUSTOM_RESOURCE_ROLE,
    ENDPOINT_ROLE,
    GITHUB_CLIENT_ID,
    PARTITION,
    RUNTIME_ROLE,
    SLACK_CLIENT_ID,
    arn,
    grants,
    listed,
    managed_policies,
    named,
    resources,
    runtime_variables,
    text_of,
    with_user_tokens,
    written,
)

from deploy import code_bundle, permissions, project, runtime
from deploy.aws import AwsError
from deploy.rollback import rollback_pins
from deploy.settings import SETTINGS_FILE, Environment, SettingError, load_environment

# Each starts the CDK's Node.js process or a server of its own.
pytestmark = pytest.mark.slow

# The commands `make oauth-secret`, `make slack-secret` and `make deploy` run
# (imported by name: deploy/__main__.py imports the CDK's app where it synthesizes).
commands = importlib.import_module("deploy.__main__")

# The cfn-lint the template's own suite lints every rendering with; run by uvx,
# outside the project, whose environment leaves out a library cfn-lint needs.
CFN_LINT = "cfn-lint==1.58.0"
# What cfn-lint reports that is not the stack's doing: its resource schema
# predates HooksConfiguration; the CDK's own Lambda functions (log retention,
# custom resources, and any Function given a role) name their role both in
# DependsOn and in a GetAtt.
ALLOWED_FINDINGS = {("E3002", "Runtime")}
ALLOWED_CDK_W3005 = ("LogRetention", "AWS679f53fac002430cb0da5b7982bd2287", "ConsentEndpoint")
# A dynamic reference's double braces, never two in a row in a rendered file:
# the template's tests take those for Jinja left over.
REFERENCE = ("{" * 2, "}" * 2)
# The bucket consent states are claimed in: the run store's with run_store=s3,
# else one of their own.
USED_STATES = "RunStore" if project.RUN_STORE == "s3" else "UsedConsentStates"


@pytest.fixture(scope="module")
def staging(tmp_path_factory) -> Environment:
    folder = tmp_path_factory.mktemp("settings")
    return load_environment("staging", written(folder, with_user_tokens(SETTINGS_FILE.read_text())))


def the_function(template: dict) -> dict:
    _, function = named(template, "ConsentEndpoint")
    return function


# ---------------------------------------------------------------- lint


def test_cfn_lint_finds_nothing_in_the_templates_with_a_user_token(deployed, tmp_path):
    uvx = shutil.which("uvx")
    assert uvx is not None, "uv installs uvx beside it"
    linted = subprocess.run(
        [uvx, "--from", CFN_LINT, "cfn-lint", "--format", "json", *deployed["paths"]],
        cwd=tmp_path,  # outside the project, whose uv settings leave libraries out
        capture_output=True,
        text=True,
        timeout=600,
    )

    findings = json.loads(linted.stdout or "[]")
    assert linted.stdout, linted.stderr[-2000:]
    unexpected = [
        finding
        for finding in findings
        if (finding["Rule"]["Id"], finding["Location"]["Path"][1]) not in ALLOWED_FINDINGS
        and not (
            finding["Rule"]["Id"] == "W3005"
            and finding["Location"]["Path"][1].startswith(ALLOWED_CDK_W3005)
        )
    ]
    assert unexpected == [], json.dumps(unexpected, indent=1)[:3000]


# ---------------------------------------------------------------- the provider


def test_the_github_app_is_an_identity_provider_made_from_the_secret_make_oauth_secret_fills(
    deployed, staging
):
    (github,) = staging.user_tokens
    kind = "AWS::BedrockAgentCore::OAuth2CredentialProvider"
    (provider,) = resources(deployed["with"], kind).values()

    properties = provider["Properties"]
    assert properties["Name"] == f"{project.AGENT_NAME}-staging-github"
    assert properties["CredentialProviderVendor"] == "GithubOauth2"
    # A dynamic reference CloudFormation resolves while it deploys: the
    # client secret never stands in the template.
    assert properties["Oauth2ProviderConfigInput"] == {
        "GithubOauth2ProviderConfig": {
            "ClientId": GITHUB_CLIENT_ID,
            "ClientSecret": (
                f"{REFERENCE[0]}resolve:secretsmanager:{staging.client_secret_name(github)}"
                f":SecretString:::{REFERENCE[1]}"
            ),
        }
    }


def test_the_secret_make_oauth_secret_fills_may_be_read_by_the_deploys_cloudformation_alone(
    deployed, staging
):
    (github,) = staging.user_tokens
    (policy,) = (
        p["Properties"]
        for p in resources(deployed["with"], "AWS::SecretsManager::ResourcePolicy").values()
        if p["Properties"]["SecretId"] == staging.client_secret_name(github)
    )

    (deny,) = policy["ResourcePolicy"]["Statement"]
    assert (deny["Effect"], deny["Principal"], deny["Resource"]) == ("Deny", {"AWS": "*"}, "*")
    assert listed(deny["Action"]) == list(permissions.CLIENT_SECRET_READ_ACTIONS)
    assert text_of(deny["Condition"]["StringNotEquals"]["aws:PrincipalArn"]) == (
        f"arn:{PARTITION}:iam::{staging.account}:role/"
        f"cdk-hnb659fds-cfn-exec-role-{staging.account}-{staging.region}"
    )
    assert policy["BlockPublicPolicy"] is True


def test_the_callback_url_to_register_at_github_and_the_slack_redirect_url_are_outputs(deployed):
    outputs = {name: text_of(o["Value"]) for name, o in deployed["with"]["Outputs"].items()}

    assert outputs["GithubCallbackUrl"] == "{GithubTokenProvider.CallbackUrl}"
    # A function URL ends in a slash.
    assert outputs["SlackRedirectUrl"] == "{ConsentEndpointFunctionUrl.FunctionUrl}signed-in"
    assert outputs["ConsentEndpointUrl"] == (
        "https://select(2, split('/', {ConsentEndpointFunctionUrl.FunctionUrl}))"
    )


# ---------------------------------------------------------------- the endpoint


def test_the_endpoint_is_the_packages_handler_on_arm64_lambda(deployed):
    properties = the_function(deployed["with"])["Properties"]

    assert properties["Handler"] == f"{project.PACKAGE_NAME}.binding.endpoint.handler"
    assert properties["Runtime"] == f"python{project.PYTHON_VERSION}"
    assert properties["Architectures"] == ["arm64"]
    assert {name: text_of(v) for name, v in properties["Environment"]["Variables"].items()} == {
        "SLACK_CLIENT_ID": SLACK_CLIENT_ID,
        "SLACK_CLIENT_SECRET_ARN": "{SlackClientSecret}",
        "CONSENT_KEY_SECRET": "{ConsentKey}",
        "USED_STATES_BUCKET": "{" + USED_STATES + "}",
        "USED_STATES_PREFIX": "used-consent-states/",
    }
    assert text_of(properties["LoggingConfig"]["LogGroup"]) == "{ConsentEndpointLogs}"


def test_the_endpoint_is_a_public_function_url_a_browser_opens(deployed):
    (url,) = resources(deployed["with"], "AWS::Lambda::Url").values()
    permissions_ = resources(deployed["with"], "AWS::Lambda::Permission").values()

    assert url["Properties"]["AuthType"] == "NONE"
    assert text_of(url["Properties"]["TargetFunctionArn"]) == "{ConsentEndpoint.Arn}"
    # Both, for a URL without auth: InvokeFunctionUrl, and InvokeFunction through the URL.
    assert sorted(
        (p["Properties"]["Action"], p["Properties"]["Principal"]) for p in permissions_
    ) == [("lambda:InvokeFunction", "*"), ("lambda:InvokeFunctionUrl", "*")]
    invoke = next(p for p in permissions_ if p["Properties"]["Action"] == "lambda:InvokeFunction")
    assert invoke["Properties"]["InvokedViaFunctionUrl"] is True


def modules_imported_by(module: str) -> set[str]:
    """Every module a module of the package names in an import, and those of the package it names.

    Read from the source, every import statement, a function's too: the
    endpoint imports authlib and boto3 only once a request needs them.
    """
    code = PROJECT / "app"
    found: set[str] = set()
    waiting = [module]
    while waiting:
        name = waiting.pop()
        if name in found:
            continue
        found.add(name)
        path = code / Path(*name.split("."))
        source = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
        if not source.is_file():
            continue  # a name a `from` imports from a module, not a module
        package = name if path.is_dir() else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(source.read_text())):
            if isinstance(node, ast.Import):
                named = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1]) if node.level else ""
                head = ".".join(part for part in (base, node.module or "") if part)
                named = [head, *(f"{head}.{alias.name}" for alias in node.names)]
            else:
                continue
            for each in named:
                parts = each.split(".")
                if parts[0] != project.PACKAGE_NAME:
                    found.add(each)
                    continue
                # Importing a module runs each package above it first.
                waiting += [".".join(parts[:depth]) for depth in range(1, len(parts) + 1)]
    return {
        name
        for name in found
        if name.split(".")[0] != project.PACKAGE_NAME
        or (code / Path(*name.split("."))).is_dir()
        or (code / Path(*name.split("."))).with_suffix(".py").is_file()
    }


# Imports each module named, refusing any library the bundle does not hold.
IMPORT_AS_IN_THE_BUNDLE = """
import importlib, importlib.abc, json, sys
held = set(json.loads(sys.argv[1]))
class OnlyWhatTheBundleHolds(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        top = name.partition(".")[0]
        if top in sys.stdlib_module_names or top in held:
            return None
        raise ModuleNotFoundError(f"No module named {name!r} in the bundle", name=name)
sys.meta_path.insert(0, OnlyWhatTheBundleHolds())
for name in json.loads(sys.argv[2]):
    try:
        importlib.import_module(name)
    except ModuleNotFoundError as missing:
        top = (missing.name or "").partition(".")[0]
        if top not in held and top not in sys.stdlib_module_names:
            print(f"{name}: {missing}")
    except ImportError:
        pass  # `from module import name`, as a module: the module imported
"""


def test_every_module_the_endpoints_handler_imports_is_in_its_bundle_and_strands_is_not(deployed):
    """The handler's imports, with what each library imports in turn, from the bundle alone.

    Imported with this machine's builds of the libraries (the bundle's are
    for arm64), but only those whose names the bundle holds.
    """
    modules = modules_imported_by(f"{project.PACKAGE_NAME}.{code_bundle.ENDPOINT_MODULE}")
    bundle, _ = code_bundle.built_endpoint_bundle()
    held = {path.name.split(".")[0] for path in bundle.iterdir()}

    imported = subprocess.run(
        [
            sys.executable, "-c", IMPORT_AS_IN_THE_BUNDLE,
            json.dumps(sorted(held)), json.dumps(sorted(modules)),
        ],
        cwd=PROJECT,
        env={"PATH": "", "PYTHONPATH": str(PROJECT / "app"), "AWS_EC2_METADATA_DISABLED": "true"},
        capture_output=True,
        text=True,
        timeout=120,
    )  # fmt: skip

    assert imported.returncode == 0, imported.stderr[-2000:]
    assert imported.stdout == ""
    libraries = {name.split(".")[0] for name in modules} - set(sys.stdlib_module_names)
    assert {"authlib", "boto3", project.PACKAGE_NAME} <= libraries
    assert not {"strands", "strands_tools", "bedrock_agentcore", "opentelemetry"} & held


def test_the_runtime_is_told_the_providers_the_endpoint_and_the_consent_key(deployed):
    variables = runtime_variables(deployed["with"])

    assert variables["USER_TOKEN_PROVIDERS"] == f"github={project.AGENT_NAME}-staging-github"
    assert variables["CONSENT_ENDPOINT_URL"] == (
        "https://select(2, split('/', {ConsentEndpointFunctionUrl.FunctionUrl}))"
    )
    assert variables["CONSENT_KEY_SECRET"] == "{ConsentKey}"


def test_the_workload_identitys_one_return_url_is_the_endpoints_callback(deployed):
    (setter,) = resources(deployed["with"], "Custom::AWS").values()
    calls = {
        event: json.loads(text_of(setter["Properties"][event]))
        for event in ("Create", "Update", "Delete")
    }

    for event in ("Create", "Update"):
        assert calls[event]["service"] == "bedrock-agentcore-control"
        assert calls[event]["action"] == "UpdateWorkloadIdentity"
        assert calls[event]["parameters"] == {
            # The runtime's workload identity is named as the runtime's id.
            "name": "{Runtime.AgentRuntimeId}",
            "allowedResourceOauth2ReturnUrls": ["{ConsentEndpointFunctionUrl.FunctionUrl}callback"],
        }
    # Gone with the endpoint: no return URL is allowed any more.
    assert calls["Delete"]["parameters"]["allowedResourceOauth2ReturnUrls"] == []
    assert setter["Properties"]["InstallLatestAwsSdk"] is False


def test_consent_states_are_claimed_in_a_private_bucket_that_forgets_them_after_a_day(deployed):
    _, bucket = named(deployed["with"], USED_STATES)

    properties = bucket["Properties"]
    assert properties["PublicAccessBlockConfiguration"] == {
        "BlockPublicAcls": True,
        "BlockPublicPolicy": True,
        "IgnorePublicAcls": True,
        "RestrictPublicBuckets": True,
    }
    assert properties["BucketEncryption"]["ServerSideEncryptionConfiguration"] == [
        {"ServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}
    ]
    assert {
        "ExpirationInDays": 1,
        "Id": "ForgetUsedConsentStates",
        "Prefix": "used-consent-states/",
        "Status": "Enabled",
    } in properties["LifecycleConfiguration"]["Rules"]


# ---------------------------------------------------------------- grants


def test_the_runtime_may_fetch_tokens_through_its_own_identity_and_read_the_consent_key(deployed):
    """What a user token adds to the runtime's role, pair by pair."""
    added = grants(deployed["with"])[RUNTIME_ROLE] - grants(deployed["without"])[RUNTIME_ROLE]

    fetch = permissions.USER_TOKEN_ACTIONS
    assert added == {
        *((action, resource) for action in fetch for resource in [
            "{GithubTokenProvider.CredentialProviderArn}",
            arn("bedrock-agentcore", "token-vault/default"),
            arn("bedrock-agentcore", "token-vault/default/oauth2credentialprovider"),
            arn("bedrock-agentcore", "workload-identity-directory/default"),
            arn(
                "bedrock-agentcore",
                "workload-identity-directory/default/workload-identity/"
                f"{project.AGENT_NAME}_staging-*",
            ),
        ]),
        *(
            (action, arn(
                "secretsmanager",
                "secret:bedrock-agentcore-identity!default/oauth2/"
                f"{project.AGENT_NAME}-staging-github-??????",
            ))
            for action in permissions.USER_TOKEN_VAULT_ACTIONS
        ),
        *((action, "{ConsentKey}") for action in permissions.CONSENT_KEY_ACTIONS),
    }  # fmt: skip


def test_the_endpoint_may_complete_a_consent_read_its_two_secrets_claim_a_state_and_log(deployed):
    template = deployed["with"]

    assert grants(template)[ENDPOINT_ROLE] == {
        *((action, resource) for action in permissions.BINDING_ACTIONS for resource in [
            "{GithubTokenProvider.CredentialProviderArn}",
            arn("bedrock-agentcore", "token-vault/default"),
            arn("bedrock-agentcore", "token-vault/default/oauth2credentialprovider"),
            arn("bedrock-agentcore", "workload-identity-directory/default"),
            arn(
                "bedrock-agentcore",
                "workload-identity-directory/default/workload-identity/{Runtime.AgentRuntimeId}",
            ),
        ]),
        *(
            (action, secret)
            for action in permissions.BINDING_SECRET_ACTIONS
            for secret in ("{ConsentKey}", "{SlackClientSecret}")
        ),
        *(
            (action, "{" + USED_STATES + ".Arn}/used-consent-states/*")
            for action in permissions.USED_STATE_ACTIONS
        ),
        *((action, "{ConsentEndpointLogs.Arn}") for action in permissions.BINDING_LOG_ACTIONS),
    }  # fmt: skip
    assert managed_policies(template, ENDPOINT_ROLE) == []
    _, role = named(template, ENDPOINT_ROLE)
    (trust,) = role["Properties"]["AssumeRolePolicyDocument"]["Statement"]
    assert trust["Principal"] == {"Service": "lambda.amazonaws.com"}


def test_the_return_url_is_set_with_update_workload_identity_on_the_runtimes_alone(deployed):
    template = deployed["with"]

    assert grants(template)[CUSTOM_RESOURCE_ROLE] == {
        (action, resource)
        for action in permissions.RETURN_URL_ACTIONS
        for resource in [
            arn(
                "bedrock-agentcore",
                "workload-identity-directory/default/workload-identity/{Runtime.AgentRuntimeId}",
            ),
            arn("bedrock-agentcore", "workload-identity-directory/default"),
            arn("bedrock-agentcore", "workload-identity-directory/default/workload-identity"),
        ]
    }
    # The CDK's function for custom resources writes its logs with AWS's basic role.
    assert managed_policies(template, CUSTOM_RESOURCE_ROLE) == [
        "arn:{AWS::Partition}:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole"
    ]


@pytest.mark.parametrize(
    "secret, readers",
    [("ConsentKey", [RUNTIME_ROLE, ENDPOINT_ROLE]), ("SlackClientSecret", [ENDPOINT_ROLE])],
)
def test_the_consent_key_and_the_slack_secret_may_be_read_by_their_readers_alone(
    deployed, secret, readers
):
    (policy,) = (
        p["Properties"]
        for p in resources(deployed["with"], "AWS::SecretsManager::ResourcePolicy").values()
        if text_of(p["Properties"]["SecretId"]) == "{" + secret + "}"
    )

    (deny,) = policy["ResourcePolicy"]["Statement"]
    assert (deny["Effect"], deny["Principal"], deny["Action"]) == (
        "Deny", {"AWS": "*"}, "secretsmanager:GetSecretValue",
    )  # fmt: skip
    allowed = deny["Condition"]["StringNotEquals"]["aws:PrincipalArn"]
    arns = ["{" + f"{role}.Arn" + "}" for role in readers]  # Fn::GetAtt, shown as text
    assert [text_of(role) for role in listed(allowed)] == arns


def test_the_ci_role_may_read_which_version_of_the_client_secret_is_current(deployed, staging):
    (github,) = staging.user_tokens
    ci_role = grants(deployed["ci-role"])["DeployRole"]

    described = {
        (action, resource)
        for action, resource in ci_role
        if action in permissions.CLIENT_SECRET_VERSION_ACTIONS and "oauth-client-secret" in resource
    }  # the model key's, with Anthropic or OpenAI, is another test's
    assert described == {
        (action, arn("secretsmanager", f"secret:{staging.client_secret_name(github)}-??????"))
        for action in permissions.CLIENT_SECRET_VERSION_ACTIONS
    }


def test_without_user_tokens_the_stack_has_no_provider_endpoint_or_secret_of_theirs(deployed):
    template = deployed["without"]

    assert resources(template, "AWS::BedrockAgentCore::OAuth2CredentialProvider") == {}
    assert resources(template, "AWS::Lambda::Url") == {}
    assert resources(template, "Custom::AWS") == {}
    assert [name for name in template["Resources"] if name.startswith("Consent")] == []
    assert not {"USER_TOKEN_PROVIDERS", "CONSENT_ENDPOINT_URL", "CONSENT_KEY_SECRET"} & set(
        runtime_variables(template)
    )
    assert not {"GithubCallbackUrl", "SlackRedirectUrl"} & set(template["Outputs"])


def test_a_rollback_keeps_the_client_secret_version_the_stack_was_deployed_with(deployed):
    """As the model key's: a secret stored since the deploy is not taken by a rollback."""
    stack = json.loads(
        json.dumps(deployed["with"]).replace(":SecretString:::}}", ":SecretString:::v7}}")
    )

    pins = rollback_pins(load_environment("staging"), {"LiveVersion": "3"}, stack)

    assert pins.client_secret_versions == {f"{project.AGENT_NAME}-staging-github": "v7"}
    assert pins.live_version == "2"


# ---------------------------------------------------------------- make oauth-secret, slack-secret

# The account STS answers for on the local AWS server (moto's).
LOCAL_ACCOUNT = "123456789012"


@pytest.fixture
def on_local_aws(monkeypatch, tmp_path) -> Environment:
    """Staging with GitHub declared, in the local server's account, which boto3 reaches."""
    endpoint = local_s3()  # moto's server answers every service it knows
    for variable, value in S3_CREDENTIALS.items():
        monkeypatch.setenv(variable, value)
    for service in ("STS", "SECRETS_MANAGER"):
        monkeypatch.setenv(f"AWS_ENDPOINT_URL_{service}", endpoint)
    text = with_user_tokens(SETTINGS_FILE.read_text(), account=LOCAL_ACCOUNT)
    environment = load_environment("staging", written(tmp_path, text))
    if runtime.needs_api_key():  # Anthropic or OpenAI: a deploy pins the model's key too
        commands.store_api_key(environment, io.StringIO("sk-model-key-0123456789abcdef\n"))
    return environment


def secrets_client():
    return boto3.client("secretsmanager", region_name=S3_CREDENTIALS["AWS_DEFAULT_REGION"])


def test_make_oauth_secret_stores_a_piped_secret_and_never_shows_it(on_local_aws, capsys):
    first, rotated = "gh-secret-first-0123456789", "gh-secret-rotated-0123456789"

    commands.store_oauth_secret(on_local_aws, "github", io.StringIO(first + "\n"))
    commands.store_oauth_secret(on_local_aws, "github", io.StringIO(rotated + "\n"))

    (github,) = on_local_aws.user_tokens
    name = on_local_aws.client_secret_name(github)
    stored = secrets_client().get_secret_value(SecretId=name)
    assert stored["SecretString"] == rotated
    shown = capsys.readouterr()
    assert first not in shown.out + shown.err and rotated not in shown.out + shown.err
    assert shown.out.splitlines()[-1] == (
        f"staging: the client secret is stored in secret {name} (version "
        f"{stored['VersionId']}); make deploy ENV=staging hands it to AgentCore Identity"
    )


def test_a_deploy_pins_the_client_secrets_current_version(on_local_aws):
    commands.store_oauth_secret(on_local_aws, "github", io.StringIO("gh-secret-0123456789\n"))
    (github,) = on_local_aws.user_tokens
    current = secrets_client().get_secret_value(SecretId=on_local_aws.client_secret_name(github))

    pins = commands.deploy_pins(on_local_aws)

    assert pins.client_secret_versions == {
        on_local_aws.token_provider_name(github): current["VersionId"]
    }


def test_a_deploy_before_make_oauth_secret_says_to_run_it_in_one_line(on_local_aws):
    (github,) = on_local_aws.user_tokens
    name = on_local_aws.client_secret_name(github)
    if exists(name):
        secrets_client().delete_secret(SecretId=name, ForceDeleteWithoutRecovery=True)

    with pytest.raises(AwsError) as refused:
        commands.deploy_pins(on_local_aws)

    assert str(refused.value) == (
        f"no client secret is stored for user token github of staging (secret "
        f"{name}): run make oauth-secret ENV=staging "
        "PROVIDER=github first"
    )


def exists(name: str) -> bool:
    client = secrets_client()
    try:
        client.describe_secret(SecretId=name)
    except client.exceptions.ResourceNotFoundException:
        return False
    return True


def test_make_oauth_secret_names_the_provider_it_needs_in_one_line(on_local_aws):
    with pytest.raises(SettingError) as refused:
        commands.store_oauth_secret(on_local_aws, "gitlab", io.StringIO("never\n"))

    assert str(refused.value) == (
        "environments.toml [staging] declares no user token 'gitlab' (it declares github): "
        "add a [staging.user_tokens.gitlab] table"
    )


def test_make_slack_secret_fills_the_secret_the_stack_made_and_never_shows_it(on_local_aws, capsys):
    name = on_local_aws.slack_client_secret_name
    if not exists(name):  # as the stack makes it: a random value Slack refuses
        secrets_client().create_secret(Name=name, SecretString="made-by-the-stack")
    secret = "slack-client-secret-0123456789"

    commands.store_slack_secret(on_local_aws, io.StringIO(secret + "\n"))

    assert secrets_client().get_secret_value(SecretId=name)["SecretString"] == secret
    shown = capsys.readouterr()
    assert secret not in shown.out + shown.err


def test_make_slack_secret_before_the_first_deploy_says_to_deploy_first(on_local_aws):
    name = on_local_aws.slack_client_secret_name
    if exists(name):
        secrets_client().delete_secret(SecretId=name, ForceDeleteWithoutRecovery=True)

    with pytest.raises(AwsError) as refused:
        commands.store_slack_secret(on_local_aws, io.StringIO("slack-secret-0123456789\n"))

    assert str(refused.value) == (
        f"secret {name} does not exist yet: the stack makes it, so run make deploy ENV=staging "
        "first"
    )
