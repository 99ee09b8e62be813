"""Which libraries this project leaves out of its install, and what to do when a tool needs one.

strands-agents-tools depends on the libraries of all its tools (sympy for
the calculator, pillow, aiohttp, slack-bolt, ...), about 70 MiB that the
tools this project offers never import. pyproject.toml's
`[tool.uv] exclude-dependencies` keeps them out of uv.lock and the deploy.
A strands-tools tool you add later that needs one of them would otherwise
fail with a bare "No module named 'sympy'"; the error below says which
line to delete instead.
"""

# Module a tool imports -> the excluded distribution that brings it back.
LEFT_OUT = {
    "aiohttp": "aiohttp",
    "aiohappyeyeballs": "aiohttp",
    "aiosignal": "aiohttp",
    "frozenlist": "aiohttp",
    "multidict": "aiohttp",
    "propcache": "aiohttp",
    "yarl": "aiohttp",
    "aws_requests_auth": "aws-requests-auth",
    "dill": "dill",
    "markdownify": "markdownify",
    "bs4": "markdownify",
    "soupsieve": "markdownify",
    "PIL": "pillow",
    "slack_bolt": "slack-bolt",
    "slack_sdk": "slack-bolt",
    "sympy": "sympy",
    "mpmath": "sympy",
}


class LeftOutLibrary(ImportError):
    """A tool needs a library that pyproject.toml's exclude-dependencies leaves out."""


def explained(error: ModuleNotFoundError, importing: str) -> ImportError:
    """The error to raise for `error`, met while importing `importing`.

    Only a module this project left out gets the longer message; any other
    missing module is a different mistake and keeps Python's own error.
    """
    module = (error.name or "").partition(".")[0]
    distribution = LEFT_OUT.get(module)
    if distribution is None:
        return error
    return LeftOutLibrary(
        f"{importing} needs the '{module}' module from {distribution}, which this "
        f"project leaves out of its install to keep deploys small. To use it, "
        f'delete "{distribution}" from exclude-dependencies under [tool.uv] in '
        "pyproject.toml, then run `make lock`."
    )
