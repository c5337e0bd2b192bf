// The runtime smoke test: run-tests compiles it with the other tests and runs the JavaScript
// under Bun and Deno (and Node, as the control), each importing the INSTALLED @plimsoll/client
// from $work/install/node_modules, against the harness's real embedded daemon and the
// adversarial proxy. No test runner: plain checks, one line each, so that every runtime runs it
// as it is. `node:` modules only, the way the package itself uses them.
//
//   runtime-smoke.js NAME   prints `ok NAME: CHECK` or `not ok NAME: CHECK: WHY` for each check,
//                           then `NAME: N passed, N failed`; exits 1 on any failure (or none passed).
import process from "node:process";
import { Client, DataLossError, RefusedError } from "@plimsoll/client";

const runtime = process.argv[2] ?? "unnamed";
const env = (name: string): string => process.env[name] ?? "";
const embeddedUrl = env("PLIMSOLL_TEST_EMBEDDED_URL");
const embeddedUnix = env("PLIMSOLL_TEST_EMBEDDED_UNIX");
const adversaryUrl = env("PLIMSOLL_TEST_ADVERSARY_URL");

let passed = 0;
let failed = 0;

function assert(condition: boolean, what: string): void {
  if (!condition) throw new Error(what);
}

async function check(name: string, body: () => Promise<void>): Promise<void> {
  try {
    await body();
    passed++;
    console.log(`ok ${runtime}: ${name}`);
  } catch (e) {
    failed++;
    console.log(`not ok ${runtime}: ${name}: ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`);
  }
}

/** The same checks over one client: what must work wherever the package is said to work. */
async function basics(client: Client, over: string): Promise<void> {
  await check(`${over}: describe`, async () => {
    const d = await client.describe();
    assert(d.protocol === 1, `protocol ${d.protocol}`);
    assert(d.provider === "embedded", `provider ${d.provider}`);
    assert(d.tier === "process", `tier ${d.tier}`);
  });
  await check(`${over}: runJavascript prints 42`, async () => {
    const r = await client.runJavascript("console.log(6*7)");
    assert(r.stdoutText === "42\n", `stdout ${JSON.stringify(r.stdoutText)}`);
    assert(r.exitCode === 0, `exit code ${r.exitCode}`);
    assert(r.ran === true, `ran ${String(r.ran)}`);
    assert(/^[0-9a-f]{64}$/.test(r.record.recordSha256), `record ${r.record.recordSha256}`);
  });
  await check(`${over}: a floor above the tier is refused, nothing ran`, async () => {
    let caught: unknown;
    try {
      await client.runJavascript("console.log(1)", { minimumIsolation: "vm" });
    } catch (e) {
      caught = e;
    }
    assert(caught instanceof RefusedError, `not a RefusedError: ${String(caught)}`);
    const e = caught as RefusedError;
    assert(e.notDispatched === "isolation", `notDispatched ${e.notDispatched}`);
    assert(e.ran === false, `ran ${String(e.ran)}`);
    assert(e.isRetryable, "not retryable");
  });
  await check(`${over}: a session keeps state across two cells`, async () => {
    const session = await client.openSession({ idleTimeoutMs: 60_000 });
    try {
      await session.runCell("javascript", "let x = 41");
      const cell = await session.runCell("javascript", "x + 1");
      assert(cell.valueText === "42", `value ${JSON.stringify(cell.valueText)}`);
      assert(cell.record.sequence === 2, `sequence ${cell.record.sequence}`);
    } finally {
      const closed = await session.close();
      assert(closed.calls === 2, `closed after ${closed.calls} calls`);
    }
  });
}

async function main(): Promise<void> {
  if (!embeddedUrl || !embeddedUnix || !adversaryUrl) {
    // Run by hand without the harness: that is a failure, not a pass.
    failed++;
    console.log(`not ok ${runtime}: PLIMSOLL_TEST_EMBEDDED_URL, PLIMSOLL_TEST_EMBEDDED_UNIX and PLIMSOLL_TEST_ADVERSARY_URL must be set (tests/clients/harness.py)`);
    return;
  }

  const tcp = new Client(embeddedUrl);
  try {
    await basics(tcp, "tcp");
  } finally {
    tcp.close();
  }

  await check("adversary flip_stdout: DataLossError", async () => {
    const client = new Client(`${adversaryUrl}/flip_stdout/${runtime}-smoke`);
    try {
      let caught: unknown;
      try {
        await client.runJavascript("console.log(6*7)");
      } catch (e) {
        caught = e;
      }
      assert(caught instanceof DataLossError, `not a DataLossError: ${String(caught)}`);
      const e = caught as DataLossError;
      assert(e.code === "data_loss", `code ${e.code}`);
      assert(e.ran === "unknown", `ran ${String(e.ran)}`);
    } finally {
      client.close();
    }
  });

  // Nothing listens there (and under Deno's permissions the path is not allowed either: its
  // node:http throws NotCapable from request() instead of emitting 'error'): a refusal.
  await check("a socket that cannot be reached: RefusedError capacity", async () => {
    const client = new Client("unix:/nonexistent/plimsoll-runtime-smoke.sock");
    try {
      let caught: unknown;
      try {
        await client.runJavascript("console.log(1)");
      } catch (e) {
        caught = e;
      }
      assert(caught instanceof RefusedError, `not a RefusedError: ${String(caught)}`);
      const e = caught as RefusedError;
      assert(e.code === "failed_precondition", `code ${e.code}`);
      assert(e.notDispatched === "capacity", `notDispatched ${e.notDispatched}`);
      assert(e.ran === false, `ran ${String(e.ran)}`);
    } finally {
      client.close();
    }
  });

  // Unix sockets: node:http's socketPath. Node 20, Bun 1.4.4 and Deno 2.9.6 all have it (Deno
  // needs --allow-net=unix:PATH plus read and write on PATH), so none of them may skip it.
  const unix = new Client(embeddedUnix);
  try {
    await basics(unix, "unix");
  } finally {
    unix.close();
  }
}

try {
  await main();
} catch (e) {
  failed++;
  console.log(`not ok ${runtime}: the smoke test itself threw: ${e instanceof Error ? e.stack : String(e)}`);
}
console.log(`${runtime}: ${passed} passed, ${failed} failed`);
process.exitCode = failed > 0 || passed === 0 ? 1 : 0;
