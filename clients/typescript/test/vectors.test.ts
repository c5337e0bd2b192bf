// Every digest of testdata/records/vectors.json recomputed by this client's own implementation
// (docs/run-records.md), CheckExchange on every exchange, and every chain followed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { checkExchange, digest, type ChainState } from "@plimsoll/client";
import { env, readJson, repo } from "./env.js";

const file = env("PLIMSOLL_TEST_VECTORS") || `${repo}/testdata/records/vectors.json`;
const vectors = readJson(file);
const byName = new Map<string, any>(vectors.vectors.map((v: any) => [v.name, v]));

test("the vectors file is the expected format", () => {
  assert.equal(vectors.format, "plimsoll.record-vectors.v1");
  assert.ok(vectors.vectors.length >= 20);
});

for (const v of vectors.vectors) {
  test(`vector ${v.name}`, async () => {
    let checked = 0;
    if (v.encoding) {
      const e = new digest.Encoder(v.encoding.domain);
      for (const f of v.encoding.fields) {
        if (f.type === "integer" || f.type === "count") e.fieldInt(f.name, f.value);
        else if (f.type === "boolean") e.fieldBool(f.name, f.value);
        else if (f.type === "bytes") e.fieldWireBytes(f.name, f.value);
        else if (f.type === "string") e.fieldString(f.name, f.value);
        else if (f.type === "float") e.fieldFloat(f.name, digest.wireFloat(f.value));
        else assert.fail(`unknown field type ${f.type}`);
      }
      assert.equal(digest.hex(e.encoded()), v.encoding_hex);
      assert.equal(await e.digest(), v.encoding_sha256);
      checked++;
    }
    if (v.request) {
      assert.equal(await digest.requestDigest(v.request), v.request_sha256);
      checked++;
    }
    if (v.result) {
      assert.equal(await digest.resultDigest(v.result), v.result_sha256);
      assert.equal(await digest.recordDigest(v.result.record), v.record_sha256);
      assert.equal(v.result.record.record_sha256, v.record_sha256);
      checked += 2;
    }
    if (v.request && v.result && !v.result.record.session) {
      const r = await checkExchange(v.request, v.result);
      assert.equal(r.record.recordSha256, v.record_sha256);
      assert.equal(v.result.record.request_sha256, v.request_sha256);
      checked++;
    }
    if (v.limits) {
      assert.equal(await digest.policyDigest(v.limits), v.policy_sha256);
      checked++;
    }
    if (v.session_id) {
      assert.equal(await digest.sessionDigest(v.session_id), v.session_sha256);
      checked++;
    }
    assert.ok(checked > 0, `vector ${v.name} has nothing this test knows how to check`);
  });
}

for (const chain of vectors.chains) {
  test(`chain ${chain.name}`, async () => {
    const state: ChainState = { session: await digest.sessionDigest(chain.session_id), sequence: 0, previous: "" };
    for (const name of chain.vectors) {
      const v = byName.get(name);
      assert.ok(v, `chain names a missing vector ${name}`);
      const r = await checkExchange(v.request, v.result, state);
      assert.equal(r.record.sequence, state.sequence);
      assert.equal(state.previous, v.record_sha256);
    }
    assert.equal(state.sequence, chain.vectors.length);
    // Out of order is refused: the second call alone does not continue an empty chain.
    const fresh: ChainState = { session: state.session, sequence: 0, previous: "" };
    const second = byName.get(chain.vectors[1]);
    await assert.rejects(checkExchange(second.request, second.result, fresh), { name: "DataLossError" });
    assert.equal(fresh.sequence, 0, "a failed check must not advance the chain");
  });
}

test("one changed byte of stdout fails the exchange", async () => {
  const v = byName.get("javascript-minimal");
  const answer = structuredClone(v.result);
  answer.stdout = typeof answer.stdout === "string" ? answer.stdout + "x" : "x";
  await assert.rejects(checkExchange(v.request, answer), /result_sha256/);
});

test("NaN is normalised and -0.0 keeps its sign", () => {
  const a = new digest.Encoder("d");
  a.fieldFloat("f", NaN);
  const b = new digest.Encoder("d");
  b.fieldFloat("f", -NaN);
  assert.equal(digest.hex(a.encoded()), digest.hex(b.encoded()));
  assert.ok(digest.hex(a.encoded()).endsWith("7ff8000000000000"));
  const z = new digest.Encoder("d");
  z.fieldFloat("f", -0);
  assert.ok(digest.hex(z.encoded()).endsWith("8000000000000000"));
});

test("the broker's call trace rows are read and covered (row 16)", async () => {
  const v = byName.get("grant-advice-floats");
  const r = await checkExchange(v.request, v.result);
  assert.deepEqual(r.broker, {
    profile: "crm-read", calls: 12, denied: 1, routesDropped: 2,
    routes: [
      { method: "GET", route: "/v1/items/*", status: 200, allowed: true, reason: "", count: 10 },
      { method: "GET", route: "/v1/items/*", status: 404, allowed: true, reason: "", count: 1 },
      { method: "OTHER", route: "", status: 0, allowed: false, reason: "not_allowed", count: 1 },
    ],
  });
  const unused = byName.get("grant-unused");
  const u = await checkExchange(unused.request, unused.result);
  assert.deepEqual(u.broker, { profile: "", calls: 0, denied: 0, routes: [], routesDropped: 0 });
  for (const [path, value] of [[["routes", 0, "count"], 11], [["routes", 1, "status"], 200],
    [["routes", 2, "reason"], "bad_path"], [["routes", 2, "allowed"], true], [["routes_dropped"], 0]] as const) {
    const answer = structuredClone(v.result);
    let node = answer.broker;
    for (const key of path.slice(0, -1)) node = node[key];
    node[path[path.length - 1]!] = value;
    await assert.rejects(checkExchange(v.request, answer), /result_sha256/, JSON.stringify(path));
  }
});

test("absent broker rows and count are hashed as [] and 0", async () => {
  const v = byName.get("grant-unused");
  const bare = structuredClone(v.result);
  delete bare.broker.routes;
  delete bare.broker.routes_dropped;
  assert.equal(await digest.resultDigest(bare), v.result_sha256);
  const r = await checkExchange(v.request, bare);
  assert.deepEqual(r.broker?.routes, []);
  assert.equal(r.broker?.routesDropped, 0);
  bare.broker.routes_dropped = 1;
  assert.notEqual(await digest.resultDigest(bare), v.result_sha256);
});

test("malformed broker rows are not read", async () => {
  const v = byName.get("grant-advice-floats");
  const row = v.result.broker.routes[0];
  const rows = Array.from({ length: 257 }, (_, n) => ({ ...row, status: 100 + n }));
  const { count: _count, ...noCount } = row;
  for (const change of [{ routes: rows }, { routes: row }, { routes: ["GET"] }, { routes: [noCount] },
    { routes: [{ ...row, status: "200" }] }, { routes: [{ ...row, allowed: "true" }] },
    { routes: [{ ...row, method: null }] }, { routes: [{ ...row, count: 1.5 }] },
    { routes_dropped: "2" }, { routes_dropped: true }]) {
    const answer = structuredClone(v.result);
    Object.assign(answer.broker, change);
    await assert.rejects(checkExchange(v.request, answer), /cannot be read: answer\.broker/, JSON.stringify(change).slice(0, 60));
  }
});
