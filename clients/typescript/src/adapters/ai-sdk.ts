// "@plimsoll/client/ai-sdk": the Vercel AI SDK (ai 7.x, Node >= 22) on plimsoll.
//
//   import { generateText } from "ai";
//   import { Client } from "@plimsoll/client";
//   import { executeCodeTool, PlimsollSandboxSession } from "@plimsoll/client/ai-sdk";
//
//   const client = new Client(process.env.PLIMSOLL_URL!);
//   const executeCode = executeCodeTool({ client });               // fresh sandbox per call
//   const chat = executeCodeTool({ client, conversation: "chat-1" }); // one session, state kept
//   await generateText({ model, tools: { executeCode }, prompt });
//
// executeCodeTool is made with the SDK's own tool({ description, inputSchema, execute }); its
// output is the tool-result shape of "@plimsoll/client/tools" (ran, refused, summary, exit_code,
// outputs capped, isolation, record_sha256, ...). PlimsollSandboxSession implements the SDK's
// Experimental_SandboxSession (run, spawn, read/write/stat/list/delete files) on one plimsoll
// session, so a tool that uses `experimental_sandbox` runs in plimsoll.

import { tool, type Experimental_SandboxSession, type Tool, type ToolExecutionOptions } from "ai";
import type { Client } from "../client.js";
import type { Pool } from "../pool.js";
import { CodeRunner, DEFAULT_FLOOR, type ToolResult } from "../tools.js";
import { EXECUTE_CODE_DESCRIPTION, executeCodeInputSchema, type ExecuteCodeInput } from "./schema.js";
import { SessionShell, type ShellOptions, WORK } from "./shell.js";

export type { ToolResult } from "../tools.js";
export { EXECUTE_CODE_DESCRIPTION, executeCodeInputSchema, type ExecuteCodeInput } from "./schema.js";

export interface ExecuteCodeToolOptions {
  /** The daemon (or several: a Pool). Ignored when `runner` is given. */
  client?: Client | Pool;
  /** A runner of your own (its floor and sessions); else one is made from `client`. */
  runner?: CodeRunner;
  /** The floor (default "container"): a weaker daemon answers "nothing ran: isolation". */
  minimumIsolation?: string;
  timeoutMs?: number;
  /**
   * The conversation whose session keeps state between calls: a key, or a function of the call's
   * options (e.g. `(o) => o.context.chatId`). Without it every call gets a fresh sandbox.
   */
  conversation?: string | ((options: ToolExecutionOptions<any>) => string | undefined);
  description?: string;
}

/** The executeCode tool: tool({ description, inputSchema, execute }) of the AI SDK. */
export function executeCodeTool(options: ExecuteCodeToolOptions): Tool<ExecuteCodeInput, ToolResult> {
  const runner = options.runner ?? new CodeRunner(need(options.client), {
    ...(options.minimumIsolation !== undefined ? { minimumIsolation: options.minimumIsolation } : {}),
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    keepSessions: options.conversation !== undefined,
  });
  const conversation = options.conversation;
  return tool({
    description: options.description ?? EXECUTE_CODE_DESCRIPTION,
    inputSchema: executeCodeInputSchema,
    execute: async (input: ExecuteCodeInput, call: ToolExecutionOptions<any>): Promise<ToolResult> => {
      const key = typeof conversation === "function" ? conversation(call) : conversation;
      return runner.run(input.language, input.code, { files: input.files, key, signal: call.abortSignal });
    },
  });
}

function need(client: Client | Pool | undefined): Client | Pool {
  if (client === undefined) throw new TypeError("executeCodeTool needs `client` (a Client or a Pool) or `runner`.");
  return client;
}

type RunResult = { exitCode: number; stdout: string; stderr: string };

function once(bytes: Uint8Array): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      if (bytes.length > 0) controller.enqueue(bytes);
      controller.close();
    },
  });
}

