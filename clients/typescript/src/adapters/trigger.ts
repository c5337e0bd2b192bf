// "@plimsoll/client/trigger": Trigger.dev (@trigger.dev/sdk 4.x) on plimsoll.
//
//   // trigger/plimsoll.ts
//   import { executeCodeTask, executeCodeToolFor } from "@plimsoll/client/trigger";
//   export const executeCode = executeCodeTask();           // a schemaTask, id "plimsoll-execute-code"
//   // in a chat task or route:
//   const tools = { executeCode: executeCodeToolFor(executeCode) };
//
// The task runs model-written code in plimsoll: each run opens one plimsoll session for its chat
// (`chatId` in the payload, else the run's ID), writes the input files into /work, runs the code
// as a cell, and always closes the session (in a finally), so no sandbox outlives the run. Its
// output is the tool-result shape of "@plimsoll/client/tools", with state_kept and
// interpreter_started. executeCodeToolFor exposes it as an AI SDK tool the way Trigger.dev 4
// recommends: tool({ description, inputSchema, execute: ai.toolExecute(task) }), so each tool call
// is a subtask run (retries, queues, the dashboard).

import { schemaTask, type TaskWithSchema } from "@trigger.dev/sdk";
import { ai } from "@trigger.dev/sdk/ai";
import { tool, type Tool } from "ai";
import { z } from "zod";
import { Client } from "../client.js";
import type { Pool } from "../pool.js";
import { CodeRunner, type ToolResult } from "../tools.js";
import { EXECUTE_CODE_DESCRIPTION, executeCodeInputSchema, type ExecuteCodeInput } from "./schema.js";

export type { ToolResult } from "../tools.js";

/** The task's payload: the tool's input and, optionally, the chat it belongs to. */
export type ExecuteCodePayload = ExecuteCodeInput & { chatId?: string | undefined };

export const executeCodePayloadSchema: z.ZodType<ExecuteCodePayload> = (executeCodeInputSchema as unknown as z.ZodObject<z.ZodRawShape>).extend({
  chatId: z.string().optional().describe("The chat this code belongs to (its session's key)."),
}) as unknown as z.ZodType<ExecuteCodePayload>;

export interface ExecuteCodeTaskOptions {
  /** The task's ID (default "plimsoll-execute-code"). */
  id?: string;
  /** The daemon: a Client or Pool, or a function making one per run (default: PLIMSOLL_URL). */
  client?: Client | Pool | (() => Client | Pool);
  /** The floor (default "container"): a weaker daemon answers "nothing ran: isolation". */
  minimumIsolation?: string;
  timeoutMs?: number;
  description?: string;
  /** Trigger.dev's own bound of one run (seconds). */
  maxDuration?: number;
}

type RunParams = { ctx: { run: { id: string } }; signal?: AbortSignal };

/**
 * What the task runs, exported for callers that wire it up themselves: one session per chat,
 * opened for this run and always closed.
 */
export function executeCodeRun(options: Omit<ExecuteCodeTaskOptions, "id" | "description" | "maxDuration"> = {}) {
  return async (payload: ExecuteCodePayload, params: RunParams): Promise<ToolResult> => {
    const made = options.client === undefined || typeof options.client === "function";
    const client = typeof options.client === "function" ? options.client()
      : options.client ?? new Client(process.env.PLIMSOLL_URL ?? "http://127.0.0.1:8470");
    const runner = new CodeRunner(client, {
      ...(options.minimumIsolation !== undefined ? { minimumIsolation: options.minimumIsolation } : {}),
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      keepSessions: true,
    });
    try {
      return await runner.run(payload.language, payload.code, {
        files: payload.files, key: payload.chatId ?? params.ctx.run.id, signal: params.signal,
      });
    } finally {
      await runner.close();
      if (made) client.close();
    }
  };
}

/** The schemaTask that runs code in plimsoll (see the top of this file). */
export function executeCodeTask<TId extends string = "plimsoll-execute-code">(
  options: ExecuteCodeTaskOptions & { id?: TId } = {},
): TaskWithSchema<TId, typeof executeCodePayloadSchema, ToolResult> {
  return schemaTask({
    id: (options.id ?? "plimsoll-execute-code") as TId,
    description: options.description ?? EXECUTE_CODE_DESCRIPTION,
    schema: executeCodePayloadSchema,
    ...(options.maxDuration !== undefined ? { maxDuration: options.maxDuration } : {}),
    run: executeCodeRun(options),
  });
}

/** The task as an AI SDK tool: tool({ description, inputSchema, execute: ai.toolExecute(task) }). */
export function executeCodeToolFor(task: TaskWithSchema<string, typeof executeCodePayloadSchema, ToolResult>): Tool<ExecuteCodePayload, ToolResult> {
  return tool({
    description: task.description ?? EXECUTE_CODE_DESCRIPTION,
    inputSchema: executeCodePayloadSchema,
    execute: ai.toolExecute(task),
  });
}
