// The MCP face through the official TypeScript SDK, v2 line (@modelcontextprotocol/client), on
// the 2026-07-28 revision: no initialize (server/discover, then every request carries its own
// `_meta` envelope), the tools, results and errors, an ask put to the user through an
// `input_required` result (multi round-trip: the client answers and calls again), and the
// stdio contract.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { BIN, ASKING, alive, exists, processesWith, project, tap, textOf } from './helpers.mjs';

const MODERN = '2026-07-28';
// A test fails after 30 s, a request after 20 s (with the SDK's error), rather than hang the run.
const LIMIT = { timeout: 30_000 };
const REQUEST = { timeout: 20_000 };

/** A connected client of `agent-bash mcp --root ROOT` on MODERN (pinned: no fallback to
 *  initialize), started the way the SDK starts a server (its default environment). With
 *  `answer` it declares elicitation and answers with it. */
async function connect({ root = project(), answer, mode = { pin: MODERN } } = {}) {
    const client = new Client(
        { name: 'agent-bash-sdk-tests', version: '1.0.0' },
        {
            capabilities: answer ? { elicitation: { form: {} } } : {},
            versionNegotiation: { mode },
        }
    );
    if (answer) client.setRequestHandler('elicitation/create', (request) => answer(request.params));
    const errors = [];
    client.onerror = (error) => errors.push(error);
    const transport = new StdioClientTransport({ command: BIN, args: ['mcp', '--root', root], stderr: 'ignore' });
    await client.connect(transport);
    return { client, transport, root, errors, seen: tap(transport) };
}

const bash = (client, command) => client.callTool({ name: 'bash', arguments: { command } }, REQUEST);

describe('@modelcontextprotocol/client (v2), MCP 2026-07-28', () => {
    test('server/discover negotiates 2026-07-28 and the tools include bash', LIMIT, async () => {
        const { client, seen } = await connect();
        try {
            assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
            assert.equal(client.getProtocolEra(), 'modern');
            assert.ok(client.getDiscoverResult().supportedVersions.includes(MODERN));
            assert.equal(client.getServerVersion().name, 'agent-bash');
            assert.ok(client.getServerCapabilities().tools);
            const { tools } = await client.listTools();
            const bashTool = tools.find((tool) => tool.name === 'bash');
            assert.ok(bashTool, tools.map((tool) => tool.name).join(', '));
            assert.ok('command' in bashTool.inputSchema.properties);
            // Stateless: the request names its revision itself, and no initialize came first.
            const listed = seen.sent.find((message) => message.method === 'tools/list');
            assert.equal(listed.params._meta['io.modelcontextprotocol/protocolVersion'], MODERN);
            assert.ok(!seen.sent.some((message) => message.method === 'initialize'));
        } finally {
            await client.close();
        }
    });

    test("negotiation in 'auto' mode picks 2026-07-28 too", LIMIT, async () => {
        const { client } = await connect({ mode: 'auto' });
        try {
            assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
            const result = await bash(client, 'echo hi');
            assert.equal(result.isError, false, textOf(result));
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

    test('an ask goes to the user through an input_required result and their answer holds', LIMIT, async () => {
        const asked = [];
        const answers = ['accept', 'decline'];
        const { client, root, seen, errors } = await connect({
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
        // The question came in the call's answer, not as a request from the server (this revision
        // has none: the client would drop it), and each answer went back in a second call that
        // echoes the server's requestState.
        assert.equal(seen.received.filter((message) => 'method' in message && 'id' in message).length, 0);
        const questions = seen.received.filter((message) => message.result?.resultType === 'input_required');
        assert.equal(questions.length, 2);
        const calls = seen.sent.filter((message) => message.method === 'tools/call');
        assert.equal(calls.length, 5);
        for (const [index, action] of [
            [1, 'accept'],
            [3, 'decline'],
        ]) {
            const question = questions[(index - 1) / 2].result;
            const [key] = Object.keys(question.inputRequests);
            assert.equal(question.inputRequests[key].method, 'elicitation/create');
            assert.equal(calls[index].params.requestState, question.requestState);
            assert.equal(calls[index].params.inputResponses[key].action, action);
        }
        assert.deepEqual(errors.map(String), []);
    });

    test('stdout carries only protocol and closing the client ends the server', LIMIT, async () => {
        // The transport reports a line it cannot read as a JSON-RPC message through onerror: the
        // server's own output (logs, the commands' output) must never be one.
        const { client, transport, root, errors } = await connect();
        const pid = transport.pid;
        // The negotiation's probe ran on a sibling process the SDK has reaped: only the server is left.
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
