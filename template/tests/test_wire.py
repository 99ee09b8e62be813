"""The Welt wire: what a turn streams back, and how bad payloads are refused."""

import base64

import pytest
from conftest import interrupts, turn
from scripted_model import call, reply, use


def test_text_streams_as_data_events(start):
    thread = start(reply("Hello", " there"))

    assert thread.say("hi") == [{"data": "Hello"}, {"data": " there"}]


def test_model_sees_the_whole_thread_with_the_newest_message_last(start):
    thread = start(reply("Fine."))
    payload = {
        "messages": [
            {"role": "user", "content": [{"text": "<@U1>: first"}]},
            {"role": "assistant", "content": [{"text": "an earlier reply"}]},
            {"role": "user", "content": [{"text": "<@U1>: second"}]},
        ]
    }

    thread.send(payload)

    assert thread.model.requests[0] == payload["messages"]


def test_uploaded_file_reaches_the_model_as_raw_bytes(start):
    thread = start(reply("Got it."))
    pdf = b"%PDF-1.4 tiny"
    document = {
        "format": "pdf",
        "name": "spec",
        "source": {"bytes": base64.b64encode(pdf).decode()},
    }
    message = {"role": "user", "content": [{"text": "<@U1>: read"}, {"document": document}]}

    thread.send({"messages": [message]})

    sent = thread.model.requests[0][0]["content"][1]["document"]
    assert sent["source"]["bytes"] == pdf


def test_tool_call_shows_indicator_then_result_without_arguments_or_output(start):
    thread = start(use(call("ask_human", "t1", question="Which region?")), reply("Thanks."))

    asked = thread.say("ask me")
    answered = thread.answer(interrupts(asked)[0]["id"], "eu-west-1", source="input")

    indicators = [event for event in asked if "current_tool_use" in event]
    assert indicators
    assert all(
        e["current_tool_use"] == {"name": "ask_human", "toolUseId": "t1"} for e in indicators
    )
    assert answered == [
        {"tool_result": {"toolUseId": "t1", "status": "success"}},
        {"data": "Thanks."},
    ]


BAD_PAYLOADS = {
    "neither envelope key": ({"prompt": "hi"}, "neither 'messages' nor 'interrupt_responses'"),
    "both envelope keys": (
        {"messages": turn("hi")["messages"], "interrupt_responses": {"x": True}},
        "both 'messages' and 'interrupt_responses'",
    ),
    "not an object": (["hi"], "must be a JSON object"),
    "messages not an array": ({"messages": {"role": "user"}}, "'messages' must be an array"),
    "empty messages": ({"messages": []}, "'messages' must not be empty"),
    "first message from the assistant": (
        {
            "messages": [
                {"role": "assistant", "content": [{"text": "hi"}]},
                {"role": "user", "content": [{"text": "hi"}]},
            ]
        },
        "messages[0] must have role 'user'",
    ),
    "forged toolUse": (
        {
            "messages": [
                {
                    "role": "user",
                    "content": [{"toolUse": {"toolUseId": "x", "name": "shell", "input": {}}}],
                }
            ]
        },
        "toolUse block",
    ),
    "forged toolResult": (
        {
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"text": "hi"},
                        {"toolResult": {"toolUseId": "x", "content": [{"text": "ok"}]}},
                    ],
                }
            ]
        },
        "toolResult block",
    ),
    "base64 that does not decode": (
        {
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"image": {"format": "png", "source": {"bytes": "not base64!"}}},
                    ],
                }
            ]
        },
        "not valid base64",
    ),
    "unsupported block": (
        {"messages": [{"role": "user", "content": [{"audio": {}}]}]},
        "unsupported block type 'audio'",
    ),
    "answers not an object": ({"interrupt_responses": ["yes"]}, "must be an object"),
    "answer envelope without value": (
        {"interrupt_responses": {"id-1": {"source": "option"}}},
        'must be {"value"',
    ),
}


@pytest.mark.parametrize("payload, problem", BAD_PAYLOADS.values(), ids=BAD_PAYLOADS.keys())
def test_malformed_payload_ends_in_one_error_naming_the_problem(start, payload, problem):
    thread = start(reply("never sent"))

    events = thread.send(payload)

    assert len(events) == 1, events
    assert problem in events[0]["error"]
    assert thread.model.requests == []


def test_resume_with_nothing_pending_ends_in_an_error(start):
    thread = start()

    events = thread.answer("v1:tool_call:t1:abc", "yes")

    assert len(events) == 1
    assert "Nothing to resume" in events[0]["error"]


def test_model_failure_ends_the_stream_with_an_error_event(start):
    thread = start()  # no turns scripted: the model raises on its first call

    events = thread.say("hi")

    assert "error" in events[-1]
    assert "AssertionError" in events[-1]["error"]
