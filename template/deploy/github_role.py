"""The role a GitHub Actions deploy job assumes through OIDC: no long-lived keys anywhere.

GitHub signs a short-lived token for each job; AWS trusts it only for this
repository's jobs that run in this environment (a protected GitHub
environment for prod), and the role may do only what a CDK deploy does:
assume the deploy roles that `cdk bootstrap` made in this account and Region
(and, with Anthropic or OpenAI, read which version of the model's key is
current, never the key; with user tokens, of each OAuth app's client secret).
"""

from aws_cdk import CfnOutput, Duration, Stack
from aws_cdk import Environment as AwsEnvironment
from aws_cdk import aws_iam as iam
from constructs import Construct

from . import permissions, project, runtime
from .settings import Environment

GITHUB_OIDC = "token.actions.githubusercontent.com"
# The CDK's default bootstrap qualifier: its roles are named
# cdk-<qualifier>-<purpose>-role-<account>-<region>.
CDK_QUALIFIER = "hnb659fds"


class GitHubDeployRoleStack(Stack):
    def __init__(self, scope: Construct, environment: Environment) -> None:
        super().__init__(
            scope,
            f"{environment.stack_name}-ci-role",
            env=AwsEnvironment(account=environment.account, region=environment.region),
            description=f"{project.PROJECT_NAME} ({environment.name}): GitHub Actions deploys",
        )
        # One OIDC provider per account, shared by every repository: made once,
        # by the command docs/deploying.md gives, never by one project's stack.
        provider = iam.OpenIdConnectProvider.from_open_id_connect_provider_arn(
            self, "GitHub", f"arn:{self.partition}:iam::{self.account}:oidc-provider/{GITHUB_OIDC}"
        )
        role = iam.Role(
            self,
            "DeployRole",
            role_name=f"{environment.stack_name}-github-deploy",
            max_session_duration=Duration.hours(1),
            assumed_by=iam.OpenIdConnectPrincipal(
                provider,
                conditions={
                    "StringEquals": {
                        f"{GITHUB_OIDC}:aud": "sts.amazonaws.com",
                        f"{GITHUB_OIDC}:sub": (
                            f"repo:{environment.github_repository}:environment:{environment.name}"
                        ),
                    }
                },
            ),
            description=f"GitHub Actions deploys of {environment.stack_name}",
        )
        role.add_to_policy(
            iam.PolicyStatement(
                sid="UseTheCdkBootstrapRoles",
                actions=["sts:AssumeRole"],
                resources=[
                    f"arn:{self.partition}:iam::{self.account}:role/"
                    f"cdk-{CDK_QUALIFIER}-*-role-{self.account}-{self.region}"
                ],
            )
        )
        if runtime.needs_api_key():
            # A deploy names the key's current version (deploy/pins.py): it reads
            # the secret's metadata, never its value.
            role.add_to_policy(
                iam.PolicyStatement(
                    sid="ReadWhichVersionOfTheModelKeyIsCurrent",
                    actions=list(permissions.MODEL_KEY_VERSION_ACTIONS),
                    resources=[
                        f"arn:{self.partition}:secretsmanager:{self.region}:{self.account}:"
                        f"secret:{environment.model_key_secret}-??????"
                    ],
                )
            )
        if environment.user_tokens:
            role.add_to_policy(
                iam.PolicyStatement(
                    sid="ReadWhichVersionOfEachOAuthClientSecretIsCurrent",
                    actions=list(permissions.CLIENT_SECRET_VERSION_ACTIONS),
                    resources=[
                        f"arn:{self.partition}:secretsmanager:{self.region}:{self.account}:"
                        f"secret:{environment.client_secret_name(provider)}-??????"
                        for provider in environment.user_tokens
                    ],
                )
            )
        CfnOutput(
            self,
            "DeployRoleArn",
            value=role.role_arn,
            description="the GitHub environment's AWS_DEPLOY_ROLE_ARN variable",
        )
