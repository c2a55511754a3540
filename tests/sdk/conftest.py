"""Fixtures for the MCP tests through the official Python SDK's 1.x line (scripts/sdk-tests):
the built binary over stdio, as a client of that line starts it. Self-contained on purpose:
tests/mcp runs under the 2.x SDK, whose package layout differs."""

import os
import pathlib
import tempfile
from contextlib import asynccontextmanager
from datetime import timedelta

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = os.environ.get("AGENT_BASH_BIN", str(ROOT / "target" / "debug" / "agent-bash"))

# The setup of tests/mcp/test_policy.py: a project file with a rule that asks before `touch`,
# so that whether an asked command ran shows in the files.
ASKING = """
[[policy.rules]]
name = "ask-before-touch"
decision = "ask"
command = "touch *"
reason = "touch changes files"
examples = ["touch a", "sudo touch b"]
counter_examples = ["echo touch"]

[audit]
path = "audit.jsonl"
"""


@pytest.fixture(scope="session", autouse=True)
def scratch_directory():
    """Every temporary directory the tests make (tempfile.mkdtemp) lives in one directory
    that is removed when the run ends."""
    with tempfile.TemporaryDirectory(prefix="agent-bash-sdk-tests-") as scratch:
        tempfile.tempdir = scratch
        try:
            yield scratch
        finally:
            tempfile.tempdir = None


@pytest.fixture
def anyio_backend():
    return "asyncio"


def project(text=ASKING):
    """A project root holding `.agent-bash.toml` with `text`."""
    root = tempfile.mkdtemp(prefix="agent-bash-sdk-")
    pathlib.Path(root, ".agent-bash.toml").write_text(text)
    return root


@asynccontextmanager
async def server(root=None, elicitation_callback=None, message_handler=None):
    """`(session, initialize result)` for `agent-bash mcp --root ROOT` over stdio, started the
    way the SDK starts a server (its default environment, not this process's). With
    `elicitation_callback` the client declares elicitation and answers with it. A request
    unanswered for 20 s fails, rather than hanging the run."""
    root = root or tempfile.mkdtemp(prefix="agent-bash-sdk-")
    params = StdioServerParameters(command=BIN, args=["mcp", "--root", root])
    async with stdio_client(params) as (read, write):
        async with ClientSession(
            read,
            write,
            read_timeout_seconds=timedelta(seconds=20),
            elicitation_callback=elicitation_callback,
            message_handler=message_handler,
        ) as session:
            initialized = await session.initialize()
            yield session, initialized


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


def text_of(result):
    return "\n".join(block.text for block in result.content if block.type == "text")
