// How each agent CLI is run headless against the mock model server: its command line, the
// environment variables it needs (beside PATH, HOME and TERM=dumb), the files it reads its
// provider from (written into the temporary HOME), and what it reads of an exported project.
// Where each setting comes from is said next to it (the agent's `--help` or its documentation).
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const MODEL = 'mock-model';

function write(file, text) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text);
}

const prompt = (file) => `Read the file ${file}, then say that you are done.`;

/**
 * Each agent: `bin` (in node_modules/.bin), `args(ctx)`, `env(ctx)`, `setup(ctx)` (files in the
 * temporary HOME; runs inside the network namespace, before the agent), and `scoped`: how a rule
 * scoped by `paths: src/api/**` reaches it, from the issue's table: `{ file }` is the file
 * `pi-rules export` writes for it (the case is skipped while the build writes none), or
 * `{ skip }` with the reason it cannot be shown, or `{ heading }`, the root file holding it as a
 * headed subsection, or `{ whole }`, a file the agent loads whole on every request (Cline's CLI:
 * `paths:` is its VS Code extension's, the issue's table); `anyDepth` the same for
 * `paths: handler.ts`; `together` what changes when every target is exported together; `nested`: the file export writes for the rules of
 * a nested `.pi/rules` directory `packages/api` (`file`), and the working directory (`cwd`,
 * relative to the root) from which the agent then reads packages/api/index.ts.
 * ctx = { port, home, cwd, file (the file the script reads, relative to cwd) }.
 */
