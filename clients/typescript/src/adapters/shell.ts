// The shell-and-files layer under the frameworks' sandbox interfaces (the AI SDK's
// Experimental_SandboxSession, Mastra's WorkspaceSandbox): one plimsoll session, opened lazily at
// the floor (default "container"), where a command is one project step `sh -c COMMAND` run in
// /work and files travel through the session's project payloads (upload / artifacts). Relative
// paths resolve against /work; files can be read and written only under /work (the payload's
// reach), other paths are refused before anything is sent. Internal to the adapters.

import type { Client } from "../client.js";
import { PlimsollError, RefusedError } from "../errors.js";
import type { Pool } from "../pool.js";
import type { Session } from "../session.js";
import { DEFAULT_FLOOR } from "../tools.js";

export const WORK = "/work";

export interface ShellOptions {
  /** The floor of the session (default "container"). */
  minimumIsolation?: string;
  /** Bounds each command unless the call gives its own (the daemon enforces it). */
  timeoutMs?: number;
  /** The session's idle timeout. */
  idleTimeoutMs?: number;
  /** Environment variables for every command (a call's own take precedence). */
  env?: Record<string, string>;
}

export interface ExecOptions {
  cwd?: string | undefined;
  env?: Record<string, string | undefined> | undefined;
  timeoutMs?: number | undefined;
  signal?: AbortSignal | undefined;
}

export interface ExecResult {
  exitCode: number;
  stdout: Uint8Array;
  stderr: Uint8Array;
  stdoutText: string;
  stderrText: string;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  timedOut: boolean;
  durationMs: number;
}

