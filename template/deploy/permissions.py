"""The IAM actions each caller needs, as data: the stack grants these and no others.

The tests compare them with what the code really calls (the run store's
recorded S3 calls) and with what Welt needs, so a grant that is wider than
the code fails a test rather than waiting for an audit.
"""

# What the S3 run store calls: GetObject and HeadObject (s3:GetObject),
# PutObject (s3:PutObject), ListObjectsV2 (s3:ListBucket). s3:ListBucket is
# also what makes S3 answer a missing key with 404 instead of 403, which the
# store reads as "no record yet".
RUN_STORE_OBJECT_ACTIONS = ("s3:GetObject", "s3:PutObject")
RUN_STORE_BUCKET_ACTIONS = ("s3:ListBucket",)

# Strands' BedrockModel streams with ConverseStream (bedrock:InvokeModelWithResponseStream)
# and calls Converse (bedrock:InvokeModel) when streaming is off in yours/model_options.py.
MODEL_ACTIONS = ("bedrock:InvokeModel", "bedrock:InvokeModelWithResponseStream")

# What AgentCore Runtime does with the execution role on the agent's behalf:
# the agent's stdout and OpenTelemetry logs, its spans, and its metrics.
LOG_GROUP_ACTIONS = ("logs:CreateLogGroup", "logs:DescribeLogStreams")
LOG_STREAM_ACTIONS = ("logs:CreateLogStream", "logs:PutLogEvents")
LOG_LISTING_ACTIONS = ("logs:DescribeLogGroups",)
TRACE_ACTIONS = (
    "xray:GetSamplingRules",
    "xray:GetSamplingTargets",
    "xray:PutTelemetryRecords",
    "xray:PutTraceSegments",
)
METRIC_ACTIONS = ("cloudwatch:PutMetricData",)
METRIC_NAMESPACE = "bedrock-agentcore"

# What memory per Slack user calls (app/<package>/memory/per_user.py), on its
# memory alone: CreateEvent keeps a finished turn, RetrieveMemoryRecords
# recalls the starter's records. Nothing lists, reads or deletes another
# actor's data, though these two could name any actor: the code picks the
# verified one (docs/patterns/memory.md).
MEMORY_ACTIONS = ("bedrock-agentcore:CreateEvent", "bedrock-agentcore:RetrieveMemoryRecords")

# What sealing stored runs calls (app/<package>/runs/seal.py), on the one
# secret the stack creates for it: GetSecretValue, once per process.
RUN_KEY_ACTIONS = ("secretsmanager:GetSecretValue",)

# What fetching the model's API key calls (app/<package>/model/api_key.py), with
# Anthropic or OpenAI deployed: GetResourceApiKey, once per process, with the
# request's workload access token, on the stack's credential provider (and
# the token vault and workload identity it is reached through).
API_KEY_ACTIONS = ("bedrock-agentcore:GetResourceApiKey",)
# What AgentCore Identity does with the caller's credentials to answer it:
# reads the key from the provider's own secret in its token vault. Granted
# on that one secret; no test can record it (it happens inside AWS).
API_KEY_VAULT_ACTIONS = ("secretsmanager:GetSecretValue",)

# What a deploy calls to pin the model key's current version (deploy/aws.py):
# DescribeSecret on that secret, its metadata only. The CI role may do it.
MODEL_KEY_VERSION_ACTIONS = ("secretsmanager:DescribeSecret",)
# What reads the value of the secret `make api-key` fills: CloudFormation,
# resolving the credential provider's dynamic reference while it deploys,
# as the CDK's execution role. The secret's resource policy denies it to
# every other principal (deploy/runtime_stack.py); the runtime never reads it.
MODEL_KEY_READ_ACTIONS = ("secretsmanager:GetSecretValue",)

# What a tool acting as the person who asked calls (app/<package>/acting/), with
# user tokens declared: GetResourceOauth2Token with the request's workload
# access token, on each of the stack's OAuth2 credential providers (and the
# token vault and workload identity it is reached through); Identity reads
# the OAuth app's client secret from its own vault with the caller's
# credentials, as for the model's key (granted on those secrets; no test
# can record it). It reads the consent key (CONSENT_KEY_SECRET) to seal the
# state a consent link carries.
USER_TOKEN_ACTIONS = ("bedrock-agentcore:GetResourceOauth2Token",)
USER_TOKEN_VAULT_ACTIONS = ("secretsmanager:GetSecretValue",)
CONSENT_KEY_ACTIONS = ("secretsmanager:GetSecretValue",)

# What the session-binding endpoint calls (app/<package>/binding/endpoint.py):
# CompleteResourceTokenAuth once the person signed in is the one the consent
# was asked for; GetSecretValue on the consent key and the Slack app's client
# secret; PutObject (If-None-Match) under the used-states prefix, which makes
# a state single-use. And its own log lines, in its own log group.
BINDING_ACTIONS = ("bedrock-agentcore:CompleteResourceTokenAuth",)
BINDING_SECRET_ACTIONS = ("secretsmanager:GetSecretValue",)
USED_STATE_ACTIONS = ("s3:PutObject",)
BINDING_LOG_ACTIONS = ("logs:CreateLogStream", "logs:PutLogEvents")

# What sets the runtime's workload identity's allowed return URL to the
# endpoint's /callback, through a CDK custom resource, when the stack is
# deployed (and empties the list when the endpoint goes).
RETURN_URL_ACTIONS = ("bedrock-agentcore:UpdateWorkloadIdentity",)

# The OAuth apps' client secrets `make oauth-secret` stores: like the model's
# key, read only by CloudFormation resolving the credential provider's
# dynamic reference, and described by a deploy (the CI role too) to pin
# which version is current.
CLIENT_SECRET_READ_ACTIONS = ("secretsmanager:GetSecretValue",)
CLIENT_SECRET_VERSION_ACTIONS = ("secretsmanager:DescribeSecret",)

# What strands-tools' image tool calls: InvokeModel on one of the three
# Stability models its tool spec offers the model, in the Region it calls
# unless the model names another, us-west-2 (where these models are served).
IMAGE_MODEL_ACTIONS = ("bedrock:InvokeModel",)
IMAGE_MODELS = (
    "stability.stable-image-core-v1:1",
    "stability.sd3-5-large-v1:0",
    "stability.stable-image-ultra-v1:1",
)
IMAGE_MODEL_REGION = "us-west-2"

# Welt's identity calls the runtime on behalf of the verified Slack user it
# names in runtimeUserId, which needs both actions; nothing else is granted.
WELT_ACTIONS = (
    "bedrock-agentcore:InvokeAgentRuntime",
    "bedrock-agentcore:InvokeAgentRuntimeForUser",
)
