"""Background jobs over MCP: bash with background, bash_output, bash_kill, bash_jobs.

Most tests start the server with `--structured` to read the jobs' fields (ids, status,
pids); the output itself is read from the text, as the model reads it."""

import os
import re
import signal

import anyio
import pytest

from conftest import FX, alive_with, descriptors, eventually, server, server_pid, stderr_of, stdout_of, text_of
from test_mcp import INITIALIZE, raw_server, receive, send

pytestmark = pytest.mark.anyio


async def call(session, tool, arguments):
    return await session.call_tool(tool, arguments)


async def read_until_ended(session, job_id):
    """Reads the job until it has ended; returns every stdout part and the last result."""
    parts = []
    while True:
        result = await call(session, "bash_output", {"job_id": job_id, "wait_secs": 30})
        assert result.is_error is False, text_of(result)
        if stdout_of(result):
            parts.append(stdout_of(result))
        if result.structured_content["job"]["status"] != "running":
            return parts, result


async def test_the_job_tools_are_listed_with_their_schemas():
    async with server(structured=True) as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert {"bash", "bash_output", "bash_kill", "bash_jobs"} <= set(tools)
        assert "background" in tools["bash"].input_schema["properties"]
        assert tools["bash_output"].input_schema["required"] == ["job_id"]
        assert set(tools["bash_output"].input_schema["properties"]) == {"job_id", "wait_secs", "pattern"}
        assert tools["bash_kill"].input_schema["required"] == ["job_id"]
        assert tools["bash_jobs"].input_schema["properties"] == {}
        for name in ("bash_output", "bash_kill"):
            assert {"text", "job", "stdout_stats", "pattern_matched"} <= set(tools[name].output_schema["properties"])
        assert list(tools["bash_jobs"].output_schema["properties"]) == ["text", "jobs"]


async def test_a_dev_server_in_the_background_is_waited_for_fetched_and_killed():
    async with server(structured=True) as session:
        started = await call(
            session, "bash", {"command": "python3 -m http.server 0 --bind 127.0.0.1", "background": True}
        )
        assert started.is_error is False, text_of(started)
        job = started.structured_content["job"]
        job_id, pid = started.structured_content["job_id"], job["pid"]
        assert job["status"] == "running" and job["origin"] == "background"
        assert f"started as background job {job_id}" in text_of(started)

        ready = await call(session, "bash_output", {"job_id": job_id, "pattern": "Serving HTTP", "wait_secs": 30})
        assert ready.is_error is False, text_of(ready)
        assert ready.structured_content["pattern_matched"] is True, text_of(ready)
        port = re.search(r"port (\d+)", stdout_of(ready)).group(1)

        fetched = await call(
            session, "bash", {"command": f"curl -sS -o /dev/null -w '%{{http_code}}' http://127.0.0.1:{port}/"}
        )
        assert stdout_of(fetched) == "200", text_of(fetched)

        listed = await call(session, "bash_jobs", {})
        assert [j["job_id"] for j in listed.structured_content["jobs"]] == [job_id]
        assert f"job {job_id} · is running · " in text_of(listed)

        killed = await call(session, "bash_kill", {"job_id": job_id})
        assert killed.is_error is False, text_of(killed)
        final = killed.structured_content
        assert final["job"]["status"] == "killed" and final["job"]["signal"] == "SIGTERM", final
        assert '"GET / HTTP/1.1" 200' in stderr_of(killed), "the request's log line, read at the kill"
        assert alive_with("http.server 0") == [], "the server outlived its kill"
        assert not pid_alive(pid)

        again = await call(session, "bash_kill", {"job_id": job_id})
        assert again.is_error is False
        assert again.structured_content["job"]["status"] == "killed"
        assert "already ended" in text_of(again)


def pid_alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


