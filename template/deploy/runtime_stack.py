"""One environment's AgentCore runtime, and everything it needs, as one CloudFormation stack.

Declared here rather than set after a deploy, so the next deploy can neither
undo nor drift from it: platform V2 with its warm-up hook, the execution
role with only what the agent calls, trusted by this runtime alone, the
secret that seals stored runs, the stored runs' bucket, the model's API key
in AgentCore Identity (Anthropic, OpenAI), the live endpoint Welt invokes
and the version it serves, the logs' retention, the one policy that lets
Welt invoke the runtime, and, with user tokens, what acting as the person
who asked needs (deploy/user_tokens.py).
"""

from aws_cdk import (
    Acknowledgment,
    AssetHashType,
    CfnOutput,
    Duration,
    RemovalPolicy,
    SecretValue,
    Stack,
    Tags,
    Validations,
)
from aws_cdk import Environment as AwsEnvironment
from aws_cdk import aws_bedrockagentcore as agentcore
from aws_cdk import aws_ecr_assets as ecr_assets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_logs as logs
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_s3_assets as s3_assets
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct

from . import code_bundle, permissions, project, runtime
from .pins import NO_PINS, Pins
from .settings import Environment, SettingError
from .stack_parts import only_the_deploy_reads, retention
from .user_tokens import UserTokens

# An inference profile's id starts with where it routes requests (us.,
# eu., apac., global., ...); a foundation model's id does not.
_PROFILE_PREFIXES = ("us.", "us-gov.", "eu.", "apac.", "ca.", "jp.", "au.", "global.")