/** POSIX shell quoting of one word. */
export function shellQuote(word: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function refuse(message: string): RefusedError {
  return new RefusedError("invalid_argument", message, { notDispatched: "request" });
}

/** A path in the sandbox, absolute (relative ones resolve against /work). */
export function absolute(path: string): string {
  if (typeof path !== "string" || path === "" || path.includes("\0")) throw refuse("A sandbox path must be a non-empty string without NUL.");
  const parts: string[] = [];
  for (const part of (path.startsWith("/") ? path : `${WORK}/${path}`).split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") parts.pop();
    else parts.push(part);
  }
  return `/${parts.join("/")}`;
}

/** The path relative to /work of a file the payload can carry, or a refusal. */
export function underWork(path: string): string {
  const abs = absolute(path);
  if (!abs.startsWith(`${WORK}/`)) throw refuse(`${path}: files can be read and written only under ${WORK} in a plimsoll session.`);
  return abs.slice(WORK.length + 1);
}

/** One plimsoll session seen as a shell with a file system. */
export class SessionShell {
  readonly minimumIsolation: string;
  readonly timeoutMs: number | undefined;
  readonly #target: Client | Pool;
  readonly #idleTimeoutMs: number | undefined;
  readonly #env: Record<string, string>;
  #session: Promise<Session> | undefined;

  constructor(target: Client | Pool, options: ShellOptions = {}) {
    this.#target = target;
    this.minimumIsolation = options.minimumIsolation || DEFAULT_FLOOR;
    this.timeoutMs = options.timeoutMs;
    this.#idleTimeoutMs = options.idleTimeoutMs;
    this.#env = { ...(options.env ?? {}) };
  }

  /** The session, opened on first use. */
  session(): Promise<Session> {
    if (this.#session === undefined) {
      const opening = this.#target.openSession({
        minimumIsolation: this.minimumIsolation,
        ...(this.#idleTimeoutMs !== undefined ? { idleTimeoutMs: this.#idleTimeoutMs } : {}),
      });
      this.#session = opening;
      opening.catch(() => {
        if (this.#session === opening) this.#session = undefined;
      });
    }
    return this.#session;
  }

  get opened(): boolean {
    return this.#session !== undefined;
  }

  /** Closes the session (if one was opened); a later call opens a new one. */
  async close(): Promise<void> {
    const pending = this.#session;
    this.#session = undefined;
    if (pending === undefined) return;
    let session: Session;
    try {
      session = await pending;
    } catch {
      return;
    }
    await session.close();
  }

  setEnv(update: (env: Record<string, string | undefined>) => Record<string, string | undefined>): void {
    const next = update({ ...this.#env });
    for (const key of Object.keys(this.#env)) delete this.#env[key];
    for (const [k, v] of Object.entries(next)) if (v !== undefined) this.#env[k] = v;
  }

  /** Runs `command` with `sh -c` as one project step; a non-zero exit is a result. */
  async exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    const env = { ...this.#env, ...(options.env ?? {}) };
    let script = "";
    for (const [k, v] of Object.entries(env)) {
      if (v === undefined) continue;
      if (!NAME.test(k)) throw refuse(`${k} is not an environment variable name.`);
      script += `export ${k}=${shellQuote(v)}\n`;
    }
    if (options.cwd !== undefined) script += `cd ${shellQuote(absolute(options.cwd))} || exit 1\n`;
    script += command;
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    const session = await this.session();
    const result = await session.runProject({ steps: [["sh", "-c", script]] }, {
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    const step = result.steps[0];
    if (step === undefined) {
      // The step never started (setup failed): the run's own outputs say why.
      return {
        exitCode: result.exitCode, stdout: result.stdout, stderr: result.stderr, stdoutText: result.stdoutText,
        stderrText: result.stderrText, stdoutTruncated: result.stdoutTruncated, stderrTruncated: result.stderrTruncated,
        timedOut: result.timedOut, durationMs: result.durationMs,
      };
    }
    return {
      exitCode: step.exitCode, stdout: step.stdout, stderr: step.stderr, stdoutText: step.stdoutText,
      stderrText: step.stderrText, stdoutTruncated: step.stdoutTruncated, stderrTruncated: step.stderrTruncated,
      timedOut: step.timedOut, durationMs: step.durationMs,
    };
  }

  /** A file's bytes, or null when it does not exist; refuses a file the artifact cap cut. */
  async readFile(path: string, signal?: AbortSignal): Promise<Uint8Array | null> {
    const rel = underWork(path);
    const session = await this.session();
    const artifacts = await session.download([rel], signal ? { signal } : {});
    const found = artifacts.find((a) => a.path === rel);
    if (found === undefined) return null;
    if (found.truncated) throw new PlimsollError("resource_exhausted", `${path} is larger than the daemon's artifact limit; it was not read whole.`);
    return found.content;
  }

  /** Writes files (parents made, existing files replaced). */
  async writeFiles(files: { path: string; content: string | Uint8Array }[], signal?: AbortSignal): Promise<void> {
    const list = files.map((f) => ({ path: underWork(f.path), content: f.content }));
    const session = await this.session();
    await session.upload(list, signal ? { signal } : {});
  }

  /** `file`, `directory`, `other` and a size, or null when nothing is there (links followed). */
  async stat(path: string, signal?: AbortSignal): Promise<{ type: "file" | "directory" | "other"; size: number } | null> {
    const r = await this.exec(
      `p=${shellQuote(absolute(path))}
if [ -d "$p" ]; then echo directory 0
elif [ -f "$p" ]; then echo file "$(wc -c < "$p")"
elif [ -e "$p" ]; then echo other 0
else echo none 0; fi`, { signal },
    );
    const [type, size] = r.stdoutText.trim().split(/\s+/);
    if (r.exitCode !== 0 || type === undefined) throw new PlimsollError("internal", `stat ${path} failed: ${r.stderrText.trim()}`);
    if (type === "none") return null;
    return { type: type as "file" | "directory" | "other", size: Number(size ?? 0) };
  }

  /** A directory's entries (names, links not followed), or null when it does not exist. */
  async list(path: string, signal?: AbortSignal): Promise<{ name: string; type: "file" | "directory" | "symlink" | "other" }[] | null> {
    const r = await this.exec(
      `p=${shellQuote(absolute(path))}
[ -e "$p" ] || { echo none; exit 0; }
[ -d "$p" ] || { echo notdir; exit 0; }
echo ok
for f in "$p"/* "$p"/.*; do
  n="\${f##*/}"; [ "$n" = . ] || [ "$n" = .. ] && continue
  if [ -L "$f" ]; then t=symlink; elif [ -d "$f" ]; then t=directory; elif [ -f "$f" ]; then t=file; elif [ -e "$f" ]; then t=other; else continue; fi
  printf '%s/%s\\0' "$t" "$n"
done`, { signal },
    );
    if (r.exitCode !== 0) throw new PlimsollError("internal", `listing ${path} failed: ${r.stderrText.trim()}`);
    const [head, ...rest] = r.stdoutText.split("\n");
    if (head === "none") return null;
    if (head === "notdir") throw refuse(`${path} is not a directory.`);
    return rest.join("\n").split("\0").filter((x) => x !== "").map((entry) => {
      const slash = entry.indexOf("/");
      return { type: entry.slice(0, slash) as "file" | "directory" | "symlink" | "other", name: entry.slice(slash + 1) };
    });
  }

  /** Deletes one file: true when deleted, false when absent; a directory is refused. */
  async deleteFile(path: string, signal?: AbortSignal): Promise<boolean> {
    const r = await this.exec(
      `p=${shellQuote(absolute(path))}
if [ -d "$p" ] && [ ! -L "$p" ]; then echo dir
elif [ -e "$p" ] || [ -L "$p" ]; then rm -f -- "$p" && echo deleted
else echo absent; fi`, { signal },
    );
    const word = r.stdoutText.trim();
    if (word === "dir") throw refuse(`${path} is a directory.`);
    if (r.exitCode !== 0) throw new PlimsollError("internal", `deleting ${path} failed: ${r.stderrText.trim()}`);
    return word === "deleted";
  }
}
