// What an agent framework's tool gets from plimsoll: one result shape, one code runner. The same
// contract as clients/python/src/plimsoll/tools.py (SPEC §11, docs/integrations.md), field for
// field, so a model sees the same answer whichever framework and language called the sandbox:
//
//   ran                   true, false (nothing ran: see `refused`) or "unknown"
//   refused               the reason when nothing ran ("isolation", ...), else absent
//   summary               one line for the model: "ran: exit 0", "nothing ran: isolation",
//                         "unknown whether it ran: data_loss"
//   exit_code, timed_out  a non-zero exit is a result, never an exception
//   stdout, stderr        at most 16 000 characters (code points) each; stdout_truncated /
//                         stderr_truncated say whether the daemon or this cap cut them
//   value, displays       a cell's printed value (absent when it has none) and its rich outputs
//                         (none yet: a list, always present for cells)
//   state_kept, interpreter_started   session-backed calls only
//   isolation             the tier the code ran at; record_sha256 its run record
//   error                 {code, message} when the call did not give a result
//
// CodeRunner is what the tools call: a snippet, or a snippet with input files (a project payload:
// the files, the code as main.py / main.js, one step that runs it), fresh per call or in a
// session kept per conversation key. Its floor is "container" unless the operator gives another,
// so a daemon that cannot meet it answers "nothing ran: isolation" instead of running the model's
// code behind a weaker wall. It never throws for what the sandbox did.

import type { BytesLike } from "./bytes.js";
import type { Client } from "./client.js";
import { PlimsollError, RefusedError, type ErrorCode, type Reason } from "./errors.js";
import type { Pool } from "./pool.js";
import type { Session } from "./session.js";
import type { Tier } from "./types.js";
import type { Result } from "./wire.js";

/** The floor a tool asks for unless the operator sets one (SPEC §11). */
export const DEFAULT_FLOOR = "container";
/** Each of stdout and stderr is cut to this many characters in a tool result. */
export const OUTPUT_CAP_CHARS = 16_000;
export const LANGUAGES = ["python", "javascript"] as const;
export type ToolLanguage = (typeof LANGUAGES)[number];

const ENTRY: Record<ToolLanguage, [string, string]> = { python: ["main.py", "python3"], javascript: ["main.js", "node"] };

/** What a tool hands the model (wire-style snake_case names, as in every language). */
export type ToolResult = {
  ran: true | false | "unknown";
  refused?: Reason;
  summary: string;
  exit_code?: number;
  timed_out?: boolean;
  stdout?: string;
  stdout_truncated?: boolean;
  stderr?: string;
  stderr_truncated?: boolean;
  value?: string;
  displays?: unknown[];
  state_kept?: boolean;
  interpreter_started?: boolean;
  isolation?: Tier;
  record_sha256?: string;
  error?: { code: ErrorCode; message: string };
};

/** The end of a kept session (closeSession). */
export type SessionEnd = { ended: string; calls: number; last_record_sha256: string };

/** Input files: `{path: content}` or `[{path, content}]`, written into /work. */
export type FileInput = Record<string, BytesLike> | ReadonlyArray<{ path: string; content: BytesLike }> | null | undefined;

/** Cuts `text` to OUTPUT_CAP_CHARS code points (Python's len), never inside a surrogate pair. */
function capped(text: string): [string, boolean] {
  if (text.length <= OUTPUT_CAP_CHARS) return [text, false];
  let count = 0;
  let index = 0;
  for (const ch of text) {
    if (count === OUTPUT_CAP_CHARS) return [text.slice(0, index), true];
    count++;
    index += ch.length;
  }
  return [text, false];
}

/** The tool result of a call that ran (`ran: true`), whatever its exit code. */
export function toolResult(result: Result, options: { session?: boolean } = {}): ToolResult {
  const [stdout, stdoutCut] = capped(result.stdoutText);
  const [stderr, stderrCut] = capped(result.stderrText);
  const shaped: ToolResult = {
    ran: true,
    summary: `ran: exit ${result.exitCode}` + (result.timedOut ? " (timed out)" : "") + (result.killedForMemory ? " (killed for memory)" : ""),
    exit_code: result.exitCode,
    timed_out: result.timedOut,
    stdout,
    stdout_truncated: result.stdoutTruncated || stdoutCut,
    stderr,
    stderr_truncated: result.stderrTruncated || stderrCut,
    isolation: result.isolation,
    record_sha256: result.record.recordSha256,
  };
  if (result.kind === "cell") {
    const value = result.valueText;
    if (value !== undefined) shaped.value = value;
    shaped.displays = [];
  }
  if (options.session) {
    shaped.state_kept = Boolean(result.stateKept);
    shaped.interpreter_started = Boolean(result.interpreterStarted);
  }
  return shaped;
}

/** The tool result of a call that gave no result: refused (`ran: false`) or unknown. */
export function errorResult(error: PlimsollError): ToolResult {
  const error_ = { code: error.code, message: error.message };
  if (error.notDispatched !== null) {
    return { ran: error.ran, error: error_, refused: error.notDispatched, summary: `nothing ran: ${error.notDispatched}` };
  }
  return { ran: error.ran, error: error_, summary: `unknown whether it ran: ${error.code}` };
}