async def test_a_timeout_goes_on_as_a_job_that_finishes_and_is_announced():
    async with server(structured=True) as session:
        timed_out = await call(
            session, "bash", {"command": "echo one; sleep 1.5; echo two; exit 5", "timeout_secs": 1}
        )
        assert timed_out.is_error is True, "a timeout is an error for the model, even when it goes on"
        result = timed_out.structured_content
        assert result["timed_out"] is True and result["exit_code"] is None
        assert stdout_of(timed_out) == "one"
        job_id = result["job_id"]
        assert result["job"]["origin"] == "timeout"
        assert f"now background job {job_id}" in text_of(timed_out)

        # Wait for its end without reading it: the next bash result announces it.
        for _ in range(200):
            listed = await call(session, "bash_jobs", {})
            if listed.structured_content["jobs"][0]["status"] != "running":
                break
            await anyio.sleep(0.05)
        assert listed.structured_content["jobs"][0]["exit_code"] == 5
        nxt = await call(session, "bash", {"command": "echo next"})
        ended = [n for n in nxt.structured_content["notes"] if n["kind"] == "job_ended"]
        assert [(n["job"]["job_id"], n["job"]["exit_code"]) for n in ended] == [(job_id, 5)], ended
        assert f"note: [job {job_id} exited 5 after 1 s: `echo one; sleep 1.5; echo two; exit 5`]" in text_of(nxt)

        parts, last = await read_until_ended(session, job_id)
        assert parts == ["two"], parts
        with open(last.structured_content["job"]["stdout_path"]) as f:
            assert f.read() == "one\ntwo\n", "the job's file holds the whole output"


async def test_processes_left_running_become_a_job(marker):
    async with server(structured=True) as session:
        result = await call(session, "bash", {"command": f"(sleep 1.5; echo late) & echo early; {FX} sleep 3 {marker} &"})
        assert result.is_error is False
        content = result.structured_content
        assert stdout_of(result) == "early" and content["exit_code"] == 0
        assert content["job"]["origin"] == "leftover"
        job_id = content["job_id"]
        assert f"their output goes on into background job {job_id}" in text_of(result)
        parts, last = await read_until_ended(session, job_id)
        assert parts == ["late"], parts
        assert last.structured_content["job"]["status"] == "ended"
        assert alive_with(marker) == []


async def test_twenty_jobs_at_once_and_the_limit(marker):
    async with server(extra_args=("--max-jobs", "20"), structured=True) as session:
        results = [None] * 20

        async def start(n):
            results[n] = await call(
                session, "bash", {"command": f"echo job {n}; exec -a 'fx {marker}' {FX} sleep 600", "background": True}
            )

        async with anyio.create_task_group() as group:
            for n in range(20):
                group.start_soon(start, n)
        ids = sorted(result.structured_content["job_id"] for result in results)
        assert ids == list(range(1, 21))
        assert await anyio.to_thread.run_sync(lambda: eventually(lambda: len(alive_with(marker)) == 20, 20)), len(alive_with(marker))

        refused = await call(session, "bash", {"command": "true", "background": True})
        assert refused.is_error is True
        assert "20 background jobs are running" in text_of(refused)

        listed = await call(session, "bash_jobs", {})
        jobs = listed.structured_content["jobs"]
        assert len(jobs) == 20 and all(job["status"] == "running" for job in jobs)
        for job_id in ids:
            read = await call(session, "bash_output", {"job_id": job_id, "pattern": "^job \\d+$", "wait_secs": 10})
            assert read.structured_content["pattern_matched"] is True, text_of(read)

        for job_id in ids[:10]:
            killed = await call(session, "bash_kill", {"job_id": job_id, "signal": "KILL"})
            assert killed.structured_content["job"]["signal"] == "SIGKILL"
        assert len(alive_with(marker)) == 10
    # The session ended with ten jobs running: none survives it.
    assert eventually(lambda: alive_with(marker) == []), alive_with(marker)


async def test_bad_job_requests_are_clear_errors_and_change_nothing():
    async with server() as session:
        started = await call(session, "bash", {"command": "echo hi; sleep 30", "background": True})
        job_id = int(re.search(r"started as background job (\d+)", text_of(started)).group(1))
        cases = [
            ("bash_output", {"job_id": 99}, "no job 99 in this session; its jobs are 1"),
            ("bash_output", {}, "missing argument `job_id`"),
            ("bash_output", {"job_id": "one"}, "`job_id` must be a whole number"),
            ("bash_output", {"job_id": job_id, "pattern": "("}, "is not a valid regex"),
            ("bash_output", {"job_id": job_id, "wait_secs": 100000}, "wait_secs must be between 0 and 600"),
            ("bash_output", {"job_id": job_id, "wait_secs": -1}, "`wait_secs` must be at least 0"),
            ("bash_output", {"job_id": job_id, "lines": 5}, "unknown argument `lines`"),
            ("bash_kill", {"job_id": 99}, "no job 99"),
            ("bash_kill", {"job_id": job_id, "signal": "BOGUS"}, "unknown signal"),
            ("bash_jobs", {"all": True}, "`bash_jobs` takes no arguments"),
            ("bash", {"command": "true", "background": "yes"}, "`background` must be true or false"),
        ]
        for tool, arguments, expected in cases:
            result = await call(session, tool, arguments)
            assert result.is_error is True, (tool, arguments)
            assert expected in text_of(result), (tool, arguments, text_of(result))
        # The job is untouched, and its output still unread.
        read = await call(session, "bash_output", {"job_id": job_id, "wait_secs": 10})
        assert stdout_of(read) == "hi"
        assert f"[job {job_id} is running · " in text_of(read)


