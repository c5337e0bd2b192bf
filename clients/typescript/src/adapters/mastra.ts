// "@plimsoll/client/mastra": Mastra (@mastra/core 1.x, Node >= 22.13) on plimsoll.
//
//   import { Agent } from "@mastra/core/agent";
//   import { Workspace } from "@mastra/core/workspace";
//   import { executeCodeTool, PlimsollSandbox } from "@plimsoll/client/mastra";
//
//   const agent = new Agent({ name: "coder", instructions: "...", model,
//     tools: { executeCode: executeCodeTool({ client }) } });
//   const workspace = new Workspace({ sandbox: new PlimsollSandbox(client) });
//
// executeCodeTool is made with Mastra's createTool; its output is the tool-result shape of
// "@plimsoll/client/tools". With `keepSessions`, a call from an agent's thread (threadId) runs in
// that thread's session, so variables persist between the model's calls. PlimsollSandbox
// implements Mastra's WorkspaceSandbox (the interface of its E2B and Daytona sandboxes):
// start/stop/destroy open and close one plimsoll session, executeCommand runs `sh -c` in /work,
// writeFiles uploads into /work.

import { createTool, type Tool, type ToolExecutionContext } from "@mastra/core/tools";
import type { CommandResult, ExecuteCommandOptions, SandboxFileInput, SandboxInfo, WorkspaceSandbox } from "@mastra/core/workspace";
import type { Client } from "../client.js";
import type { Pool } from "../pool.js";
import { CodeRunner, type ToolResult } from "../tools.js";
import { EXECUTE_CODE_DESCRIPTION, executeCodeInputSchema, type ExecuteCodeInput } from "./schema.js";
import { SessionShell, shellQuote, type ShellOptions, WORK } from "./shell.js";

export type { ToolResult } from "../tools.js";
export { EXECUTE_CODE_DESCRIPTION, executeCodeInputSchema, type ExecuteCodeInput } from "./schema.js";

export interface ExecuteCodeToolOptions {
  client?: Client | Pool;
  runner?: CodeRunner;
  /** The floor (default "container"): a weaker daemon answers "nothing ran: isolation". */
  minimumIsolation?: string;
  timeoutMs?: number;
  /** Keep a session per conversation: the key is the agent's threadId (or `conversation`). */
  keepSessions?: boolean;
  /** The conversation key from the call's context (default: the agent's threadId). */
  conversation?: (context: ToolExecutionContext) => string | undefined;
  id?: string;
  description?: string;
}

/** The execute-code tool, made with Mastra's createTool. */
export function executeCodeTool(options: ExecuteCodeToolOptions): Tool<ExecuteCodeInput, ToolResult, unknown, unknown, ToolExecutionContext, string> {
  const target = options.client;
  if (options.runner === undefined && target === undefined) throw new TypeError("executeCodeTool needs `client` (a Client or a Pool) or `runner`.");
  const runner = options.runner ?? new CodeRunner(target as Client | Pool, {
    ...(options.minimumIsolation !== undefined ? { minimumIsolation: options.minimumIsolation } : {}),
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    keepSessions: options.keepSessions ?? false,
  });
  const conversation = options.conversation ?? ((context: ToolExecutionContext) => context?.agent?.threadId);
  return createTool({
    id: options.id ?? "execute-code",
    description: options.description ?? EXECUTE_CODE_DESCRIPTION,
    inputSchema: executeCodeInputSchema,
    execute: async (input: ExecuteCodeInput, context: ToolExecutionContext): Promise<ToolResult> =>
      runner.run(input.language, input.code, { files: input.files, key: conversation(context), signal: context?.abortSignal }),
  }) as unknown as Tool<ExecuteCodeInput, ToolResult, unknown, unknown, ToolExecutionContext, string>;
}

let counter = 0;

type Status = WorkspaceSandbox["status"];

