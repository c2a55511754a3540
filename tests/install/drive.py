"""The install tests' MCP client (scripts/packages --test): starts an installed agent-bash's MCP
server with the official MCP Python client and checks that it serves.

    python tests/install/drive.py [--expect-version VERSION] COMMAND [ARG...]

COMMAND ARG... starts the server, as an agent would (`/venv/bin/agent-bash mcp`,
`uvx --from WHEEL agent-bash mcp`, `npx --no-install agent-bash mcp`). It runs in a new empty
directory, the session's root. Checked: every line the server writes on stdout is a protocol
message (a launcher that prints there breaks the client), the server's name and version,
`tools/list` offers `bash`, a `bash` call of `echo hi` answers `hi`, and once stdin is closed
the server and everything started in its process group (npx, the launcher) are gone. Exits 0,
or prints what failed with the server's stderr and exits 1.
"""

import os
import sys
import tempfile
import time

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

# The whole exchange, server start included (npx and uvx start in about a second).
LIMIT_SECS = 60
# What the server's answer to `echo hi` begins with; the status line (`[exit 0 · 3 ms]`) follows.
EXPECTED_FIRST_LINE = "hi"


class Failed(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failed(message)


def leaves(error):
    """The exceptions inside (nested) exception groups, or the exception itself."""
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in leaves(inner)]
    return [error]


def child_pids():
    """The pids of this process's live children (the server the client started)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                if int(f.read().rsplit(")", 1)[1].split()[1]) == os.getpid():
                    found.append(int(entry))
        except (OSError, ValueError, IndexError):
            continue
    return found


def in_group(pgid):
    """The pids of live (not zombie) processes in process group `pgid`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if fields[0] != "Z" and int(fields[2]) == pgid:
                found.append(int(entry))
        except (OSError, ValueError, IndexError):
            continue
    return found


async def drive(command, args, root, errlog):
    """The facts the checks need, gathered in one session with the server."""
    facts = {"unparsed": [], "server_pids": []}

    async def on_message(message):
        # Lines on stdout that are not JSON-RPC come here as exceptions.
        if isinstance(message, Exception):
            facts["unparsed"].append(repr(message))

    params = StdioServerParameters(command=command, args=args, cwd=root, env=dict(os.environ))
    started = time.monotonic()
    with anyio.fail_after(LIMIT_SECS):
        async with stdio_client(params, errlog=errlog) as (read, write):
            facts["server_pids"] = child_pids()
            async with ClientSession(read, write, message_handler=on_message) as session:
                initialized = await session.initialize()
                facts["ready_secs"] = time.monotonic() - started
                facts["server"] = (initialized.server_info.name, initialized.server_info.version)
                facts["tools"] = [tool.name for tool in (await session.list_tools()).tools]
                if "bash" in facts["tools"]:
                    result = await session.call_tool("bash", {"command": "echo hi"})
                    facts["is_error"] = result.is_error
                    facts["text"] = "\n".join(
                        block.text for block in result.content if block.type == "text"
                    )
            closed = time.monotonic()
        facts["stop_secs"] = time.monotonic() - closed
    return facts


def main():
    argv = sys.argv[1:]
    expected_version = None
    if argv[:1] == ["--expect-version"] and len(argv) >= 2:
        expected_version, argv = argv[1], argv[2:]
    if not argv:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    shown = " ".join(argv)
    with tempfile.TemporaryDirectory(prefix="agent-bash-install-") as scratch:
        root = os.path.join(scratch, "root")
        os.mkdir(root)
        with open(os.path.join(scratch, "stderr"), "w+") as errlog:
            try:
                facts = anyio.run(drive, argv[0], argv[1:], root, errlog)
                check(not facts["unparsed"],
                      f"the server wrote lines on stdout that are not protocol messages: "
                      f"{facts['unparsed']}")
                name, version = facts["server"]
                check(expected_version is None or version == expected_version,
                      f"the server says it is {name} {version}, expected version {expected_version}")
                check("bash" in facts["tools"],
                      f"tools/list has no `bash` tool: {facts['tools']}")
                first_line = facts["text"].split("\n")[0]
                check(not facts["is_error"] and first_line == EXPECTED_FIRST_LINE,
                      f"`bash` with `echo hi` answered (isError={facts['is_error']}):\n"
                      f"{facts['text']}")
                left = [pid for pgid in facts["server_pids"] for pid in in_group(pgid)]
                check(not left, f"processes of the server's group outlived it: {left}")
            except Exception as error:  # noqa: BLE001 - any failure is reported the same way
                errlog.seek(0)
                what = "\n  ".join(str(leaf) if isinstance(leaf, Failed) else repr(leaf)
                                   for leaf in leaves(error))
                print(f"drive.py: FAILED: {shown}\n  {what}", file=sys.stderr)
                server_stderr = errlog.read().strip()
                if server_stderr:
                    print("  the server's stderr:\n    " + server_stderr.replace("\n", "\n    "),
                          file=sys.stderr)
                return 1
    print(f"drive.py: ok: {shown}: {name} {version}, tools {', '.join(facts['tools'])}; "
          f"`echo hi` → {first_line!r}; ready in {facts['ready_secs']:.2f} s, "
          f"gone {facts['stop_secs']:.2f} s after stdin closed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
