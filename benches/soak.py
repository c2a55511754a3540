#!/usr/bin/env python3
"""A long session through the official MCP client: many calls, several at once, a mix an
agent makes in a day; the server's resources sampled over time.

    .venv/bin/python benches/soak.py [--bin target/release/agent-bash] [--calls 100000]
        [--clients 16] [--out soak.csv]

One server (`agent-bash mcp`), one client session, `--clients` tasks calling at once until
`--calls` calls are done. Each call is one of (by weight):
  short      `echo` of a counter                                            40
  output     200,000 lines (a cut result and a spill file)                 10
  leftover   `sleep 0.1 & echo bg` (a process left running: a job)          15
  job        background `sleep 30`, read with bash_output, then bash_kill    10
  terminal   terminal_open of `cat`, terminal_send, terminal_close            5
  denied     `rm -rf /` (refused by the policy)                              10
  bad        a missing cwd, an unknown job id (clear errors)                 10
Every second the server's RSS, descriptors, threads and descendant processes are sampled
into `--out` (CSV). At the end: calls/s, p50/p99 latency per kind, errors, and the first,
peak and last samples. An error is a call that raised, or a result that is not what its
kind expects.
"""

import argparse
import asyncio
import csv
import os
import random
import statistics
import sys
import tempfile
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KINDS = [
    ("short", 40),
    ("output", 10),
    ("leftover", 15),
    ("job", 10),
    ("terminal", 5),
    ("denied", 10),
    ("bad", 10),
]


def text(result):
    return "\n".join(block.text for block in result.content if block.type == "text")


def server_pid(binary):
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                parent = int(f.read().rsplit(")", 1)[1].split()[1])
            if parent == me and os.path.samefile(os.readlink(f"/proc/{entry}/exe"), binary):
                return int(entry)
        except (OSError, ValueError, IndexError):
            continue
    raise SystemExit("no server process found")


