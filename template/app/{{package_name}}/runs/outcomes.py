"""What a person is told when stored state cannot serve their request, in one place.

Each message says what happened and what to do next ("Send a new
message"), because the person reading it in Slack cannot see the store.
"""


class CannotContinue(Exception):
    """A request that stored state cannot serve; the message is for the human.

    `replay` marks answers that already resumed the run once (a double
    click, a retried request, or a copy sent again): the audit keeps those
    apart from answers that simply came too late.
    """

    def __init__(self, message: str, *, replay: bool = False) -> None:
        super().__init__(message)
        self.replay = replay


class SessionIdError(ValueError):
    """A session id that cannot name stored state."""


OUTCOMES = {
    "answered": (
        "Nothing to resume: these answers were already given, and the run resumed once "
        "(a double click, or a retried request). Send a new message to go on."
    ),
    "claimed": (
        "Nothing to resume: an earlier request already took these answers (a double "
        "click, a retried request, or a resume cut short by a restart). Send a new "
        "message to go on."
    ),
    "dropped": (
        "Cannot resume: this thread's question waited too long and was dropped (the "
        "agent keeps at most {max_waiting} waiting runs). Send a new message instead."
    ),
    "expired": (
        "Cannot resume: this question is more than {days} days old, and answers are "
        "taken for {days} days. Send a new message instead."
    ),
    "replaced": (
        "Nothing to resume: a newer message in this thread replaced this question. "
        "Send a new message to go on."
    ),
    "failed": (
        "Cannot resume: the run failed after it was resumed, so there is nothing left "
        "to answer. Send a new message instead."
    ),
    "earlier-version": (
        "Cannot resume: this question was asked by an earlier version of this agent, "
        "whose stored runs this version does not read. Send a new message, and the agent "
        "will ask again."
    ),
    "nothing": (
        "Nothing to resume in this thread: no run is waiting for an answer (it "
        "finished, a newer message replaced it, or a new deployment of the agent reset "
        "its storage). Send a new message instead."
    ),
}


def damaged_run(damage: Exception) -> CannotContinue:
    return CannotContinue(
        f"Cannot resume: the stored run of this thread is damaged ({damage}), so it was not "
        "resumed. Send a new message to start again."
    )


def unreadable_history(damage: Exception) -> CannotContinue:
    return CannotContinue(
        f"The stored history of this thread cannot be read ({damage}), so nothing was sent "
        "to the model. It is kept for inspection; until it is repaired or moved aside, this "
        "thread cannot go on."
    )