const agents = {
    claude: {
        name: 'Claude Code',
        bin: 'claude',
        // `claude -p` (print mode, headless); ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY point it at
        // another Messages endpoint; the Read tool needs no permission. The DISABLE_* variables
        // and CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC turn off telemetry, error reports and the
        // update check (docs.claude.com, "Environment variables").
        args: (c) => ['-p', prompt(c.file), '--allowedTools', 'Read'],
        env: (c) => ({
            ANTHROPIC_BASE_URL: `http://127.0.0.1:${c.port}`,
            ANTHROPIC_API_KEY: 'mock-key',
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
            DISABLE_TELEMETRY: '1',
            DISABLE_ERROR_REPORTING: '1',
            DISABLE_AUTOUPDATER: '1',
        }),
        setup() {},
        targets: ['claude'],
        scoped: { file: '.claude/rules/pi-rules/50-api.md' },
        anyDepth: { file: '.claude/rules/pi-rules/60-handlers.md' },
        // A nested directory's rules: .claude/rules with globs under it, loaded after a read there.
        nested: { file: '.claude/rules/pi-rules/packages/api/10-api.md', cwd: '' },
    },
    codex: {
        name: 'Codex',
        bin: 'codex',
        // `codex exec` (non-interactive); a model provider of our own in $CODEX_HOME/config.toml
        // with `wire_api = "responses"` and the key from `env_key` (Codex docs, "Configuration":
        // model_providers). Codex has no read tool: the script runs `cat` in its shell tool.
        args: (c) => ['exec', '--skip-git-repo-check', '--sandbox', 'read-only', prompt(c.file)],
        env: (c) => ({ CODEX_HOME: path.join(c.home, '.codex'), MOCK_API_KEY: 'mock-key' }),
        setup(c) {
            write(
                path.join(c.home, '.codex', 'config.toml'),
                [
                    `model = "${MODEL}"`,
                    'model_provider = "mock"',
                    'check_for_update_on_startup = false',
                    '[analytics]',
                    'enabled = false',
                    '[model_providers.mock]',
                    'name = "mock"',
                    `base_url = "http://127.0.0.1:${c.port}/v1"`,
                    'wire_api = "responses"',
                    'env_key = "MOCK_API_KEY"',
                    'request_max_retries = 0',
                    'stream_max_retries = 0',
                    '',
                ].join('\n'),
            );
        },
        targets: ['agents-md'],
        scoped: { heading: 'AGENTS.md' },
        anyDepth: { heading: 'AGENTS.md' },
        // AGENTS.md files from the root down to the working directory, read at start.
        nested: { file: 'packages/api/AGENTS.md', cwd: 'packages/api' },
    },
    gemini: {
        name: 'Gemini CLI',
        bin: 'gemini',
        // `gemini -p` (non-interactive); GEMINI_API_KEY with GOOGLE_GEMINI_BASE_URL (read by the
        // @google/genai SDK) sends it to our server; settings.json: API-key auth, no usage
        // statistics, no telemetry, no update check, no folder-trust prompt (Gemini CLI docs,
        // "Configuration").
        args: (c) => ['-p', prompt(c.file)],
        env: (c) => ({ GEMINI_API_KEY: 'mock-key', GOOGLE_GEMINI_BASE_URL: `http://127.0.0.1:${c.port}` }),
        setup(c) {
            write(
                path.join(c.home, '.gemini', 'settings.json'),
                JSON.stringify({
                    security: { auth: { selectedType: 'gemini-api-key' }, folderTrust: { enabled: false } },
                    privacy: { usageStatisticsEnabled: false },
                    telemetry: { enabled: false },
                    general: { disableAutoUpdate: true, disableUpdateNag: true },
                }),
            );
        },
        targets: ['gemini'],
        scoped: { file: 'src/api/GEMINI.md' },
        // `handler.ts` lies under no one directory: a headed subsection of the root GEMINI.md.
        anyDepth: { heading: 'GEMINI.md' },
        // Gemini adds the GEMINI.md of a directory it reads a file in.
        nested: { file: 'packages/api/GEMINI.md', cwd: '' },
        // With agents-md beside it: AGENTS.md's text (through a pointer it follows, or
        // `context.fileName`), its headed subsections, and a nested AGENTS.md after a read there.
        together: {
            scoped: { heading: 'AGENTS.md' },
            anyDepth: { heading: 'AGENTS.md' },
            nested: { file: ['packages/api/GEMINI.md', 'packages/api/AGENTS.md'], cwd: '' },
        },
    },
    opencode: {
        name: 'opencode',
        bin: 'opencode',
        // `opencode run`; a provider of our own in ~/.config/opencode/opencode.json with the
        // bundled @ai-sdk/openai-compatible package (opencode docs, "Providers": custom
        // provider); OPENCODE_DISABLE_* keep it from fetching models.dev, updates and plugins.
        args: (c) => ['run', '-m', `mock/${MODEL}`, prompt(c.file)],
        env: () => ({
            OPENCODE_DISABLE_MODELS_FETCH: '1',
            OPENCODE_DISABLE_AUTOUPDATE: '1',
            OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
            OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
            OPENCODE_DISABLE_SHARE: '1',
        }),
        setup(c) {
            write(path.join(c.home, '.config', 'opencode', 'opencode.json'), JSON.stringify(openaiCompatible(c, 'https://opencode.ai/config.json')));
        },
        targets: ['agents-md'],
        scoped: { heading: 'AGENTS.md' },
        anyDepth: { heading: 'AGENTS.md' },
        // AGENTS.md files from the root down to the working directory, read at start.
        nested: { file: 'packages/api/AGENTS.md', cwd: 'packages/api' },
    },
    qwen: {
        name: 'Qwen Code',
        bin: 'qwen',
        // `qwen -p`; OpenAI-compatible auth from OPENAI_API_KEY, OPENAI_BASE_URL and OPENAI_MODEL
        // (Qwen Code docs, "Authentication"); settings.json chooses it and turns statistics off.
        args: (c) => ['-p', prompt(c.file)],
        env: (c) => ({ OPENAI_API_KEY: 'mock-key', OPENAI_BASE_URL: `http://127.0.0.1:${c.port}/v1`, OPENAI_MODEL: MODEL }),
        setup(c) {
            write(
                path.join(c.home, '.qwen', 'settings.json'),
                JSON.stringify({
                    security: { auth: { selectedType: 'openai' }, folderTrust: { enabled: false } },
                    privacy: { usageStatisticsEnabled: false },
                    telemetry: { enabled: false },
                    general: { disableAutoUpdate: true, disableUpdateNag: true },
                }),
            );
        },
        targets: ['agents-md'],
        scoped: { heading: 'AGENTS.md' },
        anyDepth: { heading: 'AGENTS.md' },
        // AGENTS.md files from the root down to the working directory, read at start.
        nested: { file: 'packages/api/AGENTS.md', cwd: 'packages/api' },
    },
    copilot: {
        name: 'Copilot CLI',
        bin: 'copilot',
        // `copilot -p`; COPILOT_OFFLINE=true with a provider of our own: COPILOT_PROVIDER_BASE_URL,
        // _API_KEY (OpenAI Chat Completions by default) and COPILOT_MODEL (`copilot help
        // environment`).
        args: (c) => ['-p', prompt(c.file), '--allow-all-tools', '--no-auto-update'],
        env: (c) => ({
            COPILOT_OFFLINE: 'true',
            COPILOT_PROVIDER_BASE_URL: `http://127.0.0.1:${c.port}/v1`,
            COPILOT_PROVIDER_API_KEY: 'mock-key',
            COPILOT_MODEL: MODEL,
            COPILOT_AUTO_UPDATE: 'false',
        }),
        setup() {},
        targets: ['copilot'],
        scoped: { file: '.github/instructions/pi-rules-50-api.instructions.md' },
        anyDepth: { file: '.github/instructions/pi-rules-60-handlers.instructions.md' },
        nested: { file: '.github/instructions/pi-rules-packages-api--10-api.instructions.md', cwd: '' },
        // With agents-md beside it: Copilot reads AGENTS.md (its headed subsections on every
        // request), and a nested AGENTS.md after a read in that directory; a file of
        // .github/instructions too would be a second copy.
        together: {
            scoped: { heading: 'AGENTS.md' },
            anyDepth: { heading: 'AGENTS.md' },
            nested: { file: 'packages/api/AGENTS.md', cwd: '' },
        },
    },
    kilo: {
        name: 'Kilo CLI',
        bin: 'kilo',
        slow: true,
        // `kilo run` (`kilo run --help`; --pure: no external plugins). Kilo CLI is built on
        // opencode: the same provider configuration, in ~/.config/kilo/kilo.json (the file its
        // log shows it loading). It is the slowest to start here (30-70 s on a busy machine).
        args: (c) => ['run', '--pure', '-m', `mock/${MODEL}`, prompt(c.file)],
        env: () => ({
            KILO_DISABLE_MODELS_FETCH: '1',
            KILO_DISABLE_AUTOUPDATE: '1',
            KILO_DISABLE_LSP_DOWNLOAD: '1',
            KILO_DISABLE_DEFAULT_PLUGINS: '1',
            KILO_DISABLE_SHARE: '1',
            KILO_TELEMETRY_DISABLED: '1',
        }),
        setup(c) {
            write(path.join(c.home, '.config', 'kilo', 'kilo.json'), JSON.stringify(openaiCompatible(c)));
        },
        targets: ['agents-md'],
        scoped: { heading: 'AGENTS.md' },
        anyDepth: { heading: 'AGENTS.md' },
        // AGENTS.md files from the root down to the working directory, read at start.
        nested: { file: 'packages/api/AGENTS.md', cwd: 'packages/api' },
    },
    cline: {
        name: 'Cline',
        bin: 'cline',
        // `cline PROMPT` runs headless, tools auto-approved; `cline auth -p openai -k -m -b`
        // stores an OpenAI-compatible provider in ~/.cline (`cline auth --help`).
        args: (c) => ['--json', prompt(c.file)],
        env: () => ({}),
        setup(c, binDir, env) {
            execFileSync(path.join(binDir, 'cline'), ['auth', '-p', 'openai', '-k', 'mock-key', '-m', MODEL, '-b', `http://127.0.0.1:${c.port}/v1`], {
                env,
                cwd: c.cwd,
                stdio: 'pipe',
                timeout: 30000,
            });
        },
        targets: ['cline'],
        // The CLI loads every .clinerules file whole (the issue's table): `paths:` is the VS Code
        // extension's.
        scoped: { whole: '.clinerules/pi-rules-50-api.md' },
        anyDepth: { whole: '.clinerules/pi-rules-60-handlers.md' },
        // The CLI reads .clinerules/ of its working directory only.
        nested: { file: 'packages/api/.clinerules/pi-rules-10-api.md', cwd: 'packages/api' },
        // With agents-md beside it: the CLI reads AGENTS.md too (a .clinerules file would be a
        // second copy).
        together: {
            scoped: { heading: 'AGENTS.md' },
            anyDepth: { heading: 'AGENTS.md' },
            nested: { file: 'packages/api/AGENTS.md', cwd: 'packages/api' },
        },
    },
};

function openaiCompatible(c, schema) {
    return {
        ...(schema ? { $schema: schema } : {}),
        autoupdate: false,
        share: 'disabled',
        model: `mock/${MODEL}`,
        provider: {
            mock: {
                npm: '@ai-sdk/openai-compatible',
                name: 'Mock',
                options: { baseURL: `http://127.0.0.1:${c.port}/v1`, apiKey: 'mock-key' },
                models: { [MODEL]: { name: 'Mock', tool_call: true } },
            },
        },
    };
}

module.exports = { agents };
