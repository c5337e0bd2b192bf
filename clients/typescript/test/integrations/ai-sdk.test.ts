// @plimsoll/client/ai-sdk with the AI SDK (ai 7) itself: generateText driving a real tool loop
// with the SDK's MockLanguageModelV4 (a tool call, then a final text), execute called directly,
// and the Experimental_SandboxSession implementation on a linux session. Real daemons only.
import assert from "node:assert/strict";
import { generateText, stepCountIs, tool, type ToolExecutionOptions } from "ai";
import { z } from "zod";
import { Client } from "@plimsoll/client";
import { executeCodeTool, PlimsollSandboxSession, type ToolResult } from "@plimsoll/client/ai-sdk";
import { embeddedTest, embeddedUrl, linuxTest, linuxUrl, scriptedModel, shown } from "./env.js";

const call = (over: Partial<ToolExecutionOptions<any>> = {}): ToolExecutionOptions<any> => ({ toolCallId: "c", messages: [], context: {}, ...over });

embeddedTest("ai-sdk: generateText runs the model's code through executeCode and hands back the result", async () => {
  const client = new Client(embeddedUrl);
  const executeCode = executeCodeTool({ client, minimumIsolation: "process" });
  const { model, prompts } = scriptedModel([[{ toolName: "executeCode", input: { language: "javascript", code: "console.log(6*7)" } }]], "it printed 42");
  const result = await generateText({ model, tools: { executeCode }, prompt: "what is 6*7?", stopWhen: stepCountIs(3) });
  client.close();
  assert.equal(result.text, "it printed 42");
  assert.equal(result.steps.length, 2);
  const toolResult = result.steps[0]!.toolResults[0]!;
  assert.equal(toolResult.toolName, "executeCode");
  const output = toolResult.output as ToolResult;
  assert.equal(output.ran, true);
  assert.equal(output.stdout, "42\n");
  assert.equal(output.isolation, "process");
  assert.match(shown(prompts.slice(1)), /ran: exit 0/, "the model is shown the tool result");
});

embeddedTest("ai-sdk: the default floor refuses the embedded daemon, and the model is told nothing ran", async () => {
  const client = new Client(embeddedUrl);
  const executeCode = executeCodeTool({ client });
  const { model, prompts } = scriptedModel([[{ toolName: "executeCode", input: { language: "python", code: "print(1)" } }]]);
  const result = await generateText({ model, tools: { executeCode }, prompt: "run it", stopWhen: stepCountIs(3) });
  client.close();
  const output = result.steps[0]!.toolResults[0]!.output as ToolResult;
  assert.equal(output.ran, false);
  assert.equal(output.refused, "isolation");
  assert.match(shown(prompts.slice(1)), /nothing ran: isolation/);
});

embeddedTest("ai-sdk: execute called directly; a conversation key keeps the session", async () => {
  const client = new Client(embeddedUrl);
  const fresh = executeCodeTool({ client, minimumIsolation: "process" });
  const failed = (await fresh.execute!({ language: "javascript", code: "throw new Error('no')" }, call())) as ToolResult;
  assert.equal(failed.ran, true);
  assert.equal(failed.exit_code, 1, "a non-zero exit is a result");
  assert.match(failed.stderr ?? "", /no/);
  const kept = executeCodeTool({ client, minimumIsolation: "process", conversation: (o) => o.context.chatId });
  await kept.execute!({ language: "javascript", code: "let n = 20" }, call({ context: { chatId: "a" } }));
  const again = (await kept.execute!({ language: "javascript", code: "n + 22" }, call({ context: { chatId: "a" } }))) as ToolResult;
  const other = (await kept.execute!({ language: "javascript", code: "typeof n" }, call({ context: { chatId: "b" } }))) as ToolResult;
  client.close();
  assert.equal(again.value, "42");
  assert.equal(again.state_kept, true);
  assert.equal(other.value, "'undefined'");
});

