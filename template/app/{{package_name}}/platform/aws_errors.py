"""Failures of AWS's client, told apart from bugs and said in one line.

The run store and memory each turn a failure to reach AWS into an outcome
of their own (an error event, a turn without memory) and let every other
exception through, so that a bug is never reported as an outage. A request
that could not be signed is neither: only the person running the agent can
mend it, by signing in, so it is told apart too (`sign_in_reason`).
"""

# botocore's errors for credentials it cannot sign with: none anywhere, a
# profile the config files lack, and the ways an SSO sign-in or a role's
# credentials fail to load. Known by name, so that nothing here imports botocore.
_NO_CREDENTIALS = {"NoCredentialsError", "PartialCredentialsError"}
_UNKNOWN_PROFILE = {"ProfileNotFound"}
_UNLOADABLE = {
    "CredentialRetrievalError",
    "TokenRetrievalError",
    "SSOError",
    "SSOTokenLoadError",
    "UnauthorizedSSOTokenError",
    "RefreshWithMFAUnsupportedError",
}
# What AWS answers a request signed with credentials that ran out or that it does not know.
_REFUSED_CODES = {
    "ExpiredToken",
    "ExpiredTokenException",
    "InvalidClientTokenId",
    "UnrecognizedClientException",
}


class SignInNeeded(Exception):
    """AWS's client has no credentials it may sign with; the message says what to do, in one line.

    Not an outage and not a bug, so it is logged without a traceback.
    """


def from_aws_client(failure: BaseException) -> bool:
    """Whether boto3, botocore or the urllib3 beneath them raised it: AWS, or the way to it."""
    return type(failure).__module__.startswith(("botocore", "boto3", "urllib3"))


def aws_reason(failure: BaseException) -> tuple[str, str]:
    """The innermost reason's code, and the reason in a line: AccessDenied, refused..."""
    while failure.__cause__ is not None:
        failure = failure.__cause__
    response = getattr(failure, "response", None)
    if isinstance(response, dict) and response.get("Error"):
        code = str(response["Error"].get("Code", "error"))
        return code, f"{code}: {response['Error'].get('Message', '')}".rstrip(": ")
    return type(failure).__name__, f"{type(failure).__name__}: {failure}"


def sign_in_reason(failure: BaseException) -> str | None:
    """Why AWS's client could not sign with this machine's credentials, or None if it could."""
    if not from_aws_client(failure):
        return None
    kind = {cls.__name__ for cls in type(failure).__mro__}
    said = " ".join(str(failure).split())
    if kind & _NO_CREDENTIALS:
        return "no AWS credentials were found"
    if kind & _UNKNOWN_PROFILE:
        return f"the AWS profile is not in your AWS config ({said})"
    if kind & _UNLOADABLE:
        return f"the AWS credentials could not be loaded ({said})"
    code, reason = aws_reason(failure)
    if code in _REFUSED_CODES:
        return f"AWS refused the credentials as expired or unknown ({' '.join(reason.split())})"
    return None
