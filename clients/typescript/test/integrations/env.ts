// The harness's environment (tests/clients/README.md) for the integration tests, and the
// scripted model every framework test drives: the AI SDK's own MockLanguageModelV4 (ai/test),
// answering with the tool calls it is given, one step at a time, then a final text. No model is
// ever called.
import { test } from "node:test";
import { MockLanguageModelV4, convertArrayToReadableStream } from "ai/test";

export const env = (name: string): string => process.env[name] ?? "";
export const part = env("PLIMSOLL_TEST_PART") || "all";
export const embeddedUrl = env("PLIMSOLL_TEST_EMBEDDED_URL");
export const adversaryUrl = env("PLIMSOLL_TEST_ADVERSARY_URL");
export const linuxUrl = env("PLIMSOLL_TEST_LINUX_URL");

/**
 * A test of this part, or none: the nolinux part registers no test that needs linux and the
 * linux part none of the embedded ones (the other part of the same run registers them). A daemon
 * the harness should have started and did not is a failure; the one skip is a host that cannot
 * run the linux provider (PLIMSOLL_TEST_LINUX_SKIP names what it lacks).
 */
type Body = () => Promise<void>;

function required(name: string, value: string): void {
  if (!value && env("PLIMSOLL_CLIENT_REQUIRE_HARNESS") === "1") {
    throw new Error(`${name} is not set (tests/clients/harness.py sets it)`);
  }
}

export function embeddedTest(name: string, body: Body): void {
  if (part === "linux") return;
  required("PLIMSOLL_TEST_EMBEDDED_URL", embeddedUrl);
  test(name, embeddedUrl ? {} : { skip: "PLIMSOLL_TEST_EMBEDDED_URL is not set" }, body);
}

export function adversaryTest(name: string, body: Body): void {
  if (part === "linux") return;
  required("PLIMSOLL_TEST_ADVERSARY_URL", adversaryUrl);
  test(name, adversaryUrl ? {} : { skip: "PLIMSOLL_TEST_ADVERSARY_URL is not set" }, body);
}

export function linuxTest(name: string, body: Body): void {
  if (part === "nolinux") return;
  const host = env("PLIMSOLL_TEST_LINUX_SKIP");
  if (!linuxUrl && host) {
    console.log(`skipped: ${name}: ${host}`);
    test(name, { skip: host }, body);
    return;
  }
  required("PLIMSOLL_TEST_LINUX_URL", linuxUrl);
  test(name, linuxUrl ? {} : { skip: "PLIMSOLL_TEST_LINUX_URL is not set" }, body);
}

export type ScriptedCall = { toolName: string; input: unknown };

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

/**
 * A model that answers step i with `steps[i]`'s tool calls (each step: the calls of one turn) and
 * then with `finalText`. Works for generate (doGenerate) and stream (doStream) callers alike.
 * `prompts` records what the model was shown at each step (the tool results come back in it).
 */
export function scriptedModel(steps: ScriptedCall[][], finalText = "done") {
  let step = 0;
  const prompts: unknown[] = [];
  const next = () => {
    const calls = steps[step] ?? [];
    const id = step++;
    return calls.length > 0
      ? { calls: calls.map((c, i) => ({ type: "tool-call" as const, toolCallId: `call-${id}-${i}`, toolName: c.toolName, input: JSON.stringify(c.input) })), finish: "tool-calls" as const }
      : { calls: [], finish: "stop" as const };
  };
  const model = new MockLanguageModelV4({
    doGenerate: async (options) => {
      prompts.push(options.prompt);
      const { calls, finish } = next();
      return {
        content: calls.length > 0 ? calls : [{ type: "text" as const, text: finalText }],
        finishReason: { unified: finish, raw: undefined },
        usage,
        warnings: [],
      };
    },
    doStream: async (options) => {
      prompts.push(options.prompt);
      const { calls, finish } = next();
      const parts: any[] = [{ type: "stream-start", warnings: [] }];
      if (calls.length > 0) parts.push(...calls);
      else parts.push({ type: "text-start", id: "t" }, { type: "text-delta", id: "t", delta: finalText }, { type: "text-end", id: "t" });
      parts.push({ type: "finish", finishReason: { unified: finish, raw: undefined }, usage });
      return { stream: convertArrayToReadableStream(parts) };
    },
  });
  return { model, prompts };
}

/** The JSON text of everything the model was shown, to look for a tool result in it. */
export function shown(prompts: unknown[]): string {
  return JSON.stringify(prompts);
}
