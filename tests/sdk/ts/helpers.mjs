// Shared by the *.test.mjs files: the binary under test, project roots, and what the client
// received. Plain Node ESM, no SDK import (each test file brings its own SDK).
import { after } from 'node:test';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

// scripts/sdk-tests runs these files from target/sdk/ts, where the packages are installed.
const repository = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const BIN = process.env.AGENT_BASH_BIN ?? join(repository, 'target', 'debug', 'agent-bash');

// The setup of tests/mcp/test_policy.py: a project file with a rule that asks before `touch`,
// so that whether an asked command ran shows in the files.
export const ASKING = `
[[policy.rules]]
name = "ask-before-touch"
decision = "ask"
command = "touch *"
reason = "touch changes files"
examples = ["touch a", "sudo touch b"]
counter_examples = ["echo touch"]

[audit]
path = "audit.jsonl"
`;

// Every directory a test makes lives in one scratch directory, removed when the file's tests end.
const scratch = mkdtempSync(join(tmpdir(), 'agent-bash-sdk-tests-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** A fresh directory for `--root`, holding `.agent-bash.toml` with `text` when given. */
export function project(text) {
    const root = mkdtempSync(join(scratch, 'root-'));
    if (text !== undefined) writeFileSync(join(root, '.agent-bash.toml'), text);
    return root;
}

export const exists = (root, name) => existsSync(join(root, name));

/** The text blocks of a tool result, joined. */
export function textOf(result) {
    return result.content
        .filter((block) => block.type === 'text')
        .map((block) => block.text)
        .join('\n');
}

/** Records the messages the client reads from the server (`received`) and writes to it
 *  (`sent`) from now on. Call it after connect: the client installs its handler then. */
export function tap(transport) {
    const seen = { received: [], sent: [] };
    const deliver = transport.onmessage;
    transport.onmessage = (message, ...rest) => {
        seen.received.push(message);
        return deliver?.(message, ...rest);
    };
    const send = transport.send.bind(transport);
    transport.send = (message, ...rest) => {
        seen.sent.push(message);
        return send(message, ...rest);
    };
    return seen;
}

/** Pids of the live processes whose command line contains `text`. */
export function processesWith(text) {
    const found = [];
    for (const entry of readdirSync('/proc')) {
        if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
        try {
            const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ');
            if (cmdline.includes(text)) found.push(Number(entry));
        } catch {
            // gone meanwhile
        }
    }
    return found;
}

/** Whether the process is still there (a zombie counts: nobody reaped it). */
export function alive(pid) {
    try {
        process.kill(pid, 0);
        return true;
    } catch {
        return false;
    }
}
