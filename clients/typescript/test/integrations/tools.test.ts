// @plimsoll/client/tools: the one tool-result shape and the runner every adapter calls, against
// the harness's real daemons: embedded (tier process, so the default floor "container" refuses
// there) and linux (tier container: python, input files, sessions with /work). The twin of
// clients/python/tests/test_tools.py, check for check.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client, PlimsollError, RefusedError } from "@plimsoll/client";
import { CodeRunner, DEFAULT_FLOOR, OUTPUT_CAP_CHARS, errorResult } from "@plimsoll/client/tools";
import { adversaryTest, adversaryUrl, embeddedTest, embeddedUrl, linuxTest, linuxUrl } from "./env.js";

embeddedTest("the default floor is container and a weaker daemon runs nothing", async () => {
  const client = new Client(embeddedUrl);
  const runner = new CodeRunner(client);
  assert.equal(runner.minimumIsolation, DEFAULT_FLOOR);
  assert.equal(DEFAULT_FLOOR, "container");
  const shaped = await runner.run("javascript", "console.log(1)");
  client.close();
  assert.equal(shaped.ran, false);
  assert.equal(shaped.refused, "isolation");
  assert.equal(shaped.summary, "nothing ran: isolation");
  assert.ok(!("exit_code" in shaped) && !("stdout" in shaped));
});

embeddedTest("a result is shaped whatever its exit code", async () => {
  const client = new Client(embeddedUrl);
  const runner = new CodeRunner(client, { minimumIsolation: "process" });
  const ok = await runner.run("javascript", "console.log(6*7)");
  const failed = await runner.run("javascript", "throw new Error('boom')");
  client.close();
  assert.equal(ok.ran, true);
  assert.equal(ok.exit_code, 0);
  assert.equal(ok.stdout, "42\n");
  assert.equal(ok.isolation, "process");
  assert.equal(ok.record_sha256?.length, 64);
  assert.equal(ok.stdout_truncated, false);
  assert.equal(ok.timed_out, false);
  assert.ok(!("value" in ok) && !("state_kept" in ok));
  assert.equal(failed.ran, true);
  assert.equal(failed.exit_code, 1);
  assert.match(failed.stderr ?? "", /boom/);
  assert.equal(failed.summary, "ran: exit 1");
});

embeddedTest("outputs are capped at 16000 characters and say so", async () => {
  const client = new Client(embeddedUrl);
  const shaped = await new CodeRunner(client, { minimumIsolation: "process" }).run("javascript", "console.log('\u00e9'.repeat(20000))");
  client.close();
  assert.equal([...(shaped.stdout ?? "")].length, OUTPUT_CAP_CHARS);
  assert.equal(shaped.stdout_truncated, true);
});

embeddedTest("an unknown language runs nothing", async () => {
  const client = new Client(embeddedUrl);
  const shaped = await new CodeRunner(client).run("cobol", "DISPLAY 1");
  client.close();
  assert.equal(shaped.ran, false);
  assert.equal(shaped.refused, "request");
});

adversaryTest("an answer that fails its checks is unknown, never a result", async () => {
  const client = new Client(`${adversaryUrl}/flip_stdout/typescript-tools`);
  const shaped = await new CodeRunner(client, { minimumIsolation: "process" }).run("javascript", "console.log(6*7)");
  client.close();
  assert.equal(shaped.ran, "unknown");
  assert.equal(shaped.error?.code, "data_loss");
  assert.equal(shaped.summary, "unknown whether it ran: data_loss");
  assert.ok(!("stdout" in shaped));
});

embeddedTest("a conversation keeps its session and its variables", async () => {
  const client = new Client(embeddedUrl);
  const runner = new CodeRunner(client, { minimumIsolation: "process", keepSessions: true });
  const first = await runner.run("javascript", "let x = 41", { key: "chat-1" });
  const second = await runner.run("javascript", "x + 1", { key: "chat-1" });
  const other = await runner.run("javascript", "typeof x", { key: "chat-2" });
  const ended = await runner.closeSession("chat-1");
  await runner.close();
  client.close();
  assert.equal(first.interpreter_started, true);
  assert.deepEqual(first.displays, []);
  assert.equal(second.value, "42");
  assert.equal(second.state_kept, true);
  assert.equal(second.interpreter_started, false);
  assert.equal(other.value, "'undefined'");
  assert.deepEqual(ended && "ended" in ended ? [ended.ended, ended.calls] : ended, ["closed", 2]);
});

linuxTest("input files travel with a fresh run", async () => {
  const client = new Client(linuxUrl);
  const shaped = await new CodeRunner(client).run("python", "print(open('data.csv').read().count('\\n'))", { files: { "data.csv": "a,b\n1,2\n" } });
  client.close();
  assert.equal(shaped.ran, true);
  assert.equal(shaped.stdout, "2\n");
  assert.equal(shaped.isolation, "container");
});

linuxTest("input files reach a kept session", async () => {
  const client = new Client(linuxUrl);
  const runner = new CodeRunner(client, { keepSessions: true });
  const shaped = await runner.run("python", "open('/work/in.txt').read()", { files: [{ path: "in.txt", content: "hello" }], key: "chat" });
  const again = await runner.run("python", "len(open('/work/in.txt').read())", { key: "chat" });
  await runner.close();
  client.close();
  assert.equal(shaped.value, "'hello'");
  assert.equal(again.value, "5");
});

test("errorResult of a refusal names the reason", () => {
  const shaped = errorResult(new RefusedError("failed_precondition", "below", { notDispatched: "isolation" }));
  assert.deepEqual(shaped, { ran: false, refused: "isolation", summary: "nothing ran: isolation", error: { code: "failed_precondition", message: "below" } });
  const unknown = errorResult(new PlimsollError("deadline_exceeded", "late"));
  assert.deepEqual(unknown, { ran: "unknown", summary: "unknown whether it ran: deadline_exceeded", error: { code: "deadline_exceeded", message: "late" } });
});
