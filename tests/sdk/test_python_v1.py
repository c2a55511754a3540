"""The MCP face through the official Python SDK's 1.x line (mcp 1.30.0): the initialize
handshake at 2025-11-25, the tools, results and errors, an ask put to the user through
elicitation, and the stdio contract (stdout is protocol only; closing ends the server)."""

import os
import pathlib
import time

import pytest
from mcp.types import ElicitResult

from conftest import project, server, server_pid, text_of

pytestmark = pytest.mark.anyio


async def bash(session, command):
    return await session.call_tool("bash", {"command": command})


async def test_the_handshake_negotiates_2025_11_25_and_the_tools_include_bash():
    async with server() as (session, initialized):
        assert initialized.protocolVersion == "2025-11-25"
        assert initialized.serverInfo.name == "agent-bash"
        assert initialized.capabilities.tools is not None
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert "bash" in tools, sorted(tools)
        assert "command" in tools["bash"].inputSchema["properties"]


async def test_a_command_runs_and_its_output_and_exit_come_back():
    async with server() as (session, _):
        result = await bash(session, "echo hi")
        assert result.isError is False, text_of(result)
        text = text_of(result)
        assert text.startswith("hi\n") and "[exit 0" in text, text


async def test_a_failing_command_is_an_error_result_with_its_exit_code():
    async with server() as (session, _):
        result = await bash(session, "exit 3")
        assert result.isError is True
        assert "[exit 3" in text_of(result), text_of(result)


async def test_an_ask_goes_to_the_user_through_elicitation_and_their_answer_holds():
    root = project()
    asked = []
    answers = iter(["accept", "decline"])

    async def answer(context, params):
        asked.append(params.message)
        return ElicitResult(action=next(answers), content={})

    async with server(root, elicitation_callback=answer) as (session, _):
        result = await bash(session, "touch approved")
        assert result.isError is False, text_of(result)
        assert pathlib.Path(root, "approved").exists()
        result = await bash(session, "touch declined")
        assert result.isError is True
        assert "reason: the user declined" in text_of(result), text_of(result)
        assert not pathlib.Path(root, "declined").exists()
        # An allowed command is not asked about.
        result = await bash(session, "echo no question")
        assert result.isError is False
    assert len(asked) == 2, asked
    assert "touch approved" in asked[0] and "touch changes files" in asked[0], asked[0]
    assert "touch declined" in asked[1], asked[1]


async def test_stdout_carries_only_protocol_and_closing_the_client_ends_the_server():
    # The SDK hands a line it cannot read as a JSON-RPC message to the message handler as an
    # exception: the server's own output (logs, the commands' output) must never be one.
    unreadable = []

    async def handler(message):
        if isinstance(message, Exception):
            unreadable.append(message)

    async with server(message_handler=handler) as (session, _):
        pid = server_pid()
        for command in ["echo hi", "echo to-stderr >&2", "seq 1 20000", "exit 3"]:
            await bash(session, command)
        await session.list_tools()
        closing = time.monotonic()
    closed_in = time.monotonic() - closing
    assert unreadable == []
    # The SDK closes the server's stdin and waits 2 s before it sends SIGTERM: the server
    # ended on the closed stdin by itself, and it is gone (reaped, no process left).
    assert closed_in < 1.5, closed_in
    assert not os.path.exists(f"/proc/{pid}")
