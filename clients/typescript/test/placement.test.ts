// Placement (SPEC §12) over the harness's three daemons: embedded, linux (or a second embedded),
// disabled. The first is stopped with SIGTERM mid-test; calls must move on to the next daemon
// (an unreachable daemon is a refusal marked capacity), and a session stays where it was opened.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client, PlimsollError, Pool, RefusedError } from "@plimsoll/client";
import { readFileSync } from "node:fs";
import { env, skipped } from "./env.js";

const urls = env("PLIMSOLL_TEST_PLACEMENT_URLS").split(",").filter(Boolean);
const stopPid = Number(env("PLIMSOLL_TEST_PLACEMENT_STOP_PID"));
const skip = urls.length === 3 && stopPid > 0 ? undefined : skipped("placement", "PLIMSOLL_TEST_PLACEMENT_URLS / _STOP_PID not set");
const [first, second, disabled] = urls as [string, string, string];

test("placement across three daemons, the first stopped mid-test", skip ? { skip } : {}, async (t) => {
  const secondProvider = (await new Client(second).describe()).provider;
  const pool = new Pool([disabled, first, second], { describeTtlMs: 60_000 });
  try {
    await t.test("the disabled daemon is skipped by its describe; the first that can take it runs it", async () => {
      const r = await pool.runJavascript("console.log('placed')");
      assert.equal(r.stdoutText, "placed\n");
      assert.equal(r.provider, "embedded");
    });

    await t.test("a floor no daemon before it meets goes further, or is refused isolation", async () => {
      if (secondProvider === "linux") {
        const r = await pool.runJavascript("console.log(1)", { minimumIsolation: "container" });
        assert.equal(r.isolation, "container");
      } else {
        await assert.rejects(pool.runJavascript("console.log(1)", { minimumIsolation: "container" }), (e: unknown) => {
          assert.ok(e instanceof RefusedError);
          assert.equal(e.notDispatched, "isolation");
          return true;
        });
      }
    });

    await t.test("the payload's language filters: python goes to a daemon that has it", async () => {
      if (secondProvider === "linux") {
        const r = await pool.runPython("print(6*7)");
        assert.equal(r.stdoutText, "42\n");
        assert.equal(r.provider, "linux");
      } else {
        await assert.rejects(pool.runPython("print(1)"), (e: unknown) => e instanceof RefusedError && e.notDispatched === "unsupported");
      }
    });

    await t.test("a refusal that is not retryable is returned at once", async () => {
      await assert.rejects(pool.runJavascript("console.log(1)", { grantProfile: "crm-read" }), (e: unknown) => {
        assert.ok(e instanceof RefusedError);
        assert.equal(e.notDispatched, "permission");
        assert.equal(e.isRetryable, false);
        return true;
      });
    });

    await t.test("a non-zero exit is a result, not a reason to move", async () => {
      const r = await pool.runJavascript("throw new Error('x')");
      assert.equal(r.exitCode, 1);
      assert.equal(r.provider, "embedded");
    });

    const session = await pool.openSession();
    await session.runCell("javascript", "let kept = 5");

    // Stop the first daemon (its describe stays cached for 60 s: the pool still picks it first).
    process.kill(stopPid, "SIGTERM");
    const probe = new Client(first, { connectTimeoutMs: 1000 });
    for (let i = 0; i < 100; i++) {
      try {
        await probe.describe();
      } catch (e) {
        if (e instanceof RefusedError && e.notDispatched === "capacity") break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    probe.close();
    // The listener closes first; wait for the process itself to end (the harness reaps it), so
    // that its kept connections are closed too: a request written on a connection the daemon
    // then drops unanswered may have run, and is data_loss, never moved elsewhere.
    for (let i = 0; i < 100; i++) {
      let state = "";
      try {
        state = readFileSync(`/proc/${stopPid}/stat`, "utf8").split(") ")[1]?.[0] ?? "";
      } catch {
        break;
      }
      if (state === "Z" || state === "X") break;
      await new Promise((r) => setTimeout(r, 100));
    }
    await new Promise((r) => setTimeout(r, 200));

    await t.test("with the first daemon stopped, the call moves to the next one", async () => {
      const r = await pool.runJavascript("console.log('moved')");
      assert.equal(r.stdoutText, "moved\n");
      assert.equal(r.provider, secondProvider);
      const again = await pool.runJavascript("console.log('again')");
      assert.equal(again.stdoutText, "again\n");
    });

    await t.test("a session stays on its daemon: its calls fail, they never move", async () => {
      await assert.rejects(session.runCell("javascript", "kept"), (e: unknown) => {
        assert.ok(e instanceof PlimsollError);
        assert.ok(e.notDispatched === "capacity" || e.ran === "unknown", String(e));
        return true;
      });
    });

    await t.test("a new session opens on a daemon that is up", async () => {
      const s = await pool.openSession();
      assert.equal((await s.runCell("javascript", "2+2")).valueText, "4");
      await s.close();
    });

    await t.test("all daemons unfit: refused with the reason", async () => {
      const only = new Pool([disabled]);
      await assert.rejects(only.runJavascript("1"), (e: unknown) => e instanceof RefusedError && e.notDispatched === "unsupported");
      only.close();
    });
  } finally {
    pool.close();
  }
});
