// Several images per daemon (SPEC §7), offline: the request field `image` in the request digest
// (docs/run-records.md §3.1, row 4a) and in the JSON sent, the session's `image`, describe's
// `images` read strictly, and placement by image. The daemons here are fakes on loopback that
// answer what a plimsolld would (echo, record digests computed over the request received).
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Client, DataLossError, Pool, RefusedError, digest, type ImageInfo } from "@plimsoll/client";

type Obj = Record<string, unknown>;

const LIMITS: Obj = Object.fromEntries(digest.POLICY_FIELDS.map((name, n) => [name, 1000 + n]));
const ENV_BASE = `sha256:${"1".repeat(64)}`;
const ENV_DATA = `sha256:${"2".repeat(64)}`;
const IMAGES: Obj[] = [
  { name: "base", default: true, environment: ENV_BASE, tier: "process", confirmed: true, languages: ["javascript", "python"], packages: [] },
  {
    name: "data", default: false, environment: ENV_DATA, tier: "process", confirmed: false, languages: ["javascript", "python", "node"],
    packages: [
      { name: "python3-numpy", version: "1:1.26.4+ds-11", source: "debian" },
      { name: "numpy", version: "1.26.4", source: "python" },
      { name: "lodash", version: "4.17.21", source: "npm" },
    ],
  },
];

function describeBody(provider: string, images: unknown): Obj {
  const body: Obj = {
    protocol: 1,
    provider,
    tier: "process",
    claimed_tier: "process",
    environment: ENV_BASE,
    capabilities: { payloads: ["javascript", "python", "cell"], languages: ["javascript", "python"], projects: false, sessions: true, grants: false },
    limits: LIMITS,
    sessions: { enabled: true },
    details: [],
  };
  if (images !== undefined) body.images = images;
  return body;
}

interface Fake {
  url: string;
  /** The bodies received, by "METHOD path". */
  received: { call: string; body: Obj | undefined }[];
  /** What describe answers (whole body), and the image a session open answers with. */
  describe: Obj;
  sessionImage: (asked: string | undefined) => string | undefined;
  close(): Promise<void>;
}

const SESSION_ID = "0123456789abcdef0123456789abcdef";

async function runAnswer(request: Obj, provider: string): Promise<Obj> {
  const environment = request.image === "data" ? ENV_DATA : ENV_BASE;
  const kind = ["javascript", "python", "project", "cell"].find((k) => request[k] != null)!;
  const result: Obj = {
    provider, isolation: "process", environment, kind, exit_code: 0, timed_out: false,
    stdout: "ok\n", stderr: "", stdout_truncated: false, stderr_truncated: false, duration_ms: 3,
  };
  const record: Obj = {
    version: 1,
    request_sha256: await digest.requestDigest(request),
    result_sha256: await digest.resultDigest(result),
    provider, isolation: "process", environment,
    policy: await digest.policyDigest(LIMITS),
    started_unix_ms: 1764400000000, ended_unix_ms: 1764400000003,
  };
  record.record_sha256 = await digest.recordDigest(record);
  return { ...result, record };
}

