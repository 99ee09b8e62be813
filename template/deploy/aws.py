"""The few AWS calls the deploy commands make themselves, each failure one line.

A deploy without credentials, or with credentials for another account,
would otherwise fail inside the CDK CLI after the synth, with a stack trace
that does not say which setting to fix.
"""

import contextlib
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import boto3
import botocore.exceptions

from . import project
from .settings import Environment, TokenProvider


class AwsError(RuntimeError):
    """An AWS call the deploy needs failed; the message says what to do."""


def require_real_account(environment: Environment) -> None:
    if environment.is_placeholder:
        raise AwsError(
            f"deploy/environments.toml [{environment.name}] account is the placeholder "
            f"{environment.account}: set your 12-digit AWS account before deploying"
        )


def check_credentials(environment: Environment) -> str:
    """The caller's ARN, once its credentials are shown to be for the environment's account."""
    require_real_account(environment)
    try:
        caller = boto3.client("sts", region_name=environment.region).get_caller_identity()
    except botocore.exceptions.NoCredentialsError:
        raise AwsError(
            f"no AWS credentials: sign in to account {environment.account} (for example "
            "`aws sso login`, or set AWS_PROFILE), then run the command again"
        ) from None
    except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as failed:
        raise AwsError(f"AWS credentials could not be checked: {failed}") from failed
    if caller["Account"] != environment.account:
        raise AwsError(
            f"the AWS credentials are for account {caller['Account']}, but "
            f"deploy/environments.toml [{environment.name}] deploys to {environment.account}"
        )
    return caller["Arn"]


@contextlib.contextmanager
def _failing_as(environment: Environment, what_failed: str) -> Iterator[None]:
    """botocore's failures in the block, as the one line AwsError says, and no chain.

    No chain: a failure of the key's call must not carry anything of the call
    into a traceback, and the one-line exit prints none anyway.
    """
    try:
        yield
    except botocore.exceptions.NoCredentialsError:
        raise AwsError(
            f"no AWS credentials: sign in to account {environment.account} first"
        ) from None
    except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as failed:
        raise AwsError(f"{what_failed}: {failed}") from None


def stack_outputs(environment: Environment) -> dict[str, str]:
    """The deployed stack's outputs (AgentArn, WeltPolicyArn, LogGroup, ...)."""
    with _failing_as(environment, f"stack {environment.stack_name} could not be read"):
        client = boto3.client("cloudformation", region_name=environment.region)
        (stack,) = client.describe_stacks(StackName=environment.stack_name)["Stacks"]
    return {output["OutputKey"]: output["OutputValue"] for output in stack.get("Outputs", [])}


def deployed_template(environment: Environment) -> dict:
    """The template the deployed stack was last deployed with, as CloudFormation keeps it."""
    with _failing_as(environment, f"stack {environment.stack_name} could not be read"):
        client = boto3.client("cloudformation", region_name=environment.region)
        body = client.get_template(StackName=environment.stack_name, TemplateStage="Original")
    template = body["TemplateBody"]  # botocore parses a JSON template
    if not isinstance(template, dict):
        raise AwsError(f"stack {environment.stack_name}'s template is not the JSON the CDK writes")
    return dict(template)


def model_key_version(environment: Environment) -> str:
    """The current version of the secret holding the model's API key; its value is never read."""
    return _current_version(
        environment,
        environment.model_key_secret,
        f"no model API key is stored for {environment.name} (secret "
        f"{environment.model_key_secret})",
        f"make api-key ENV={environment.name}",
    )


def client_secret_versions(environment: Environment) -> dict[str, str]:
    """Each user token's OAuth client secret's current version, by its Identity provider's name."""
    versions = {}
    for provider in environment.user_tokens:
        name = environment.client_secret_name(provider)
        versions[environment.token_provider_name(provider)] = _current_version(
            environment,
            name,
            f"no client secret is stored for user token {provider.name} of {environment.name} "
            f"(secret {name})",
            f"make oauth-secret ENV={environment.name} PROVIDER={provider.name}",
        )
    return versions


