"""The deployment's CloudFormation, synthesized as `make synth` writes it, and read as data.

`synthesize` runs deploy/'s synth in a process of its own (the CDK starts
Node.js), offline: no AWS credentials or configuration, so no AWS call can
succeed. It needs the CDK, the `deploy` dependency group, which `make synth`
installs. The readers need nothing but the templates: `grants` lists what
each role may do as (action, resource) pairs, with the template's
intrinsic functions written out as text (`text_of`), so a test can compare
them with the calls the code makes.
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from conftest import PROJECT

from deploy.settings import load_environment

# Runs deploy.app.synthesize for each (environment, settings file, folder).
SYNTH = """
import json
import sys
from pathlib import Path
from deploy.app import synthesize
from deploy.settings import load_environment
for name, settings, outdir in json.loads(sys.argv[1]):
    synthesize(load_environment(name, Path(settings)), Path(outdir))
"""

# What the tests declare: GitHub as staging's user token, and the Slack app.
SLACK_CLIENT_ID = "1234567890123.1234567890123"
GITHUB_CLIENT_ID = "Ov23liAbCdEfGhIjKlMn"

# The roles the stack makes, by their logical id without the CDK's hash.
RUNTIME_ROLE = "ExecutionRole"
ENDPOINT_ROLE = "ConsentEndpointRole"
# The CDK's one Lambda function for every AwsCustomResource of a stack.
CUSTOM_RESOURCE_ROLE = "AWS679f53fac002430cb0da5b7982bd2287ServiceRole"
# How the template writes the partition in an ARN it joins (Fn::Join shown as text).
PARTITION = "{AWS::Partition}"


def without_user_tokens(text: str) -> str:
    """environments.toml's text without the user tokens and Slack client id it may declare.

    The tests add their own: a project's file may already declare GitHub.
    """
    kept, skipping = [], False
    for line in text.splitlines(keepends=True):
        if line.startswith("["):
            skipping = re.match(r"\[\w+\.user_tokens[.\]]", line) is not None
        if not skipping and not line.startswith("slack_client_id"):
            kept.append(line)
    return "".join(kept)


def with_user_tokens(text: str, account: str | None = None) -> str:
    """environments.toml with GitHub as staging's user token (and another account, if given)."""
    staging, prod = without_user_tokens(text).split("[prod]\n")
    if account is not None:
        staging = staging.replace('account = "000000000000"', f'account = "{account}"')
    return (
        f'{staging.rstrip()}\nslack_client_id = "{SLACK_CLIENT_ID}"\n\n'
        f'[staging.user_tokens.github]\nvendor = "github"\nclient_id = "{GITHUB_CLIENT_ID}"\n\n'
        f"[prod]\n{prod}"
    )


def written(folder: Path, text: str) -> Path:
    """A settings file named as the project's, which the errors name."""
    (folder / "environments.toml").write_text(text)
    return folder / "environments.toml"


def staging_with_github(folder: Path) -> dict[str, dict]:
    """Staging's templates (runtime stack, CI role) with GitHub declared, by stack name.

    For a test that compares what the roles may do with what the code
    calls: `grants(templates[stack])[RUNTIME_ROLE]`, and ENDPOINT_ROLE's.
    """
    project_settings = PROJECT / "deploy" / "environments.toml"
    settings = written(folder, with_user_tokens(project_settings.read_text()))
    outdir = folder / "cdk.out"
    return synthesize(("staging", settings, outdir))[outdir]


def arn(service: str, resource: str) -> str:
    """An ARN as the template writes it for staging's placeholder account and Region."""
    environment = load_environment("staging")
    return f"arn:{PARTITION}:{service}:{environment.region}:{environment.account}:{resource}"


