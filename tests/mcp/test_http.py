"""MCP over Streamable HTTP (`agent-bash mcp --http`): the official client of both protocol
revisions through it, bearer tokens (each with its own jobs), the Origin check, the limits,
the health endpoint, and what the server refuses to start with."""

import json
import os
import re
import signal
import subprocess
import tempfile
import threading
import urllib.error
import urllib.request
from contextlib import asynccontextmanager, contextmanager

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import ElicitResult

from conftest import BIN, alive_with, eventually, text_of
from test_policy import project

pytestmark = pytest.mark.anyio

TOKEN = "token-a-0123456789abcdef"
OTHER = "token-b-fedcba9876543210"


@contextmanager
def http_server(root=None, args=(), env=None, tokens=(TOKEN,)):
    """`agent-bash mcp --http 127.0.0.1:0` on `root`, with `tokens` in a token file; yields
    (base URL, process). The address it bound is read from its log."""
    root = root or tempfile.mkdtemp(prefix="agent-bash-http-")
    token_file = os.path.join(tempfile.mkdtemp(prefix="agent-bash-tokens-"), "tokens")
    with open(os.open(token_file, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
        f.write("".join(f"{token}\n" for token in tokens))
    command = [BIN, "mcp", "--root", root, "--http", "127.0.0.1:0", "--token-file", token_file, *args]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, **(env or {})})
    try:
        url = None
        for line in process.stderr:
            found = re.search(r"addr=(127\.0\.0\.1:\d+)", line)
            if found:
                url = f"http://{found.group(1)}"
                break
        assert url, "the server never said where it listens"
        # Its log goes on being read, so that it never blocks on a full pipe.
        threading.Thread(target=process.stderr.read, daemon=True).start()
        yield url, process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=10)


@asynccontextmanager
async def client(url, token=TOKEN, era="2026-07-28", elicitation_callback=None):
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
    async with http:
        transport = streamable_http_client(f"{url}/mcp", http_client=http)
        mode = "legacy" if era == "2025-11-25" else era
        async with Client(transport, mode=mode, elicitation_callback=elicitation_callback) as c:
            assert c.protocol_version == era
            yield c


