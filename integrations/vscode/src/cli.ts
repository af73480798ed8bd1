// Running the pi-rules CLI in a workspace folder, for the commands and the status bar.

import { execFile } from "node:child_process";

export interface Run {
  /** The exit code; null when the process did not exit by itself (a signal, a timeout). */
  code: number | null;
  stdout: string;
  stderr: string;
  /** Why the process could not run or was stopped, when it could not or was. */
  failure?: string;
}

const LIMIT = 64 * 1024 * 1024;

/** Runs `binary args` in `cwd` and collects its output, whatever its exit code. */
export function run(binary: string, args: string[], cwd: string, timeoutMs = 60_000): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      binary,
      args,
      { cwd, maxBuffer: LIMIT, timeout: timeoutMs, windowsHide: true, encoding: "utf8" },
      (error, stdout, stderr) => {
        if (error === null) {
          resolve({ code: 0, stdout, stderr });
          return;
        }
        const code = typeof error.code === "number" ? error.code : null;
        const failure = code === null ? (error.killed ? `stopped after ${timeoutMs / 1000} s` : error.message) : undefined;
        resolve({ code, stdout, stderr, ...(failure !== undefined ? { failure } : {}) });
      },
    );
  });
}

/** The command line as a person would type it, for logs and document headers. */
export function commandLine(args: string[]): string {
  return ["pi-rules", ...args].map((a) => (/^[\w./=:,@+-]+$/.test(a) ? a : `'${a.replace(/'/g, "'\\''")}'`)).join(" ");
}