@pytest.mark.parametrize("how", ["stdin-closed", "sigterm"])
def test_the_session_end_kills_every_job(how, marker):
    process = raw_server("/tmp")
    try:
        send(process, INITIALIZE)
        assert receive(process)["id"] == 1
        send(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        commands = [
            {"command": f"exec -a 'fx {marker} a' {FX} sleep 600", "background": True},
            {"command": f"exec {FX} ignore-term {marker}", "background": True},
            {"command": f"echo early; exec -a 'fx {marker} c' {FX} sleep 600", "timeout_secs": 1},
            {"command": f"(exec -a 'fx {marker} d' {FX} sleep 600) & echo left"},
        ]
        for n, arguments in enumerate(commands, start=2):
            send(process, {"jsonrpc": "2.0", "id": n, "method": "tools/call",
                           "params": {"name": "bash", "arguments": arguments}})
            answer = receive(process)
            while answer.get("id") != n:
                answer = receive(process)
            assert re.search(rf"background job {n - 1}\b", answer["result"]["content"][0]["text"]), answer
        # a, c, d, and b with its child.
        assert eventually(lambda: len(alive_with(marker)) == 5), alive_with(marker)
        if how == "stdin-closed":
            process.stdin.close()
        else:
            process.send_signal(signal.SIGTERM)
        process.wait(timeout=15)
        assert alive_with(marker) == [], "a job outlived the session"
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_at_the_session_end_jobs_get_sigterm_first(tmp_path):
    """A job that cleans up on SIGTERM gets to, before anything is killed."""
    process = raw_server(str(tmp_path))
    try:
        send(process, INITIALIZE)
        assert receive(process)["id"] == 1
        send(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        command = "trap 'echo saved > state; exit 0' TERM; echo ready; while :; do sleep 0.05; done"
        send(process, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                       "params": {"name": "bash", "arguments": {"command": command, "background": True}}})
        assert "started as background job 1 " in receive(process)["result"]["content"][0]["text"]
        send(process, {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                       "params": {"name": "bash_output", "arguments": {"job_id": 1, "pattern": "ready"}}})
        assert 'note: a line matched "ready"' in receive(process)["result"]["content"][0]["text"]
        process.stdin.close()
        process.wait(timeout=15)
        assert (tmp_path / "state").read_text() == "saved\n"
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


async def test_a_long_wait_reports_progress():
    seen = []

    async def on_progress(progress, total, message):
        seen.append(message)

    async with server() as session:
        started = await call(session, "bash", {"command": "sleep 2.5; echo done", "background": True})
        job_id = int(re.search(r"started as background job (\d+)", text_of(started)).group(1))
        read = await session.call_tool(
            "bash_output", {"job_id": job_id, "pattern": "done", "wait_secs": 30}, progress_callback=on_progress
        )
        assert stdout_of(read) == "done" and 'note: a line matched "done"' in text_of(read)
    assert 1 <= len(seen) <= 3, seen
    assert all(message.startswith(f"waiting for job {job_id} · ") for message in seen), seen


async def test_a_long_session_of_leftover_calls_leaves_no_descriptor_or_job_behind():
    """500 calls that leave a process running, one at a time: each leftover's supervisor
    holds two pipes while its tree lives; afterwards the server is back to its descriptors,
    and the job table keeps only the last finished jobs."""
    async with server(structured=True) as session:
        await call(session, "bash", {"command": "true"})
        pid = server_pid()
        before = descriptors(pid)
        for _ in range(500):
            result = await call(session, "bash", {"command": "sleep 0.05 & echo bg"})
            assert stdout_of(result) == "bg", text_of(result)
        # The last leftovers end within their 50 ms; each call lets go of ended ones.
        after = descriptors(pid)
        deadline = anyio.current_time() + 20
        while after > before + 2 and anyio.current_time() < deadline:
            await call(session, "bash", {"command": "true"})
            await anyio.sleep(0.05)
            after = descriptors(pid)
        assert after <= before + 2, f"descriptors: {before} before, {after} after"
        listed = await call(session, "bash_jobs", {})
        jobs = listed.structured_content["jobs"]
        assert len(jobs) <= 64, f"{len(jobs)} jobs kept"