def descendants(pid):
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                parent = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(parent, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def sample(pid):
    status = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            status[key] = value.strip()
    return {
        "rss_kib": int(status["VmRSS"].split()[0]),
        "fds": len(os.listdir(f"/proc/{pid}/fd")),
        "threads": int(status["Threads"]),
        "children": len(descendants(pid)),
    }


# The server opens at most 8 terminals at once (`terminal.max_sessions`): the clients take
# turns for them, as an agent would close one before opening a ninth.
TERMINALS = asyncio.Semaphore(8)


async def one_call(session, kind, n, scratch):
    """Makes one call of `kind`; returns None if it went as expected, else what went wrong."""
    if kind == "short":
        result = await session.call_tool("bash", {"command": f"echo {n}"})
        return None if text(result).startswith(f"{n}\n") else text(result)[:200]
    if kind == "output":
        result = await session.call_tool("bash", {"command": "seq 1 200000"})
        return None if "200000" in text(result) else text(result)[:200]
    if kind == "leftover":
        result = await session.call_tool("bash", {"command": "sleep 0.1 & echo bg"})
        return None if text(result).startswith("bg") else text(result)[:200]
    if kind == "job":
        started = await session.call_tool("bash", {"command": "sleep 30", "background": True})
        words = text(started).split("background job ")
        if len(words) < 2:
            return text(started)[:200]
        job_id = int(words[1].split()[0].rstrip(".,:;"))
        await session.call_tool("bash_output", {"job_id": job_id, "wait_secs": 0})
        killed = await session.call_tool("bash_kill", {"job_id": job_id})
        return None if not killed.is_error else text(killed)[:200]
    if kind == "terminal":
        async with TERMINALS:
            return await terminal_call(session, n)
    if kind == "denied":
        result = await session.call_tool("bash", {"command": "rm -rf /"})
        return None if "refused" in text(result) else text(result)[:200]
    # bad: a cwd that does not exist, and a job that never was.
    missing = await session.call_tool("bash", {"command": "true", "cwd": f"{scratch}/nowhere-{n}"})
    unknown = await session.call_tool("bash_output", {"job_id": 10**9})
    return None if missing.is_error and unknown.is_error else text(missing)[:200]


async def terminal_call(session, n):
    """Opens a terminal running `cat`, sends it a line, closes it."""
    opened = await session.call_tool("terminal_open", {"command": "cat"})
    if opened.is_error:
        return text(opened)[:200]
    words = text(opened).split("terminal ")
    terminal = int(words[1].split()[0].rstrip(".,:;")) if len(words) > 1 else 0
    await session.call_tool("terminal_send", {"id": terminal, "text": f"hi {n}\n"})
    closed = await session.call_tool("terminal_close", {"id": terminal})
    return None if not closed.is_error else text(closed)[:200]


async def soak(args):
    # The server's root and its spill files (gigabytes over a long run) in one directory,
    # removed at the end.
    with tempfile.TemporaryDirectory(prefix="agent-bash-soak-") as scratch:
        return await soak_in(args, scratch)


async def soak_in(args, scratch):
    env = {**os.environ, "AGENT_BASH_OUTPUT_SPILL_DIR": os.path.join(scratch, "spill")}
    params = StdioServerParameters(command=args.bin, args=["mcp", "--root", scratch], env=env)
    kinds = [kind for kind, weight in KINDS for _ in range(weight)]
    latencies = {kind: [] for kind, _ in KINDS}
    errors = []
    done = 0
    random.seed(7)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            await session.call_tool("bash", {"command": "true"})
            pid = server_pid(args.bin)
            samples = []
            started = time.monotonic()

            async def sampler():
                while True:
                    row = sample(pid)
                    row["t"] = round(time.monotonic() - started, 1)
                    row["calls"] = done
                    samples.append(row)
                    await asyncio.sleep(1)

            async def client():
                nonlocal done
                while done < args.calls:
                    n = done
                    done += 1
                    kind = random.choice(kinds)
                    begun = time.monotonic()
                    try:
                        problem = await one_call(session, kind, n, scratch)
                    except Exception as error:  # noqa: BLE001 - every failure is counted
                        problem = repr(error)
                    latencies[kind].append(time.monotonic() - begun)
                    if problem:
                        errors.append((kind, problem))

            watcher = asyncio.create_task(sampler())
            await asyncio.gather(*(client() for _ in range(args.clients)))
            elapsed = time.monotonic() - started
            # Let the last leftovers end; one more call lets go of what they held.
            await asyncio.sleep(2)
            await session.call_tool("bash", {"command": "true"})
            final = sample(pid)
            final["t"], final["calls"] = round(time.monotonic() - started, 1), done
            samples.append(final)
            watcher.cancel()
    with open(args.out, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["t", "calls", "rss_kib", "fds", "threads", "children"])
        writer.writeheader()
        writer.writerows(samples)
    print(f"{done} calls, {args.clients} at once, {elapsed:.1f} s: {done / elapsed:.0f} calls/s")
    for kind, values in latencies.items():
        if values:
            values.sort()
            p50 = statistics.median(values) * 1000
            p99 = values[int(len(values) * 0.99) - 1] * 1000
            print(f"  {kind:9} {len(values):7} calls  p50 {p50:7.1f} ms  p99 {p99:7.1f} ms")
    print(f"errors: {len(errors)}", *errors[:5], sep="\n  ")
    first, last = samples[0], samples[-1]
    peak = max(samples, key=lambda row: row["rss_kib"])
    for name, row in (("first", first), ("peak RSS", peak), ("last", last)):
        print(f"{name:9} RSS {row['rss_kib'] / 1024:.1f} MiB, {row['fds']} fds, "
              f"{row['threads']} threads, {row['children']} descendants")
    return 1 if errors else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "agent-bash"))
    parser.add_argument("--calls", type=int, default=100_000)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--out", default="soak.csv")
    args = parser.parse_args()
    args.bin = os.path.realpath(args.bin)
    sys.exit(asyncio.run(soak(args)))


if __name__ == "__main__":
    main()
