// @plimsoll/client/mastra with Mastra (@mastra/core 1.x) itself: a Mastra Agent driven by the AI
// SDK's MockLanguageModelV4 (Mastra's own mocks answer only with text) calling the createTool
// tool, the tool's execute called directly, and the WorkspaceSandbox implementation, alone and
// inside a Mastra Workspace. Real daemons only.
import assert from "node:assert/strict";
import { Agent } from "@mastra/core/agent";
import { Workspace } from "@mastra/core/workspace";
import { Client } from "@plimsoll/client";
import { executeCodeTool, PlimsollSandbox, type ToolResult } from "@plimsoll/client/mastra";
import { embeddedTest, embeddedUrl, linuxTest, linuxUrl, scriptedModel, shown } from "./env.js";

embeddedTest("mastra: an Agent runs the model's code through the tool and is shown the result", async () => {
  const client = new Client(embeddedUrl);
  const { model, prompts } = scriptedModel([[{ toolName: "executeCode", input: { language: "javascript", code: "console.log([1,2,3].map(x => x * 2).join())" } }]], "2,4,6");
  const agent = new Agent({
    id: "coder", name: "coder", instructions: "Run code to answer.", model: model as any,
    tools: { executeCode: executeCodeTool({ client, minimumIsolation: "process" }) },
  });
  const result = await agent.generate("double 1, 2 and 3", { maxSteps: 3 });
  client.close();
  assert.equal(result.text, "2,4,6");
  const results = result.toolResults.map((r: any) => r.payload ?? r);
  assert.equal(results.length, 1);
  const output = results[0].result as ToolResult;
  assert.equal(output.ran, true);
  assert.equal(output.stdout, "2,4,6\n");
  assert.match(shown(prompts.slice(1)), /ran: exit 0/);
});

embeddedTest("mastra: the default floor refuses the embedded daemon: nothing ran", async () => {
  const client = new Client(embeddedUrl);
  const tool = executeCodeTool({ client });
  const output = (await tool.execute!({ language: "javascript", code: "1" }, {} as any)) as ToolResult;
  client.close();
  assert.equal(output.ran, false);
  assert.equal(output.refused, "isolation");
  assert.equal(output.summary, "nothing ran: isolation");
});

embeddedTest("mastra: execute directly; keepSessions keys the session by the agent's thread", async () => {
  const client = new Client(embeddedUrl);
  const tool = executeCodeTool({ client, minimumIsolation: "process", keepSessions: true });
  const ctx = (threadId: string) => ({ agent: { threadId, agentId: "a", toolCallId: "c", messages: [], suspend: async () => {} } }) as any;
  await tool.execute!({ language: "javascript", code: "var total = 40" }, ctx("t1"));
  const kept = (await tool.execute!({ language: "javascript", code: "total + 2" }, ctx("t1"))) as ToolResult;
  const other = (await tool.execute!({ language: "javascript", code: "typeof total" }, ctx("t2"))) as ToolResult;
  const failed = (await tool.execute!({ language: "javascript", code: "throw new Error('x')" }, ctx("t1"))) as ToolResult;
  client.close();
  assert.equal(kept.value, "42");
  assert.equal(kept.state_kept, true);
  assert.equal(other.value, "'undefined'");
  assert.equal(failed.ran, true);
  assert.notEqual(failed.exit_code, 0);
});

linuxTest("mastra: PlimsollSandbox is a WorkspaceSandbox on one linux session", async () => {
  const client = new Client(linuxUrl);
  const sandbox = new PlimsollSandbox(client);
  assert.equal(sandbox.status, "pending");
  await sandbox.start();
  assert.equal(sandbox.status, "running");
  await sandbox.writeFiles([{ path: "src/app.py", content: "import sys\nprint('args', sys.argv[1:])\n" }]);
  const r = await sandbox.executeCommand("python3", ["src/app.py", "two words", "it's"]);
  assert.equal(r.success, true);
  assert.equal(r.stdout, "args ['two words', \"it's\"]\n");
  const failed = await sandbox.executeCommand("ls /nonexistent", [], { env: { A: "1" } });
  assert.equal(failed.success, false);
  assert.notEqual(failed.exitCode, 0);
  const cwd = await sandbox.executeCommand("pwd; echo $A", [], { cwd: "src", env: { A: "b" } });
  assert.equal(cwd.stdout, "/work/src\nb\n");
  const info = await sandbox.getInfo();
  assert.equal((info.metadata as any).isolation, "container");
  await sandbox.destroy();
  assert.equal(sandbox.status, "destroyed");
  client.close();
});

linuxTest("mastra: a Workspace with PlimsollSandbox runs its commands in plimsoll", async () => {
  const client = new Client(linuxUrl);
  const sandbox = new PlimsollSandbox(client);
  const workspace = new Workspace({ id: "ws", name: "ws", sandbox });
  await workspace.init();
  const r = await workspace.sandbox!.executeCommand!("echo from-workspace; id -un");
  assert.equal(r.stdout, "from-workspace\nguest\n");
  await workspace.destroy();
  assert.equal(sandbox.status, "destroyed");
  client.close();
});
