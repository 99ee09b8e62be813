"""Failures of AWS's client, told apart from bugs and said in one line.

The run store and memory each turn a failure to reach AWS into an outcome
of their own (an error event, a turn without memory) and let every other
exception through, so that a bug is never reported as an outage.
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
