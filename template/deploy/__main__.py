"""`python -m deploy COMMAND ENV`: what `make synth`, `make deploy`, `make rollback`, ... run.

This is the one place a deploy error becomes a one-line message and an exit
status; everything below it raises a typed error that says what to fix.
"""

import argparse
import getpass
import json
import os
import shutil
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import TextIO

from . import project, runtime, usage_report
from .aws import (
    AwsError,
    check_credentials,
    client_secret_versions,
    deployed_template,
    model_key_version,
    print_logs,
    require_real_account,
    stack_outputs,
    store_client_secret,
    store_model_key,
    store_slack_client_secret,
)
from .code_bundle import BundleError, require_pins
from .pins import NO_PINS, Pins
from .rollback import RollbackRefused, require_only_the_endpoint_moves, rollback_pins
from .settings import ENVIRONMENTS, Environment, SettingError, load_environment

# The CDK CLI that deploys the synthesized templates, pinned like the library:
# a CLI older than the aws-cdk-lib that wrote the assembly may refuse its
# schema, so raise this when uv.lock raises aws-cdk-lib.
CDK_CLI = "aws-cdk@2.1148.1"


class ToolMissing(RuntimeError):
    """A program the command runs is not installed."""


class CdkFailed(RuntimeError):
    """The CDK CLI failed, and has already said why."""


def cdk(*arguments: str) -> None:
    """Run the CDK CLI without its telemetry and notices, which would call out."""
    npx = shutil.which("npx")
    if npx is None:
        raise ToolMissing("deploying needs Node.js: the CDK CLI runs with npx")
    env = {**os.environ, "CDK_DISABLE_CLI_TELEMETRY": "true"}
    command = [npx, "--yes", CDK_CLI, *arguments, "--no-notices"]
    if subprocess.run(command, env=env).returncode != 0:
        raise CdkFailed


def synth(environment: Environment, outdir: Path | None, pins: Pins = NO_PINS) -> Path:
    # jsii warns on every run that Node 20 is past its end of life; the CDK
    # still works on it, and the warning says nothing about this project.
    os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
    from .app import synthesize  # the CDK starts Node: only the commands that need it import it

    written = synthesize(environment, outdir, pins)
    print(f"{environment.name}: CloudFormation templates in {written}", file=sys.stderr)
    return written


def read_api_key(stdin: TextIO) -> str:
    """The key, typed at a terminal without echo, or piped in; never an argument or a file.

    An argument would sit in the shell's history and in the process list.
    """
    return read_secret(stdin, f"{project.MODEL_PROVIDER} API key", "key")


def read_secret(stdin: TextIO, prompt: str, what: str) -> str:
    """A secret typed at a terminal without echo, or piped in (read_api_key says why)."""
    typed = getpass.getpass(f"{prompt} (not shown): ") if stdin.isatty() else stdin.readline()
    secret = typed.strip()
    if not secret:
        raise SettingError(f"no {what} was given: paste it at the prompt, or pipe it in")
    if any(character.isspace() for character in secret):
        raise SettingError(f"the {what} has a space or a line break inside: give the {what} alone")
    return secret


def store_api_key(environment: Environment, stdin: TextIO) -> None:
    if not runtime.needs_api_key():
        raise SettingError(
            f"model_provider {project.MODEL_PROVIDER} calls the model with the runtime's role: "
            "there is no API key to store"
        )
    require_real_account(environment)
    check_credentials(environment)
    version = store_model_key(environment, read_api_key(stdin))
    print(
        f"{environment.name}: the key is stored in secret {environment.model_key_secret} "
        f"(version {version}); make deploy ENV={environment.name} hands it to the runtime"
    )


def store_oauth_secret(environment: Environment, name: str | None, stdin: TextIO) -> None:
    """`make oauth-secret`: a user token's OAuth app's client secret, in Secrets Manager."""
    if not name:
        raise SettingError(
            f"PROVIDER is required: make oauth-secret ENV={environment.name} PROVIDER=<name>, "
            f"a [{environment.name}.user_tokens.<name>] table of deploy/environments.toml"
        )
    provider = environment.token_provider(name)
    require_real_account(environment)
    check_credentials(environment)
    secret = read_secret(stdin, f"the {provider.vendor} OAuth app's client secret", "client secret")
    version = store_client_secret(environment, provider, secret)
    print(
        f"{environment.name}: the client secret is stored in secret "
        f"{environment.client_secret_name(provider)} (version {version}); make deploy "
        f"ENV={environment.name} hands it to AgentCore Identity"
    )


def store_slack_secret(environment: Environment, stdin: TextIO) -> None:
    """`make slack-secret`: the Slack app's client secret, for the consent endpoint's sign-in."""
    if not environment.user_tokens:
        raise SettingError(
            f"environments.toml [{environment.name}] declares no user tokens: there is no "
            "consent endpoint to sign people in with Slack"
        )
    require_real_account(environment)
    check_credentials(environment)
    secret = read_secret(stdin, "the Slack app's client secret", "client secret")
    version = store_slack_client_secret(environment, secret)
    print(
        f"{environment.name}: the Slack app's client secret is stored in secret "
        f"{environment.slack_client_secret_name} (version {version}); the consent endpoint "
        "reads it at the next sign-in"
    )


