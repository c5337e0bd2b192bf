// The client against the real embedded daemon (and the TLS one): URLs and options refused
// before sending, the token never shown, keep-alive, Unix sockets, TLS verification, bytes,
// sessions, aborts, and the bench program's output line.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify, inspect } from "node:util";
import {
  Client, DataLossError, PlimsollError, Pool, RefusedError, digest, type Reason,
} from "@plimsoll/client";
import { embeddedUrl, env, skipped } from "./env.js";

const noEmbedded = embeddedUrl ? undefined : skipped("client tests", "PLIMSOLL_TEST_EMBEDDED_URL is not set");
const SECRET = "s3cr3t-token-VALUE-never-shown_0123456789";

function refused(reason: Reason) {
  return (e: unknown) => {
    assert.ok(e instanceof RefusedError, String(e));
    assert.equal(e.notDispatched, reason);
    assert.equal(e.ran, false);
    return true;
  };
}

test("bad URLs and options are refused before anything is sent", () => {
  for (const url of ["", "ftp://127.0.0.1", "http://user:pw@127.0.0.1", "http://127.0.0.1/?q=1", "http://127.0.0.1/#f",
    "http://::1/", "http://127.0.0.1:0", "http://127.0.0.1:99999", "unix:relative.sock", "http://127.0.0.1/a b"]) {
    assert.throws(() => new Client(url), refused("request"), url);
  }
  assert.throws(() => new Client("http://127.0.0.1", { token: "two\nlines" }), refused("request"));
  assert.throws(() => new Client("http://127.0.0.1", { maxResponseBytes: -1 }), refused("request"));
  assert.throws(() => new Client("https://127.0.0.1", { caFile: "/nonexistent/ca.pem" }), refused("request"));
  assert.throws(() => new Client("http://192.0.2.1:8470"), (e: unknown) => e instanceof RefusedError && e.code === "failed_precondition" && e.notDispatched === "request");
  assert.doesNotThrow(() => new Client("http://192.0.2.1:8470", { allowCleartext: true }).close());
  assert.doesNotThrow(() => new Client("http://[::1]:8470/prefix/v").close());
  assert.doesNotThrow(() => new Client("unix:///tmp/x.sock").close());
});

test("the token is never shown by toString, inspect or JSON, nor by errors", async () => {
  const client = new Client(embeddedUrl || "http://127.0.0.1:9", { token: SECRET });
  const pool = new Pool([embeddedUrl || "http://127.0.0.1:9"], { token: SECRET });
  const shown = [String(client), inspect(client, { showHidden: true, depth: 10 }), JSON.stringify(client),
    String(pool), inspect(pool, { showHidden: true, depth: 10 }), JSON.stringify(pool), inspect(pool.clients, { depth: 10 })];
  let error: unknown;
  try {
    await new Client("http://127.0.0.1:9", { token: SECRET }).runJavascript("1", { minimumIsolation: "vm" });
  } catch (e) {
    error = e;
  }
  assert.ok(error instanceof PlimsollError);
  shown.push(String(error), inspect(error, { showHidden: true, depth: 10 }), JSON.stringify(error), (error as Error).stack ?? "");
  const saved = process.env.PLIMSOLL_TOKEN;
  process.env.PLIMSOLL_TOKEN = SECRET;
  try {
    const fromEnv = new Client("http://127.0.0.1:9");
    shown.push(String(fromEnv), inspect(fromEnv, { showHidden: true, depth: 10 }), JSON.stringify(fromEnv));
    assert.match(JSON.stringify(fromEnv), /"token":"set"/);
  } finally {
    if (saved === undefined) delete process.env.PLIMSOLL_TOKEN;
    else process.env.PLIMSOLL_TOKEN = saved;
  }
  for (const s of shown) assert.ok(!s.includes(SECRET) && !s.includes("s3cr3t"), `the token shows in: ${s}`);
  client.close();
  pool.close();
});

test("runs, keep-alive and concurrent calls", noEmbedded ? { skip: noEmbedded } : {}, async () => {
  const client = new Client(embeddedUrl);
  for (let i = 0; i < 20; i++) assert.equal((await client.runJavascript(`console.log(${i})`)).stdoutText, `${i}\n`);
  assert.equal(client.connectionsOpened, 1, "keep-alive reuses one connection");
  const results = await Promise.all([1, 2].map((i) => client.runJavascript(`console.log(${i}*2)`)));
  assert.deepEqual(results.map((r) => r.stdoutText), ["2\n", "4\n"]);
  const r = results[0]!;
  assert.equal(r.requestId.length, 32);
  assert.notEqual(results[1]!.requestId, r.requestId);
  assert.equal(r.record.requestSha256.length, 64);
  client.close();
});

test("a name that resolves to loopback is allowed over http://", noEmbedded ? { skip: noEmbedded } : {}, async () => {
  const client = new Client(embeddedUrl.replace("127.0.0.1", "localhost"));
  assert.equal((await client.runJavascript("console.log('lo')")).stdoutText, "lo\n");
  client.close();
});

