"""Policy and secrets over MCP: refusals as results, approval asked through elicitation,
the audit log, and secrets kept out of what the client receives."""

import json
import os
import pathlib
import tempfile

import pytest
from mcp_types import ElicitResult

from conftest import server, stdout_of, text_of

pytestmark = pytest.mark.anyio

# A rule that asks before `touch`, so that whether the command ran shows in the files.
ASKING = """
[[policy.rules]]
name = "ask-before-touch"
decision = "ask"
command = "touch *"
reason = "touch changes files"
examples = ["touch a", "sudo touch b"]
counter_examples = ["echo touch"]

[audit]
path = "audit.jsonl"
"""


def project(text=ASKING):
    root = tempfile.mkdtemp(prefix="agent-bash-policy-")
    pathlib.Path(root, ".agent-bash.toml").write_text(text)
    return root


async def bash(session, command, **extra):
    return await session.call_tool("bash", {"command": command, **extra})


async def test_a_denied_command_is_a_refusal_that_runs_nothing_and_the_server_keeps_serving():
    root = project()
    async with server(root) as session:
        for command in [
            "touch ran-1; mkfs.agentbashtest /dev/sdzz",
            "echo ok && bash -c \"'mkfs'.agentbashtest /dev/sdzz\" && touch ran-2",
        ]:
            result = await bash(session, command)
            assert result.is_error is True
            text = text_of(result)
            assert text.startswith("[refused by policy: denied; nothing was run]\n"), text
            assert "(rule `mkfs`)" in text, text
            assert 'hint: `mkfs` is a built-in rule' in text and 'disable = ["mkfs"]' in text, text
        assert not any(pathlib.Path(root, name).exists() for name in ["ran-1", "ran-2"])
        result = await bash(session, "echo still serving")
        assert result.is_error is False and text_of(result).startswith("still serving")


async def test_ask_is_put_to_the_user_through_elicitation_and_their_answer_holds():
    root = project()
    asked = []
    answers = iter(["accept", "decline"])

    async def answer(context, params):
        asked.append(params.message)
        return ElicitResult(action=next(answers), content={})

    async with server(root, elicitation_callback=answer) as session:
        result = await bash(session, "touch approved")
        assert result.is_error is False, text_of(result)
        assert pathlib.Path(root, "approved").exists()
        result = await bash(session, "touch declined")
        assert result.is_error is True
        assert "\nreason: the user declined" in text_of(result), text_of(result)
        assert not pathlib.Path(root, "declined").exists()
        # Allowed commands are not asked about.
        result = await bash(session, "echo no question")
        assert result.is_error is False
    assert len(asked) == 2
    assert "touch approved" in asked[0] and "touch changes files" in asked[0]


async def test_ask_without_elicitation_is_refused_with_a_hint_and_every_call_is_audited():
    root = project()
    # The project file puts the audit log in the root: a path a project may only set once
    # the user trusts the root.
    # Refused, not run confined: `policy.unanswered = "refuse"` (test_sandbox.py has the
    # default).
    refuse = {"AGENT_BASH_POLICY_UNANSWERED": "refuse"}
    async with server(root, extra_args=("--trust-project",), structured=True, env=refuse) as session:
        result = await bash(session, "touch unasked")
        assert result.is_error is True
        refused = result.structured_content["refused"]
        assert refused["decision"] == "ask"
        assert refused["rule"] == "ask-before-touch"
        assert "no way to ask" in refused["reason"]
        assert "change or remove the configured rule `ask-before-touch`" in refused["hint"]
        assert not pathlib.Path(root, "unasked").exists()
        await bash(session, "echo hello; exit 3", description="greet, then fail")
        started = await bash(session, "sleep 30", background=True)
        job_id = started.structured_content["job_id"]
        await bash(session, "mkfs.agentbashtest /dev/sdzz")
        await session.call_tool("bash_kill", {"job_id": job_id})
    lines = [json.loads(line) for line in pathlib.Path(root, "audit.jsonl").read_text().splitlines()]
    assert [(l["command"], l["decision"], l["ran"]) for l in lines] == [
        ("touch unasked", "ask", False),
        ("echo hello; exit 3", "allow", True),
        ("sleep 30", "allow", True),
        ("mkfs.agentbashtest /dev/sdzz", "deny", False),
    ]
    assert lines[0]["rule"] == "ask-before-touch"
    assert lines[1]["exit_code"] == 3 and lines[1]["output_bytes"] == 6
    assert lines[1]["description"] == "greet, then fail"
    assert "description" not in lines[0]
    assert lines[2]["job_id"] == job_id
    assert lines[3]["rule"] == "mkfs"
    for line in lines:
        assert line["cwd"] == root
        assert line["time"].endswith("Z") and "T" in line["time"]


async def test_a_broken_rule_stops_the_server_with_the_file_and_rule_named():
    root = project('[[policy.rules]]\nname = "bad"\ndecision = "deny"\ncommand = "rm *"\nexamples = ["ls"]\n')
    with pytest.raises(Exception):
        async with server(root) as session:
            await bash(session, "echo never")