linuxTest("ai-sdk: PlimsollSandboxSession runs commands and moves files in one linux session", async () => {
  const client = new Client(linuxUrl);
  await using sandbox = new PlimsollSandboxSession(client);
  assert.match(sandbox.description, /\/work/);
  await sandbox.writeTextFile({ path: "dir/hello.txt", content: "one\ntwo\nthree\n" });
  await sandbox.writeBinaryFile({ path: "/work/bytes.bin", content: new Uint8Array([0, 1, 254, 255]) });
  const run = await sandbox.run({ command: "cat hello.txt; echo \"$GREETING\" >&2; exit 4", workingDirectory: "dir", env: { GREETING: "it's me" } });
  assert.deepEqual(run, { exitCode: 4, stdout: "one\ntwo\nthree\n", stderr: "it's me\n" });
  assert.equal(await sandbox.readTextFile({ path: "dir/hello.txt", startLine: 2, endLine: 2 }), "two\n");
  assert.deepEqual([...(await sandbox.readBinaryFile({ path: "bytes.bin" }))!], [0, 1, 254, 255]);
  assert.equal(await sandbox.readTextFile({ path: "missing.txt" }), null);
  assert.deepEqual(await sandbox.stat({ path: "dir/hello.txt" }), { type: "file", size: 14 });
  assert.deepEqual(await sandbox.stat({ path: "dir" }), { type: "directory", size: 0 });
  assert.equal(await sandbox.stat({ path: "nope" }), null);
  await sandbox.run({ command: "ln -s dir link && touch .hidden" });
  const listing = (await sandbox.listDirectory({ path: "." }))!.sort((a, b) => a.name.localeCompare(b.name));
  assert.deepEqual(listing, [
    { name: ".hidden", type: "file" }, { name: "bytes.bin", type: "file" }, { name: "dir", type: "directory" }, { name: "link", type: "symlink" },
  ]);
  assert.equal(await sandbox.listDirectory({ path: "nope" }), null);
  assert.equal(await sandbox.deleteFile({ path: "bytes.bin" }), true);
  assert.equal(await sandbox.deleteFile({ path: "bytes.bin" }), false);
  await assert.rejects(sandbox.deleteFile({ path: "dir" }), /directory/);
  await assert.rejects(sandbox.writeTextFile({ path: "/etc/passwd", content: "x" }), /only under \/work/);
  const spawned = await sandbox.spawn({ command: "echo spawned; python3 -c 'print(2**10)'" });
  const out = await new Response(spawned.stdout).text();
  assert.equal(out, "spawned\n1024\n");
  assert.deepEqual(await spawned.wait(), { exitCode: 0 });
  await assert.rejects(Promise.resolve().then(() => sandbox.spawn({ command: "cat", stdin: true })), /standard input/);
  const stream = await sandbox.readFile({ path: "dir/hello.txt" });
  assert.equal(await new Response(stream!).text(), "one\ntwo\nthree\n");
  const session = await sandbox.shell.session();
  assert.equal(session.isolation, "container");
  client.close();
});

linuxTest("ai-sdk: a tool that uses experimental_sandbox runs in plimsoll", async () => {
  const client = new Client(linuxUrl);
  const sandbox = new PlimsollSandboxSession(client);
  const shell = tool({
    description: "Run a shell command in the sandbox.",
    inputSchema: z.object({ command: z.string() }),
    execute: async ({ command }, { experimental_sandbox }) => experimental_sandbox!.run({ command }),
  });
  const { model } = scriptedModel([[{ toolName: "shell", input: { command: "uname -s; pwd" } }]]);
  const result = await generateText({ model, tools: { shell }, prompt: "where am I?", stopWhen: stepCountIs(3), experimental_sandbox: sandbox });
  await sandbox.close();
  client.close();
  assert.deepEqual(result.steps[0]!.toolResults[0]!.output, { exitCode: 0, stdout: "Linux\n/work\n", stderr: "" });
});
