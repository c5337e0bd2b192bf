// The input every adapter's execute-code tool takes (a zod schema: zod is a peer of the AI SDK,
// Mastra and Trigger.dev alike), and the description the model reads. Internal to the adapters.

import { z } from "zod";
import { LANGUAGES } from "../tools.js";

/** The tool's input: what the model sends. */
export type ExecuteCodeInput = {
  language: "python" | "javascript";
  code: string;
  files?: { path: string; content: string }[] | undefined;
};

/** The zod schema of ExecuteCodeInput (the tool's inputSchema). */
export const executeCodeInputSchema: z.ZodType<ExecuteCodeInput> = z.object({
  language: z.enum(LANGUAGES).describe("The language of `code`."),
  code: z.string().describe("The program. In a kept session, a cell: its last expression's value is returned as `value`."),
  files: z.array(z.object({
    path: z.string().describe("A path relative to /work."),
    content: z.string().describe("The file's text."),
  })).optional().describe("Input files, written into /work before the code runs."),
});

export const EXECUTE_CODE_DESCRIPTION =
  "Run Python or JavaScript in a plimsoll sandbox (no network; files in /work). The result says " +
  "whether the code ran (ran: true | false | \"unknown\"), why not (refused), the exit code, stdout " +
  "and stderr (capped at 16000 characters each), the isolation tier and the run's record digest. " +
  "A non-zero exit code is a normal result: read stderr and fix the code.";

