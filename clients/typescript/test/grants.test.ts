// Grants through a real daemon (SPEC §8): tests/clients/harness.py starts an embedded plimsolld
// with a broker whose profile `inventory` fronts a loopback upstream; the harness checks the
// upstream received the credential, and these tests that the guest and the client never did.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client, RefusedError } from "@plimsoll/client";
import { env, skipped } from "./env.js";

const grantsUrl = env("PLIMSOLL_TEST_GRANTS_URL");
const token = env("PLIMSOLL_TEST_GRANT_TOKEN");
const noGrants = grantsUrl && token ? undefined : skipped("grant tests", "PLIMSOLL_TEST_GRANTS_URL or PLIMSOLL_TEST_GRANT_TOKEN is not set");
const options = noGrants ? { skip: noGrants } : {};

test("a granted run carries its trace and never the credential", options, async () => {
  const client = new Client(grantsUrl);
  try {
    const described = await client.describe();
    assert.deepEqual(described.grantProfiles, ["inventory"]);
    const result = await client.runJavascript(
      "const one = host.get('/items/2'); let refused = 0; try { host.get('/admin') } catch (e) { refused = e.code }" +
        " console.log(one.status, JSON.parse(one.body).id, refused)",
      { grantProfile: "inventory" },
    );
    assert.equal(result.exitCode, 0, result.stderrText);
    assert.equal(result.stdoutText, "200 2 refused\n");
    assert.equal(result.broker?.profile, "inventory");
    assert.equal(result.broker?.calls, 2);
    assert.equal(result.broker?.denied, 1);
    assert.ok(!(result.stdoutText + result.stderrText).includes(token));
    const fanOut = await client.runJavascript("for (const i of ['1', '2', '3', '4']) host.get('/items/' + i)", { grantProfile: "inventory" });
    assert.deepEqual(fanOut.advice.map((a) => a.pattern), ["fan_out"]);
  } finally {
    client.close();
  }
});

test("a session cell is served its grant for that cell only", options, async () => {
  const client = new Client(grantsUrl);
  try {
    const session = await client.openSession();
    const served = await session.runCell("javascript", "var kept = host; kept.get('/items/3').status", { grantProfile: "inventory" });
    const after = await session.runCell("javascript", "try { kept.get('/items/3'); 'reached' } catch (e) { e.code }");
    await session.close();
    assert.equal(served.valueText, "200");
    assert.equal(served.broker?.calls, 1);
    assert.equal(after.valueText, "'no_grant'");
    assert.equal(after.broker, undefined);
  } finally {
    client.close();
  }
});

test("an unknown profile is refused and nothing ran", options, async () => {
  const client = new Client(grantsUrl);
  try {
    await assert.rejects(client.runJavascript("host.get('/items/1')", { grantProfile: "no-such-profile" }), (e: unknown) =>
      e instanceof RefusedError && e.notDispatched === "permission" && e.ran === false);
  } finally {
    client.close();
  }
});
