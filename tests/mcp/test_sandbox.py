"""The kernel sandbox through the MCP server: `--sandbox` confines every call, a call may
ask for a stricter sandbox but not a looser one, and a daemon that leaves its session is
killed when the server ends."""

import os
import pathlib
import tempfile

import pytest

from conftest import alive_with, eventually, server, text_of

pytestmark = pytest.mark.anyio


def outside_dir():
    """A directory no sandbox mode makes writable (the home directory itself is not)."""
    path = pathlib.Path(os.environ["HOME"], f".agent-bash-mcp-escape-{os.getpid()}")
    path.mkdir(exist_ok=True)
    return path


async def test_workspace_write_confines_every_call_and_a_call_may_only_tighten():
    root = tempfile.mkdtemp(prefix="agent-bash-sandbox-")
    outside = outside_dir()
    target = outside / "written"
    try:
        async with server(root, extra_args=("--sandbox", "workspace-write")) as session:
            inside = await session.call_tool("bash", {"command": "echo ok > inside && cat inside"})
            assert not inside.is_error and "ok" in text_of(inside)

            escaped = await session.call_tool("bash", {"command": f"echo x > {target}"})
            assert escaped.is_error and not target.exists()
            assert text_of(escaped).splitlines()[-1].startswith("hint: the sandbox"), text_of(escaped)

            tighter = await session.call_tool(
                "bash", {"command": "touch more", "sandbox": "read-only"}
            )
            assert tighter.is_error and "Read-only file system" in text_of(tighter)
            assert not pathlib.Path(root, "more").exists()

            looser = await session.call_tool("bash", {"command": f"touch {target}", "sandbox": "off"})
            assert looser.is_error and "may not loosen" in text_of(looser), text_of(looser)
            assert not target.exists()

            offline = await session.call_tool(
                "bash", {"command": "getent ahosts pypi.org && echo resolved", "network": False}
            )
            assert "resolved" not in text_of(offline)

            wrong = await session.call_tool("bash", {"command": "true", "sandbox": "strict"})
            assert wrong.is_error and "workspace-write" in text_of(wrong)
            # The server keeps serving.
            again = await session.call_tool("bash", {"command": "echo still"})
            assert "still" in text_of(again)
    finally:
        target.unlink(missing_ok=True)
        outside.rmdir()


async def test_a_daemon_that_left_its_session_is_listed_and_killed_with_the_server(marker):
    root = tempfile.mkdtemp(prefix="agent-bash-sandbox-")
    command = f"(setsid sleep {marker} </dev/null >/dev/null 2>&1 &); true"
    async with server(root, extra_args=("--sandbox", "workspace-write")) as session:
        result = await session.call_tool("bash", {"command": command})
        assert marker in text_of(result), text_of(result)
        assert alive_with(marker)
    assert eventually(lambda: not alive_with(marker)), "the daemon outlived the server"


async def test_by_default_an_unanswered_ask_runs_confined_and_a_deny_is_refused():
    """A client without elicitation (this one) cannot answer an `ask`: under the default
    sandbox the command runs confined and says so; a `deny` is still a refusal."""
    root = pathlib.Path(tempfile.mkdtemp(prefix="agent-bash-sandbox-"))
    outside = outside_dir()
    for name in ("a.pyc", "sub/b.pyc", "keep.py"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("")
    try:
        async with server(str(root)) as session:
            cleaned = await session.call_tool("bash", {"command": "find . -name '*.pyc' | xargs rm -rf"})
            assert not cleaned.is_error, text_of(cleaned)
            assert not (root / "a.pyc").exists() and not (root / "sub/b.pyc").exists()
            assert (root / "keep.py").exists()
            assert "note: ran without asking" in text_of(cleaned), text_of(cleaned)

            target = outside / "x"
            asked = await session.call_tool("bash", {"command": f"X=touch; $X made; $X {target}"})
            assert (root / "made").exists() and not target.exists(), text_of(asked)
            assert "note: ran confined (no network, .git read-only)" in text_of(asked), text_of(asked)

            denied = await session.call_tool("bash", {"command": "rm -rf /"})
            assert denied.is_error and text_of(denied).startswith("[refused by policy: denied")
    finally:
        for path in outside.iterdir():
            path.unlink()
        outside.rmdir()