def _current_version(environment: Environment, name: str, missing: str, task: str) -> str:
    """A secret's current version, from its metadata; missing, the task that stores it."""
    client = boto3.client("secretsmanager", region_name=environment.region)
    try:
        described = client.describe_secret(SecretId=name)
    except botocore.exceptions.NoCredentialsError:
        raise AwsError(
            f"no AWS credentials: sign in to account {environment.account} first"
        ) from None
    except botocore.exceptions.ClientError as failed:
        if failed.response.get("Error", {}).get("Code") == "ResourceNotFoundException":
            raise AwsError(f"{missing}: run {task} first") from None
        raise AwsError(f"secret {name} could not be read: {failed}") from failed
    except botocore.exceptions.BotoCoreError as failed:
        raise AwsError(f"secret {name} could not be read: {failed}") from failed
    for version, stages in described.get("VersionIdsToStages", {}).items():
        if "AWSCURRENT" in stages:
            return str(version)
    raise AwsError(f"secret {name} has no current version: run {task} again")


def store_model_key(environment: Environment, key: str) -> str:
    """Make the key the secret's current version (the secret is created the first time).

    Returns the new version's id. Nothing here, errors included, repeats the key.
    """
    return _store(
        environment,
        environment.model_key_secret,
        key,
        "the key",
        f"The model's API key of {environment.stack_name}: the stack's AgentCore Identity "
        "credential provider is made from it (make api-key)",
    )


def store_client_secret(environment: Environment, provider: TokenProvider, secret: str) -> str:
    """Make an OAuth app's client secret its secret's current version (created the first time)."""
    return _store(
        environment,
        environment.client_secret_name(provider),
        secret,
        "the client secret",
        f"The client secret of the {provider.vendor} OAuth app of {environment.stack_name}'s "
        f"user token {provider.name}: its AgentCore Identity credential provider is made from it "
        "(make oauth-secret)",
    )


def store_slack_client_secret(environment: Environment, secret: str) -> str:
    """Put the Slack app's client secret in the secret the stack made for the consent endpoint."""
    name = environment.slack_client_secret_name
    return _store(environment, name, secret, "the client secret", None)


def _store(
    environment: Environment, name: str, value: str, what: str, description: str | None
) -> str:
    """Make the value the secret's current version; with a description, create a missing secret.

    Returns the new version's id. Nothing here, errors included, repeats the value.
    """
    client = boto3.client("secretsmanager", region_name=environment.region)
    with _failing_as(environment, f"{what} could not be stored in secret {name}"):
        try:
            stored = client.put_secret_value(SecretId=name, SecretString=value)
        except botocore.exceptions.ClientError as failed:
            if failed.response.get("Error", {}).get("Code") != "ResourceNotFoundException":
                raise
            if description is None:
                raise AwsError(
                    f"secret {name} does not exist yet: the stack makes it, so run make deploy "
                    f"ENV={environment.name} first"
                ) from None
            stored = client.create_secret(
                Name=name,
                SecretString=value,
                Description=description,
                Tags=[
                    {"Key": "project", "Value": project.PROJECT_NAME},
                    {"Key": "environment", "Value": environment.name},
                ],
            )
    return str(stored["VersionId"])


def print_logs(environment: Environment, since: timedelta) -> None:
    """Print the runtime's log lines of the last `since`, oldest first."""
    group = stack_outputs(environment)["LogGroup"]
    client = boto3.client("logs", region_name=environment.region)
    start = int((datetime.now(UTC) - since).timestamp() * 1000)
    try:
        for page in client.get_paginator("filter_log_events").paginate(
            logGroupName=group, startTime=start
        ):
            for event in page["events"]:
                when = datetime.fromtimestamp(event["timestamp"] / 1000, UTC).isoformat()
                print(f"{when} {event['logStreamName']} {event['message'].rstrip()}")
    except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as failed:
        raise AwsError(f"log group {group} could not be read: {failed}") from failed
