"""The MCP face, end to end: the real binary over stdio, the official Python client."""

import base64
import json
import os
import signal
import subprocess
import tempfile

import anyio
import pytest

from conftest import BIN, FX, alive_with, eventually, server, stdout_of, text_of

pytestmark = pytest.mark.anyio


async def test_lists_the_bash_tool_with_its_schemas():
    async with server(root="/tmp") as session:
        tools = (await session.list_tools()).tools
        bash = next(tool for tool in tools if tool.name == "bash")
        assert bash.input_schema["required"] == ["command"]
        assert set(bash.input_schema["properties"]) >= {"command", "timeout_secs", "cwd"}
        assert "/tmp" in bash.description, "the description names the root"
        assert [tool.output_schema for tool in tools] == [None] * 8, "text by default: no output schema"
    async with server(root="/tmp", structured=True) as session:
        tools = (await session.list_tools()).tools
        bash = next(tool for tool in tools if tool.name == "bash")
        assert bash.output_schema["type"] == "object"
        assert list(bash.output_schema["properties"])[0] == "text"
        assert {"text", "exit_code", "timed_out", "duration_ms", "stdout_stats"} <= set(bash.output_schema["properties"])
        assert not {"stdout", "stderr", "command"} & set(bash.output_schema["properties"]), "in the text already"
        assert "$defs" not in json.dumps(bash.output_schema), "flat: cheap to check on every result"


async def test_output_and_exit_status_as_text_and_as_structure():
    async with server() as session:
        result = await session.call_tool("bash", {"command": "echo out; echo err >&2"})
        assert result.is_error is False
        assert text_of(result).startswith("out\n[stderr]\nerr\n[exit 0 · ")
        assert result.structured_content is None

        result = await session.call_tool("bash", {"command": "exit 3"})
        assert result.is_error is True
        assert text_of(result).startswith("(no output)\n[exit 3 · ")

    async with server(structured=True) as session:
        result = await session.call_tool("bash", {"command": "echo out; echo err >&2"})
        assert result.is_error is False
        assert result.structured_content["text"] == text_of(result)
        assert text_of(result).startswith("out\n[stderr]\nerr\n[exit 0 · ")
        assert result.structured_content["exit_code"] == 0
        assert result.structured_content["stdout_stats"]["total_bytes"] == 4
        assert result.structured_content["stderr_stats"]["total_lines"] == 1

        result = await session.call_tool("bash", {"command": "exit 3"})
        assert result.is_error is True
        assert result.structured_content["exit_code"] == 3


async def test_timeout_stops_the_tree_with_on_timeout_kill(marker):
    async with server(extra_args=("--on-timeout", "kill")) as session:
        result = await session.call_tool("bash", {"command": f"echo begun; sleep {marker}", "timeout_secs": 1})
        assert result.is_error is True
        assert stdout_of(result) == "begun"
        assert "[timed out after 1 s; process tree stopped; " in text_of(result)
        assert alive_with(f"sleep {marker}") == []


async def test_cancellation_kills_the_process_tree(marker):
    async with server() as session:
        async with anyio.create_task_group() as group:
            async def call():
                await session.call_tool("bash", {"command": f"sleep {marker}; echo never"})

            group.start_soon(call)
            assert await anyio.to_thread.run_sync(lambda: eventually(lambda: alive_with(f"sleep {marker}"))), "never started"
            group.cancel_scope.cancel()
        assert await anyio.to_thread.run_sync(lambda: eventually(lambda: not alive_with(f"sleep {marker}"))), "leaked"
        # The server keeps serving.
        result = await session.call_tool("bash", {"command": "echo still here"})
        assert stdout_of(result) == "still here"


