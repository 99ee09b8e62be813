"""Ask the people in the thread a free-text question.

strands-tools' `handoff_to_user` waits on the process's standard input, which
nobody can type into from Slack, so an agent using it would hang. This tool
asks through an interrupt instead: Welt shows the question with a text field
and the typed answer resumes the run.
"""

from strands import ToolContext, tool
from welt_io_strands import interrupt_reason

from ..interrupt_names import interrupt_name

QUESTION = interrupt_name("question")


@tool(context=True)
def ask_human(question: str, tool_context: ToolContext) -> str:
    """Ask the people in the Slack thread a question and wait for their answer.

    Use it when only a person can supply a fact or a decision.

    Args:
        question: The question, in one or two sentences.
    """
    answer = tool_context.interrupt(
        QUESTION,
        reason=interrupt_reason(question, input={"label": "Your answer", "multiline": True}),
    )
    return f"The human answered: {answer}"
