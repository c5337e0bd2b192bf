// @plimsoll/client/trigger with Trigger.dev (@trigger.dev/sdk 4.x) itself: the schemaTask's
// registered run function called inside the SDK's runInMockTaskContext (from
// "@trigger.dev/sdk/ai/test", the SDK's mock task context), and the task exposed as an AI SDK tool
// the way Trigger.dev 4 recommends (tool() with execute: ai.toolExecute(task)). A real
// ai.toolExecute call triggers a subtask through the Trigger.dev API, which a test cannot reach:
// that path is left out. Real daemons only.
import { test } from "node:test";
import assert from "node:assert/strict";
import { resourceCatalog } from "@trigger.dev/core/v3";
import { runInMockTaskContext } from "@trigger.dev/sdk/ai/test";
import { Client } from "@plimsoll/client";
import { executeCodeTask, executeCodeToolFor, type ToolResult } from "@plimsoll/client/trigger";
import { embeddedTest, embeddedUrl, linuxTest, linuxUrl } from "./env.js";

// One client per test file; the task's `client` option takes a function, called per run.
let url = "";
const clients: Client[] = [];
const task = executeCodeTask({ id: "plimsoll-test-execute-code", client: () => { const c = new Client(url); clients.push(c); return c; } });
const floorProcess = executeCodeTask({ id: "plimsoll-test-execute-code-process", minimumIsolation: "process", client: () => new Client(url) });

async function runTask(id: string, payload: unknown): Promise<ToolResult> {
  return runInMockTaskContext(async ({ ctx }) => {
    const registered = resourceCatalog.getTask(id);
    assert.ok(registered, `task ${id} is registered`);
    const parsed = await registered.fns.parsePayload!(payload);
    return (await registered.fns.run(parsed, { ctx, signal: new AbortController().signal })) as ToolResult;
  }, { ctx: { run: { id: "run_test" } } });
}

embeddedTest("trigger: the task runs the code in a session of its own and closes it", async () => {
  url = embeddedUrl;
  const output = await runTask("plimsoll-test-execute-code-process", { language: "javascript", code: "const a = 6; a * 7", chatId: "chat-1" });
  assert.equal(output.ran, true);
  assert.equal(output.value, "42");
  assert.equal(output.interpreter_started, true);
  assert.equal(output.isolation, "process");
});

embeddedTest("trigger: the default floor refuses the embedded daemon: nothing ran", async () => {
  url = embeddedUrl;
  const output = await runTask("plimsoll-test-execute-code", { language: "python", code: "print(1)" });
  assert.equal(output.ran, false);
  assert.equal(output.refused, "isolation");
  assert.equal(output.summary, "nothing ran: isolation");
});

test("trigger: a payload the schema refuses never reaches the daemon", () => {
  const registered = resourceCatalog.getTask("plimsoll-test-execute-code")!;
  assert.rejects(Promise.resolve().then(() => registered.fns.parsePayload!({ language: "cobol", code: 1 })));
});

linuxTest("trigger: input files reach the run's linux session", async () => {
  url = linuxUrl;
  const output = await runTask("plimsoll-test-execute-code", {
    language: "python", code: "open('/work/data.txt').read().upper()", files: [{ path: "data.txt", content: "shout" }], chatId: "c",
  });
  assert.equal(output.ran, true);
  assert.equal(output.value, "'SHOUT'");
  assert.equal(output.isolation, "container");
  for (const c of clients) c.close();
});

test("trigger: the task as an AI SDK tool (tool() with ai.toolExecute)", () => {
  const t = executeCodeToolFor(task) as any;
  assert.equal(typeof t.execute, "function");
  assert.match(t.description, /plimsoll/);
  assert.ok(t.inputSchema, "the tool carries the task's schema");
});