@pytest.mark.parametrize("structured", [False, True], ids=["text", "structured"])
async def test_secrets_never_reach_the_client(structured):
    secret = "s3cr3t-Value-0f-the-token"
    async with server(project(""), env={"MY_API_TOKEN": secret}, structured=structured) as session:
        for command in ["env", "printenv MY_API_TOKEN >&2", "cat /proc/self/environ"]:
            result = await bash(session, command)
            assert secret not in json.dumps(result.structured_content)
            assert secret not in text_of(result)
            if command != "cat /proc/self/environ":  # NUL-separated: binary, kept in its file
                assert "[redacted:MY_API_TOKEN]" in text_of(result)
        started = await bash(session, "sleep 0.2; echo \"job $MY_API_TOKEN\"", background=True)
        read = await session.call_tool("bash_output", {"job_id": 1, "pattern": "job"})
        assert stdout_of(read) == "job [redacted:MY_API_TOKEN]"
        assert secret not in json.dumps(read.structured_content) + json.dumps(started.structured_content)


KEY = ("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAkeyline1\nQUJDREVGR0hJkeyline2\n"
       "TU5PUFFSU1RVkeyline3\n-----END RSA PRIVATE KEY-----")

# Each prints a secret broken up by bytes the sanitizer removes, escaped, in part, or as a
# token shape: what reaches the client must hold none of it.
LEAKS = [
    "printf 'DEPLOY=%s\\n' \"$MY_API_TOKEN\" > .env; grep --color=always -rn 'V[a]lue' .",
    "seq 500; printf 's3cr3t\\e]0;t\\a-Val\\001ue\\0-0f\\177-the-\\302\\2331mtoken\\n'",
    "head -c 2000 /dev/zero | tr '\\0' x; echo; printf %s \"$MY_API_TOKEN\" | iconv -t UTF-16LE",
    "declare -p QUOTED_SECRET; printf '%q\\n' \"$QUOTED_SECRET\"",
    "python3 -c 'import json, os; print(json.dumps(dict(os.environ)))'",
    "printf '%s\\n' \"$DEPLOY_KEY\" | head -3; printf '%s\\n' \"$DEPLOY_KEY\" | sed -n 3,4p",
    "echo x$PAYMENT_CFG; echo \"$DATABASE_URL\"",
    "echo '-----BEGIN RSA PRIVATE KEY-----'; head -c 150000 /dev/zero | tr '\\0' Q | fold -w 4096 "
    "| tr -d '\\n'; echo; echo '-----END RSA PRIVATE KEY-----'; seq 3000",
]
PARTS = ["s3cr3t", "Value-0f", "wo\\rd", "wo\\\\rd", "keyline", "0123456789abcdef", "pw-0f-the-db", "QQQQQQQQ"]


def files_named(structured):
    """The contents of every file a structured result names."""
    found = []

    def walk(value):
        if isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)
        elif isinstance(value, str) and value.startswith("/") and os.path.isfile(value):
            found.append(pathlib.Path(value).read_bytes().decode("utf-8", "replace"))

    walk(structured)
    return found


@pytest.mark.parametrize("structured", [False, True], ids=["text", "structured"])
async def test_secrets_split_escaped_or_in_part_never_reach_the_client_or_the_files(structured):
    env = {
        "MY_API_TOKEN": "s3cr3t-Value-0f-the-token",
        "QUOTED_SECRET": "pa\"ss$wo\\rd`x-long",
        "DEPLOY_KEY": KEY,
        "PAYMENT_CFG": "sk_live_0123456789abcdefABCDEF",
        "DATABASE_URL": "postgres://app:pw-0f-the-db@db.internal/app",
    }
    async with server(project(""), env=env, structured=structured) as session:
        for command in LEAKS:
            result = await bash(session, command)
            shown = [text_of(result)]
            if structured:
                shown.append(json.dumps(result.structured_content["text"]))
                shown += files_named(result.structured_content)
            for text in shown:
                for part in PARTS:
                    assert part not in text, f"{command}: {part!r} in {text[:2000]!r}"
            assert "[redacted:" in text_of(result), command
        # A job: the colour codes in one write, the rest of the secret in the next.
        await bash(session, "printf 'key=\\e[31m%s\\e[m' \"${MY_API_TOKEN:0:9}\"; sleep 0.2; "
                            "printf '\\e[1m%s\\e[m done\\n' \"${MY_API_TOKEN:9}\"", background=True)
        read = await session.call_tool("bash_output", {"job_id": 1, "pattern": "done", "wait_secs": 30})
        assert stdout_of(read) == "key=[redacted:MY_API_TOKEN] done"
        if structured:
            files = files_named(read.structured_content)
            assert "key=[redacted:MY_API_TOKEN] done\n" in files, files
