"""A GitHub-like API on this machine: what a tool acting as the user calls with the user's token.

It knows the access tokens the Identity stand-in minted and whom each acts
as; a token it does not know, or one revoked since, is answered 401 ("Bad
credentials"), as GitHub answers a revoked OAuth token, which is what
sends the tool back to consent. Every call is recorded with the account it
was made as, so a test can say whose token a tool used.

GET /user, GET /search/issues?q=..., POST /repos/{owner}/{repo}/issues:
enough of GitHub's REST API for "my open pull requests" and "open an
issue", with GitHub's field names.
"""

import re
import threading
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from typing import Any

from .identity import IdentityStandIn
from .serving import Request, Response, json_response, serve

_NEW_ISSUE = re.compile(r"/repos/([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)/issues")


@dataclass
class ApiCall:
    """One request: method, path, the account its token acts as (None: refused), the status."""

    method: str
    path: str
    account: str | None
    status: int
    body: Any = None


@dataclass
class ResourceApi:
    """The API's state: its issues and pull requests, and every call it answered."""

    identity: IdentityStandIn
    url: str = ""
    # GitHub's issue objects; a pull request is one with a "pull_request" member.
    issues: list[dict[str, Any]] = field(default_factory=list)
    calls: list[ApiCall] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add_pull_request(self, owner: str, repo: str, author: str, title: str) -> dict[str, Any]:
        """An open pull request by author, as if opened on GitHub."""
        with self.lock:
            return self._new(owner, repo, author, title, "", pull_request=True)

    def calls_as(self, account: str) -> list[ApiCall]:
        return [call for call in self.calls if call.account == account]

    def answer(self, request: Request) -> Response:
        token = _bearer(request.headers.get("authorization", ""))
        minted = self.identity.acting_as(token) if token else None
        account = minted.account if minted else None
        try:
            body = request.json() if request.method == "POST" and request.body else None
        except ValueError:
            return json_response(400, {"message": "Problems parsing JSON"})
        with self.lock:
            status, reply = (
                (401, {"message": "Bad credentials"})
                if account is None
                else self._route(request, account, body)
            )
            self.calls.append(ApiCall(request.method, request.path, account, status, body))
        return json_response(status, reply)

    def _route(self, request: Request, account: str, body: Any) -> tuple[int, Any]:
        if request.method == "GET" and request.path == "/user":
            return 200, {"login": account}
        if request.method == "GET" and request.path == "/search/issues":
            items = [
                each for each in self.issues if _matches(each, request.query.get("q", ""), account)
            ]
            return 200, {"total_count": len(items), "incomplete_results": False, "items": items}
        new_issue = _NEW_ISSUE.fullmatch(request.path)
        if request.method == "POST" and new_issue:
            if not isinstance(body, dict) or not isinstance(body.get("title"), str):
                return 422, {"message": "Validation Failed: title is required"}
            owner, repo = new_issue.groups()
            return 201, self._new(owner, repo, account, body["title"], str(body.get("body") or ""))
        return 404, {"message": "Not Found"}

    def _new(
        self, owner: str, repo: str, author: str, title: str, text: str, pull_request: bool = False
    ) -> dict[str, Any]:
        number = len(self.issues) + 1
        kind = "pull" if pull_request else "issues"
        issue: dict[str, Any] = {
            "number": number,
            "title": title,
            "body": text,
            "state": "open",
            "user": {"login": author},
            "repository_url": f"{self.url}/repos/{owner}/{repo}",
            "html_url": f"https://github.com/{owner}/{repo}/{kind}/{number}",
        }
        if pull_request:
            issue["pull_request"] = {"url": f"{self.url}/repos/{owner}/{repo}/pulls/{number}"}
        self.issues.append(issue)
        return issue


def _bearer(header: str) -> str | None:
    scheme, _, token = header.partition(" ")
    return token.strip() if scheme.lower() in ("bearer", "token") and token.strip() else None


def _matches(issue: dict[str, Any], query: str, account: str) -> bool:
    """GitHub's search qualifiers this API knows: is:pr|issue|open|closed, author:, repo:."""
    for term in query.split():
        name, _, value = term.partition(":")
        wanted = {
            ("is", "pr"): "pull_request" in issue,
            ("is", "issue"): "pull_request" not in issue,
            ("is", "open"): issue["state"] == "open",
            ("is", "closed"): issue["state"] == "closed",
        }.get((name, value), True)
        if name == "author":
            wanted = issue["user"]["login"] == (account if value == "@me" else value)
        elif name == "repo":
            wanted = issue["repository_url"].endswith(f"/repos/{value}")
        if not wanted:
            return False
    return True


def start_resource_api(
    identity: IdentityStandIn, host: str = "127.0.0.1", port: int = 0
) -> tuple[ResourceApi, ThreadingHTTPServer]:
    """The API's state, and its server on a port the OS chose; it trusts identity's tokens."""
    api = ResourceApi(identity)
    api.url, server = serve(api.answer, host, port)
    return api, server
