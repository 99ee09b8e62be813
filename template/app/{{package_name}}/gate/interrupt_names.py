"""One place that hands out interrupt names.

Strands identifies an interrupt by its name within a tool call or hook event,
and Welt only logs it, so a clash fails quietly: two hooks raising the same
name in one event collide, and a name shared by two tools makes logs
ambiguous. Every name is built here from the project's prefix, and a purpose
claimed twice fails at import time instead of in a live thread.
"""

from ..settings import INTERRUPT_PREFIX

_claimed: set[str] = set()


def interrupt_name(purpose: str) -> str:
    """Claim the interrupt name for one purpose, such as "question"."""
    name = f"{INTERRUPT_PREFIX}-{purpose}"
    if name in _claimed:
        raise ValueError(f"interrupt name {name!r} is already claimed by another tool")
    _claimed.add(name)
    return name


def gate_interrupt_name(tool_name: str, tool_use_id: str) -> str:
    """Name of the gate's approval question for one tool call.

    The call id keeps two gated calls of the same tool in one model turn
    apart, so each stop's names stay unique.
    """
    return f"{INTERRUPT_PREFIX}-gate-{tool_name}-{tool_use_id}"