async def test_progress_notifications():
    seen = []

    async def on_progress(progress, total, message):
        seen.append((progress, message))

    async with server() as session:
        result = await session.call_tool(
            "bash",
            {"command": "echo first; sleep 2.5; echo second", "description": "two echoes"},
            progress_callback=on_progress,
        )
        assert stdout_of(result) == "first\nsecond"
    # Reports come at most once a second: after about 1 s and 2 s of a 2.5 s command.
    assert 1 <= len(seen) <= 3, seen
    values = [progress for progress, _ in seen]
    assert values == sorted(set(values)), f"progress must increase: {values}"
    assert any("1 line" in (message or "") for _, message in seen), seen
    assert all((message or "").startswith("two echoes · running ") for _, message in seen), seen


async def test_calls_run_concurrently():
    # Each call waits until all four have started: calls run one at a time would each
    # time out instead.
    flags = tempfile.mkdtemp(prefix="agent-bash-concurrent-")
    command = 'touch "$FLAGS/$N"; while [ "$(ls "$FLAGS" | wc -l)" -lt 4 ]; do sleep 0.05; done; echo all four'
    async with server() as session:
        results = [None] * 4

        async def call(n):
            results[n] = await session.call_tool(
                "bash", {"command": f"FLAGS={flags} N={n}; {command}", "timeout_secs": 20}
            )

        async with anyio.create_task_group() as group:
            for n in range(4):
                group.start_soon(call, n)
    for result in results:
        assert stdout_of(result) == "all four", text_of(result)


async def test_bad_input_is_a_clear_tool_error_and_the_server_keeps_serving():
    cases = [
        ({}, "command"),
        ({"command": 5}, "command"),
        ({"command": ""}, "empty"),
        ({"command": "   \n"}, "empty"),
        ({"command": "x" * (1024 * 1024 + 1)}, "over the maximum"),
        ({"command": "true", "cwd": "/nonexistent/dir"}, "No such file or directory"),
        ({"command": "true", "cwd": "/etc/hostname"}, "not a directory"),
        ({"command": "true", "timeout_secs": 0}, "timeout_secs"),
        ({"command": "true", "timeout_secs": -5}, "timeout_secs"),
        ({"command": "true", "timeout_secs": "soon"}, "timeout_secs"),
    ]
    async with server() as session:
        for arguments, expected in cases:
            result = await session.call_tool("bash", arguments)
            assert result.is_error is True, arguments
            assert expected in text_of(result), (arguments, text_of(result))
        unknown = await session.call_tool("no_such_tool", {})
        assert unknown.is_error is True
        assert "no_such_tool" in text_of(unknown)
        clamped = await session.call_tool("bash", {"command": "true", "timeout_secs": 99999})
        assert clamped.is_error is False
        assert "note: timeout_secs 99999 is over the maximum; the call ran with 3600 s" in text_of(clamped)
        result = await session.call_tool("bash", {"command": "echo ok"})
        assert stdout_of(result) == "ok"
    async with server(structured=True) as session:
        clamped = await session.call_tool("bash", {"command": "true", "timeout_secs": 99999})
        assert {"kind": "timeout_clamped", "asked_secs": 99999, "ran_secs": 3600} in clamped.structured_content["notes"]
        # A call that could not run is text in either shape.
        refused = await session.call_tool("bash", {"command": ""})
        assert refused.is_error is True and refused.structured_content is None
        assert "empty" in text_of(refused)


async def test_an_output_directory_others_can_write_is_refused_and_the_server_keeps_serving():
    base = tempfile.mkdtemp(prefix="agent-bash-base-")
    os.chmod(base, 0o777)
    async with server(env={"AGENT_BASH_OUTPUT_SPILL_DIR": base}) as session:
        refused = await session.call_tool("bash", {"command": "seq 1 100000"})
        assert refused.is_error is True
        assert base in text_of(refused) and "writable by its group or by others" in text_of(refused), text_of(refused)
        assert os.listdir(base) == [], "nothing written there"
        os.chmod(base, 0o700)
        result = await session.call_tool("bash", {"command": "seq 1 100000"})
        assert result.is_error is False
        assert f"full stdout: {base}/session-" in text_of(result), text_of(result)
        session_dir = next(entry.path for entry in os.scandir(base) if entry.name.startswith("session-"))
        assert os.stat(session_dir).st_mode & 0o777 == 0o700
        spill = next(os.scandir(session_dir)).path
        assert os.stat(os.path.join(base, "audit.jsonl")).st_mode & 0o777 == 0o600
        assert os.stat(spill).st_mode & 0o777 == 0o600


