// Trigger.dev on plimsoll. In a Trigger.dev project, export the task from your trigger/ folder
// and give the tool to your model:
//
//   // trigger/plimsoll.ts
//   export const executeCode = executeCodeTask();   // reads PLIMSOLL_URL (and PLIMSOLL_TOKEN) per run
//   // where you call the model (a chat.agent, a route):
//   const tools = { executeCode: executeCodeToolFor(executeCode) };   // tool({ execute: ai.toolExecute(task) })
//
// Runnable here without the Trigger.dev platform: the task's run in the SDK's mock task context
// (runInMockTaskContext), which is what Trigger.dev's worker would call. See README.md.
import { resourceCatalog } from "@trigger.dev/core/v3";
import { runInMockTaskContext } from "@trigger.dev/sdk/ai/test";
import { executeCodeTask, executeCodeToolFor } from "@plimsoll/client/trigger";

export const executeCode = executeCodeTask({ ...(process.env.PLIMSOLL_FLOOR ? { minimumIsolation: process.env.PLIMSOLL_FLOOR } : {}) });
export const tools = { executeCode: executeCodeToolFor(executeCode) };

const output = await runInMockTaskContext(async ({ ctx }) => {
  const task = resourceCatalog.getTask(executeCode.id)!;
  const payload = await task.fns.parsePayload!({ language: "javascript", code: "Array.from({ length: 101 }, (_, i) => i).reduce((a, b) => a + b)", chatId: "example-chat" });
  return task.fns.run(payload, { ctx, signal: new AbortController().signal });
});
console.log(JSON.stringify(output, null, 2));