async function fakeDaemon(provider = "embedded", images: unknown = IMAGES): Promise<Fake> {
  const fake: Fake = {
    url: "",
    received: [],
    describe: describeBody(provider, images),
    sessionImage: (asked) => asked,
    close: async () => {},
  };
  const identity = (image: string | undefined): Obj => ({
    session_id: SESSION_ID, provider, isolation: "process", environment: image === "data" ? ENV_DATA : ENV_BASE,
    ...(image !== undefined ? { image } : {}),
    created_unix_ms: 1764400000000, expires_unix_ms: 1764401800000, idle_timeout_ms: 300000,
  });
  let opened: string | undefined;
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    const body = text ? (JSON.parse(text) as Obj) : undefined;
    const call = `${req.method} ${req.url}`;
    fake.received.push({ call, body });
    let answer: Obj;
    let status = 200;
    if (call === "GET /v1/describe") answer = fake.describe;
    else if (call === "POST /v1/runs") answer = await runAnswer(body!, provider);
    else if (call === "POST /v1/sessions") {
      opened = fake.sessionImage(body!.image as string | undefined);
      answer = { ...identity(opened), limits: LIMITS };
      status = 201;
    } else if (call === `GET /v1/sessions/${SESSION_ID}`) {
      answer = {
        ...identity(opened), calls: 0, busy: false, queued: false, last_used_unix_ms: 1764400000000,
        disk_used_bytes: 0, disk_bytes: 0, interpreters: [], last_record_sha256: "",
      };
    } else if (call === `DELETE /v1/sessions/${SESSION_ID}`) answer = { ended: "closed", calls: 0, last_record_sha256: "" };
    else {
      status = 404;
      answer = { error: { code: "not_found", message: `no ${call}`, request_id: req.headers["plimsoll-request-id"] } };
    }
    const out = Buffer.from(JSON.stringify(answer));
    res.writeHead(status, {
      "Content-Type": "application/json",
      "Content-Length": String(out.length),
      "Plimsoll-Request-Id": String(req.headers["plimsoll-request-id"] ?? ""),
    });
    res.end(out);
  };
  const server = createServer((req, res) => {
    handle(req, res).catch((e) => {
      res.writeHead(500);
      res.end(String(e));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () => new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
  return fake;
}

const sent = (fake: Fake, call: string): Obj[] => fake.received.filter((r) => r.call === call).map((r) => r.body!);

test("image digest: absent, null and \"\" hash alike; a name is covered, after grant_profile", async () => {
  const base = { protocol: 1, grant_profile: "crm-read", python: { code: "print(1)" } };
  const none = await digest.requestDigest(base);
  assert.equal(await digest.requestDigest({ ...base, image: "" }), none);
  assert.equal(await digest.requestDigest({ ...base, image: null }), none);
  const named = await digest.requestDigest({ ...base, image: "data" });
  assert.notEqual(named, none);
  assert.notEqual(await digest.requestDigest({ ...base, image: "base" }), named);
  // The field order of §3.1: ..., grant_profile, image (only when named), payloads, ...
  const e = new digest.Encoder(digest.REQUEST_DOMAIN);
  e.fieldInt("protocol", 1);
  e.fieldString("minimum_isolation", "");
  e.fieldInt("timeout_ms", 0);
  e.fieldString("grant_profile", "crm-read");
  e.fieldString("image", "data");
  e.fieldInt("payloads", 1);
  e.fieldString("kind", "python");
  e.fieldWireBytes("python.code", "print(1)");
  assert.equal(digest.hex(digest.requestEncoding({ ...base, image: "data" }).encoded()), digest.hex(e.encoded()));
  assert.equal(named, await e.digest());
});

test("image in the request JSON: sent when non-empty, left out otherwise, and the record checks", async () => {
  const fake = await fakeDaemon();
  const client = new Client(fake.url);
  try {
    const r = await client.runPython("print(1)", { image: "data", environment: ENV_DATA });
    assert.equal(r.environment, ENV_DATA);
    await client.runPython("print(1)", { image: "" });
    await client.runJavascript("1");
    await client.run({ image: null, javascript: { code: "1" } });
    await client.run({ image: "base", javascript: { code: "1" } });
    const bodies = sent(fake, "POST /v1/runs");
    assert.equal(bodies.length, 5);
    assert.deepEqual(bodies[0], { protocol: 1, environment: ENV_DATA, image: "data", python: { code: "print(1)" } });
    for (const b of bodies.slice(1, 4)) assert.ok(!("image" in b), JSON.stringify(b));
    assert.equal(bodies[4]!.image, "base");
    // Only the type is checked here; whether a name is well formed or served is the daemon's.
    await assert.rejects(async () => client.run({ image: 7 as unknown as string, javascript: { code: "1" } }), (e: unknown) => {
      assert.ok(e instanceof RefusedError);
      assert.equal(e.notDispatched, "request");
      return true;
    });
    assert.equal(sent(fake, "POST /v1/runs").length, 5, "a refused request is not sent");
  } finally {
    client.close();
    await fake.close();
  }
});

test("session image: sent when non-empty, exposed by the session and info(), checked", async () => {
  const fake = await fakeDaemon();
  const client = new Client(fake.url);
  try {
    const session = await client.openSession({ image: "data" });
    assert.equal(session.image, "data");
    assert.equal(session.environment, ENV_DATA);
    assert.equal((await session.info()).image, "data");
    await session.close();
    const plain = await client.openSession({ image: "" });
    assert.equal(plain.image, undefined);
    assert.equal((await plain.info()).image, undefined);
    await plain.close();
    const opens = sent(fake, "POST /v1/sessions");
    assert.deepEqual(opens[0], { protocol: 1, image: "data" });
    assert.deepEqual(opens[1], { protocol: 1 });
    // A daemon that opens the session on another image than the one asked for is not believed.
    fake.sessionImage = () => "base";
    await assert.rejects(client.openSession({ image: "data" }), (e: unknown) => e instanceof DataLossError);
  } finally {
    client.close();
    await fake.close();
  }
});

test("describe images: typed, [] when absent, every field checked", async () => {
  const fake = await fakeDaemon();
  const client = new Client(fake.url);
  try {
    const d = await client.describe();
    const expected: ImageInfo[] = IMAGES as unknown as ImageInfo[];
    assert.deepEqual(d.images, expected);
    assert.equal(d.images[1]!.packages[2]!.source, "npm");
    fake.describe = describeBody("embedded", undefined);
    assert.deepEqual((await client.describe()).images, []);
    fake.describe = describeBody("embedded", null);
    assert.deepEqual((await client.describe()).images, []);
    fake.describe = describeBody("embedded", []);
    assert.deepEqual((await client.describe()).images, []);
    const one = IMAGES[1]!;
    const pkg = (one.packages as Obj[])[0]!;
    const bad: [string, unknown][] = [
      ["images not a list", { name: "x" }],
      ["an entry not an object", ["data"]],
      ["name missing", [{ ...one, name: undefined }]],
      ["default not a boolean", [{ ...one, default: "false" }]],
      ["environment not a string", [{ ...one, environment: null }]],
      ["tier not a tier", [{ ...one, tier: "strong" }]],
      ["confirmed missing", [{ ...one, confirmed: undefined }]],
      ["languages holding a non-string", [{ ...one, languages: ["python", 3] }]],
      ["languages missing", [{ ...one, languages: undefined }]],
      ["packages missing", [{ ...one, packages: undefined }]],
      ["a package not an object", [{ ...one, packages: ["numpy"] }]],
      ["a package without version", [{ ...one, packages: [{ ...pkg, version: undefined }] }]],
      ["a package of an unknown source", [{ ...one, packages: [{ ...pkg, source: "rpm" }] }]],
    ];
    for (const [why, images] of bad) {
      // JSON drops the undefined fields, as a daemon leaving them out would.
      fake.describe = JSON.parse(JSON.stringify(describeBody("embedded", images)));
      await assert.rejects(client.describe(), (e: unknown) => e instanceof DataLossError, why);
    }
  } finally {
    client.close();
    await fake.close();
  }
});

test("placement: a named image goes to a daemon that lists it, with that image's identity", async () => {
  const first = await fakeDaemon("first", [IMAGES[0]]);
  const second = await fakeDaemon("second");
  const unlisted = await fakeDaemon("unlisted", undefined);
  const pool = new Pool([first.url, second.url]);
  const loose = new Pool([unlisted.url, second.url]);
  try {
    assert.equal((await pool.runPython("print(1)")).provider, "first");
    assert.equal((await pool.runPython("print(1)", { image: "data" })).provider, "second");
    // The environment required is the named image's, not the default's.
    assert.equal((await pool.runPython("print(1)", { image: "data", environment: ENV_DATA })).provider, "second");
    await assert.rejects(pool.runPython("print(1)", { image: "base", environment: ENV_DATA }), (e: unknown) => {
      assert.ok(e instanceof RefusedError);
      assert.equal(e.notDispatched, "environment");
      return true;
    });
    await assert.rejects(pool.runPython("print(1)", { image: "gpu" }), (e: unknown) => {
      assert.ok(e instanceof RefusedError);
      assert.equal(e.notDispatched, "unsupported");
      return true;
    });
    const session = await pool.openSession({ image: "data" });
    assert.equal(session.provider, "second");
    assert.equal(session.image, "data");
    await session.close();
    // A daemon that does not list its images is not passed over (it refuses a name itself).
    assert.equal((await loose.runPython("print(1)", { image: "data" })).provider, "unlisted");
    assert.equal(sent(unlisted, "POST /v1/runs")[0]!.image, "data");
  } finally {
    pool.close();
    loose.close();
    await Promise.all([first.close(), second.close(), unlisted.close()]);
  }
});
