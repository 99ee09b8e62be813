"""`python -m deploy COMMAND ENV`: what `make synth`, `make deploy` and `make logs` run.

This is the one place a deploy error becomes a one-line message and an exit
status; everything below it raises a typed error that says what to fix.
"""

import argparse
import os
import shutil
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

from . import usage_report
from .aws import AwsError, check_credentials, print_logs, require_real_account, stack_outputs
from .code_bundle import BundleError, require_pins
from .runtime import require_a_deployable_provider
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


def synth(environment: Environment, outdir: Path | None) -> Path:
    # jsii warns on every run that Node 20 is past its end of life; the CDK
    # still works on it, and the warning says nothing about this project.
    os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
    from .app import synthesize  # the CDK starts Node: only the commands that need it import it

    written = synthesize(environment, outdir)
    print(f"{environment.name}: CloudFormation templates in {written}", file=sys.stderr)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m deploy", description=__doc__)
    parser.add_argument(
        "command",
        choices=["synth", "check", "deploy", "ci-role", "bootstrap", "outputs", "logs", "usage"],
    )
    parser.add_argument("env", metavar="ENV", help=f"one of {', '.join(ENVIRONMENTS)}")
    parser.add_argument("--outdir", type=Path, help="synth: where to write (cdk.out/ENV)")
    parser.add_argument("--ci", action="store_true", help="deploy: ask nothing (CI)")
    parser.add_argument("--minutes", type=int, default=60, help="logs: how far back")
    parser.add_argument("--period", default="7d", help="usage: how far back (7d, 24h)")
    parser.add_argument("--log-group", help="usage: the runtime's log group (the stack's LogGroup)")
    options = parser.parse_args(argv)
    try:
        environment = load_environment(options.env)
        if options.command == "synth":
            synth(environment, options.outdir)
        elif options.command == "check":
            print(f"{environment.name}: deploying as {check_credentials(environment)}")
        elif options.command in ("deploy", "ci-role"):
            require_real_account(environment)
            if options.command == "deploy":
                require_a_deployable_provider()
            require_pins()
            check_credentials(environment)
            assembly = synth(environment, options.outdir)
            stack = environment.stack_name + ("-ci-role" if options.command == "ci-role" else "")
            approval = "never" if options.ci else "broadening"
            cdk("deploy", "--app", str(assembly), stack, "--require-approval", approval)
        elif options.command == "bootstrap":
            require_real_account(environment)
            check_credentials(environment)
            cdk("bootstrap", f"aws://{environment.account}/{environment.region}")
        elif options.command == "outputs":
            require_real_account(environment)
            for key, value in stack_outputs(environment).items():
                print(f"{key}={value}")
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
    except (SettingError, BundleError, AwsError, ToolMissing) as failed:
        print(f"deploy: {failed}", file=sys.stderr)
        return 2
    except CdkFailed:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
