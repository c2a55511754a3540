"""Faults from outside the server, injected through the official client: too few file
descriptors, a full disk under the spill directory, the spill directory removed in the
middle of a session. Each call answers (a result or a clear error), nothing is lost that
could be kept, and the server keeps serving."""

import os
import shutil
import subprocess
import tempfile

import anyio
import pytest

from conftest import BIN, descriptors, eventually, server, server_pid, stdout_of, text_of

pytestmark = pytest.mark.anyio

# Said by every error of a call that ran out of descriptors, with what to do.
OUT_OF_DESCRIPTORS = "file descriptors its limit allows (64, `ulimit -n`)"


async def test_under_a_limit_of_64_descriptors_every_call_answers_and_the_server_keeps_serving():
    """Forty calls at once of every kind under `ulimit -n 64`: each works or says that the
    descriptors ran out and what to do; the server then serves as before and is back to
    its descriptors once the calls' processes are gone."""
    kinds = [
        ({"command": "echo hi"}, "hi"),
        ({"command": "sleep 0.5 & echo bg"}, "bg"),
        ({"command": "seq 1 200000"}, "200000"),
        ({"command": "sleep 0.3; echo job", "background": True}, "started as background job"),
    ]
    async with server(descriptor_limit=64) as session:
        await session.call_tool("bash", {"command": "true"})
        pid = server_pid()
        before = descriptors(pid)
        answers = [None] * 40

        async def one(index):
            arguments, _ = kinds[index % len(kinds)]
            with anyio.fail_after(60):
                answers[index] = await session.call_tool("bash", arguments)

        async with anyio.create_task_group() as group:
            for index in range(len(answers)):
                group.start_soon(one, index)
        worked = refused = 0
        for index, result in enumerate(answers):
            text = text_of(result)
            if result.is_error:
                assert OUT_OF_DESCRIPTORS in text, text
                refused += 1
            else:
                assert kinds[index % len(kinds)][1] in text, text
                worked += 1
        # The limit was reached (or this tests nothing), and calls still got through.
        assert refused > 0 and worked > 0, (worked, refused)
        alive = await session.call_tool("bash", {"command": "echo alive"})
        assert stdout_of(alive) == "alive", text_of(alive)
        deadline = anyio.current_time() + 20
        while descriptors(pid) > before + 4 and anyio.current_time() < deadline:
            await session.call_tool("bash", {"command": "true"})
            await anyio.sleep(0.1)
        held = sorted(os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd"))
        assert descriptors(pid) <= before + 4, f"descriptors: {before} before, after: {held}"


def mounting():
    """The command prefix that runs a program in a mount namespace of its own, where it may
    mount a filesystem (as root, or as root of a user namespace)."""
    if os.geteuid() == 0:
        return ["unshare", "--mount", "--propagation", "private"]
    return ["unshare", "--mount", "--map-root-user", "--propagation", "private"]


@pytest.mark.skipif(shutil.which("unshare") is None, reason="util-linux's unshare is part of Debian")
async def test_a_full_disk_under_the_spill_directory_loses_the_file_not_the_call():
    """The spill directory on a filesystem of 256 KiB: a call printing megabytes still
    shows its head and tail and says the full output could not be saved; once space is
    freed, the next call's file is saved whole."""
    spill = tempfile.mkdtemp(prefix="spill-")
    root = tempfile.mkdtemp(prefix="root-")
    ready = subprocess.run([*mounting(), "true"], capture_output=True)
    assert ready.returncode == 0, f"no mount namespace here: {ready.stderr!r}"
    script = f'mount -t tmpfs -o size=256k,mode=700 tmpfs {spill} && exec "$0" "$@"'
    # The server's own sandbox is off: it would need a user namespace inside this one.
    env = {"AGENT_BASH_OUTPUT_SPILL_DIR": spill, "AGENT_BASH_SANDBOX_MODE": "off"}
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=mounting()[0],
        args=[*mounting()[1:], "bash", "-c", script, BIN, "mcp", "--root", root],
        env={**os.environ, **env},
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        flood = await session.call_tool("bash", {"command": "seq 1 300000"})
        text = text_of(flood)
        assert flood.is_error is False, text
        assert text.startswith("1\n2\n3\n") and "\n300000\n" in text, text[-500:]
        assert "No space left on device" in text, text[-800:]
        # Free the space (the command runs outside the small filesystem's reach: it is
        # the server's own namespace, so it sees it).
        freed = await session.call_tool("bash", {"command": f"rm -rf {spill}/*/*; echo freed"})
        assert stdout_of(freed) == "freed", text_of(freed)
        again = await session.call_tool("bash", {"command": "seq 1 20000"})
        text = text_of(again)
        assert again.is_error is False and "No space" not in text, text[-800:]
        saved = [line for line in text.split("\n") if "full output: " in line or "stdout.log" in line]
        assert saved, text[-800:]


async def test_a_spill_directory_removed_in_the_middle_of_a_session_is_made_again():
    """A user (or a temp cleaner) removes the spill directory while the server runs: the
    next calls work, sandboxed as before, and their full output is saved again."""
    spill = os.path.join(tempfile.mkdtemp(prefix="spill-"), "agent-bash")
    async with server(env={"AGENT_BASH_OUTPUT_SPILL_DIR": spill}) as session:
        first = await session.call_tool("bash", {"command": "seq 1 100000"})
        assert first.is_error is False, text_of(first)
        assert eventually(lambda: os.path.isdir(spill))
        shutil.rmtree(spill)
        for command in ["echo next", "seq 1 100000"]:
            result = await session.call_tool("bash", {"command": command})
            assert result.is_error is False, text_of(result)
        paths = [word for word in text_of(result).split() if word.startswith(spill)]
        assert paths and all(os.path.exists(path.rstrip(")")) for path in paths), text_of(result)