def offline_env() -> dict[str, str]:
    """The environment a synth runs in: no AWS credentials or configuration anywhere."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("AWS_")}
    env.update(
        AWS_EC2_METADATA_DISABLED="true",
        AWS_CONFIG_FILE=os.devnull,
        AWS_SHARED_CREDENTIALS_FILE=os.devnull,
        JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION="20",
        PYTHONPATH=str(PROJECT),
    )
    return env


def synthesize(*runs: tuple[str, Path, Path]) -> dict[Path, dict[str, dict]]:
    """Each (environment, settings file, folder) synthesized in one process; templates by folder.

    Each folder's templates are keyed by stack name.
    """
    done = subprocess.run(
        [sys.executable, "-c", SYNTH, json.dumps([[n, str(s), str(o)] for n, s, o in runs])],
        cwd=PROJECT,
        env=offline_env(),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return {
        outdir: {
            path.name.removesuffix(".template.json"): json.loads(path.read_text())
            for path in outdir.glob("*.template.json")
        }
        for _, _, outdir in runs
    }


def resources(template: dict, kind: str) -> dict[str, dict]:
    """The template's resources of one type, by logical id."""
    return {
        name: resource
        for name, resource in template["Resources"].items()
        if resource["Type"] == kind
    }


def named(template: dict, start: str) -> tuple[str, dict]:
    """The one resource whose logical id is `start` and the CDK's eight-character hash."""
    (found,) = (
        (name, resource)
        for name, resource in template["Resources"].items()
        if re.fullmatch(re.escape(start) + r"([0-9A-F]{8})?", name)
    )
    return found


def _logical(name: str) -> str:
    """A logical id without the hash the CDK appends: `ConsentKey96F60447` is `ConsentKey`."""
    return re.sub(r"(?<=.)[0-9A-F]{8}$", "", name)


def text_of(value) -> str:
    """A template value with its intrinsic functions as text: `{Ref}`, `{Name.Attribute}`, joins.

    A Ref or GetAtt names the resource without the CDK's hash; Fn::Select
    and Fn::Split are written as `select(i, split(sep, text))`.
    """
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and "Fn::Join" in value:
        separator, parts = value["Fn::Join"]
        return separator.join(text_of(part) for part in parts)
    if isinstance(value, dict) and "Ref" in value:
        return "{" + _logical(value["Ref"]) + "}"
    if isinstance(value, dict) and "Fn::GetAtt" in value:
        name, attribute = value["Fn::GetAtt"]
        return "{" + _logical(name) + "." + attribute + "}"
    if isinstance(value, dict) and "Fn::Select" in value:
        index, listed = value["Fn::Select"]
        return f"select({index}, {text_of(listed)})"
    if isinstance(value, dict) and "Fn::Split" in value:
        separator, text = value["Fn::Split"]
        return f"split({separator!r}, {text_of(text)})"
    if isinstance(value, dict) and isinstance(value.get("Fn::Sub"), str):
        return re.sub(r"\$\{([^}]+)\}", r"{\1}", value["Fn::Sub"])
    return json.dumps(value)


def listed(value) -> list:
    return value if isinstance(value, list) else [value]


def grants(template: dict) -> dict[str, set[tuple[str, str]]]:
    """What each role of the template may do, as (action, resource) pairs, by its logical id.

    From every AWS::IAM::Policy attached to it (its default policy and
    policies of their own); Allow statements only, each resource as text.
    Managed policies are not read: `managed_policies` lists them.
    """
    found: dict[str, set[tuple[str, str]]] = {
        _logical(name): set() for name in resources(template, "AWS::IAM::Role")
    }
    for policy in resources(template, "AWS::IAM::Policy").values():
        properties = policy["Properties"]
        for role in properties["Roles"]:
            for statement in properties["PolicyDocument"]["Statement"]:
                if statement["Effect"] != "Allow":
                    continue
                found[text_of(role).strip("{}")] |= {
                    (action, text_of(resource))
                    for action in listed(statement["Action"])
                    for resource in listed(statement["Resource"])
                }
    return found


def runtime_variables(template: dict) -> dict[str, str]:
    """The runtime's environment variables, each as text (`text_of`)."""
    (runtime,) = resources(template, "AWS::BedrockAgentCore::Runtime").values()
    return {
        name: text_of(value)
        for name, value in runtime["Properties"]["EnvironmentVariables"].items()
    }


def managed_policies(template: dict, role: str) -> list[str]:
    """The managed policies attached to the role (its logical id without the hash)."""
    _, resource = named(template, role)
    return [text_of(arn) for arn in resource["Properties"].get("ManagedPolicyArns", [])]
