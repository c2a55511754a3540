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

from conftest import BIN, alive_with, descriptors, eventually, server, server_pid, stdout_of, text_of

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


def cgroups_of_agent_bash():
    """The pids cgroups agent-bash made (one per launcher, and per call with limits of its
    own), wherever the machine keeps them."""
    found = set()
    for base in ["/sys/fs/cgroup/pids/agent-bash", "/sys/fs/cgroup/agent-bash"]:
        for dirpath, dirnames, _ in os.walk(base):
            found.update(os.path.join(dirpath, name) for name in dirnames)
    return found


async def test_every_kind_of_call_gives_back_what_it_took(marker):
    """Calls of every kind, repeated: confined calls, leftovers, jobs read and killed,
    terminals opened and closed, refusals, a long command (whose script is a file), a
    timeout that becomes a job. Afterwards the server holds the descriptors and threads it
    held before, no terminal is left open on the machine, the session's directory holds
    no script, and once the server is gone, neither processes nor cgroups are left."""
    cgroups_before = cgroups_of_agent_bash()
    ptys_before = len(os.listdir("/dev/pts"))
    spill = os.path.join(tempfile.mkdtemp(prefix="spill-"), "agent-bash")
    async with server(env={"AGENT_BASH_OUTPUT_SPILL_DIR": spill}, structured=True) as session:
        await session.call_tool("bash", {"command": "true"})
        pid = server_pid()
        before = descriptors(pid), len(os.listdir(f"/proc/{pid}/task"))
        long_command = "true " + "x" * 200_000 + f"; echo long {marker}"
        for _ in range(5):
            assert stdout_of(await session.call_tool("bash", {"command": "echo hi"})) == "hi"
            await session.call_tool("bash", {"command": "sleep 0.1 & echo bg"})
            started = await session.call_tool("bash", {"command": f"sleep {marker}", "background": True})
            job = started.structured_content["job_id"]
            killed = await session.call_tool("bash_kill", {"job_id": job})
            assert killed.is_error is False, text_of(killed)
            timed = await session.call_tool("bash", {"command": f"sleep {marker}", "timeout_secs": 1})
            job = timed.structured_content["job_id"]
            await session.call_tool("bash_kill", {"job_id": job})
            opened = await session.call_tool("terminal_open", {"command": "cat"})
            assert opened.is_error is False, text_of(opened)
            closed = await session.call_tool("terminal_close", {"id": opened.structured_content["id"]})
            assert closed.is_error is False, text_of(closed)
            refused = await session.call_tool("bash", {"command": "rm -rf /"})
            assert refused.is_error is True
            long = await session.call_tool("bash", {"command": long_command})
            assert f"long {marker}" in text_of(long), text_of(long)[-300:]
        assert eventually(lambda: alive_with(marker) == [], 10), alive_with(marker)

        def back():
            return descriptors(pid) <= before[0] + 2 and len(os.listdir(f"/proc/{pid}/task")) <= before[1]

        # Tokio lets an idle blocking thread go after 10 s.
        deadline = anyio.current_time() + 30
        while not back() and anyio.current_time() < deadline:
            await anyio.sleep(0.2)
        assert back(), (before, descriptors(pid), len(os.listdir(f"/proc/{pid}/task")))
        assert len(os.listdir("/dev/pts")) <= ptys_before, os.listdir("/dev/pts")
        files = [name for _, _, names in os.walk(spill) for name in names]
        # A long command runs from `NNNN-command.sh`, removed once it is over.
        assert not [name for name in files if name.endswith("-command.sh")], files
    assert eventually(lambda: cgroups_of_agent_bash() <= cgroups_before, 10), cgroups_of_agent_bash()