async def test_images_reach_the_model_as_images():
    async with server() as session:
        result = await session.call_tool("bash", {"command": f"{FX} png"})
        images = [block for block in result.content if block.type == "image"]
        assert len(images) == 1, result.content
        assert images[0].mime_type == "image/png"
        expected = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + bytes(n % 251 for n in range(4096))
        assert base64.b64decode(images[0].data) == expected


def raw_server(root, *extra_args):
    return subprocess.Popen(
        [BIN, "mcp", "--root", root, *extra_args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def send(process, message):
    process.stdin.write((json.dumps(message) + "\n").encode())
    process.stdin.flush()


def receive(process):
    line = process.stdout.readline()
    assert line, "the server closed stdout"
    return json.loads(line)


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
}


def test_malformed_lines_do_not_kill_the_server_and_stdout_is_only_protocol():
    log = os.path.join(tempfile.mkdtemp(), "server.log")
    process = raw_server(tempfile.mkdtemp(), "--verbose", "--log-file", log)
    try:
        process.stdin.write(b"this is not json\n{\"jsonrpc\": \"2.0\", \"id\": \n[1, 2]\n")
        process.stdin.flush()
        send(process, INITIALIZE)
        send(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        send(process, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                       "params": {"name": "bash", "arguments": {"command": "echo fine"}}})
        # Every line on stdout is JSON-RPC, even with debug logging on.
        answers = {}
        while 2 not in answers:
            message = receive(process)
            assert message.get("jsonrpc") == "2.0", message
            if "id" in message:
                answers[message["id"]] = message
        assert answers[1]["result"]["serverInfo"]["name"] == "agent-bash"
        assert answers[2]["result"]["content"][0]["text"].startswith("fine\n[exit 0 · ")
        assert "structuredContent" not in answers[2]["result"]
        process.stdin.close()
        process.wait(timeout=10)
        stderr = process.stderr.read().decode()
        assert "serving MCP" in stderr
        with open(log) as f:
            logged = f.read()
        assert "serving MCP" in logged and "echo fine" in logged, logged
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.parametrize("how", ["stdin-closed", "client-killed", "sigterm", "sigint"])
def test_shutdown_leaves_nothing_running(how, marker):
    process = raw_server(tempfile.mkdtemp())
    try:
        send(process, INITIALIZE)
        assert receive(process)["id"] == 1
        send(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        # One call still running, one that left a background process behind, a background
        # job and a terminal.
        send(process, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                       "params": {"name": "bash", "arguments": {"command": f"sleep {marker}1"}}})
        send(process, {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                       "params": {"name": "bash", "arguments": {"command": f"sleep {marker}2 >/dev/null 2>&1 &"}}})
        assert receive(process)["id"] == 3
        send(process, {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                       "params": {"name": "bash", "arguments": {"command": f"sleep {marker}3", "background": True}}})
        assert receive(process)["id"] == 4
        send(process, {"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                       "params": {"name": "terminal_open", "arguments": {"command": f"sleep {marker}4"}}})
        assert receive(process)["id"] == 5
        assert eventually(lambda: all(alive_with(f"sleep {marker}{n}") for n in range(1, 5)))
        if how == "stdin-closed":
            process.stdin.close()
        elif how == "client-killed":
            # Both pipes end at once, as when the client process dies.
            process.stdin.close()
            process.stdout.close()
        else:
            process.send_signal(signal.SIGTERM if how == "sigterm" else signal.SIGINT)
        process.wait(timeout=10)
        assert alive_with(f"sleep {marker}") == [], "left running after the server exited"
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