/**
 * Mastra's WorkspaceSandbox on one plimsoll session. The session opens on start() (or on the
 * first command) at the floor (default "container") and closes on stop() or destroy().
 */
export class PlimsollSandbox implements WorkspaceSandbox {
  readonly id: string;
  readonly name = "plimsoll";
  readonly provider = "plimsoll";
  readonly supportsCheckpoints = false;
  status: Status = "pending";
  error?: string;
  readonly shell: SessionShell;
  readonly #createdAt = new Date();
  #lastUsedAt: Date | undefined;

  constructor(client: Client | Pool, options: ShellOptions & { id?: string } = {}) {
    this.id = options.id ?? `plimsoll-${++counter}`;
    this.shell = new SessionShell(client, options);
  }

  async start(): Promise<void> {
    this.status = "starting";
    try {
      await this.shell.session();
      this.status = "running";
    } catch (e) {
      this.status = "error";
      this.error = (e as Error).message;
      throw e;
    }
  }

  async stop(): Promise<void> {
    this.status = "stopping";
    await this.shell.close();
    this.status = "stopped";
  }

  async destroy(): Promise<void> {
    this.status = "destroying";
    await this.shell.close();
    this.status = "destroyed";
  }

  isReady(): boolean {
    return this.status === "running";
  }

  /** plimsoll keeps no checkpoints: nothing to do (supportsCheckpoints is false). */
  async snapshot(): Promise<void> {}

  getInstructions(): string {
    return `Commands run in a plimsoll sandbox session (floor ${this.shell.minimumIsolation}) with sh -c, starting in ${WORK}; ` +
      `files in ${WORK} persist between commands. There is no network.`;
  }

  async getInfo(): Promise<SandboxInfo> {
    const info: SandboxInfo = { id: this.id, name: this.name, provider: this.provider, status: this.status, createdAt: this.#createdAt };
    if (this.#lastUsedAt) info.lastUsedAt = this.#lastUsedAt;
    if (this.shell.opened) {
      const session = await this.shell.session();
      info.timeoutAt = new Date(session.expiresUnixMs);
      info.metadata = { isolation: session.isolation, provider: session.provider, calls: session.calls };
    }
    return info;
  }

  setEnv(update: (env: Record<string, string | undefined>) => Record<string, string | undefined>): void {
    this.shell.setEnv(update);
  }

  /** Runs `command` (each of `args` shell-quoted) with sh -c; a non-zero exit is a result. */
  async executeCommand(command: string, args: string[] = [], options: ExecuteCommandOptions = {}): Promise<CommandResult> {
    if (this.status !== "running") await this.start();
    const line = [command, ...args.map(shellQuote)].join(" ");
    const r = await this.shell.exec(line, {
      cwd: options.cwd, env: options.env as Record<string, string | undefined> | undefined, timeoutMs: options.timeout, signal: options.abortSignal,
    });
    this.#lastUsedAt = new Date();
    if (r.stdoutText) options.onStdout?.(r.stdoutText);
    if (r.stderrText) options.onStderr?.(r.stderrText);
    return {
      success: r.exitCode === 0, exitCode: r.exitCode, stdout: r.stdoutText, stderr: r.stderrText,
      executionTimeMs: r.durationMs, timedOut: r.timedOut, stdoutTruncated: r.stdoutTruncated,
      stderrTruncated: r.stderrTruncated, command, args,
    };
  }

  /** Writes files into /work (parents made; explicit modes are not supported). */
  async writeFiles(files: SandboxFileInput[], options: { abortSignal?: AbortSignal } = {}): Promise<void> {
    for (const f of files) if (f.mode !== undefined) throw new TypeError(`PlimsollSandbox.writeFiles: file modes are not supported (${f.path}).`);
    if (this.status !== "running") await this.start();
    await this.shell.writeFiles(files.map((f) => ({ path: f.path, content: typeof f.content === "string" ? f.content : new Uint8Array(f.content) })), options.abortSignal);
  }
}
