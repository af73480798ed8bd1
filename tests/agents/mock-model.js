// A model server for the agent tests: listens on 127.0.0.1, records every request, and answers
// each agent in its own wire format with a script of two turns: first a call of the agent's own
// file-reading tool (found in the tool list of the request) for one file, then a final message.
// A request without such a tool (a title, a topic or a routing call) gets a short text answer.
//
// Wire formats: Anthropic Messages (`/v1/messages`), OpenAI Responses (`/responses`), OpenAI Chat
// Completions (`/chat/completions`), Gemini `:streamGenerateContent` (SSE) and `:generateContent`
// (not streamed; Gemini CLI routes and checks the next speaker with it). Each is streamed when
// the request asks for a stream. Node's own modules only.
'use strict';

const http = require('node:http');
const path = require('node:path');

const FINAL = 'Done: the file was read.';
// What a side call (no read tool) gets. Gemini CLI parses its routing and next-speaker calls as
// JSON: this text satisfies both.
const SIDE = JSON.stringify({ reasoning: 'mock', model_choice: 'flash', complexity_reasoning: 'mock', complexity_score: 10, next_speaker: 'user' });

// The file-reading tools, best first: each agent's own read tool, then a shell that can `cat`.
const READ_TOOLS = ['Read', 'read', 'read_file', 'view', 'read_files', 'readFile', 'read_many_files'];
const SHELL_TOOLS = ['exec_command', 'shell_command', 'shell', 'run_shell_command', 'bash', 'Bash'];

function schemaProps(schema) {
    return (schema && typeof schema === 'object' && schema.properties) || {};
}

/** The arguments for a call of tool `name` with JSON schema `schema` that reads `file`. */
function readArgs(name, schema, file) {
    const props = schemaProps(schema);
    const keys = Object.keys(props);
    if (SHELL_TOOLS.includes(name)) {
        // Codex's shells: `command` as an argv list, or a command line (`cmd`, `command`).
        const key = keys.find((k) => k === 'cmd' || k === 'command') || 'command';
        const line = `cat ${JSON.stringify(file)}`;
        return { [key]: props[key] && props[key].type === 'array' ? ['bash', '-lc', line] : line };
    }
    const pathKey = ['file_path', 'filePath', 'absolute_path', 'path', 'filename', 'file', 'paths', 'files'].find(
        (k) => keys.includes(k),
    );
    if (!pathKey) return { file_path: file };
    const prop = props[pathKey];
    if (prop && prop.type === 'array') {
        const item = prop.items || {};
        return { [pathKey]: [item.type === 'object' ? { [Object.keys(schemaProps(item))[0] || 'path']: file } : file] };
    }
    return { [pathKey]: file };
}

/** The tool to call among `tools` ([{name, schema}]): a read tool, else a shell. */
function pickTool(tools) {
    for (const want of [...READ_TOOLS, ...SHELL_TOOLS]) {
        const tool = tools.find((t) => t.name === want);
        if (tool) return tool;
    }
    return null;
}