def deploy_pins(environment: Environment) -> Pins:
    """What this deploy pins: the current version of the model's key and of each OAuth secret."""
    return Pins(
        api_key_version=model_key_version(environment) if runtime.needs_api_key() else None,
        client_secret_versions=client_secret_versions(environment),
    )


def roll_back(environment: Environment, outdir: Path | None, dry_run: bool) -> Path | None:
    """Synthesize the stack with the live endpoint one version back; the assembly to deploy."""
    outputs = stack_outputs(environment)
    deployed = deployed_template(environment)
    pins = rollback_pins(environment, outputs, deployed)
    assembly = synth(environment, outdir, pins)
    written = assembly / f"{environment.stack_name}.template.json"
    require_only_the_endpoint_moves(deployed, json.loads(written.read_text()))
    print(
        f"{environment.name}: the {runtime.LIVE_ENDPOINT} endpoint moves from version "
        f"{outputs['LiveVersion']} to {pins.live_version}; nothing else changes"
    )
    return None if dry_run else assembly


def print_outputs(environment: Environment) -> None:
    outputs = stack_outputs(environment)
    for key, value in outputs.items():
        print(f"{key}={value}")
    if "LiveVersion" in outputs:
        print(
            f"{environment.name}: endpoint {outputs.get('LiveEndpoint', runtime.LIVE_ENDPOINT)} "
            f"serves version {outputs['LiveVersion']}; DEFAULT serves version "
            f"{outputs.get('RuntimeVersion', '?')}, the newest",
            file=sys.stderr,
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m deploy", description=__doc__)
    parser.add_argument(
        "command",
        choices=[
            "synth", "check", "deploy", "ci-role", "bootstrap", "outputs", "logs", "api-key",
            "rollback", "usage", "oauth-secret", "slack-secret",
        ],
    )  # fmt: skip
    parser.add_argument("env", metavar="ENV", help=f"one of {', '.join(ENVIRONMENTS)}")
    parser.add_argument("--outdir", type=Path, help="synth: where to write (cdk.out/ENV)")
    parser.add_argument("--ci", action="store_true", help="deploy: ask nothing (CI)")
    parser.add_argument(
        "--dry-run", action="store_true", help="rollback: synthesize and say, deploy nothing"
    )
    parser.add_argument("--minutes", type=int, default=60, help="logs: how far back")
    parser.add_argument("--period", default="7d", help="usage: how far back (7d, 24h)")
    parser.add_argument("--log-group", help="usage: the runtime's log group (the stack's LogGroup)")
    parser.add_argument("--provider", help="oauth-secret: the user token (its table's name)")
    options = parser.parse_args(argv)
    try:
        environment = load_environment(options.env)
        if options.command == "synth":
            synth(environment, options.outdir)
        elif options.command == "check":
            print(f"{environment.name}: deploying as {check_credentials(environment)}")
        elif options.command in ("deploy", "ci-role"):
            require_real_account(environment)
            require_pins()
            check_credentials(environment)
            pins = deploy_pins(environment) if options.command == "deploy" else Pins()
            assembly = synth(environment, options.outdir, pins)
            stack = environment.stack_name + ("-ci-role" if options.command == "ci-role" else "")
            approval = "never" if options.ci else "broadening"
            cdk("deploy", "--app", str(assembly), stack, "--require-approval", approval)
        elif options.command == "rollback":
            # No pins check: a checkout whose code differs from the deployed
            # one, unpinned included, is refused by the comparison itself.
            require_real_account(environment)
            check_credentials(environment)
            rolled_back = roll_back(environment, options.outdir, options.dry_run)
            if rolled_back is not None:
                approval = "never" if options.ci else "broadening"
                cdk(
                    "deploy", "--app", str(rolled_back), environment.stack_name,
                    "--require-approval", approval,
                )  # fmt: skip
        elif options.command == "api-key":
            store_api_key(environment, sys.stdin)
        elif options.command == "oauth-secret":
            store_oauth_secret(environment, options.provider, sys.stdin)
        elif options.command == "slack-secret":
            store_slack_secret(environment, sys.stdin)
        elif options.command == "bootstrap":
            require_real_account(environment)
            check_credentials(environment)
            cdk("bootstrap", f"aws://{environment.account}/{environment.region}")
        elif options.command == "outputs":
            require_real_account(environment)
            print_outputs(environment)
        elif options.command == "logs":
            require_real_account(environment)
            print_logs(environment, timedelta(minutes=options.minutes))
        elif options.command == "usage":
            since = usage_report.period(options.period)
            if options.log_group is None:
                require_real_account(environment)
            group = options.log_group or stack_outputs(environment)["LogGroup"]
            rows = usage_report.query_usage(group, environment.region, since)
            print(usage_report.report(rows, group))
    except (SettingError, BundleError, AwsError, ToolMissing, RollbackRefused) as failed:
        print(f"deploy: {failed}", file=sys.stderr)
        return 2
    except CdkFailed:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
