"""Suggestions over MCP: a harness that declares its tools (`AGENT_BASH_POLICY_HOST`) gets
commands its tools do better back unrun, with the tool to use; the same command sent again
runs; a host without that tool, or text that only looks like such a command, runs as before."""

import json
import pathlib
import tempfile

import pytest

from conftest import server, text_of

pytestmark = pytest.mark.anyio


def root_with_file():
    """A session root holding `f` with the line `a`: whether `sed -i` ran shows in it."""
    root = tempfile.mkdtemp(prefix="agent-bash-suggest-")
    pathlib.Path(root, "f").write_text("a\n")
    return root


def content(root):
    return pathlib.Path(root, "f").read_text()


async def bash(session, command):
    return await session.call_tool("bash", {"command": command})


@pytest.mark.parametrize("structured", [False, True], ids=["text", "structured"])
async def test_a_suggestion_runs_nothing_and_the_same_command_sent_again_runs(structured):
    root = root_with_file()
    audit = pathlib.Path(root, "audit.jsonl")
    env = {"AGENT_BASH_POLICY_HOST": "claude-code", "AGENT_BASH_AUDIT_PATH": str(audit)}
    async with server(root, env=env, structured=structured) as session:
        result = await bash(session, "sed -i s/a/b/ f")
        assert result.is_error is True
        text = text_of(result)
        assert text.startswith("[not run: use the `Edit` tool for this]\ncommand: sed -i s/a/b/ f\n"), text
        assert "refused" not in text.splitlines()[0], text
        assert "send the same command again" in text, text
        if structured:
            refused = result.structured_content["refused"]
            assert (refused["decision"], refused["tool"]) == ("suggest", "Edit"), refused
        assert content(root) == "a\n", "the suggestion ran nothing"

        # Sent again, the identical command runs: the model chose the shell.
        again = await bash(session, "sed -i s/a/b/ f")
        assert again.is_error is False, text_of(again)
        assert content(root) == "b\n"

        # Text that only looks like a command, and a command inside a pipeline, run at once.
        echoed = await bash(session, 'echo "cat x"')
        assert echoed.is_error is False and text_of(echoed).startswith("cat x\n"), text_of(echoed)
        piped = await bash(session, "cat f | tr b c")
        assert piped.is_error is False and text_of(piped).startswith("c\n"), text_of(piped)

        # Reading the file is a suggestion of its own.
        read = await bash(session, "cat f")
        assert read.is_error is True
        assert text_of(read).startswith("[not run: use the `Read` tool for this]\n"), text_of(read)

    lines = [json.loads(line) for line in audit.read_text().splitlines()]
    seen = [(line["command"], line["decision"], line.get("tool"), line["ran"]) for line in lines]
    assert seen == [
        ("sed -i s/a/b/ f", "suggest", "Edit", False),
        ("sed -i s/a/b/ f", "suggest", "Edit", True),
        ('echo "cat x"', "allow", None, True),
        ("cat f | tr b c", "allow", None, True),
        ("cat f", "suggest", "Read", False),
    ], seen
    assert lines[0]["rule"] == "suggest-edit"


async def test_a_host_without_the_tool_runs_the_command():
    root = root_with_file()
    # Codex has no tool to read files, but one to edit them.
    async with server(root, env={"AGENT_BASH_POLICY_HOST": "codex"}) as session:
        read = await bash(session, "cat f")
        assert read.is_error is False and text_of(read).startswith("a\n"), text_of(read)
        edit = await bash(session, "sed -i s/a/b/ f")
        assert edit.is_error is True
        assert text_of(edit).startswith("[not run: use the `apply_patch` tool for this]\n"), text_of(edit)
        assert content(root) == "a\n"
    # No host declared: nothing is suggested.
    async with server(root) as session:
        edit = await bash(session, "sed -i s/a/b/ f")
        assert edit.is_error is False, text_of(edit)
        assert content(root) == "b\n"


async def test_a_projects_suggest_rule_needs_the_harness_to_have_the_tool():
    root = root_with_file()
    pathlib.Path(root, ".agent-bash.toml").write_text(
        '[policy]\nhost_tools = ["lint"]\n\n'
        '[[policy.rules]]\ndecision = "suggest"\ncommand = "wc *"\ntool = "lint"\n'
        'message = "count with the lint tool"\n'
    )
    # The untrusted project may not declare the tool itself: its rule stays off.
    async with server(root) as session:
        counted = await bash(session, "wc -l f")
        assert counted.is_error is False, text_of(counted)
    # The harness declares it: the rule is on.
    async with server(root, env={"AGENT_BASH_POLICY_HOST_TOOLS": "lint"}) as session:
        counted = await bash(session, "wc -l f")
        assert counted.is_error is True
        text = text_of(counted)
        assert text.startswith("[not run: use the `lint` tool for this]\n"), text
        assert "why: count with the lint tool" in text, text
