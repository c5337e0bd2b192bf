// Mastra on plimsoll, runnable without a model key: an Agent with the execute-code tool and a
// scripted model (the AI SDK's MockLanguageModelV4; Mastra's own mocks only answer with text),
// then a Workspace whose sandbox is a plimsoll session. Reads PLIMSOLL_URL. See README.md.
import { Agent } from "@mastra/core/agent";
import { Workspace } from "@mastra/core/workspace";
import { convertArrayToReadableStream, MockLanguageModelV4 } from "ai/test";
import { Client } from "@plimsoll/client";
import { executeCodeTool, PlimsollSandbox } from "@plimsoll/client/mastra";

const client = new Client(process.env.PLIMSOLL_URL ?? "http://127.0.0.1:8470");
const floor = process.env.PLIMSOLL_FLOOR ? { minimumIsolation: process.env.PLIMSOLL_FLOOR } : {};

const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 1, text: 1, reasoning: undefined } };
let step = 0;
const code = "console.log([3,1,2].sort().join(' '))";
// Mastra may ask for a stream or a whole answer: the script answers both ways.
const model = new MockLanguageModelV4({
  doGenerate: async () => (step++ === 0
    ? { content: [{ type: "tool-call", toolCallId: "c1", toolName: "executeCode", input: JSON.stringify({ language: "javascript", code }) }], finishReason: { unified: "tool-calls", raw: undefined }, usage, warnings: [] }
    : { content: [{ type: "text", text: "sorted." }], finishReason: { unified: "stop", raw: undefined }, usage, warnings: [] }),
  doStream: async () => {
    const first = step++ === 0;
    const parts: any[] = [{ type: "stream-start", warnings: [] }];
    if (first) parts.push({ type: "tool-call", toolCallId: "c1", toolName: "executeCode", input: JSON.stringify({ language: "javascript", code }) });
    else parts.push({ type: "text-start", id: "t" }, { type: "text-delta", id: "t", delta: "sorted." }, { type: "text-end", id: "t" });
    parts.push({ type: "finish", finishReason: { unified: first ? "tool-calls" : "stop", raw: undefined }, usage });
    return { stream: convertArrayToReadableStream(parts) };
  },
});

const agent = new Agent({ id: "coder", name: "coder", instructions: "Run code to answer.", model, tools: { executeCode: executeCodeTool({ client, ...floor }) } });
const answer = await agent.generate("sort 3 1 2", { maxSteps: 3 });
console.log(JSON.stringify(answer.toolResults.map((r: any) => (r.payload ?? r).result), null, 2));
console.log(answer.text);

// A Workspace sandbox: commands and files in one plimsoll session (needs an OS-level provider,
// such as linux, for commands: the embedded provider runs snippets only).
if (process.env.PLIMSOLL_WORKSPACE === "1") {
  const workspace = new Workspace({ id: "ws", name: "ws", sandbox: new PlimsollSandbox(client, floor) });
  await workspace.init();
  console.log((await workspace.sandbox!.executeCommand!("uname -a; pwd")).stdout);
  await workspace.destroy();
}
client.close();
