"""Strands' HumanInTheLoop intervention works over the wire, without `ask`."""

import pytest
from conftest import interrupts
from scripted_model import call, reply, use
from strands import Agent, tool

hitl = pytest.importorskip(
    "strands.vended_interventions.hitl",
    reason="HumanInTheLoop arrived in strands-agents 1.44.0; the installed release predates it",
)


@tool
def send_invoice(customer: str) -> str:
    """Send an invoice.

    Args:
        customer: Who pays.
    """
    send_invoice.sent.append(customer)
    return "sent"


def guarded_by_hitl(model, history):
    """An agent that HumanInTheLoop alone guards, with its default interrupt mode."""
    return Agent(
        model=model,
        messages=history,
        tools=[send_invoice],
        interventions=[hitl.HumanInTheLoop()],
        callback_handler=None,
    )


@pytest.mark.parametrize("answer, sent", [(True, ["ACME"]), (False, [])])
def test_human_in_the_loop_interrupts_and_resumes_over_the_wire(start, answer, sent):
    send_invoice.sent = []
    thread = start(
        use(call("send_invoice", "t1", customer="ACME")), reply("Done."), new_agent=guarded_by_hitl
    )

    (question,) = interrupts(thread.say("bill ACME"))
    events = thread.answer(question["id"], answer)

    assert question["name"] == "strands:human-in-the-loop"
    assert send_invoice.sent == sent
    assert events[-1] == {"data": "Done."}
