"""With user tokens: each OAuth app's Identity provider, the session-binding endpoint, their grants.

A tool that acts as the person who asked gets that person's own token from
AgentCore Identity (an OAuth2 credential provider, USER_FEDERATION). Until
they consent, Identity answers with an authorization URL. A link shown in a
channel can be opened by anyone, so after the consent Identity sends the
browser to the workload identity's allowed return URL: this stack's
endpoint, a Lambda function URL, which signs the browser's user in with
Slack, checks that they are the person the consent was asked for, and only
then calls CompleteResourceTokenAuth for them. AWS's managed consent portal
serves AgentCore Gateway sources only, so a runtime needs its own endpoint.

Each piece may call exactly what it calls (deploy/permissions.py): the
runtime fetches tokens and reads the consent key; the endpoint completes a
consent, reads the consent key and the Slack app's client secret, claims a
state once under its prefix and writes its own log lines; nothing else may
read either secret. Built in two steps: the runtime's variables name the
endpoint and the consent key, so those come before the runtime; the return
URL and the endpoint's right to complete a consent name the runtime's own
workload identity, which AgentCore makes with the runtime, so they come
after it (`bind`).
"""

from aws_cdk import AssetHashType, CfnOutput, Duration, Fn, RemovalPolicy, SecretValue, Stack
from aws_cdk import aws_bedrockagentcore as agentcore
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_secretsmanager as secretsmanager
from aws_cdk import custom_resources as cr

from . import code_bundle, permissions, project
from .pins import Pins
from .settings import VENDORS, Environment, TokenProvider
from .stack_parts import only_the_deploy_reads, retention

# Where the endpoint claims each consent state once (If-None-Match), in the
# state bucket when there is one, outside the stored runs' prefix, or in a
# bucket of its own. A state lives 10 minutes; a claim is kept a day.
USED_STATES_PREFIX = "used-consent-states/"
USED_STATES_DAYS = 1
# The endpoint's paths below its base URL (app/<package>/acting/consent_link.py).
SIGNED_IN_PATH = "signed-in"
CALLBACK_PATH = "callback"
# Sign in with Slack's code exchange, its keys, Identity and S3, one request's worth.
ENDPOINT_TIMEOUT = Duration.seconds(30)
ENDPOINT_MEMORY_MB = 512
# How the CDK's L1 names each vendor's configuration (GithubOauth2ProviderConfigInput, ...).
_CONFIGS = {
    "atlassian": ("atlassian_oauth2_provider_config", "AtlassianOauth2ProviderConfigInputProperty"),
    "github": ("github_oauth2_provider_config", "GithubOauth2ProviderConfigInputProperty"),
    "google": ("google_oauth2_provider_config", "GoogleOauth2ProviderConfigInputProperty"),
    "linkedin": ("linkedin_oauth2_provider_config", "LinkedinOauth2ProviderConfigInputProperty"),
    "microsoft": ("microsoft_oauth2_provider_config", "MicrosoftOauth2ProviderConfigInputProperty"),
    "salesforce": (
        "salesforce_oauth2_provider_config", "SalesforceOauth2ProviderConfigInputProperty",
    ),
    "slack": ("slack_oauth2_provider_config", "SlackOauth2ProviderConfigInputProperty"),
}  # fmt: skip
assert set(_CONFIGS) == set(VENDORS)


def camel(name: str) -> str:
    """A provider's name as a logical id's part: `google-drive` is `GoogleDrive`."""
    return "".join(part.capitalize() for part in name.split("-"))