def post(url, body=b"{}", headers=None):
    """A raw POST to /mcp: (status, text)."""
    request = urllib.request.Request(f"{url}/mcp", data=body, method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


LIST = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"}}}}).encode()


@pytest.mark.parametrize("era", ["2025-11-25", "2026-07-28"])
async def test_both_revisions_call_and_ask_through_http(era):
    root = project()
    answers = iter(["accept", "decline"])
    asked = []

    async def answer(context, params):
        asked.append(params.message)
        return ElicitResult(action=next(answers), content={})

    with http_server(root) as (url, _):
        async with client(url, era=era, elicitation_callback=answer) as c:
            assert "bash" in {tool.name for tool in (await c.list_tools()).tools}
            result = await c.call_tool("bash", {"command": "echo hi"})
            assert result.is_error is False and text_of(result).startswith("hi\n"), text_of(result)
            result = await c.call_tool("bash", {"command": "touch approved"})
            assert result.is_error is False, text_of(result)
            result = await c.call_tool("bash", {"command": "touch declined"})
            assert result.is_error is True and "the user declined" in text_of(result)
    assert len(asked) == 2 and "touch approved" in asked[0]
    assert os.path.exists(os.path.join(root, "approved"))
    assert not os.path.exists(os.path.join(root, "declined"))


async def test_requests_without_the_token_from_a_foreign_origin_or_too_big_are_refused():
    with http_server(args=("--http-max-body", "65536")) as (url, _):
        auth = {"Authorization": f"Bearer {TOKEN}"}
        status, text = post(url, LIST)
        assert status == 401 and "bearer token is required" in text, (status, text)
        status, text = post(url, LIST, {"Authorization": "Bearer token-a-0123456789abcdeX"})
        assert status == 401, (status, text)
        status, text = post(url, LIST, {"Authorization": TOKEN})
        assert status == 401, (status, text)
        status, text = post(url, LIST, {**auth, "Origin": "http://evil.example"})
        assert status == 403, (status, text)
        status, text = post(url, b" " * 70000, auth)
        assert status == 413, (status, text)
        try:
            urllib.request.urlopen(f"{url}/nothing", timeout=10)
            raise AssertionError("an unknown path was served")
        except urllib.error.HTTPError as err:
            assert err.code == 404 and "MCP is served at /mcp" in err.read().decode()
        # The health endpoint needs no token.
        with urllib.request.urlopen(f"{url}/health", timeout=10) as response:
            assert response.status == 200 and response.read() == b"ok\n"
        # And it keeps serving.
        status, text = post(url, LIST, auth)
        assert status == 200 and '"name":"bash"' in text.replace(" ", ""), (status, text)


async def test_each_token_reaches_only_its_own_jobs_and_the_token_never_reaches_a_command():
    env = {"AGENT_BASH_HTTP_TOKEN": "token-c-0123456789abcdef"}
    with http_server(tokens=(TOKEN, OTHER), env=env) as (url, _):
        async with client(url) as mine, client(url, token=OTHER) as theirs:
            started = await mine.call_tool("bash", {"command": "sleep 30", "background": True})
            job = int(re.search(r"job (\d+)", text_of(started)).group(1))
            refused = await theirs.call_tool("bash_output", {"job_id": job})
            assert refused.is_error is True
            assert f"job {job} belongs to another token" in text_of(refused), text_of(refused)
            refused = await theirs.call_tool("bash_kill", {"job_id": job})
            assert "belongs to another token" in text_of(refused)
            # The other token's ids are its own range.
            own = await theirs.call_tool("bash", {"command": "sleep 30", "background": True})
            assert int(re.search(r"job (\d+)", text_of(own)).group(1)) > 1_000_000
            listed = await theirs.call_tool("bash_jobs", {})
            assert f"job {job} " not in text_of(listed) and f"{job}:" not in text_of(listed)
            killed = await mine.call_tool("bash_kill", {"job_id": job})
            assert killed.is_error is False, text_of(killed)
            # The variable's token works too, and no command sees it.
            async with client(url, token=env["AGENT_BASH_HTTP_TOKEN"]) as third:
                shown = await third.call_tool("bash", {"command": "echo ${AGENT_BASH_HTTP_TOKEN:-unset}"})
                assert text_of(shown).startswith("unset\n"), text_of(shown)


async def test_past_the_request_limit_a_request_waits_for_nothing_and_is_told_why(marker):
    with http_server(args=("--http-max-requests", "1")) as (url, process):
        async with client(url) as c:
            async with anyio_task_group() as group:
                group.start_soon(c.call_tool, "bash", {"command": f"sleep 2.{marker[5:]}"})
                # The event loop must run meanwhile: the call is a task of it.
                for _ in range(250):
                    if alive_with(f"sleep 2.{marker[5:]}"):
                        break
                    await anyio.sleep(0.02)
                assert alive_with(f"sleep 2.{marker[5:]}")
                status, text = post(url, LIST, {"Authorization": f"Bearer {TOKEN}"})
                assert status == 503 and "too many requests at once" in text, (status, text)
            status, _ = post(url, LIST, {"Authorization": f"Bearer {TOKEN}"})
            assert status == 200


def test_the_server_refuses_to_start_without_a_token_or_with_a_file_others_can_read():
    plain = {k: v for k, v in os.environ.items() if k != "AGENT_BASH_HTTP_TOKEN"}
    for address in ("127.0.0.1:0", "0.0.0.0:0"):
        done = subprocess.run([BIN, "mcp", "--http", address], capture_output=True, text=True, env=plain,
                              timeout=30)
        assert done.returncode != 0
        assert "--http needs a bearer token" in done.stderr, done.stderr
    token_file = os.path.join(tempfile.mkdtemp(prefix="agent-bash-tokens-"), "tokens")
    with open(token_file, "w") as f:
        f.write(TOKEN + "\n")
    os.chmod(token_file, 0o644)
    done = subprocess.run([BIN, "mcp", "--http", "0", "--token-file", token_file], capture_output=True,
                          text=True, env=plain, timeout=30)
    assert done.returncode != 0 and "chmod 600" in done.stderr, done.stderr


async def test_a_stopped_server_leaves_no_process(marker):
    with http_server() as (url, process):
        async with client(url) as c:
            await c.call_tool("bash", {"command": f"sleep {marker}", "background": True})
            assert alive_with(f"sleep {marker}")
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=15) == 0
    assert eventually(lambda: not alive_with(f"sleep {marker}"))


def anyio_task_group():
    return anyio.create_task_group()