// Per wire format: the tools a request offers, whether it already holds a tool result, and the
// answer (streamed or not) that calls a tool or says a text.
const formats = {
    anthropic: {
        tools: (b) => (b.tools || []).map((t) => ({ name: t.name, schema: t.input_schema })),
        answered: (b) =>
            (b.messages || []).some((m) => Array.isArray(m.content) && m.content.some((c) => c.type === 'tool_result')),
        reply(res, b, call, text) {
            const id = `msg_${Date.now()}`;
            const block = call
                ? { type: 'tool_use', id: `toolu_${Date.now()}`, name: call.name, input: call.args }
                : { type: 'text', text };
            const stop = call ? 'tool_use' : 'end_turn';
            const usage = { input_tokens: 10, output_tokens: 5 };
            if (!b.stream) {
                return json(res, { id, type: 'message', role: 'assistant', model: b.model, content: [block], stop_reason: stop, stop_sequence: null, usage });
            }
            const events = [
                ['message_start', { type: 'message_start', message: { id, type: 'message', role: 'assistant', model: b.model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } } }],
                ['content_block_start', { type: 'content_block_start', index: 0, content_block: call ? { ...block, input: {} } : { type: 'text', text: '' } }],
                ['content_block_delta', { type: 'content_block_delta', index: 0, delta: call ? { type: 'input_json_delta', partial_json: JSON.stringify(call.args) } : { type: 'text_delta', text } }],
                ['content_block_stop', { type: 'content_block_stop', index: 0 }],
                ['message_delta', { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 5 } }],
                ['message_stop', { type: 'message_stop' }],
            ];
            sse(res, events.map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`));
        },
    },
    responses: {
        tools: (b) => (b.tools || []).map((t) => ({ name: t.name, schema: t.parameters, type: t.type })),
        answered: (b) => Array.isArray(b.input) && b.input.some((i) => /_call_output$/.test(i.type || '')),
        reply(res, b, call, text) {
            const id = `resp_${Date.now()}`;
            const item = call
                ? { type: 'function_call', id: `fc_${Date.now()}`, call_id: `call_${Date.now()}`, name: call.name, arguments: JSON.stringify(call.args), status: 'completed' }
                : { type: 'message', id: `msg_${Date.now()}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] };
            const usage = { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 15 };
            const response = { id, object: 'response', status: 'completed', model: b.model, output: [item], usage };
            if (!b.stream) return json(res, response);
            const events = [
                { type: 'response.created', response: { ...response, status: 'in_progress', output: [] } },
                { type: 'response.output_item.added', output_index: 0, item },
                { type: 'response.output_item.done', output_index: 0, item },
                { type: 'response.completed', response },
            ];
            sse(res, events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`));
        },
    },
    chat: {
        tools: (b) => (b.tools || []).map((t) => ({ name: t.function && t.function.name, schema: t.function && t.function.parameters })),
        answered: (b) => (b.messages || []).some((m) => m.role === 'tool'),
        reply(res, b, call, text) {
            const id = `chatcmpl-${Date.now()}`;
            const created = Math.floor(Date.now() / 1000);
            const toolCall = call && { id: `call_${Date.now()}`, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.args) } };
            const finish = call ? 'tool_calls' : 'stop';
            const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
            if (!b.stream) {
                const message = call ? { role: 'assistant', content: null, tool_calls: [toolCall] } : { role: 'assistant', content: text };
                return json(res, { id, object: 'chat.completion', created, model: b.model, choices: [{ index: 0, message, finish_reason: finish }], usage });
            }
            const chunk = (delta, finish_reason, extra) => ({ id, object: 'chat.completion.chunk', created, model: b.model, choices: [{ index: 0, delta, finish_reason }], ...extra });
            const chunks = [
                chunk({ role: 'assistant', content: '' }, null),
                call ? chunk({ tool_calls: [{ index: 0, ...toolCall }] }, null) : chunk({ content: text }, null),
                chunk({}, finish, { usage }),
            ];
            sse(res, [...chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`), 'data: [DONE]\n\n']);
        },
    },
    gemini: {
        tools: (b) =>
            (b.tools || []).flatMap((t) => (t.functionDeclarations || []).map((f) => ({ name: f.name, schema: f.parametersJsonSchema || f.parameters }))),
        answered: (b) => (b.contents || []).some((c) => (c.parts || []).some((p) => p.functionResponse)),
        reply(res, b, call, text, stream) {
            const part = call ? { functionCall: { name: call.name, args: call.args } } : { text };
            const body = {
                candidates: [{ content: { role: 'model', parts: [part] }, finishReason: 'STOP', index: 0 }],
                usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
                modelVersion: 'mock',
            };
            if (!stream) return json(res, body);
            sse(res, [`data: ${JSON.stringify(body)}\r\n\r\n`]);
        },
    },
};

function json(res, body, status = 200) {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
}

function sse(res, chunks) {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    for (const c of chunks) res.write(c);
    res.end();
}

function formatOf(url) {
    if (/\/messages\/count_tokens/.test(url)) return 'count';
    if (/\/messages(\?|$)/.test(url)) return 'anthropic';
    if (/\/responses(\?|$)/.test(url)) return 'responses';
    if (/\/chat\/completions(\?|$)/.test(url)) return 'chat';
    if (/:streamGenerateContent/.test(url)) return 'gemini-stream';
    if (/:generateContent/.test(url)) return 'gemini';
    if (/:countTokens/.test(url)) return 'gemini-count';
    if (/\/models(\?|$)/.test(url)) return 'models';
    return null;
}

/**
 * Starts the server. `file` is the path the tool call reads (absolute, or relative to `cwd`).
 * Resolves to { port, requests, close }: `requests` holds every request, in order, as
 * { method, url, format, body (the raw text), json, tools (names), role: 'main' | 'side' |
 * 'other', answered }.
 */
function start({ file, cwd }) {
    const requests = [];
    const server = http.createServer((req, res) => {
        const chunks = [];
        req.on('data', (c) => chunks.push(c));
        req.on('end', () => {
            const body = Buffer.concat(chunks).toString('utf8');
            let parsed = null;
            try {
                parsed = body ? JSON.parse(body) : null;
            } catch {
                parsed = null;
            }
            const kind = formatOf(req.url);
            const record = { method: req.method, url: req.url, format: kind, body, tools: [], role: 'other', answered: false };
            requests.push(record);
            if (kind === 'count') return json(res, { input_tokens: 10 });
            if (kind === 'gemini-count') return json(res, { totalTokens: 10 });
            if (kind === 'models') return json(res, { object: 'list', data: [{ id: 'mock-model', object: 'model', created: 0, owned_by: 'mock' }], models: [] });
            if (!kind || !parsed || req.method !== 'POST') return json(res, { error: { message: `mock: no route for ${req.method} ${req.url}` } }, 404);
            const fmt = formats[kind.startsWith('gemini') ? 'gemini' : kind];
            const tools = fmt.tools(parsed);
            record.tools = tools.map((t) => t.name);
            record.answered = fmt.answered(parsed);
            const tool = pickTool(tools);
            record.role = tool ? 'main' : 'side';
            let call = null;
            if (tool && !record.answered) {
                const target = path.isAbsolute(file) ? file : path.join(cwd, file);
                call = { name: tool.name, args: readArgs(tool.name, tool.schema, target) };
                record.call = call;
            }
            fmt.reply(res, parsed, call, tool ? FINAL : SIDE, kind === 'gemini-stream');
        });
    });
    return new Promise((resolve, reject) => {
        server.on('error', reject);
        server.listen(0, '127.0.0.1', () => {
            resolve({
                port: server.address().port,
                requests,
                close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }),
            });
        });
    });
}

module.exports = { start, FINAL };
