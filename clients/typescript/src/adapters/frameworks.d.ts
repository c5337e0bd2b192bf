// Loose stand-ins for the frameworks' types, for the package's own build only: the client is
// built (run-tests, tsc -p tsconfig.json) without any framework installed, since the frameworks
// are the user's to install: the package declares no dependencies, not even optional peers
// (docs/integrations.md, "Vercel AI SDK", says why). tsc emits no
// .d.ts for this file, so the emitted adapters' declarations name the real packages, and users
// get the frameworks' real types. The adapters are type-checked against the real, pinned
// frameworks by integrations/run-integration-tests (this file left out), strict as here.

declare module "ai" {
  export type Tool<INPUT = any, OUTPUT = any> = any;
  export type ToolExecutionOptions<CONTEXT = any> = { abortSignal?: AbortSignal; context: CONTEXT; [key: string]: any };
  export interface Experimental_SandboxSession {
    readonly spawn: any;
  }
  export function tool(definition: any): any;
}

declare module "zod" {
  export namespace z {
    type ZodType<T = any> = any;
    type ZodObject<T = any> = any;
    type ZodRawShape = any;
  }
  export const z: any;
}

declare module "@mastra/core/tools" {
  export type Tool<A = any, B = any, C = any, D = any, E = any, F = any> = any;
  export type ToolExecutionContext = { abortSignal?: AbortSignal; agent?: { threadId?: string }; [key: string]: any };
  export function createTool(options: any): any;
}

declare module "@mastra/core/workspace" {
  export interface WorkspaceSandbox {
    status: "pending" | "initializing" | "ready" | "starting" | "running" | "stopping" | "stopped" | "destroying" | "destroyed" | "error";
  }
  export type CommandResult = any;
  export type ExecuteCommandOptions = {
    timeout?: number;
    env?: Record<string, string | undefined>;
    cwd?: string;
    onStdout?: (data: string) => void;
    onStderr?: (data: string) => void;
    abortSignal?: AbortSignal;
  };
  export type SandboxFileInput = { path: string; content: string | Uint8Array; mode?: number };
  export type SandboxInfo = any;
}

declare module "@trigger.dev/sdk" {
  export type TaskWithSchema<A = any, B = any, C = any> = { description?: string; [key: string]: any };
  export function schemaTask(options: any): any;
}

declare module "@trigger.dev/sdk/ai" {
  export const ai: { toolExecute(task: any): any };
}
