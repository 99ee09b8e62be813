"""The CDK app for one environment: its runtime stack, and the role its CI deploys with."""

import shutil
from pathlib import Path

from aws_cdk import App

from .code_bundle import ROOT
from .github_role import GitHubDeployRoleStack
from .pins import NO_PINS, Pins
from .runtime_stack import AgentRuntimeStack
from .settings import Environment

CLOUD_ASSEMBLIES = ROOT / "cdk.out"


def synthesize(environment: Environment, outdir: Path | None = None, pins: Pins = NO_PINS) -> Path:
    """Write the environment's CloudFormation templates; nothing is left of a failed synth.

    pins are what a deploy read from AWS (deploy/pins.py); a plain synth has none.
    """
    outdir = outdir or CLOUD_ASSEMBLIES / environment.name
    partial = outdir.with_name(f".{outdir.name}.partial")
    shutil.rmtree(partial, ignore_errors=True)
    try:
        app = App(outdir=str(partial))
        AgentRuntimeStack(app, environment, pins)
        GitHubDeployRoleStack(app, environment)
        app.synth()
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    shutil.rmtree(outdir, ignore_errors=True)
    partial.rename(outdir)
    return outdir