function fileList(files: FileInput): { path: string; content: BytesLike }[] {
  if (files == null) return [];
  if (Array.isArray(files)) return files.map((f) => ({ path: String(f.path), content: f.content }));
  return Object.entries(files as Record<string, BytesLike>).map(([path, content]) => ({ path, content }));
}

export interface CodeRunnerOptions {
  /** The floor (default "container"): nothing runs on a weaker tier (refused `isolation`). */
  minimumIsolation?: string;
  /** Bounds each run or cell (the daemon enforces it: exit code 124, `timed_out`). */
  timeoutMs?: number;
  /** Calls that name a `key` (a conversation) run in that key's session. */
  keepSessions?: boolean;
}

export interface RunCodeOptions {
  files?: FileInput;
  /** The conversation: with keepSessions, its session (opened on first use) runs the code. */
  key?: string | undefined;
  signal?: AbortSignal | undefined;
}

/**
 * Runs model-written code for a tool and shapes every outcome with toolResult. `target` is a
 * Client or a Pool (placement). With keepSessions a call that names a `key` runs in that key's
 * session, opened on first use and kept until closeSession / close; cells keep their variables
 * between calls. Never throws for what the sandbox did: refusals and unknown outcomes are results.
 */
export class CodeRunner {
  readonly minimumIsolation: string;
  readonly timeoutMs: number | undefined;
  readonly keepSessions: boolean;
  readonly #target: Client | Pool;
  readonly #sessions = new Map<string, Promise<Session>>();

  constructor(target: Client | Pool, options: CodeRunnerOptions = {}) {
    this.#target = target;
    this.minimumIsolation = options.minimumIsolation || DEFAULT_FLOOR;
    this.timeoutMs = options.timeoutMs;
    this.keepSessions = options.keepSessions ?? false;
  }

  toString(): string {
    return `CodeRunner(floor=${this.minimumIsolation}, sessions=${this.#sessions.size})`;
  }

  /** Runs `code` (python or javascript) with optional input `files` in /work. */
  async run(language: string, code: string, options: RunCodeOptions = {}): Promise<ToolResult> {
    if (!(LANGUAGES as readonly string[]).includes(language)) {
      return errorResult(new RefusedError("invalid_argument", `language must be one of ${LANGUAGES.join(", ")}`, { notDispatched: "request" }));
    }
    const lang = language as ToolLanguage;
    try {
      if (this.keepSessions && options.key !== undefined) {
        const session = await this.session(options.key);
        const files = fileList(options.files);
        const signal = options.signal ? { signal: options.signal } : {};
        if (files.length > 0) await session.upload(files, signal);
        const cell = await session.runCell(lang, code, { ...(this.timeoutMs !== undefined ? { timeoutMs: this.timeoutMs } : {}), ...signal });
        return toolResult(cell, { session: true });
      }
      return toolResult(await this.#runFresh(lang, code, fileList(options.files), options.signal));
    } catch (e) {
      if (e instanceof PlimsollError) return errorResult(e);
      throw e;
    }
  }

  #runFresh(language: ToolLanguage, code: string, files: { path: string; content: BytesLike }[], signal: AbortSignal | undefined): Promise<Result> {
    const options = {
      minimumIsolation: this.minimumIsolation,
      ...(this.timeoutMs !== undefined ? { timeoutMs: this.timeoutMs } : {}),
      ...(signal ? { signal } : {}),
    };
    if (files.length === 0) {
      return language === "python" ? this.#target.runPython(code, options) : this.#target.runJavascript(code, options);
    }
    const [entry, program] = ENTRY[language];
    const project = [...files.filter((f) => f.path !== entry), { path: entry, content: code }];
    return this.#target.runProject({ files: project, steps: [[program, entry]] }, options);
  }

  /** The session of conversation `key`, opened at this runner's floor on first use. */
  session(key: string): Promise<Session> {
    let session = this.#sessions.get(key);
    if (session === undefined) {
      session = this.#target.openSession({ minimumIsolation: this.minimumIsolation });
      this.#sessions.set(key, session);
      // A failed open is not kept: the next call tries again.
      session.catch(() => {
        if (this.#sessions.get(key) === session) this.#sessions.delete(key);
      });
    }
    return session;
  }

  /** Closes conversation `key`'s session; its end (ended, calls) or null when it had none. */
  async closeSession(key: string): Promise<SessionEnd | ToolResult | null> {
    const pending = this.#sessions.get(key);
    if (pending === undefined) return null;
    this.#sessions.delete(key);
    try {
      const end = await (await pending).close();
      return { ended: end.ended, calls: end.calls, last_record_sha256: end.lastRecordSha256 };
    } catch (e) {
      if (e instanceof PlimsollError) return errorResult(e);
      throw e;
    }
  }

  /** Closes every kept session (errors are dropped: the daemon ends them anyway). */
  async close(): Promise<void> {
    await Promise.all([...this.#sessions.keys()].map((key) => this.closeSession(key)));
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
