// Rich outputs (SPEC §7), offline: a result's `displays` and `displays_truncated` in the result
// digest (docs/run-records.md §3.2, rows 18-19: last, and only when there is something to say)
// and read strictly (api/openapi.yaml RunResult). The answers are built here with their records
// sealed by this client's own digests, then checked by checkExchange, the path every run takes.
import { test } from "node:test";
import assert from "node:assert/strict";
import { checkExchange, DataLossError, digest, type Display } from "@plimsoll/client";

type Obj = Record<string, unknown>;

const ENV = `sha256:${"2".repeat(64)}`;
const LIMITS: Obj = Object.fromEntries(digest.POLICY_FIELDS.map((name, n) => [name, 1000 + n]));
const REQUEST: Obj = { protocol: 1, image: "data", python: { code: "import pandas as pd\ndisplay(pd.DataFrame({'a': [1]}))\n" } };

// The start of a 2x1 PNG (signature, IHDR): not UTF-8, so it travels as base64.
const PNG = new Uint8Array([
  0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
  0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x01, 0x08, 0x02, 0x00, 0x00, 0x00,
]);
const HTML = "<table><tr><th>a</th></tr><tr><td>1</td></tr></table>";
const PLAIN = "   a\n0  1";
const DISPLAYS: Obj[] = [
  { mime: "image/png", data: { base64: digest.base64Encode(PNG) }, width: 2, height: 1 },
  { mime: "text/html", data: HTML },
  { mime: "text/plain", data: PLAIN },
];

function bare(extra: Obj = {}): Obj {
  return {
    provider: "linux", isolation: "container", environment: ENV, kind: "python", exit_code: 0, timed_out: false,
    stdout: "", stderr: "", stdout_truncated: false, stderr_truncated: false, duration_ms: 812,
    ...extra,
  };
}

/** A whole answer: the result fields and a record sealed over them and REQUEST. */
async function sealed(result: Obj): Promise<Obj> {
  const record: Obj = {
    version: 1,
    request_sha256: await digest.requestDigest(REQUEST),
    result_sha256: await digest.resultDigest(result),
    provider: result.provider, isolation: result.isolation, environment: result.environment,
    policy: await digest.policyDigest(LIMITS),
    started_unix_ms: 1764400001600, ended_unix_ms: 1764400002415,
  };
  record.record_sha256 = await digest.recordDigest(record);
  return { ...result, record };
}

test("displays digest: absent, null and [] hash alike; truncated false or null as absent", async () => {
  const none = await digest.resultDigest(bare());
  assert.equal(await digest.resultDigest(bare({ displays: [] })), none);
  assert.equal(await digest.resultDigest(bare({ displays: null })), none);
  assert.equal(await digest.resultDigest(bare({ displays_truncated: false })), none);
  assert.equal(await digest.resultDigest(bare({ displays_truncated: null })), none);
  assert.equal(await digest.resultDigest(bare({ displays: [], displays_truncated: false })), none);
  assert.equal(digest.hex(digest.resultEncoding(bare({ displays: [], displays_truncated: false })).encoded()),
    digest.hex(digest.resultEncoding(bare()).encoded()));
});

test("displays digest: each display, each of its fields and the truncation flag change it", async () => {
  const one: Obj = { mime: "text/plain", data: "x" };
  const base = await digest.resultDigest(bare({ displays: [one] }));
  const seen = new Set([await digest.resultDigest(bare()), base]);
  const variants: Obj[] = [
    bare({ displays_truncated: true }),
    bare({ displays: [one], displays_truncated: true }),
    bare({ displays: [{ ...one, mime: "text/html" }] }),
    bare({ displays: [{ ...one, data: "y" }] }),
    bare({ displays: [{ ...one, data: "" }] }),
    bare({ displays: [{ ...one, width: 1 }] }),
    bare({ displays: [{ ...one, height: 1 }] }),
    bare({ displays: [one, one] }),
  ];
  for (const v of variants) {
    const d = await digest.resultDigest(v);
    assert.ok(!seen.has(d), JSON.stringify(v));
    seen.add(d);
  }
  // Order counts: width and height are not interchangeable, nor are two displays.
  const a: Obj = { mime: "image/png", data: "p", width: 2, height: 1 };
  const b: Obj = { mime: "image/png", data: "p", width: 1, height: 2 };
  assert.notEqual(await digest.resultDigest(bare({ displays: [a] })), await digest.resultDigest(bare({ displays: [b] })));
  assert.notEqual(await digest.resultDigest(bare({ displays: [a, b] })), await digest.resultDigest(bare({ displays: [b, a] })));
});

