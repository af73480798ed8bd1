// One run of one agent: starts the mock model server, writes the agent's provider settings into
// a temporary HOME, runs the agent headless in the project with a clean environment and a
// timeout, and writes what happened (exit, output, every request the server got) to a JSON file.
// run.js starts it inside the network namespace, so the server and the agent share its loopback.
//
// Usage: node run-one.js SPEC.json   (SPEC: { agent, binDir, cwd, file, home, out, timeoutMs })
'use strict';

const fs = require('node:fs');
const { spawn } = require('node:child_process');
const mock = require('./mock-model.js');
const { agents } = require('./agents.js');

async function main() {
    const spec = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
    const agent = agents[spec.agent];
    const server = await mock.start({ file: spec.file, cwd: spec.cwd });
    const ctx = { port: server.port, home: spec.home, cwd: spec.cwd, file: spec.file };
    fs.mkdirSync(spec.home, { recursive: true });
    // Nothing from the caller's environment but PATH (the pinned CLIs and Node 22 first).
    const env = { PATH: `${spec.binDir}:/usr/local/bin:/usr/bin:/bin`, HOME: spec.home, TERM: 'dumb', ...agent.env(ctx) };
    const result = { agent: spec.agent, file: spec.file, cwd: spec.cwd, exit: null, signal: null, timedOut: false, stdout: '', stderr: '' };
    try {
        agent.setup(ctx, spec.binDir, env);
        await new Promise((resolve) => {
            const child = spawn(`${spec.binDir}/${agent.bin}`, agent.args(ctx), { cwd: spec.cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
            child.stdout.on('data', (d) => (result.stdout += d));
            child.stderr.on('data', (d) => (result.stderr += d));
            const timer = setTimeout(() => {
                result.timedOut = true;
                try {
                    process.kill(-child.pid, 'SIGKILL');
                } catch {}
            }, spec.timeoutMs);
            child.on('error', (e) => {
                result.stderr += String(e);
                clearTimeout(timer);
                resolve();
            });
            child.on('close', (code, signal) => {
                clearTimeout(timer);
                result.exit = code;
                result.signal = signal;
                resolve();
            });
        });
    } catch (e) {
        result.stderr += `setup failed: ${e.stack || e}\n${e.stderr || ''}`;
    }
    result.requests = server.requests;
    await server.close();
    fs.writeFileSync(spec.out, JSON.stringify(result, null, 1));
}

main().catch((e) => {
    console.error(e);
    process.exit(1);
});
