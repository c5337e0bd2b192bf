// The Vercel AI SDK on plimsoll, runnable without a model key: a scripted model (the SDK's own
// MockLanguageModelV4) asks for one executeCode call, the code runs on the daemon at
// PLIMSOLL_URL, and the model's final text quotes the tool result. Swap `model` for a real one
// (e.g. openai("gpt-5")) and nothing else changes. See README.md beside this file.
import { generateText, stepCountIs } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { Client } from "@plimsoll/client";
import { executeCodeTool } from "@plimsoll/client/ai-sdk";

const client = new Client(process.env.PLIMSOLL_URL ?? "http://127.0.0.1:8470");
// The floor defaults to "container"; PLIMSOLL_FLOOR=process lets the embedded provider run it.
const executeCode = executeCodeTool({ client, ...(process.env.PLIMSOLL_FLOOR ? { minimumIsolation: process.env.PLIMSOLL_FLOOR } : {}) });

const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 1, text: 1, reasoning: undefined } };
let step = 0;
const model = new MockLanguageModelV4({
  doGenerate: async (options) => {
    if (step++ === 0) {
      const input = JSON.stringify({ language: "javascript", code: "let f = 1n; for (let i = 2n; i <= 20n; i++) f *= i; console.log(String(f))" });
      return { content: [{ type: "tool-call", toolCallId: "c1", toolName: "executeCode", input }], finishReason: { unified: "tool-calls", raw: undefined }, usage, warnings: [] };
    }
    const last = JSON.stringify(options.prompt.at(-1));
    return { content: [{ type: "text", text: `The sandbox said: ${last}` }], finishReason: { unified: "stop", raw: undefined }, usage, warnings: [] };
  },
});

const result = await generateText({ model, tools: { executeCode }, prompt: "What is 20!?", stopWhen: stepCountIs(3) });
console.log(JSON.stringify(result.steps[0]?.toolResults[0]?.output, null, 2));
console.log(result.text.slice(0, 200));
client.close();
