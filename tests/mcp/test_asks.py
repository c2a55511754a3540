"""Asks on MCP 2026-07-28: the server may not send requests, so an `ask` comes back as an
`input_required` result (the question as an elicitation to fill in, and an opaque state);
the client asks the user and calls again with the answer. These tests drive the round trips
by hand (the SDK's `allow_input_required`), whatever era the rest of the suite speaks."""

import pathlib
import re
from contextlib import asynccontextmanager

import pytest
from mcp import Client, StdioServerParameters
from mcp_types import CallToolResult, ElicitResult, InputRequiredResult

from conftest import BIN, eventually, text_of
from test_policy import project

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def modern(root, elicits=True, env=None):
    """A 2026-07-28 client of a server on `root`; with `elicits`, it declares form
    elicitation (the callback is never called: the tests answer the questions themselves)."""

    async def unused(context, params):
        raise AssertionError("a 2026-07-28 server sent an elicitation request")

    params = StdioServerParameters(command=BIN, args=["mcp", "--root", root], env=env)
    callback = unused if elicits else None
    async with Client(params, mode="2026-07-28", elicitation_callback=callback) as client:
        yield client


async def call(client, command, responses=None, state=None):
    return await client.session.call_tool(
        "bash",
        {"command": command},
        input_responses=responses,
        request_state=state,
        allow_input_required=True,
    )


def answer(action):
    return {"approve": ElicitResult(action=action, content={} if action == "accept" else None)}


async def test_the_server_is_discovered_and_lists_its_tools_with_cache_hints():
    params = StdioServerParameters(command=BIN, args=["mcp", "--root", project()])
    # "auto": the client probes `server/discover` and stays on 2026-07-28 when it is offered.
    async with Client(params, mode="auto") as client:
        assert client.protocol_version == "2026-07-28"
        discovered = client.session.discover_result
        assert "2026-07-28" in discovered.supported_versions, discovered
        assert "2025-11-25" in discovered.supported_versions, discovered
        assert client.server_info.name == "agent-bash"
        listed = await client.session.list_tools()
        assert "bash" in {tool.name for tool in listed.tools}
        assert listed.ttl_ms == 3_600_000 and listed.cache_scope == "private", listed


async def test_an_ask_comes_back_as_a_question_and_the_retried_call_runs_with_the_answer():
    root = project()
    async with modern(root) as client:
        asked = await call(client, "touch approved")
        assert isinstance(asked, InputRequiredResult), asked
        question = asked.input_requests["approve"]
        assert question.method == "elicitation/create"
        message = question.params.message
        assert "touch approved" in message and "touch changes files" in message, message
        # Nothing ran on the first call, not even confined.
        assert not pathlib.Path(root, "approved").exists()

        done = await call(client, "touch approved", answer("accept"), asked.request_state)
        assert isinstance(done, CallToolResult), done
        assert done.is_error is False, text_of(done)
        assert pathlib.Path(root, "approved").exists()

        asked = await call(client, "touch declined")
        assert isinstance(asked, InputRequiredResult)
        done = await call(client, "touch declined", answer("decline"), asked.request_state)
        assert isinstance(done, CallToolResult)
        assert done.is_error is True
        assert "\nreason: the user declined" in text_of(done), text_of(done)
        assert not pathlib.Path(root, "declined").exists()


async def test_an_answer_approves_only_the_command_asked_about_and_only_once():
    root = project()
    async with modern(root) as client:
        asked = await call(client, "touch first")
        assert isinstance(asked, InputRequiredResult)
        state = asked.request_state
        # The same answer and state with another command: asked again, not run.
        other = await call(client, "touch other", answer("accept"), state)
        assert isinstance(other, InputRequiredResult), other
        assert "touch other" in other.input_requests["approve"].params.message
        assert not pathlib.Path(root, "other").exists()
        # The state was spent by that try: the right command with it is asked again too.
        again = await call(client, "touch first", answer("accept"), state)
        assert isinstance(again, InputRequiredResult), again
        assert not pathlib.Path(root, "first").exists()

        # A fresh question, answered: runs once; replaying the answer asks again.
        asked = await call(client, "touch once")
        done = await call(client, "touch once", answer("accept"), asked.request_state)
        assert isinstance(done, CallToolResult) and done.is_error is False, done
        pathlib.Path(root, "once").unlink()
        replay = await call(client, "touch once", answer("accept"), asked.request_state)
        assert isinstance(replay, InputRequiredResult), replay
        assert not pathlib.Path(root, "once").exists()

        # A forged state is no answer either.
        forged = await call(client, "touch forged", answer("accept"), "0" * 32)
        assert isinstance(forged, InputRequiredResult), forged
        assert not pathlib.Path(root, "forged").exists()


async def test_a_question_in_a_terminal_goes_back_the_same_way_and_nothing_is_typed_first():
    root = project()
    async with modern(root) as client:
        opened = await client.session.call_tool("terminal_open", {}, allow_input_required=True)
        assert opened.is_error is False, text_of(opened)
        terminal = int(re.search(r"\[terminal (\d+):", text_of(opened)).group(1))
        arguments = {"id": terminal, "text": "touch typed\n"}
        asked = await client.session.call_tool("terminal_send", arguments, allow_input_required=True)
        assert isinstance(asked, InputRequiredResult), asked
        assert "touch typed" in asked.input_requests["approve"].params.message
        assert not pathlib.Path(root, "typed").exists()
        done = await client.session.call_tool(
            "terminal_send",
            arguments,
            input_responses=answer("accept"),
            request_state=asked.request_state,
            allow_input_required=True,
        )
        assert isinstance(done, CallToolResult) and done.is_error is False, done
        assert eventually(lambda: pathlib.Path(root, "typed").exists())
        await client.call_tool("terminal_close", {"id": terminal})


async def test_a_client_that_cannot_be_asked_gets_the_unanswered_rule_not_a_question():
    root = project()
    refuse = {"AGENT_BASH_POLICY_UNANSWERED": "refuse"}
    async with modern(root, elicits=False, env=refuse) as client:
        result = await call(client, "touch unasked")
        assert isinstance(result, CallToolResult), result
        assert result.is_error is True
        assert "there is no way to ask" in text_of(result), text_of(result)
    assert not pathlib.Path(root, "unasked").exists()