async function collect(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  let size = 0;
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    size += value.length;
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function lines(text: string, start?: number, end?: number): string {
  if (start === undefined && end === undefined) return text;
  const all = text.split(/(?<=\n)/);
  return all.slice(Math.max((start ?? 1) - 1, 0), end ?? all.length).join("");
}

/**
 * The AI SDK's Experimental_SandboxSession on one plimsoll session (opened on first use at the
 * floor, default "container"; close() ends it). Commands run with `sh -c` in /work; files are
 * read and written under /work. `spawn` runs the command to completion (plimsoll runs have no
 * live streams): its streams deliver the outputs at the end, `kill()` aborts the call, and
 * `stdin: true` is refused before anything starts, as the interface asks.
 */
export class PlimsollSandboxSession implements Experimental_SandboxSession, AsyncDisposable {
  readonly shell: SessionShell;

  constructor(client: Client | Pool, options: ShellOptions = {}) {
    this.shell = new SessionShell(client, options);
  }

  get description(): string {
    return `A plimsoll sandbox session (floor ${this.shell.minimumIsolation}; default ${DEFAULT_FLOOR}). ` +
      `Commands run with sh -c, starting in ${WORK}; state and files in ${WORK} persist between commands. ` +
      `Files can be read and written only under ${WORK}. There is no network.`;
  }

  /** Ends the plimsoll session. */
  close(): Promise<void> {
    return this.shell.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  readonly run = async (options: { command: string; workingDirectory?: string; env?: Record<string, string>; abortSignal?: AbortSignal }): Promise<RunResult> => {
    const r = await this.shell.exec(options.command, { cwd: options.workingDirectory, env: options.env, signal: options.abortSignal });
    return { exitCode: r.exitCode, stdout: r.stdoutText, stderr: r.stderrText };
  };

  readonly spawn = (async (options: { command: string; workingDirectory?: string; env?: Record<string, string>; abortSignal?: AbortSignal; stdin?: boolean }) => {
    if (options.stdin) throw new TypeError("PlimsollSandboxSession.spawn: a plimsoll run takes no standard input (stdin: true is not supported).");
    const abort = new AbortController();
    const outer = options.abortSignal;
    if (outer) {
      if (outer.aborted) abort.abort(outer.reason);
      else outer.addEventListener("abort", () => abort.abort(outer.reason), { once: true });
    }
    const done = this.shell.exec(options.command, { cwd: options.workingDirectory, env: options.env, signal: abort.signal });
    done.catch(() => undefined);
    let stdoutCtl!: ReadableStreamDefaultController<Uint8Array>;
    let stderrCtl!: ReadableStreamDefaultController<Uint8Array>;
    const stdout = new ReadableStream<Uint8Array>({ start: (c) => { stdoutCtl = c; } });
    const stderr = new ReadableStream<Uint8Array>({ start: (c) => { stderrCtl = c; } });
    done.then((r) => {
      if (r.stdout.length) stdoutCtl.enqueue(r.stdout);
      if (r.stderr.length) stderrCtl.enqueue(r.stderr);
      stdoutCtl.close();
      stderrCtl.close();
    }, (e) => {
      stdoutCtl.error(e);
      stderrCtl.error(e);
    });
    return {
      stdout,
      stderr,
      wait: async () => ({ exitCode: (await done).exitCode }),
      kill: async () => {
        abort.abort(new Error("killed"));
      },
    };
  }) as unknown as Experimental_SandboxSession["spawn"];

  readonly readBinaryFile = (options: { path: string; abortSignal?: AbortSignal }): Promise<Uint8Array | null> =>
    this.shell.readFile(options.path, options.abortSignal);

  readonly readFile = async (options: { path: string; abortSignal?: AbortSignal }): Promise<ReadableStream<Uint8Array> | null> => {
    const bytes = await this.shell.readFile(options.path, options.abortSignal);
    return bytes === null ? null : once(bytes);
  };

  readonly readTextFile = async (options: { path: string; abortSignal?: AbortSignal; encoding?: string; startLine?: number; endLine?: number }): Promise<string | null> => {
    const bytes = await this.shell.readFile(options.path, options.abortSignal);
    if (bytes === null) return null;
    return lines(new TextDecoder(options.encoding ?? "utf-8").decode(bytes), options.startLine, options.endLine);
  };

  readonly writeBinaryFile = (options: { path: string; content: Uint8Array; abortSignal?: AbortSignal }): Promise<void> =>
    this.shell.writeFiles([{ path: options.path, content: options.content }], options.abortSignal);

  readonly writeTextFile = (options: { path: string; content: string; encoding?: string; abortSignal?: AbortSignal }): Promise<void> => {
    if (options.encoding !== undefined && !/^utf-?8$/i.test(options.encoding)) {
      return Promise.reject(new TypeError(`PlimsollSandboxSession.writeTextFile: only utf-8 is supported, not ${options.encoding}.`));
    }
    return this.shell.writeFiles([{ path: options.path, content: options.content }], options.abortSignal);
  };

  readonly writeFile = async (options: { path: string; content: ReadableStream<Uint8Array>; abortSignal?: AbortSignal }): Promise<void> =>
    this.shell.writeFiles([{ path: options.path, content: await collect(options.content) }], options.abortSignal);

  readonly stat = (options: { path: string; abortSignal?: AbortSignal }) => this.shell.stat(options.path, options.abortSignal);

  readonly listDirectory = (options: { path: string; abortSignal?: AbortSignal }) => this.shell.list(options.path, options.abortSignal);

  readonly deleteFile = (options: { path: string; abortSignal?: AbortSignal }): Promise<boolean> =>
    this.shell.deleteFile(options.path, options.abortSignal);
}