class AgentRuntimeStack(Stack):
    def __init__(self, scope: Construct, environment: Environment, pins: Pins = NO_PINS) -> None:
        super().__init__(
            scope,
            environment.stack_name,
            env=AwsEnvironment(account=environment.account, region=environment.region),
            description=f"{project.PROJECT_NAME} ({environment.name}): a Strands agent for Welt",
        )
        Tags.of(self).add("project", project.PROJECT_NAME)
        Tags.of(self).add("environment", environment.name)

        variables = runtime.environment_variables(environment)
        platform = runtime.platform_version()
        budget = runtime.ENV_BUDGET_BYTES[platform]
        used = runtime.environment_bytes(variables)
        if project.USE_MEMORY:
            used += len("MEMORY_ID") + runtime.MEMORY_ID_BYTES
        used += len("RUN_KEY_SECRET") + runtime.RUN_KEY_SECRET_BYTES
        if environment.user_tokens:
            used += len("CONSENT_KEY_SECRET") + runtime.CONSENT_KEY_SECRET_BYTES
            used += len("CONSENT_ENDPOINT_URL") + runtime.CONSENT_ENDPOINT_URL_BYTES
        if used > budget:
            raise SettingError(
                f"the runtime's environment variables take {used} bytes, over platform "
                f"{platform}'s {budget}: shorten model_id or state_bucket, or name fewer "
                "approvers or budget_exempt users"
            )

        role = iam.Role(
            self,
            "ExecutionRole",
            assumed_by=iam.ServicePrincipal(
                "bedrock-agentcore.amazonaws.com",
                conditions={
                    "StringEquals": {"aws:SourceAccount": self.account},
                    # This runtime's ARN and no other: its name, then a hyphen and
                    # the ten characters AgentCore adds (names take no hyphen,
                    # so `<name>_staging2-…` cannot match `<name>_staging-…`).
                    "ArnLike": {
                        "aws:SourceArn": self._arn(
                            "bedrock-agentcore",
                            self.region,
                            f"runtime/{environment.runtime_name}-{'?' * 10}",
                        )
                    },
                },
            ),
            description=f"What the {environment.runtime_name} runtime may call",
        )
        self._grant_platform(role, environment)
        if project.MODEL_PROVIDER == "bedrock":
            role.add_to_policy(
                iam.PolicyStatement(
                    sid="InvokeTheModel",
                    actions=list(permissions.MODEL_ACTIONS),
                    resources=self._model_arns(environment.model_id),
                )
            )
        if project.USE_IMAGE_GENERATION:
            role.add_to_policy(
                iam.PolicyStatement(
                    sid="GenerateImages",
                    actions=list(permissions.IMAGE_MODEL_ACTIONS),
                    resources=[
                        self._arn(
                            "bedrock",
                            permissions.IMAGE_MODEL_REGION,
                            f"foundation-model/{model}",
                            account="",
                        )
                        for model in permissions.IMAGE_MODELS
                    ],
                )
            )
        variables["RUN_KEY_SECRET"] = self._run_key(role, environment)
        bucket = self._bucket(role, environment) if project.RUN_STORE == "s3" else None
        if project.USE_MEMORY:
            variables["MEMORY_ID"] = self._memory(role, environment)
        user_tokens = None
        if environment.user_tokens:
            # The session-binding endpoint and the key of the links the agent
            # sends to it (deploy/user_tokens.py); USER_TOKEN_PROVIDERS is runtime.py's.
            user_tokens = UserTokens(self, environment, role, pins, bucket)
            variables["CONSENT_ENDPOINT_URL"] = user_tokens.base_url
            variables["CONSENT_KEY_SECRET"] = user_tokens.consent_key.secret_arn

        cfn_runtime = agentcore.CfnRuntime(
            self,
            "Runtime",
            agent_runtime_name=environment.runtime_name,
            description=f"{project.PROJECT_NAME} ({environment.name})",
            role_arn=role.role_arn,
            agent_runtime_artifact=self._artifact(role),
            network_configuration=agentcore.CfnRuntime.NetworkConfigurationProperty(
                network_mode="PUBLIC"
            ),
            protocol_configuration="HTTP",
            environment_variables=variables,
            lifecycle_configuration=agentcore.CfnRuntime.LifecycleConfigurationProperty(
                idle_runtime_session_timeout=runtime.IDLE_TIMEOUT_SECONDS,
                max_lifetime=runtime.MAX_LIFETIME_SECONDS,
            ),
            filesystem_configurations=self._session_storage(),
            platform_version=platform,
        )
        # The role's policy must be attached before the runtime starts: V2 runs
        # the agent (and its warm-up) while the runtime is being created.
        policy = role.node.find_child("DefaultPolicy")
        cfn_runtime.node.add_dependency(policy)
        if platform == "V2":
            # aws-cdk-lib 2.277.0 adds a typed hooks_configuration; 2.275.0 (the
            # newest on some registries) has none, so it goes in through the L1
            # escape hatch, which every version keeps.
            cfn_runtime.add_property_override(
                "HooksConfiguration",
                {
                    "Build": {
                        "Warmup": {
                            "Action": {
                                "HttpPost": {"Path": runtime.WARMUP_PATH, "Port": runtime.PORT}
                            }
                        }
                    }
                },
            )
            Validations.of(cfn_runtime).acknowledge(
                Acknowledgment(
                    id="CloudFormation-Validate::F3002",
                    reason="HooksConfiguration is newer than the CDK's bundled resource schema",
                )
            )

        if runtime.needs_api_key():
            self._model_key(role, environment, pins)
        if user_tokens is not None:
            user_tokens.bind(cfn_runtime)

        runtime_arn = cfn_runtime.attr_agent_runtime_arn
        live_version = self._live_endpoint(cfn_runtime, environment, pins)
        # A log group per endpoint. AgentCore creates each when the agent first
        # logs there, which can be before CloudFormation could: this sets the
        # retention either way. Welt invokes the live endpoint.
        runtime_id = cfn_runtime.attr_agent_runtime_id
        log_groups = {
            endpoint: f"/aws/bedrock-agentcore/runtimes/{runtime_id}-{endpoint}"
            for endpoint in (runtime.LIVE_ENDPOINT, "DEFAULT")
        }
        logs.LogRetention(
            self,
            "LogRetention",
            log_group_name=log_groups["DEFAULT"],
            retention=retention(environment.log_retention_days),
        )
        logs.LogRetention(
            self,
            "LiveLogRetention",
            log_group_name=log_groups[runtime.LIVE_ENDPOINT],
            retention=retention(environment.log_retention_days),
        )

        welt = iam.ManagedPolicy(
            self,
            "WeltInvokePolicy",
            description=(
                f"Lets Welt invoke {environment.runtime_name} on behalf of a verified Slack "
                "user; attach it to Welt's role and to nothing else"
            ),
            statements=[
                iam.PolicyStatement(
                    sid="InvokeThisRuntimeOnly",
                    actions=list(permissions.WELT_ACTIONS),
                    resources=[runtime_arn, f"{runtime_arn}/runtime-endpoint/*"],
                )
            ],
        )

        CfnOutput(self, "AgentArn", value=runtime_arn, description="Welt's AGENT_ARN")
        CfnOutput(
            self,
            "LiveEndpoint",
            value=runtime.LIVE_ENDPOINT,
            description="Welt's AGENT_QUALIFIER",
        )
        CfnOutput(
            self,
            "LiveVersion",
            value=live_version,
            description="the runtime version the live endpoint serves (make rollback reads it)",
        )
        CfnOutput(
            self,
            "RuntimeVersion",
            value=cfn_runtime.attr_agent_runtime_version,
            description="the newest runtime version, which the DEFAULT endpoint serves",
        )
        CfnOutput(self, "WeltPolicyArn", value=welt.managed_policy_arn)
        CfnOutput(self, "RuntimeId", value=cfn_runtime.attr_agent_runtime_id)
        CfnOutput(
            self,
            "LogGroup",
            value=log_groups[runtime.LIVE_ENDPOINT],
            description="the live endpoint's logs, which make logs reads",
        )

    def _live_endpoint(
        self, cfn_runtime: agentcore.CfnRuntime, environment: Environment, pins: Pins
    ) -> str:
        """The endpoint Welt invokes, on the version this deploy made, or the pinned one.

        The DEFAULT endpoint always serves the newest version; this one
        serves what the stack says, so `make rollback` can point it back
        (deploy/pins.py) and the next deploy forward again.
        """
        version = pins.live_version or cfn_runtime.attr_agent_runtime_version
        agentcore.CfnRuntimeEndpoint(
            self,
            "LiveRuntimeEndpoint",
            agent_runtime_id=cfn_runtime.attr_agent_runtime_id,
            name=runtime.LIVE_ENDPOINT,
            agent_runtime_version=version,
            description=f"What Welt invokes on {environment.runtime_name} (AGENT_QUALIFIER)",
        )
        return version

    def _model_key(self, role: iam.Role, environment: Environment, pins: Pins) -> None:
        """The model's API key in AgentCore Identity, and the one call the runtime makes for it.

        The key never enters the template: the credential provider's ApiKey
        is a dynamic reference to the secret `make api-key` filled, which
        CloudFormation resolves while it deploys, and Identity keeps the key
        in its own vault (a secret of its own). The runtime calls
        GetResourceApiKey with each request's workload access token; Identity
        then reads that vault secret with the runtime's credentials. Both are
        granted on this provider alone, in a policy of their own: the runtime
        fetches nothing before its first request, so it need not wait for it.
        """
        provider = agentcore.CfnApiKeyCredentialProvider(
            self,
            "ModelApiKey",
            name=environment.model_key_provider,
            api_key=SecretValue.secrets_manager(
                environment.model_key_secret, version_id=pins.api_key_version
            ).unsafe_unwrap(),  # a secretsmanager dynamic reference, never the key
        )
        statements = [
            iam.PolicyStatement(
                sid="FetchTheModelKeyWithARequestsToken",
                actions=list(permissions.API_KEY_ACTIONS),
                resources=[
                    provider.attr_credential_provider_arn,
                    self._arn("bedrock-agentcore", self.region, "token-vault/default"),
                    self._arn(
                        "bedrock-agentcore", self.region, "workload-identity-directory/default"
                    ),
                    # The runtime's own workload identity, named after it by AgentCore.
                    self._arn(
                        "bedrock-agentcore",
                        self.region,
                        "workload-identity-directory/default/workload-identity/"
                        f"{environment.runtime_name}-*",
                    ),
                ],
            ),
            iam.PolicyStatement(
                sid="IdentityReadsTheKeyFromItsVault",
                actions=list(permissions.API_KEY_VAULT_ACTIONS),
                # Identity's secret for this provider: its name, then Secrets
                # Manager's six characters (the provider's ApiKeySecretArn).
                resources=[
                    self._arn(
                        "secretsmanager",
                        self.region,
                        "secret:bedrock-agentcore-identity!default/apikey/"
                        f"{environment.model_key_provider}-??????",
                    )
                ],
            ),
        ]
        iam.Policy(self, "ModelApiKeyPolicy", roles=[role], statements=statements)
        self._model_key_secret_policy(environment)
        CfnOutput(
            self,
            "ModelApiKeyProvider",
            value=provider.attr_credential_provider_arn,
            description=f"made from secret {environment.model_key_secret} (make api-key)",
        )

    def _model_key_secret_policy(self, environment: Environment) -> None:
        """The secret `make api-key` fills may be read by the deploy's CloudFormation alone.

        Identity reads only its own vault's copy, and the runtime neither;
        `make api-key` writes and `make deploy` describes the secret, neither
        reads its value (deploy/stack_parts.py says who does).
        """
        only_the_deploy_reads(
            self,
            "ModelApiKeySecretPolicy",
            environment.model_key_secret,
            permissions.MODEL_KEY_READ_ACTIONS,
        )

    def _arn(self, service: str, region: str, resource: str, account: str | None = None) -> str:
        owner = self.account if account is None else account
        return f"arn:{self.partition}:{service}:{region}:{owner}:{resource}"

    def _grant_platform(self, role: iam.Role, environment: Environment) -> None:
        """What AgentCore does with the role on the agent's behalf: logs, spans, metrics."""
        runtime_groups = f"log-group:/aws/bedrock-agentcore/runtimes/{environment.runtime_name}-*"
        role.add_to_policy(
            iam.PolicyStatement(
                sid="RuntimeLogGroups",
                actions=list(permissions.LOG_GROUP_ACTIONS),
                resources=[self._arn("logs", self.region, runtime_groups)],
            )
        )
        role.add_to_policy(
            iam.PolicyStatement(
                sid="RuntimeLogStreams",
                actions=list(permissions.LOG_STREAM_ACTIONS),
                resources=[self._arn("logs", self.region, f"{runtime_groups}:log-stream:*")],
            )
        )
        role.add_to_policy(
            iam.PolicyStatement(
                sid="FindLogGroups",
                actions=list(permissions.LOG_LISTING_ACTIONS),
                resources=[self._arn("logs", self.region, "log-group:*")],
            )
        )
        role.add_to_policy(
            iam.PolicyStatement(
                sid="Traces",
                actions=list(permissions.TRACE_ACTIONS),
                resources=["*"],  # X-Ray's actions take no resource
            )
        )
        role.add_to_policy(
            iam.PolicyStatement(
                sid="MetricsInAgentCoresNamespace",
                actions=list(permissions.METRIC_ACTIONS),
                resources=["*"],  # PutMetricData takes no resource; the namespace narrows it
                conditions={"StringEquals": {"cloudwatch:namespace": permissions.METRIC_NAMESPACE}},
            )
        )

    def _model_arns(self, model_id: str) -> list[str]:
        """The model's ARNs: an inference profile routes to its model in several Regions."""
        if model_id.startswith("arn:"):
            return [model_id]
        if model_id.startswith(_PROFILE_PREFIXES):
            model = model_id.split(".", 1)[1]
            return [
                self._arn("bedrock", self.region, f"inference-profile/{model_id}"),
                self._arn("bedrock", "*", f"foundation-model/{model}", account=""),
            ]
        return [self._arn("bedrock", self.region, f"foundation-model/{model_id}", account="")]

    def _run_key(self, role: iam.Role, environment: Environment) -> str:
        """The secret that seals stored runs, readable by the runtime alone; returns its ARN.

        A record changed by anyone who may write the store, but not read
        this, is refused (docs/patterns/stored-runs.md). Nobody else's
        GetSecretValue is let through, administrators' included: they can
        still change the policy, which CloudTrail records.
        """
        secret = secretsmanager.Secret(
            self,
            "RunKey",
            description=f"Seals the stored runs of {environment.runtime_name}; read by it alone",
            generate_secret_string=secretsmanager.SecretStringGenerator(
                password_length=64, exclude_punctuation=True
            ),
        )
        role.add_to_policy(
            iam.PolicyStatement(
                sid="ReadTheKeyThatSealsStoredRuns",
                actions=list(permissions.RUN_KEY_ACTIONS),
                resources=[secret.secret_arn],
            )
        )
        secret.add_to_resource_policy(
            iam.PolicyStatement(
                sid="OnlyTheRuntimeReadsIt",
                effect=iam.Effect.DENY,
                principals=[iam.AnyPrincipal()],
                actions=list(permissions.RUN_KEY_ACTIONS),
                resources=["*"],
                conditions={"StringNotEquals": {"aws:PrincipalArn": role.role_arn}},
            )
        )
        return secret.secret_arn

    def _bucket(self, role: iam.Role, environment: Environment) -> s3.Bucket:
        """The stored runs' bucket: private, encrypted, and emptied of what nobody can answer."""
        prefix = f"{project.PROJECT_NAME}/"
        bucket = s3.Bucket(
            self,
            "RunStore",
            bucket_name=environment.state_bucket,
            encryption=s3.BucketEncryption.S3_MANAGED,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            enforce_ssl=True,
            lifecycle_rules=[
                s3.LifecycleRule(
                    id="ExpireRunsNobodyCanAnswer",
                    prefix=prefix,
                    expiration=Duration.days(runtime.ANSWER_WITHIN_DAYS + 1),
                )
            ],
            # Runs still waiting outlive the stack: delete the bucket by hand.
            removal_policy=RemovalPolicy.RETAIN,
        )
        role.add_to_policy(
            iam.PolicyStatement(
                sid="StoredRunsUnderThePrefix",
                actions=list(permissions.RUN_STORE_OBJECT_ACTIONS),
                resources=[bucket.arn_for_objects(f"{prefix}*")],
            )
        )
        role.add_to_policy(
            iam.PolicyStatement(
                sid="ListStoredRunsAndAnswerMissingKeysWith404",
                actions=list(permissions.RUN_STORE_BUCKET_ACTIONS),
                resources=[bucket.bucket_arn],
            )
        )
        CfnOutput(self, "StateBucket", value=bucket.bucket_name)
        return bucket

    def _memory(self, role: iam.Role, environment: Environment) -> str:
        """Each Slack user's memory, and the two calls the agent makes on it; returns its id."""
        preferences, facts = runtime.MEMORY_NAMESPACES
        cfn = agentcore.CfnMemory
        memory = cfn(
            self,
            "Memory",
            name=environment.runtime_name,
            description=f"What each Slack user told {environment.runtime_name}, per user",
            event_expiry_duration=runtime.MEMORY_EVENT_DAYS,
            # Built in: AgentCore's own extraction model, billed per record it keeps.
            memory_strategies=[
                cfn.MemoryStrategyProperty(
                    user_preference_memory_strategy=cfn.UserPreferenceMemoryStrategyProperty(
                        name="Preferences", namespaces=[preferences]
                    )
                ),
                cfn.MemoryStrategyProperty(
                    semantic_memory_strategy=cfn.SemanticMemoryStrategyProperty(
                        name="Facts", namespaces=[facts]
                    )
                ),
            ],
        )
        role.add_to_policy(
            iam.PolicyStatement(
                sid="RememberAndRecallPerSlackUser",
                actions=list(permissions.MEMORY_ACTIONS),
                resources=[memory.attr_memory_arn],
            )
        )
        CfnOutput(self, "MemoryId", value=memory.attr_memory_id)
        return memory.attr_memory_id

    def _session_storage(self) -> list[agentcore.CfnRuntime.FilesystemConfigurationProperty] | None:
        if project.RUN_STORE == "s3":
            return None
        return [
            agentcore.CfnRuntime.FilesystemConfigurationProperty(
                session_storage=agentcore.CfnRuntime.SessionStorageConfigurationProperty(
                    mount_path=runtime.SESSION_STORAGE_MOUNT
                )
            )
        ]

    def _artifact(self, role: iam.Role) -> agentcore.CfnRuntime.AgentRuntimeArtifactProperty:
        if project.DEPLOY_BUILD == "Container":
            image = ecr_assets.DockerImageAsset(
                self,
                "Image",
                directory=str(code_bundle.ROOT),
                platform=ecr_assets.Platform.LINUX_ARM64,
                exclude=["cdk.out", ".git", ".venv", "node_modules"],
            )
            image.repository.grant_pull(role)
            return agentcore.CfnRuntime.AgentRuntimeArtifactProperty(
                container_configuration=agentcore.CfnRuntime.ContainerConfigurationProperty(
                    container_uri=image.image_uri
                )
            )
        folder, key = code_bundle.built_code_zip()
        code = s3_assets.Asset(
            self,
            "Code",
            path=str(folder),
            asset_hash=key,  # already a hash of what went in: no second pass over the files
            asset_hash_type=AssetHashType.CUSTOM,
        )
        return agentcore.CfnRuntime.AgentRuntimeArtifactProperty(
            code_configuration=agentcore.CfnRuntime.CodeConfigurationProperty(
                code=agentcore.CfnRuntime.CodeProperty(
                    s3=agentcore.CfnRuntime.S3LocationProperty(
                        bucket=code.s3_bucket_name, prefix=code.s3_object_key
                    )
                ),
                entry_point=runtime.ENTRY_POINT,
                runtime=project.RUNTIME_VERSION,
            )
        )