test("displays digest: a size absent is 0; data hashes as its bytes, text or base64 alike", async () => {
  const plain: Obj = { mime: "text/plain", data: PLAIN };
  assert.equal(await digest.resultDigest(bare({ displays: [plain] })),
    await digest.resultDigest(bare({ displays: [{ ...plain, width: 0, height: 0 }] })));
  assert.equal(await digest.resultDigest(bare({ displays: [{ ...plain, width: 5 }] })),
    await digest.resultDigest(bare({ displays: [{ ...plain, width: 5, height: 0 }] })));
  const asBase64: Obj = { ...plain, data: { base64: digest.base64Encode(new TextEncoder().encode(PLAIN)) } };
  assert.equal(await digest.resultDigest(bare({ displays: [asBase64] })), await digest.resultDigest(bare({ displays: [plain] })));
});

test("displays digest: rows 18 and 19 come after advice, in the documented order", async () => {
  const advice = [{ pattern: "p", route: "r", message: "m", extra_calls: 1, added_latency_ms: 2.5, bytes: 3 }];
  const result = bare({ advice, displays: DISPLAYS, displays_truncated: true });
  const e = new digest.Encoder(digest.RESULT_DOMAIN);
  e.fieldString("provider", "linux");
  e.fieldString("isolation", "container");
  e.fieldString("environment", ENV);
  e.fieldString("kind", "python");
  e.fieldInt("exit_code", 0);
  e.fieldBool("timed_out", false);
  e.fieldWireBytes("stdout", "");
  e.fieldWireBytes("stderr", "");
  e.fieldBool("stdout_truncated", false);
  e.fieldBool("stderr_truncated", false);
  e.fieldInt("duration_ms", 812);
  e.fieldInt("steps", 0);
  e.fieldInt("artifacts", 0);
  e.fieldInt("advice", 1);
  e.fieldString("advice.pattern", "p");
  e.fieldString("advice.route", "r");
  e.fieldString("advice.message", "m");
  e.fieldInt("advice.extra_calls", 1);
  e.fieldFloat("advice.added_latency_ms", 2.5);
  e.fieldInt("advice.bytes", 3);
  e.fieldInt("displays", 3);
  e.fieldString("display.mime", "image/png");
  e.fieldBytes("display.data", PNG);
  e.fieldInt("display.width", 2);
  e.fieldInt("display.height", 1);
  e.fieldString("display.mime", "text/html");
  e.fieldWireBytes("display.data", HTML);
  e.fieldInt("display.width", 0);
  e.fieldInt("display.height", 0);
  e.fieldString("display.mime", "text/plain");
  e.fieldWireBytes("display.data", PLAIN);
  e.fieldInt("display.width", 0);
  e.fieldInt("display.height", 0);
  e.fieldBool("displays_truncated", true);
  assert.equal(digest.hex(digest.resultEncoding(result).encoded()), digest.hex(e.encoded()));
  assert.equal(await digest.resultDigest(result), await e.digest());
  // Truncated alone (every display dropped): the count is left out, the flag is not.
  const onlyFlag = digest.resultEncoding(bare());
  onlyFlag.fieldBool("displays_truncated", true);
  assert.equal(digest.hex(digest.resultEncoding(bare({ displays_truncated: true })).encoded()), digest.hex(onlyFlag.encoded()));
});

test("a result with displays: read, typed and checked; base64 PNG bytes come back as they were", async () => {
  const answer = await sealed(bare({ displays: DISPLAYS, displays_truncated: true }));
  const r = await checkExchange(REQUEST, answer);
  assert.equal(r.displays.length, 3);
  assert.equal(r.displaysTruncated, true);
  const [png, html, plain] = r.displays as [Display, Display, Display];
  assert.equal(png.mime, "image/png");
  assert.ok(png.data instanceof Uint8Array);
  assert.deepEqual(png.data, PNG);
  assert.equal(png.width, 2);
  assert.equal(png.height, 1);
  assert.deepEqual({ ...html, data: undefined }, { mime: "text/html", data: undefined, dataText: HTML });
  assert.ok(!("width" in html) && !("height" in html), "a size absent stays absent");
  assert.equal(plain.dataText, PLAIN);
  assert.deepEqual(plain.data, new TextEncoder().encode(PLAIN));
  assert.equal(r.record.resultSha256, await digest.resultDigest(answer));
});

test("a result without displays: [] and not truncated, whichever way the daemon says so", async () => {
  for (const extra of [{}, { displays: [] }, { displays: null }, { displays_truncated: false }, { displays_truncated: null }]) {
    const r = await checkExchange(REQUEST, await sealed(bare(extra)));
    assert.deepEqual(r.displays, [], JSON.stringify(extra));
    assert.equal(r.displaysTruncated, false, JSON.stringify(extra));
  }
  const dropped = await checkExchange(REQUEST, await sealed(bare({ displays_truncated: true })));
  assert.deepEqual(dropped.displays, []);
  assert.equal(dropped.displaysTruncated, true);
});