test("bytes: code as Uint8Array, non-ASCII text, a BOM kept", noEmbedded ? { skip: noEmbedded } : {}, async () => {
  const client = new Client(embeddedUrl);
  const r = await client.runJavascript(new TextEncoder().encode("console.log('caf\u00e9 \u2615')"));
  assert.equal(r.stdoutText, "caf\u00e9 \u2615\n");
  const bom = await client.runJavascript("\ufeffconsole.log(1)");
  assert.equal(bom.ran, true);
  // Not UTF-8: travels as base64; whatever the engine makes of it, the exchange checks.
  const raw = await client.runJavascript(new Uint8Array([0x2f, 0x2f, 0xff, 0xfe, 0x0a, 0x31]));
  assert.equal(raw.ran, true);
  assert.equal(digest.base64Encode(new Uint8Array([0, 1, 0xfe, 0xff])), "AAH+/w==");
  assert.throws(() => digest.base64Decode("AAH+/x=="), /canonical/);
  client.close();
});

test("the Unix socket", { skip: env("PLIMSOLL_TEST_EMBEDDED_UNIX") ? false : skipped("unix socket", "PLIMSOLL_TEST_EMBEDDED_UNIX is not set") }, async () => {
  const client = new Client(env("PLIMSOLL_TEST_EMBEDDED_UNIX"));
  assert.equal((await client.runJavascript("console.log(6*7)")).stdoutText, "42\n");
  assert.equal((await client.describe()).provider, "embedded");
  client.close();
});

test("TLS: verified with the CA file, refused (capacity, nothing sent) without it", { skip: env("PLIMSOLL_TEST_TLS_URL") ? false : skipped("tls", "PLIMSOLL_TEST_TLS_URL is not set") }, async () => {
  const url = env("PLIMSOLL_TEST_TLS_URL");
  const good = new Client(url, { caFile: env("PLIMSOLL_TEST_TLS_CA"), token: env("PLIMSOLL_TEST_TLS_TOKEN") });
  assert.equal((await good.runJavascript("console.log('tls')")).stdoutText, "tls\n");
  good.close();
  const untrusted = new Client(url, { token: env("PLIMSOLL_TEST_TLS_TOKEN") });
  await assert.rejects(untrusted.describe(), refused("capacity"));
  untrusted.close();
  const byName = new Client(url.replace("127.0.0.1", "localhost"), { caFile: env("PLIMSOLL_TEST_TLS_CA"), token: env("PLIMSOLL_TEST_TLS_TOKEN") });
  assert.equal((await byName.describe()).provider, "embedded");
  byName.close();
});

test("sessions: chain, info, double close, owner, closed session", noEmbedded ? { skip: noEmbedded } : {}, async () => {
  const client = new Client(embeddedUrl, { ownerKey: "a key of the operator's" });
  await assert.rejects(new Client(embeddedUrl).openSession({ owner: "alice" }), refused("request"));
  const session = await client.openSession({ owner: "alice", lifetimeMs: 600_000 });
  assert.ok(!inspect(session).includes(session.id), "the session ID is a bearer secret");
  const a = await session.runCell("javascript", "let n = 1");
  const b = await session.runCell("javascript", "n + 1");
  assert.equal(a.record.sequence, 1);
  assert.equal(a.record.previousSha256, "");
  assert.equal(b.record.sequence, 2);
  assert.equal(b.record.previousSha256, a.record.recordSha256);
  assert.equal(b.record.session, await digest.sessionDigest(session.id));
  const info = await session.info();
  assert.equal(info.calls, 2);
  assert.equal(info.lastRecordSha256, b.record.recordSha256);
  // embedded sessions have no /work: the daemon refuses the project payload (nothing ran).
  await assert.rejects(session.upload([{ path: "a.txt", content: "x" }]), (e: unknown) => e instanceof RefusedError && e.ran === false);
  const closed = await session.close();
  assert.deepEqual(closed, { ended: "closed", calls: 2, lastRecordSha256: b.record.recordSha256 });
  assert.deepEqual(await session.close(), closed);
  await assert.rejects(session.runCell("javascript", "1"), refused("request"));
  client.close();
});

test("an abort after sending is deadline_exceeded and may have run", noEmbedded ? { skip: noEmbedded } : {}, async () => {
  const client = new Client(embeddedUrl);
  await assert.rejects(client.runJavascript("for(;;){}", { timeoutMs: 3000, signal: AbortSignal.timeout(100) }), (e: unknown) => {
    assert.ok(e instanceof PlimsollError && !(e instanceof DataLossError));
    assert.equal(e.code, "deadline_exceeded");
    assert.equal(e.ran, "unknown");
    return true;
  });
  const before = new AbortController();
  before.abort();
  await assert.rejects(client.runJavascript("1", { signal: before.signal }), refused("request"));
  client.close();
});

test("the bench program prints one JSON line", noEmbedded ? { skip: noEmbedded } : {}, async () => {
  const bench = env("PLIMSOLL_TS_BENCH");
  assert.ok(bench, "PLIMSOLL_TS_BENCH names the bench program");
  const { stdout } = await promisify(execFile)(process.execPath, [bench, "--url", embeddedUrl, "--runs", "30"], { timeout: 60_000 });
  const lines = stdout.trim().split("\n");
  assert.equal(lines.length, 1);
  const row = JSON.parse(lines[0]!);
  assert.equal(row.client, "typescript");
  assert.equal(row.runs, 30);
  for (const k of ["client_run_p50_ms", "raw_run_p50_ms", "overhead_p50_ms", "cell_p50_ms"]) assert.equal(typeof row[k], "number", k);
});
