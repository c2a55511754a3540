#!/usr/bin/env python3
"""What the supervisor and the sandbox add to `agent-bash run true`, whole process.

    python3 benches/sandbox_overhead.py [--bin target/release/agent-bash] [--rounds 150]

Runs the four ways one after the other in each round (a direct spawn, the supervisor
alone, `workspace-write`, `workspace-write` with the network off), so that the machine's
drift falls on all four alike and a way that pays for a pause (a cgroup joined after one,
for instance) pays for it here as it would in use; `hyperfine` runs each way back to back
and hides that. Prints each way's median and first quartile, and the median's excess over
the direct spawn. The first 10 rounds warm up and are not counted.

Through the server the same comparison is `benches/mcp_latency.py --calls 300 --starts 1`,
with `AGENT_BASH_SANDBOX_SUPERVISE_ALWAYS=false` for the direct spawn and `--server-args
"--sandbox workspace-write [--no-network]"` for the sandbox.
"""

import argparse
import os
import statistics
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WARM_UP = 10

WAYS = {
    # The default mode is `workspace-write` (safe by default), so the two unconfined ways
    # say `--sandbox off`.
    "direct": (["--sandbox", "off"], {"AGENT_BASH_SANDBOX_SUPERVISE_ALWAYS": "false"}),
    "supervisor": (["--sandbox", "off"], {}),
    "workspace-write": (["--sandbox", "workspace-write"], {}),
    "ws, no network": (["--sandbox", "workspace-write", "--no-network"], {}),
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "agent-bash"))
    parser.add_argument("--rounds", type=int, default=150)
    args = parser.parse_args()
    times = {way: [] for way in WAYS}
    with tempfile.TemporaryDirectory(prefix="agent-bash-bench-") as root:
        for round_ in range(WARM_UP + args.rounds):
            for way, (flags, env) in WAYS.items():
                command = [args.bin, "run", "--root", root, *flags, "true"]
                started = time.perf_counter()
                subprocess.run(command, env={**os.environ, **env}, stdout=subprocess.DEVNULL, check=True)
                if round_ >= WARM_UP:
                    times[way].append((time.perf_counter() - started) * 1000)
    direct = statistics.median(times["direct"])
    for way, samples in times.items():
        median = statistics.median(samples)
        first_quartile = statistics.quantiles(samples, n=4)[0]
        print(f"{way:16} median {median:6.2f} ms  +{median - direct:5.2f}  p25 {first_quartile:6.2f} ms")


if __name__ == "__main__":
    main()