test("a changed, dropped or added display fails the record check", async () => {
  const answer = await sealed(bare({ displays: DISPLAYS, displays_truncated: true }));
  const tampered: [string, (a: Obj) => void][] = [
    ["a PNG byte changed", (a) => {
      const bytes = PNG.slice();
      bytes[20] = 9;
      (a.displays as Obj[])[0]!.data = { base64: digest.base64Encode(bytes) };
    }],
    ["the width changed", (a) => void ((a.displays as Obj[])[0]!.width = 3)],
    ["the height left out", (a) => void delete (a.displays as Obj[])[0]!.height],
    ["the mime changed", (a) => void ((a.displays as Obj[])[1]!.mime = "text/plain")],
    ["a display dropped", (a) => void (a.displays as Obj[]).pop()],
    ["a display added", (a) => void (a.displays as Obj[]).push({ mime: "text/plain", data: "more" })],
    ["the displays reordered", (a) => void (a.displays as Obj[]).reverse()],
    ["every display dropped", (a) => void delete a.displays],
    ["the truncation flag dropped", (a) => void delete a.displays_truncated],
  ];
  for (const [why, change] of tampered) {
    const copy = structuredClone(answer);
    change(copy);
    await assert.rejects(checkExchange(REQUEST, copy), (e: unknown) => {
      assert.ok(e instanceof DataLossError, why);
      assert.match(e.message, /result_sha256/, why);
      return true;
    });
  }
  // Added to an answer that had none: the flag, then a display.
  const plain = await sealed(bare());
  await assert.rejects(checkExchange(REQUEST, { ...plain, displays_truncated: true }), /result_sha256/);
  await assert.rejects(checkExchange(REQUEST, { ...plain, displays: [{ mime: "text/plain", data: "x" }] }), /result_sha256/);
});

test("malformed displays are unreadable (data_loss), never a result", async () => {
  const png = DISPLAYS[0]!;
  const bad: [string, Obj][] = [
    ["displays not a list", { displays: { mime: "text/plain", data: "x" } }],
    ["displays a string", { displays: "image/png" }],
    ["an entry not an object", { displays: ["image/png"] }],
    ["an entry a list", { displays: [["image/png", "x"]] }],
    ["an entry null", { displays: [null] }],
    ["mime missing", { displays: [{ data: "x" }] }],
    ["mime empty", { displays: [{ mime: "", data: "x" }] }],
    ["mime not a string", { displays: [{ mime: 1, data: "x" }] }],
    ["data missing", { displays: [{ mime: "text/plain" }] }],
    ["data null", { displays: [{ mime: "text/plain", data: null }] }],
    ["data a number", { displays: [{ mime: "text/plain", data: 7 }] }],
    ["data base64 not canonical", { displays: [{ mime: "image/png", data: { base64: "iVBORw0KGgp=" } }] }],
    ["data base64 outside the alphabet", { displays: [{ mime: "image/png", data: { base64: "iVBO-w0K" } }] }],
    ["data with a key beside base64", { displays: [{ mime: "image/png", data: { base64: "AA==", mime: "x" } }] }],
    ["width 0", { displays: [{ ...png, width: 0 }] }],
    ["width negative", { displays: [{ ...png, width: -2 }] }],
    ["width fractional", { displays: [{ ...png, width: 1.5 }] }],
    ["width a string", { displays: [{ ...png, width: "2" }] }],
    ["width null", { displays: [{ ...png, width: null }] }],
    ["height 0", { displays: [{ ...png, height: 0 }] }],
    ["height beyond an exact integer", { displays: [{ ...png, height: 2 ** 53 }] }],
    ["an unknown key", { displays: [{ ...png, alt: "a figure" }] }],
    ["displays_truncated a string", { displays_truncated: "true" }],
    ["displays_truncated a number", { displays_truncated: 1 }],
  ];
  for (const [why, extra] of bad) {
    // The record is sealed over the malformed answer where it can be hashed at all: what fails is
    // the reading, not the record check.
    let answer: Obj;
    try {
      answer = await sealed(bare(extra));
    } catch {
      answer = { ...bare(extra), record: (await sealed(bare())).record };
    }
    await assert.rejects(checkExchange(REQUEST, answer), (e: unknown) => {
      assert.ok(e instanceof DataLossError, why);
      assert.match(e.message, /cannot be read/, why);
      return true;
    });
  }
});
