"""Terminal sessions over MCP: terminal_open, terminal_send, terminal_view, terminal_close,
driven by the official client against real programs. Waits are the tools' own (wait_for,
the state), never sleeps."""

import os

import pytest

from conftest import alive_with, server, text_of

pytestmark = pytest.mark.anyio

TOOLS = {"terminal_open", "terminal_send", "terminal_view", "terminal_close"}


async def call(session, tool, arguments):
    return await session.call_tool(tool, arguments)


async def test_the_terminal_tools_are_listed_with_their_arguments():
    async with server(structured=True) as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert TOOLS <= set(tools)
        assert set(tools["terminal_open"].input_schema["properties"]) == {
            "command", "cwd", "rows", "cols", "timeout_secs"}
        assert set(tools["terminal_send"].input_schema["properties"]) == {
            "id", "text", "keys", "wait_secs", "wait_for"}
        assert set(tools["terminal_view"].input_schema["properties"]) == {"id", "wait_secs", "wait_for"}
        assert tools["terminal_close"].input_schema["required"] == ["id"]
        for name in TOOLS:
            properties = tools[name].output_schema["properties"]
            assert list(properties)[0] == "text"
            assert {"state", "cursor_row", "waited_ms", "scrollback_stats"} <= set(properties)


async def test_a_python_repl_is_driven_and_its_state_is_said_in_words():
    async with server(structured=True) as session:
        opened = await call(session, "terminal_open", {"command": "python3 -q"})
        assert opened.is_error is False, text_of(opened)
        fields = opened.structured_content
        assert fields["state"] == "waiting_for_input", text_of(opened)
        terminal = fields["id"]
        assert text_of(opened).startswith("[screen 24x80]\n>>>")
        assert f"[terminal {terminal}: waiting for input · waited " in text_of(opened)

        sent = await call(session, "terminal_send", {"id": terminal, "text": "print(6 * 7)\n"})
        assert sent.is_error is False, text_of(sent)
        assert "\n42\n>>>" in text_of(sent)
        assert sent.structured_content["state"] == "waiting_for_input"

        keys = await call(session, "terminal_send", {"id": terminal, "keys": ["Ctrl-D"]})
        assert keys.structured_content["state"] == "exited", text_of(keys)
        assert f"[terminal {terminal}: exited 0" in text_of(keys)

        closed = await call(session, "terminal_close", {"id": terminal})
        assert closed.is_error is False, text_of(closed)


async def test_bad_input_gets_a_clear_error_and_the_server_keeps_serving():
    async with server() as session:
        unknown = await call(session, "terminal_view", {"id": 42})
        assert unknown.is_error is True
        assert "no terminal 42 in this session" in text_of(unknown)

        opened = await call(session, "terminal_open", {"command": "cat"})
        terminal = int(text_of(opened).split("[terminal ")[1].split(":")[0])
        bad_key = await call(session, "terminal_send", {"id": terminal, "keys": ["Hyper"]})
        assert bad_key.is_error is True
        assert 'unknown key "Hyper"' in text_of(bad_key) and "Ctrl-A to Ctrl-Z" in text_of(bad_key)
        bad_regex = await call(session, "terminal_view", {"id": terminal, "wait_for": "("})
        assert bad_regex.is_error is True and "not a valid regex" in text_of(bad_regex)
        nothing = await call(session, "terminal_send", {"id": terminal})
        assert nothing.is_error is True and "give `text`" in text_of(nothing)
        typo = await call(session, "terminal_open", {"comand": "ls"})
        assert typo.is_error is True and "unknown argument `comand`" in text_of(typo)
        size = await call(session, "terminal_open", {"rows": 1000})
        assert size.is_error is True and "rows must be between" in text_of(size)

        echoed = await call(session, "terminal_send", {"id": terminal, "text": "still here\n"})
        assert echoed.is_error is False
        assert "still here\nstill here" in text_of(echoed)


async def test_bash_in_a_terminal_keeps_cd_and_closing_kills_its_jobs(marker):
    root = os.path.realpath(__import__("tempfile").mkdtemp())
    os.mkdir(os.path.join(root, "sub"))
    async with server(root=root, structured=True) as session:
        opened = await call(session, "terminal_open", {})
        terminal = opened.structured_content["id"]
        await call(session, "terminal_send", {"id": terminal, "text": "cd sub\n"})
        pwd = await call(session, "terminal_send", {"id": terminal, "text": "pwd\n"})
        assert f"\n{root}/sub\n" in pwd.structured_content["text"]
        started = await call(session, "terminal_send", {"id": terminal, "text": f"sleep {marker} &\n"})
        assert started.structured_content["state"] == "waiting_for_input"
        assert alive_with(f"sleep {marker}")
        closed = await call(session, "terminal_close", {"id": terminal})
        assert closed.structured_content["state"] == "exited"
        assert alive_with(f"sleep {marker}") == []


async def test_lines_typed_at_a_shell_prompt_go_through_the_policy():
    async with server() as session:
        opened = await call(session, "terminal_open", {})
        terminal = int(text_of(opened).split("[terminal ")[1].split(":")[0])
        refused = await call(session, "terminal_send", {"id": terminal, "text": "rm -rf /\n"})
        assert refused.is_error is False
        text = text_of(refused)
        assert text.startswith("[refused by policy: denied; nothing was typed]"), text
        assert "rm -rf" not in text.split("[screen")[1]
