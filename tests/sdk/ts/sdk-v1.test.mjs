// The MCP face through the official TypeScript SDK, v1 line (@modelcontextprotocol/sdk): the
// initialize handshake at 2025-11-25, the tools, results and errors, an ask put to the user
// through an elicitation/create request, and the stdio contract.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { BIN, ASKING, alive, exists, processesWith, project, tap, textOf } from './helpers.mjs';

// A test fails after 30 s, a request after 20 s (with the SDK's error), rather than hang the run.
const LIMIT = { timeout: 30_000 };
const REQUEST = { timeout: 20_000 };

/** A connected client of `agent-bash mcp --root ROOT`, started the way the SDK starts a
 *  server (its default environment). With `answer` it declares elicitation and answers with it. */
async function connect({ root = project(), answer } = {}) {
    const client = new Client(
        { name: 'agent-bash-sdk-tests', version: '1.0.0' },
        answer ? { capabilities: { elicitation: {} } } : {}
    );
    if (answer) client.setRequestHandler(ElicitRequestSchema, (request) => answer(request.params));
    const errors = [];
    client.onerror = (error) => errors.push(error);
    const transport = new StdioClientTransport({ command: BIN, args: ['mcp', '--root', root], stderr: 'ignore' });
    // The v1 client hands the negotiated revision to a transport that takes it.
    let negotiated;
    transport.setProtocolVersion = (version) => {
        negotiated = version;
    };
    await client.connect(transport);
    return { client, transport, root, errors, negotiated, seen: tap(transport) };
}

const bash = (client, command) => client.callTool({ name: 'bash', arguments: { command } }, undefined, REQUEST);

describe('@modelcontextprotocol/sdk (v1), MCP 2025-11-25', () => {
    test('the handshake negotiates 2025-11-25 and the tools include bash', LIMIT, async () => {
        const { client, negotiated } = await connect();
        try {
            assert.equal(negotiated, '2025-11-25');
            assert.equal(client.getServerVersion().name, 'agent-bash');
            assert.ok(client.getServerCapabilities().tools);
            const { tools } = await client.listTools();
            const bashTool = tools.find((tool) => tool.name === 'bash');
            assert.ok(bashTool, tools.map((tool) => tool.name).join(', '));
            assert.ok('command' in bashTool.inputSchema.properties);
        } finally {
            await client.close();
        }
    });

    test('a command runs and its output and exit come back', LIMIT, async () => {
        const { client } = await connect();
        try {
            const result = await bash(client, 'echo hi');
            const text = textOf(result);
            assert.equal(result.isError, false, text);
            assert.ok(text.startsWith('hi\n') && text.includes('[exit 0'), text);
        } finally {
            await client.close();
        }
    });

    test('a failing command is an error result with its exit code', LIMIT, async () => {
        const { client } = await connect();
        try {
            const result = await bash(client, 'exit 3');
            assert.equal(result.isError, true);
            assert.ok(textOf(result).includes('[exit 3'), textOf(result));
        } finally {
            await client.close();
        }
    });

    test('an ask goes to the user through elicitation and their answer holds', LIMIT, async () => {
        const asked = [];
        const answers = ['accept', 'decline'];
        const { client, root, seen } = await connect({
            root: project(ASKING),
            answer: (params) => {
                asked.push(params.message);
                return { action: answers.shift(), content: {} };
            },
        });
        try {
            let result = await bash(client, 'touch approved');
            assert.equal(result.isError, false, textOf(result));
            assert.ok(exists(root, 'approved'));
            result = await bash(client, 'touch declined');
            assert.equal(result.isError, true);
            assert.ok(textOf(result).includes('reason: the user declined'), textOf(result));
            assert.ok(!exists(root, 'declined'));
            // An allowed command is not asked about.
            result = await bash(client, 'echo no question');
            assert.equal(result.isError, false);
        } finally {
            await client.close();
        }
        assert.equal(asked.length, 2, asked.join('\n---\n'));
        assert.ok(asked[0].includes('touch approved') && asked[0].includes('touch changes files'), asked[0]);
        assert.ok(asked[1].includes('touch declined'), asked[1]);
        // On this revision the question is a request from the server.
        assert.equal(seen.received.filter((message) => message.method === 'elicitation/create').length, 2);
    });

    test('stdout carries only protocol and closing the client ends the server', LIMIT, async () => {
        // The transport reports a line it cannot read as a JSON-RPC message through onerror: the
        // server's own output (logs, the commands' output) must never be one.
        const { client, transport, root, errors } = await connect();
        const pid = transport.pid;
        assert.deepEqual(processesWith(root), [pid]);
        for (const command of ['echo hi', 'echo to-stderr >&2', 'seq 1 20000', 'exit 3']) await bash(client, command);
        await client.listTools();
        const closing = performance.now();
        await client.close();
        const closedIn = performance.now() - closing;
        assert.deepEqual(errors.map(String), []);
        // The SDK ends the server's stdin and waits 2 s before it sends SIGTERM: the server ended
        // on the closed stdin by itself, and it is gone (reaped, no process left).
        assert.ok(closedIn < 1500, `closing took ${closedIn} ms`);
        assert.ok(!alive(pid));
        assert.deepEqual(processesWith(root), []);
    });
});