class UserTokens:
    """What the stack declares for the environment's user tokens."""

    def __init__(
        self,
        stack: Stack,
        environment: Environment,
        runtime_role: iam.Role,
        pins: Pins,
        state_bucket: s3.Bucket | None,
    ) -> None:
        self.stack = stack
        self.environment = environment
        self.runtime_role = runtime_role
        self.providers = {
            provider.name: self._provider(provider, pins) for provider in environment.user_tokens
        }
        self.role = iam.Role(
            stack,
            "ConsentEndpointRole",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
            description=f"What {environment.stack_name}'s session-binding endpoint may call",
        )
        self.consent_key = self._consent_key()
        self.slack_secret = self._slack_secret()
        self.used_states = self._used_states(state_bucket)
        self.function = self._endpoint()
        self.url = self.function.add_function_url(auth_type=lambda_.FunctionUrlAuthType.NONE)
        # The function URL ends in a slash; the agent's setting takes none.
        self.base_url = Fn.join("", ["https://", Fn.select(2, Fn.split("/", self.url.url))])
        self._grant_runtime()

    def _arn(self, service: str, resource: str) -> str:
        stack = self.stack
        return f"arn:{stack.partition}:{service}:{stack.region}:{stack.account}:{resource}"

    def _identity_arns(self, workload_identity: str) -> list[str]:
        """Where the two calls are authorized: the providers, the vault, the workload identity.

        As the model key's GetResourceApiKey, and the CDK's own grants of
        these actions, which also name the vault's OAuth2 collection.
        """
        return [
            *(provider.attr_credential_provider_arn for provider in self.providers.values()),
            self._arn("bedrock-agentcore", "token-vault/default"),
            self._arn("bedrock-agentcore", "token-vault/default/oauth2credentialprovider"),
            self._arn("bedrock-agentcore", "workload-identity-directory/default"),
            workload_identity,
        ]

    def _provider(
        self, provider: TokenProvider, pins: Pins
    ) -> agentcore.CfnOAuth2CredentialProvider:
        """The OAuth app in Identity, its client secret from the secret `make oauth-secret` filled.

        As the model's key: a dynamic reference CloudFormation resolves while
        it deploys, pinned by `make deploy` to the secret's current version,
        and that secret readable by CloudFormation's execution role alone.
        Identity's callback URL for it, to register at the OAuth app, is an
        output: GithubCallbackUrl for a user token named github.
        """
        environment = self.environment
        name = environment.token_provider_name(provider)
        secret = environment.client_secret_name(provider)
        client_secret = SecretValue.secrets_manager(
            secret, version_id=pins.client_secret_versions.get(name)
        ).unsafe_unwrap()  # a secretsmanager dynamic reference, never the secret
        l1 = agentcore.CfnOAuth2CredentialProvider
        config_key, config_type = _CONFIGS[provider.vendor]
        config = getattr(l1, config_type)(client_id=provider.client_id, client_secret=client_secret)
        cfn = l1(
            self.stack,
            f"{camel(provider.name)}TokenProvider",
            name=name,
            credential_provider_vendor=VENDORS[provider.vendor],
            oauth2_provider_config_input=l1.Oauth2ProviderConfigInputProperty(
                **{config_key: config}
            ),
        )
        only_the_deploy_reads(
            self.stack,
            f"{camel(provider.name)}ClientSecretPolicy",
            secret,
            permissions.CLIENT_SECRET_READ_ACTIONS,
        )
        CfnOutput(
            self.stack,
            f"{camel(provider.name)}CallbackUrl",
            value=cfn.attr_callback_url,
            description=(
                f"register it as the {provider.vendor} OAuth app's callback URL "
                f"(provider {name}, made from secret {secret})"
            ),
        )
        return cfn

    def _consent_key(self) -> secretsmanager.Secret:
        """The key that seals a consent link's state: generated, read by the runtime and endpoint.

        Its own, not the run seal key: the endpoint is public, and must not
        be able to seal a run the agent would trust.
        """
        secret = secretsmanager.Secret(
            self.stack,
            "ConsentKey",
            description=(
                f"Seals the consent links of {self.environment.runtime_name}; read by it and by "
                "its session-binding endpoint alone"
            ),
            generate_secret_string=secretsmanager.SecretStringGenerator(
                password_length=64, exclude_punctuation=True
            ),
        )
        self._readable_by_alone(secret, [self.runtime_role, self.role])
        return secret

    def _slack_secret(self) -> secretsmanager.Secret:
        """The Slack app's client secret, for Sign in with Slack; `make slack-secret` fills it.

        The stack makes it with a random value Slack refuses, so the endpoint
        reads the secret by its ARN from the first deploy on, and a new one
        takes effect at the next sign-in, with no deploy.
        """
        secret = secretsmanager.Secret(
            self.stack,
            "SlackClientSecret",
            secret_name=self.environment.slack_client_secret_name,
            description=(
                f"The Slack app's client secret, with which {self.environment.stack_name}'s "
                "session-binding endpoint signs people in (make slack-secret)"
            ),
            generate_secret_string=secretsmanager.SecretStringGenerator(
                password_length=32, exclude_punctuation=True
            ),
        )
        self._readable_by_alone(secret, [self.role])
        return secret

    def _readable_by_alone(self, secret: secretsmanager.Secret, roles: list[iam.Role]) -> None:
        """Nobody else's GetSecretValue is let through, administrators' included (as RunKey's)."""
        secret.add_to_resource_policy(
            iam.PolicyStatement(
                sid="OnlyItsReadersReadIt",
                effect=iam.Effect.DENY,
                principals=[iam.AnyPrincipal()],
                actions=["secretsmanager:GetSecretValue"],
                resources=["*"],
                conditions={"StringNotEquals": {"aws:PrincipalArn": [r.role_arn for r in roles]}},
            )
        )

    def _used_states(self, state_bucket: s3.Bucket | None) -> s3.Bucket:
        """Where a consent state is claimed once: the state bucket, or a private one of its own."""
        expire = s3.LifecycleRule(
            id="ForgetUsedConsentStates",
            prefix=USED_STATES_PREFIX,
            expiration=Duration.days(USED_STATES_DAYS),
        )
        if state_bucket is not None:
            state_bucket.add_lifecycle_rule(
                id=expire.id, prefix=expire.prefix, expiration=expire.expiration
            )
            return state_bucket
        bucket = s3.Bucket(
            self.stack,
            "UsedConsentStates",
            encryption=s3.BucketEncryption.S3_MANAGED,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            enforce_ssl=True,
            lifecycle_rules=[expire],
            # What is left in it is a day's claims: delete the bucket by hand.
            removal_policy=RemovalPolicy.RETAIN,
        )
        CfnOutput(self.stack, "UsedConsentStatesBucket", value=bucket.bucket_name)
        return bucket

    def _endpoint(self) -> lambda_.Function:
        """The session-binding endpoint: the package's handler, with authlib, on arm64 Lambda."""
        environment = self.environment
        folder, key = code_bundle.built_endpoint_bundle()
        log_group = logs.LogGroup(
            self.stack,
            "ConsentEndpointLogs",
            retention=retention(environment.log_retention_days),
            removal_policy=RemovalPolicy.DESTROY,
        )
        role = self.role
        role.add_to_policy(
            iam.PolicyStatement(
                sid="ReadTheConsentKeyAndTheSlackAppsSecret",
                actions=list(permissions.BINDING_SECRET_ACTIONS),
                resources=[self.consent_key.secret_arn, self.slack_secret.secret_arn],
            )
        )
        role.add_to_policy(
            iam.PolicyStatement(
                sid="ClaimEachConsentStateOnce",
                actions=list(permissions.USED_STATE_ACTIONS),
                resources=[self.used_states.arn_for_objects(f"{USED_STATES_PREFIX}*")],
            )
        )
        role.add_to_policy(
            iam.PolicyStatement(
                sid="ItsOwnLogLines",
                actions=list(permissions.BINDING_LOG_ACTIONS),
                resources=[log_group.log_group_arn],
            )
        )
        return lambda_.Function(
            self.stack,
            "ConsentEndpoint",
            description=(
                f"{environment.stack_name}: binds a consent to the Slack user it was asked for"
            ),
            runtime=getattr(lambda_.Runtime, f"PYTHON_{project.PYTHON_VERSION.replace('.', '_')}"),
            architecture=lambda_.Architecture.ARM_64,
            handler=code_bundle.ENDPOINT_HANDLER,
            code=lambda_.Code.from_asset(
                str(folder), asset_hash=key, asset_hash_type=AssetHashType.CUSTOM
            ),
            role=role,
            log_group=log_group,
            timeout=ENDPOINT_TIMEOUT,
            memory_size=ENDPOINT_MEMORY_MB,
            environment={
                "SLACK_CLIENT_ID": str(environment.slack_client_id),
                "SLACK_CLIENT_SECRET_ARN": self.slack_secret.secret_arn,
                "CONSENT_KEY_SECRET": self.consent_key.secret_arn,
                "USED_STATES_BUCKET": self.used_states.bucket_name,
                "USED_STATES_PREFIX": USED_STATES_PREFIX,
            },
        )

    def _grant_runtime(self) -> None:
        """The runtime's calls, in a policy of their own: nothing fetches a token before a request.

        GetResourceOauth2Token on the providers, through the runtime's own
        workload identity (named after it by AgentCore); Identity's read of
        each provider's client secret in its vault, with the runtime's
        credentials (as for the model's key); the consent key.
        """
        environment = self.environment
        own_identity = self._arn(
            "bedrock-agentcore",
            f"workload-identity-directory/default/workload-identity/{environment.runtime_name}-*",
        )
        vault_secrets = [
            self._arn(
                "secretsmanager",
                "secret:bedrock-agentcore-identity!default/oauth2/"
                f"{environment.token_provider_name(provider)}-??????",
            )
            for provider in environment.user_tokens
        ]
        iam.Policy(
            self.stack,
            "UserTokenPolicy",
            roles=[self.runtime_role],
            statements=[
                iam.PolicyStatement(
                    sid="FetchTheStartersTokenWithARequestsToken",
                    actions=list(permissions.USER_TOKEN_ACTIONS),
                    resources=self._identity_arns(own_identity),
                ),
                iam.PolicyStatement(
                    sid="IdentityReadsTheClientSecretsFromItsVault",
                    actions=list(permissions.USER_TOKEN_VAULT_ACTIONS),
                    resources=vault_secrets,
                ),
                iam.PolicyStatement(
                    sid="ReadTheConsentKey",
                    actions=list(permissions.CONSENT_KEY_ACTIONS),
                    resources=[self.consent_key.secret_arn],
                ),
            ],
        )

    def bind(self, cfn_runtime: agentcore.CfnRuntime) -> None:
        """The runtime's workload identity: its one return URL, the endpoint's right to complete.

        AgentCore makes the runtime's workload identity, so CloudFormation
        cannot declare its allowed return URLs: a CDK custom resource sets
        them with UpdateWorkloadIdentity at each deploy that changes the URL,
        and empties them when the endpoint goes.
        """
        stack = self.stack
        # Named as the runtime's id, `<runtime name>-<ten characters>`, as a
        # deployed runtime's GetAgentRuntime shows (its WorkloadIdentityDetails
        # is an object, which neither a GetAtt nor cfn-lint can take apart).
        identity_name = cfn_runtime.attr_agent_runtime_id
        identity_arn = self._arn(
            "bedrock-agentcore",
            f"workload-identity-directory/default/workload-identity/{identity_name}",
        )
        return_url = Fn.join("", [self.url.url, CALLBACK_PATH])

        def allowed(urls: list[str], ignoring: str | None = None) -> cr.AwsSdkCall:
            return cr.AwsSdkCall(
                service="bedrock-agentcore-control",
                action="UpdateWorkloadIdentity",
                parameters={"name": identity_name, "allowedResourceOauth2ReturnUrls": urls},
                physical_resource_id=cr.PhysicalResourceId.of(identity_name),
                ignore_error_codes_matching=ignoring,
            )

        cr.AwsCustomResource(
            stack,
            "ConsentReturnUrl",
            on_update=allowed([return_url]),
            # Gone with the runtime already, or emptied: nothing left to allow.
            on_delete=allowed([], ignoring="ResourceNotFoundException"),
            policy=cr.AwsCustomResourcePolicy.from_statements(
                [
                    iam.PolicyStatement(
                        sid="SetTheRuntimesReturnUrl",
                        actions=list(permissions.RETURN_URL_ACTIONS),
                        resources=[
                            identity_arn,
                            self._arn("bedrock-agentcore", "workload-identity-directory/default"),
                            self._arn(
                                "bedrock-agentcore",
                                "workload-identity-directory/default/workload-identity",
                            ),
                        ],
                    )
                ]
            ),
            # The Lambda runtime's own SDK: no download from npm while deploying.
            install_latest_aws_sdk=False,
        )
        # A policy of its own, not the role's: the endpoint's function waits
        # for its role, and the runtime for the function's URL.
        iam.Policy(
            stack,
            "ConsentEndpointPolicy",
            roles=[self.role],
            statements=[
                iam.PolicyStatement(
                    sid="CompleteAConsentForTheSignedInStarter",
                    actions=list(permissions.BINDING_ACTIONS),
                    resources=self._identity_arns(identity_arn),
                )
            ],
        )
        CfnOutput(
            stack,
            "ConsentEndpointUrl",
            value=self.base_url,
            description="the session-binding endpoint (the runtime's CONSENT_ENDPOINT_URL)",
        )
        CfnOutput(
            stack,
            "SlackRedirectUrl",
            value=Fn.join("", [self.url.url, SIGNED_IN_PATH]),
            description="add it to the Slack app's Redirect URLs, with the openid user scope",
        )
