"""Fixtures for the MCP end-to-end tests: the built binary, driven by the official client."""

import os
import pathlib
import re
import time
import tempfile
import uuid
from contextlib import asynccontextmanager

import pytest
from mcp import Client, ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = os.environ.get("AGENT_BASH_BIN", str(ROOT / "target" / "debug" / "agent-bash"))
FX = os.environ.get("AGENT_BASH_FX", str(ROOT / "target" / "debug" / "examples" / "fx"))
# The protocol revision the client speaks: "2025-11-25" (the initialize handshake; asks come
# as elicitation requests) or "2026-07-28" (stateless; asks come back as `input_required`
# results the client answers by calling again). scripts/test runs the suite in both.
ERA = os.environ.get("MCP_ERA", "2025-11-25")
assert ERA in ("2025-11-25", "2026-07-28"), f"MCP_ERA={ERA!r}: use 2025-11-25 or 2026-07-28"
MODERN = ERA == "2026-07-28"


@pytest.fixture(scope="session", autouse=True)
def scratch_directory():
    """Every temporary directory the tests make (tempfile.mkdtemp) lives in one directory
    that is removed when the run ends, so repeated runs leave nothing in the system temp dir."""
    with tempfile.TemporaryDirectory(prefix="agent-bash-tests-") as scratch:
        tempfile.tempdir = scratch
        try:
            yield scratch
        finally:
            tempfile.tempdir = None


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture
def marker():
    """A number unique to the test, usable as `sleep 1000.<digits>` to find the process."""
    return f"1000.{uuid.uuid4().int % 10**12:012d}"


def alive_with(text):
    """Pids of live processes whose command line contains `text` (zombies have none)."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in cmdline:
            pids.append(int(entry))
    return pids


def eventually(condition, limit=5.0):
    """Waits until `condition()` holds, up to `limit` seconds; returns whether it did."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


@asynccontextmanager
async def server(root=None, extra_args=(), elicitation_callback=None, env=None, structured=False,
                 descriptor_limit=None):
    """An MCP client session with `agent-bash mcp` over stdio. With `elicitation_callback`
    the client declares elicitation and answers the server's questions with it; `env` is
    added to the server's environment; `structured` starts it with `--structured`;
    `descriptor_limit` starts it under that limit of open files (`ulimit -n`)."""
    root = root or tempfile.mkdtemp(prefix="agent-bash-mcp-")
    flags = ["--structured"] if structured else []
    command, args = BIN, ["mcp", "--root", root, *flags, *extra_args]
    if descriptor_limit is not None:
        # bash sets the limit and execs the server: the client's child is the server.
        command, args = "bash", ["-c", f'ulimit -n {descriptor_limit} && exec "$0" "$@"', BIN, *args]
    params = StdioServerParameters(command=command, args=args, env={**os.environ, **(env or {})})
    if MODERN:
        # The SDK's high-level client: it answers `input_required` with the callback and
        # calls again. The mode pins the revision (no fallback to the handshake).
        async with Client(params, mode=ERA, elicitation_callback=elicitation_callback) as client:
            assert client.protocol_version == ERA
            yield client
        return
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, elicitation_callback=elicitation_callback) as session:
            result = await session.initialize()
            assert result.protocol_version == ERA
            yield session


def children(parent):
    """Pids of the live children of `parent`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                if int(f.read().rsplit(")", 1)[1].split()[1]) == parent:
                    found.append(int(entry))
        except (OSError, ValueError, IndexError):
            continue
    return found


def server_pid():
    """The pid of the `agent-bash mcp` server this test process started."""
    for pid in children(os.getpid()):
        try:
            if os.path.samefile(os.readlink(f"/proc/{pid}/exe"), BIN):
                return pid
        except OSError:
            continue
    raise AssertionError("no server process")


def descriptors(pid):
    """How many descriptors the process holds."""
    return len(os.listdir(f"/proc/{pid}/fd"))


def text_of(result):
    return "\n".join(block.text for block in result.content if block.type == "text")


# The line that ends a result's output in its text: `[exit 0 · 3 ms]`, `[job 1 is running · …]`,
# `[started as background job 1 …]`, `[timed out after …]`, …
STATUS_LINE = re.compile(r"^\[(exit |killed |timed out |cancelled|still running |started as |job \d+ )")


def stdout_of(result):
    """The stdout part of a result's text (a call's or a job read's): the lines before
    `[stderr]` or the status line; empty for `(no output)`."""
    lines = []
    for line in text_of(result).split("\n"):
        if line == "[stderr]" or STATUS_LINE.match(line):
            break
        lines.append(line)
    shown = "\n".join(lines)
    return "" if shown in ("(no output)", "(no new output)") else shown


def stderr_of(result):
    """The stderr part of a result's text: the lines after `[stderr]`, to the status line."""
    lines = text_of(result).split("\n")
    if "[stderr]" not in lines:
        return ""
    shown = []
    for line in lines[lines.index("[stderr]") + 1 :]:
        if STATUS_LINE.match(line):
            break
        shown.append(line)
    return "\n".join(shown)
