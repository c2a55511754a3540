"""OpenTelemetry, end to end: the server exports its spans and metrics over OTLP/HTTP (JSON) to a
receiver running in the test, only when the user's settings say so, never the command's text
nor its output, and under the client's own trace when the request's `_meta` carries one."""

import hashlib
import json
import pathlib
import re
import socket
import tempfile
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import anyio
import pytest
from mcp_types import ElicitResult

from conftest import server, text_of

pytestmark = pytest.mark.anyio


class Collector:
    """An OTLP/HTTP receiver on 127.0.0.1 that keeps every request it gets. `delay` makes it
    slow to answer (a collector under load)."""

    def __init__(self, delay=0.0):
        self.requests = []  # (path, content type, decoded body)
        self.lock = threading.Lock()
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                kind = self.headers.get("content-type", "")
                with collector.lock:
                    collector.requests.append((self.path, kind, json.loads(body)))
                time.sleep(delay)
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, *args):
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.http.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}"

    def __enter__(self):
        threading.Thread(target=self.http.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.http.shutdown()
        self.http.server_close()

    def payloads(self, path):
        with self.lock:
            return [body for (at, kind, body) in self.requests if at == path]

    def raw(self):
        with self.lock:
            return json.dumps([body for (_, _, body) in self.requests])

    def spans(self):
        """Every span received, its attributes as a dict of plain values."""
        found = []
        for body in self.payloads("/v1/traces"):
            for resource in body["resourceSpans"]:
                for scope in resource["scopeSpans"]:
                    for span in scope["spans"]:
                        found.append({**span, "attributes": attributes(span["attributes"])})
        return found

    def metric(self, name):
        """The data points of metric `name` in the last payload that has it (metrics are
        cumulative: the last one holds the totals)."""
        points = None
        for body in self.payloads("/v1/metrics"):
            for resource in body["resourceMetrics"]:
                for scope in resource["scopeMetrics"]:
                    for metric in scope["metrics"]:
                        if metric["name"] == name:
                            data = metric.get("sum") or metric.get("histogram") or metric.get("gauge")
                            points = [{**point, "attributes": attributes(point["attributes"])}
                                      for point in data["dataPoints"]]
        return points

    async def span(self, matches, limit=10.0):
        """The first span for which `matches` holds, waiting up to `limit` seconds for it (spans
        are sent in batches)."""
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            found = [span for span in self.spans() if matches(span)]
            if found:
                return found[0]
            await anyio.sleep(0.05)
        raise AssertionError(f"no such span in {[span['name'] for span in self.spans()]}")


def attributes(listed):
    """OTLP/JSON attributes as a dict: `{"key": k, "value": {"intValue": "3"}}` → `{k: 3}`."""
    plain = {}
    for attribute in listed:
        (kind, value), = attribute["value"].items()
        plain[attribute["key"]] = int(value) if kind == "intValue" else value
    return plain


def exporting(url, **more):
    """The server's environment for exporting to the collector at `url`: the setting, the
    standard variables, and short delays so that the test does not wait for the defaults
    (5 s for spans, 60 s for metrics)."""
    return {
        "AGENT_BASH_TELEMETRY_EXPORT": "otlp",
        "OTEL_EXPORTER_OTLP_ENDPOINT": url,
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json",
        "OTEL_BSP_SCHEDULE_DELAY": "50",
        "OTEL_METRIC_EXPORT_INTERVAL": "200",
        **more,
    }


def short_hash(command):
    return hashlib.sha256(command.encode()).hexdigest()[:16]


def project(text):
    root = tempfile.mkdtemp(prefix="agent-bash-otel-")
    pathlib.Path(root, ".agent-bash.toml").write_text(text)
    return root


def closed_port():
    """A port on 127.0.0.1 where nothing listens."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def spans_at_exit(log):
    """The counts of the server's last log line about its spans."""
    found = re.findall(r"telemetry: spans at exit ended=(\d+) exported=(\d+) failed=(\d+) lost=(\d+)", log)
    assert found, log
    return dict(zip(("ended", "exported", "failed", "lost"), map(int, found[-1])))


async def test_a_call_is_a_span_under_the_clients_trace_with_the_commands_hash_never_its_text():
    secret = uuid.uuid4().hex
    command = f"echo out-{secret}; echo err-{secret} >&2; exit 3"
    trace_id, parent_id = uuid.uuid4().hex, uuid.uuid4().hex[:16]
    meta = {"traceparent": f"00-{trace_id}-{parent_id}-01", "tracestate": "harness=1"}
    with Collector() as collector:
        async with server(env=exporting(collector.url)) as session:
            result = await session.call_tool("bash", {"command": command}, meta=meta)
            assert f"out-{secret}" in text_of(result) and "[exit 3 · " in text_of(result)
            span = await collector.span(lambda span: span["name"] == "bash")
            # Refused: nothing runs, and the span says who decided.
            refused = await session.call_tool("bash", {"command": f"rm -rf / # {secret}"})
            assert refused.is_error is True
            denied = await collector.span(lambda span: span["attributes"].get("agent_bash.decision") == "deny")

        assert span["traceId"] == trace_id and span["parentSpanId"] == parent_id, span
        assert span["traceState"] == "harness=1"
        assert span["kind"] == 2, "SPAN_KIND_SERVER"
        seen = span["attributes"]
        assert seen["gen_ai.tool.name"] == "bash" and seen["mcp.method.name"] == "tools/call"
        assert seen["agent_bash.command.hash"] == short_hash(command)
        assert "agent_bash.command" not in seen
        assert seen["agent_bash.decision"] == "allow"
        assert seen["agent_bash.outcome"] == "exit_nonzero"
        assert seen["process.exit.code"] == 3
        assert seen["agent_bash.timed_out"] is False
        assert seen["agent_bash.target"] == "local"
        assert seen["agent_bash.sandbox.mode"] in ("off", "workspace-write")
        out, err = f"out-{secret}\n", f"err-{secret}\n"
        assert seen["agent_bash.stdout.bytes"] == len(out) and seen["agent_bash.stdout.lines"] == 1
        assert seen["agent_bash.stderr.bytes"] == len(err) and seen["agent_bash.stderr.lines_returned"] == 1
        assert seen["agent_bash.stdout.bytes_returned"] == len(out.rstrip("\n"))
        assert seen["agent_bash.stdout.spilled"] is False

        assert denied["attributes"]["agent_bash.decision.rule"] == "rm-root"
        assert denied["attributes"]["agent_bash.outcome"] == "refused"
        assert "process.exit.code" not in denied["attributes"], "nothing ran"
        # Neither a command's text nor its output left the process, in any span or metric.
        assert secret not in collector.raw()


async def test_a_background_job_is_a_span_from_its_start_to_its_end_under_the_call_that_started_it():
    with Collector() as collector:
        async with server(env=exporting(collector.url)) as session:
            result = await session.call_tool("bash", {"command": "sleep 0.5; echo done", "background": True})
            assert "background job 1" in text_of(result), text_of(result)
            job = await collector.span(lambda span: span["name"] == "bash job")
            call = await collector.span(lambda span: span["name"] == "bash")
    assert job["traceId"] == call["traceId"] and job["parentSpanId"] == call["spanId"]
    assert call["attributes"]["agent_bash.outcome"] == "job"
    assert call["attributes"]["agent_bash.job.id"] == 1
    seen = job["attributes"]
    assert seen["agent_bash.job.id"] == 1 and seen["agent_bash.job.origin"] == "background"
    assert seen["agent_bash.job.status"] == "exited" and seen["process.exit.code"] == 0
    assert seen["agent_bash.stdout.bytes"] == len("done\n")
    assert seen["agent_bash.command.hash"] == short_hash("sleep 0.5; echo done")
    lasted = (int(job["endTimeUnixNano"]) - int(job["startTimeUnixNano"])) / 1e9
    assert 0.5 <= lasted < 5, lasted


async def test_metrics_count_calls_by_outcome_their_duration_bytes_jobs_and_terminals():
    with Collector() as collector:
        async with server(env=exporting(collector.url)) as session:
            await session.call_tool("bash", {"command": "printf 'a%.0s' $(seq 1000)"})
            await session.call_tool("bash", {"command": "exit 2"})
            await session.call_tool("bash", {"command": "sleep 0.2", "background": True})
            opened = await session.call_tool("terminal_open", {"command": "cat"})
            assert opened.is_error is False, text_of(opened)
            await session.call_tool("bash_jobs", {})
        # The server exits with the last export made: the totals are there now.
        calls = collector.metric("agent_bash.calls")
        by_outcome = {}
        for point in calls:
            key = (point["attributes"]["gen_ai.tool.name"], point["attributes"]["agent_bash.outcome"])
            by_outcome[key] = by_outcome.get(key, 0) + int(point["asInt"])
        assert by_outcome[("bash", "ok")] == 1, by_outcome
        assert by_outcome[("bash", "exit_nonzero")] == 1, by_outcome
        assert by_outcome[("bash", "job")] == 1, by_outcome
        assert by_outcome[("terminal_open", "ok")] == 1, by_outcome
        assert by_outcome[("bash_jobs", "ok")] == 1, by_outcome

        durations = collector.metric("agent_bash.call.duration")
        assert sum(int(point["count"]) for point in durations) == 5
        assert all(point["sum"] >= 0 for point in durations)

        output = collector.metric("agent_bash.output.bytes")
        seen = sum(int(point["asInt"]) for point in output
                   if point["attributes"]["agent_bash.stream"] == "stdout"
                   and point["attributes"]["agent_bash.part"] == "seen")
        assert seen == 1000

        # Up and down again: the job ended, the terminal closed with the server.
        jobs = collector.metric("agent_bash.jobs.running")
        assert sum(int(point["asInt"]) for point in jobs) == 0, jobs
        terminals = collector.metric("agent_bash.terminals.open")
        assert sum(int(point["asInt"]) for point in terminals) == 0, terminals


async def test_an_approved_ask_says_so_with_its_rule():
    root = project('[[policy.rules]]\nname = "ask-before-touch"\ndecision = "ask"\ncommand = "touch *"\n')

    async def approve(context, params):
        return ElicitResult(action="accept", content={})

    with Collector() as collector:
        async with server(root, elicitation_callback=approve, env=exporting(collector.url)) as session:
            result = await session.call_tool("bash", {"command": "touch approved"})
            assert result.is_error is False, text_of(result)
            span = await collector.span(lambda span: span["attributes"].get("agent_bash.approval") == "approved")
    seen = span["attributes"]
    assert seen["agent_bash.decision"] == "ask"
    assert seen["agent_bash.decision.rule"] == "ask-before-touch"
    assert seen["agent_bash.outcome"] == "ok" and seen["process.exit.code"] == 0


async def test_the_command_text_is_exported_only_when_the_user_asks_for_it():
    with Collector() as collector:
        env = exporting(collector.url, AGENT_BASH_TELEMETRY_COMMAND_TEXT="true")
        async with server(env=env) as session:
            await session.call_tool("bash", {"command": "echo visible"})
            span = await collector.span(lambda span: span["name"] == "bash")
    assert span["attributes"]["agent_bash.command"] == "echo visible"
    # An untrusted project may not turn it on, nor turn export on.
    root = project('[telemetry]\nexport = "otlp"\ncommand_text = true\n')
    with Collector() as collector:
        env = exporting(collector.url)
        del env["AGENT_BASH_TELEMETRY_EXPORT"]
        async with server(root, env=env) as session:
            await session.call_tool("bash", {"command": "echo hidden"})
        await anyio.sleep(0.3)
        assert collector.requests == []
    with Collector() as collector:
        async with server(root, env=exporting(collector.url)) as session:
            await session.call_tool("bash", {"command": "echo hidden"})
            span = await collector.span(lambda span: span["name"] == "bash")
    assert "agent_bash.command" not in span["attributes"]


async def test_nothing_is_exported_when_telemetry_is_off():
    with Collector() as collector:
        # The standard variables alone do not turn export on.
        env = exporting(collector.url)
        del env["AGENT_BASH_TELEMETRY_EXPORT"]
        async with server(env=env) as session:
            for _ in range(3):
                await session.call_tool("bash", {"command": "echo hi"})
            await session.call_tool("bash", {"command": "true", "background": True})
            await anyio.sleep(0.5)
        await anyio.sleep(0.3)
        assert collector.requests == []
        # And the same server with the setting does export (the receiver is reachable).
        async with server(env=exporting(collector.url)) as session:
            await session.call_tool("bash", {"command": "echo hi"})
            await collector.span(lambda span: span["name"] == "bash")


async def test_a_collector_that_is_down_or_slow_never_slows_a_call_and_the_loss_is_logged_at_exit():
    log = pathlib.Path(tempfile.mkdtemp(prefix="agent-bash-otel-log-"), "server.log")
    env = exporting(f"http://127.0.0.1:{closed_port()}")
    began = time.monotonic()
    async with server(env=env, extra_args=("--log-file", str(log))) as session:
        for _ in range(10):
            started = time.monotonic()
            result = await session.call_tool("bash", {"command": "echo hi"})
            assert result.is_error is False
            assert time.monotonic() - started < 2.0
    assert time.monotonic() - began < 20
    counts = spans_at_exit(log.read_text())
    assert counts["ended"] == 10 and counts["exported"] == 0, counts
    assert counts["failed"] + counts["lost"] == 10, counts

    # A collector that takes 2 s to answer, and a queue of 2 spans: most spans are dropped,
    # no call waits for the export, and the exit waits at most its bound.
    log.write_text("")
    with Collector(delay=2.0) as slow:
        env = exporting(slow.url, OTEL_BSP_MAX_QUEUE_SIZE="2", OTEL_BSP_MAX_EXPORT_BATCH_SIZE="1")
        async with server(env=env, extra_args=("--log-file", str(log))) as session:
            for _ in range(30):
                started = time.monotonic()
                result = await session.call_tool("bash", {"command": "echo hi"})
                assert result.is_error is False
                assert time.monotonic() - started < 1.0, "a call waited for the export"
    counts = spans_at_exit(log.read_text())
    assert counts["ended"] == 30 and counts["lost"] > 0, counts
    assert counts["exported"] + counts["failed"] + counts["lost"] == 30, counts
