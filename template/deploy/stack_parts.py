"""What the runtime's stack and its user tokens' part both declare the same way."""

from collections.abc import Sequence

from aws_cdk import DefaultStackSynthesizer, Fn, Stack
from aws_cdk import aws_logs as logs
from aws_cdk import aws_secretsmanager as secretsmanager

from .settings import LOG_RETENTION_DAYS, SettingError


def retention(days: int) -> logs.RetentionDays:
    """CloudWatch's period for a number of days; settings.py allows only these."""
    periods = [period for period in logs.RetentionDays if period is not logs.RetentionDays.INFINITE]
    return dict(zip(LOG_RETENTION_DAYS, periods, strict=True))[days]


def only_the_deploy_reads(
    stack: Stack, construct_id: str, secret_name: str, actions: Sequence[str]
) -> secretsmanager.CfnResourcePolicy:
    """A secret a `make` task filled may be read by the deploy's CloudFormation alone.

    Like the seal key's: nobody else's GetSecretValue is let through,
    administrators' included (they can change the policy, which CloudTrail
    records). The one reader is CloudFormation, resolving a dynamic
    reference to it while it deploys, with the CDK's execution role (cdk
    bootstrap's, which every `cdk deploy` of this stack passes it). The
    secret is not the stack's (the task made it, before the first deploy),
    so the policy is a resource of its own: it holds from the first deploy
    until the stack is deleted, and is removed with it.
    """
    synthesizer = stack.synthesizer
    if not isinstance(synthesizer, DefaultStackSynthesizer):
        raise SettingError(
            "the stack must be synthesized with the CDK's default synthesizer: a secret a make "
            "task fills may be read by its CloudFormation execution role alone"
        )
    return secretsmanager.CfnResourcePolicy(
        stack,
        construct_id,
        secret_id=secret_name,
        block_public_policy=True,
        resource_policy={
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Sid": "OnlyTheDeployReadsIt",
                    "Effect": "Deny",
                    "Principal": {"AWS": "*"},
                    "Action": list(actions),
                    "Resource": "*",
                    "Condition": {
                        "StringNotEquals": {
                            # The synthesizer's ARN names the partition as
                            # ${AWS::Partition}, for CloudFormation to fill in.
                            "aws:PrincipalArn": Fn.sub(
                                synthesizer.cloud_formation_execution_role_arn
                            )
                        }
                    },
                }
            ],
        },
    )
