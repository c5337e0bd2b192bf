// The scenario runner: executes testdata/clients/scenarios.json (format in
// tests/clients/README.md) against the daemons and proxy the harness started. An unknown op,
// target or expect key fails its scenario with a message naming it.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  Client, DataLossError, PlimsollError, RefusedError, type ClientOptions, type Result, type Session,
  digest,
} from "@plimsoll/client";
import { env, linuxSkip, readJson, repo } from "./env.js";

const file = env("PLIMSOLL_TEST_SCENARIOS") || `${repo}/testdata/clients/scenarios.json`;
const doc = readJson(file);

function targetUrl(target: string, scenario: string): string {
  const need = (name: string) => {
    const v = env(name);
    if (!v) throw new Error(`target ${target} needs ${name}, which is not set`);
    return v;
  };
  if (target === "embedded") return need("PLIMSOLL_TEST_EMBEDDED_URL");
  if (target === "embedded_unix") return need("PLIMSOLL_TEST_EMBEDDED_UNIX");
  if (target === "linux") return need("PLIMSOLL_TEST_LINUX_URL");
  if (target === "tls") return need("PLIMSOLL_TEST_TLS_URL");
  if (target === "unreachable") return need("PLIMSOLL_TEST_UNREACHABLE_URL");
  if (target === "non_loopback") {
    const url = doc.constants?.non_loopback_url;
    if (typeof url !== "string") throw new Error("target non_loopback needs constants.non_loopback_url");
    return url;
  }
  const m = /^(adversary|adversary_linux):([a-z_]+)$/.exec(target);
  if (m) {
    const base = need(m[1] === "adversary" ? "PLIMSOLL_TEST_ADVERSARY_URL" : "PLIMSOLL_TEST_ADVERSARY_LINUX_URL");
    return `${base}/${m[2]}/${scenario}`;
  }
  throw new Error(`unknown target ${JSON.stringify(target)}`);
}

function clientOptions(target: string, spec: Record<string, unknown> | undefined): ClientOptions {
  const o: ClientOptions = {};
  if (target === "tls") o.caFile = env("PLIMSOLL_TEST_TLS_CA");
  for (const [key, value] of Object.entries(spec ?? {})) {
    if (key === "token") {
      if (value === "tls") o.token = env("PLIMSOLL_TEST_TLS_TOKEN");
      else if (value === "wrong") o.token = "plimsoll-scenario-token-that-no-caller-has-0123456789abcdef";
      else throw new Error(`unknown client token ${JSON.stringify(value)}`);
    } else if (key === "max_response_bytes") o.maxResponseBytes = value as number;
    else if (key === "allow_cleartext") o.allowCleartext = value as boolean;
    else throw new Error(`unknown client option ${JSON.stringify(key)}`);
  }
  return o;
}

function bytesArg(f: { content?: string; content_base64?: string }): string | Uint8Array {
  if (f.content_base64 !== undefined) return digest.base64Decode(f.content_base64);
  if (f.content === undefined) throw new Error("a file needs content or content_base64");
  return f.content;
}

const RUN_ARGS = new Set(["code", "minimum_isolation", "timeout_ms", "environment", "grant_profile", "trace_id"]);

function runOptions(args: Record<string, any>, allowed: Set<string>) {
  for (const k of Object.keys(args)) if (!allowed.has(k)) throw new Error(`unknown arg ${JSON.stringify(k)}`);
  return {
    ...(args.minimum_isolation !== undefined ? { minimumIsolation: args.minimum_isolation } : {}),
    ...(args.timeout_ms !== undefined ? { timeoutMs: args.timeout_ms } : {}),
    ...(args.environment !== undefined ? { environment: args.environment } : {}),
    ...(args.grant_profile !== undefined ? { grantProfile: args.grant_profile } : {}),
    ...(args.trace_id !== undefined ? { traceId: args.trace_id } : {}),
  };
}

interface State {
  client: Client;
  session?: Session;
}

async function perform(state: State, op: string, args: Record<string, any>): Promise<unknown> {
  const c = state.client;
  const session = (): Session => {
    if (!state.session) throw new Error(`${op} needs an open_session step first`);
    return state.session;
  };
  switch (op) {
    case "describe":
      return c.describe();
    case "run_javascript":
      return c.runJavascript(args.code, runOptions(args, RUN_ARGS));
    case "run_python":
      return c.runPython(args.code, runOptions(args, RUN_ARGS));
    case "run_project":
      return c.runProject(
        {
          files: (args.files ?? []).map((f: any) => ({ path: f.path, content: bytesArg(f) })),
          steps: args.steps ?? [],
          artifacts: args.artifacts ?? [],
        },
        runOptions(args, new Set(["files", "steps", "artifacts", "minimum_isolation", "timeout_ms", "environment", "grant_profile", "trace_id"])),
      );
    case "open_session": {
      for (const k of Object.keys(args)) if (!["minimum_isolation", "lifetime_ms", "idle_timeout_ms", "environment"].includes(k)) throw new Error(`unknown arg ${k}`);
      state.session = await c.openSession({
        ...(args.minimum_isolation !== undefined ? { minimumIsolation: args.minimum_isolation } : {}),
        ...(args.lifetime_ms !== undefined ? { lifetimeMs: args.lifetime_ms } : {}),
        ...(args.idle_timeout_ms !== undefined ? { idleTimeoutMs: args.idle_timeout_ms } : {}),
        ...(args.environment !== undefined ? { environment: args.environment } : {}),
      });
      return state.session;
    }
    case "run_cell":
      return session().runCell(args.language, args.code, args.timeout_ms !== undefined ? { timeoutMs: args.timeout_ms } : {});
    case "session_run_javascript":
      return session().runJavascript(args.code, runOptions(args, RUN_ARGS));
    case "session_upload":
      return session().upload((args.files ?? []).map((f: any) => ({ path: f.path, content: bytesArg(f) })));
    case "session_download":
      return session().download(args.paths);
    case "session_info":
      return session().info();
    case "close_session":
      return session().close();
    default:
      throw new Error(`unknown op ${JSON.stringify(op)}`);
  }
}

function checkFields(what: string, actual: Record<string, unknown>, expected: Record<string, unknown>): void {
  for (const [k, v] of Object.entries(expected)) {
    if (!(k in actual)) throw new Error(`unknown ${what} expect key ${JSON.stringify(k)}`);
    assert.deepEqual(actual[k], v, `${what}.${k}`);
  }
}

function resultView(r: Result, expected: Record<string, unknown>): Record<string, unknown> {
  const view: Record<string, unknown> = {
    exit_code: r.exitCode, timed_out: r.timedOut, killed_for_memory: r.killedForMemory,
    stdout: r.stdoutText, stderr: r.stderrText, stdout_truncated: r.stdoutTruncated,
    stderr_truncated: r.stderrTruncated, isolation: r.isolation, provider: r.provider, kind: r.kind,
    outcome: r.outcome ?? null, value: r.valueText ?? null, interpreter_started: r.interpreterStarted ?? null,
    state_kept: r.stateKept ?? null, ran: r.ran,
  };
  if ("stdout_startswith" in expected) view.stdout_startswith = r.stdoutText.startsWith(expected.stdout_startswith as string) ? expected.stdout_startswith : r.stdoutText.slice(0, 40);
  if ("stdout_length" in expected) view.stdout_length = r.stdout.length;
  if (Array.isArray(expected.steps)) {
    view.steps = r.steps.map((s, i) => pick({ exit_code: s.exitCode, stdout: s.stdoutText, stderr: s.stderrText, timed_out: s.timedOut }, (expected.steps as any[])[i]));
  }
  if (Array.isArray(expected.artifacts)) {
    view.artifacts = r.artifacts.map((a, i) => pick({ path: a.path, content: a.contentText, truncated: a.truncated }, (expected.artifacts as any[])[i]));
  }
  return view;
}

function pick(all: Record<string, unknown>, wanted: Record<string, unknown> | undefined): Record<string, unknown> {
  if (!wanted) return all;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(wanted)) {
    if (!(k in all)) throw new Error(`unknown expect key ${JSON.stringify(k)} in a list entry`);
    out[k] = all[k];
  }
  return out;
}

function errorClass(e: unknown): string {
  if (e instanceof RefusedError) return "refused";
  if (e instanceof DataLossError) return "data_loss";
  return "error";
}

function checkExpect(outcome: { value?: unknown; error?: unknown }, expect: Record<string, any>): void {
  const keys = Object.keys(expect);
  if (keys.length !== 1) throw new Error(`an expect must have exactly one key, has ${JSON.stringify(keys)}`);
  const kind = keys[0]!;
  const want = expect[kind];
  if (kind === "error") {
    if (outcome.error === undefined) assert.fail(`expected an error ${JSON.stringify(want)}, got a ${describe(outcome.value)}`);
    const e = outcome.error;
    if (!(e instanceof PlimsollError)) throw e;
    checkFields("error", {
      class: errorClass(e), code: e.code, not_dispatched: e.notDispatched, retryable: e.isRetryable, ran: e.ran,
    }, want);
    return;
  }
  if (outcome.error !== undefined) {
    const e = outcome.error;
    assert.fail(`expected ${kind}, got ${e instanceof PlimsollError ? e.toString() : String((e as Error)?.stack ?? e)}`);
  }
  const v = outcome.value as any;
  if (kind === "result") checkFields("result", resultView(v as Result, want), want);
  else if (kind === "describe") checkFields("describe", { provider: v.provider, tier: v.tier, protocol: v.protocol }, want);
  else if (kind === "session") checkFields("session", { provider: v.provider, isolation: v.isolation }, want);
  else if (kind === "closed") checkFields("closed", { ended: v.ended, calls: v.calls }, want);
  else if (kind === "downloaded") {
    assert.deepEqual((v as any[]).map((a) => ({ path: a.path, content: a.contentText })), want, "downloaded");
  } else throw new Error(`unknown expect ${JSON.stringify(kind)}`);
}

function describe(v: unknown): string {
  return v === null || v === undefined ? String(v) : (v as object).constructor?.name ?? typeof v;
}

const STEP_KEYS = new Set(["op", "args", "expect", "max_ms", "about"]);
const SCENARIO_KEYS = new Set(["name", "target", "steps", "client", "needs", "about"]);

for (const scenario of doc.scenarios) {
  const needsLinux = scenario.needs === "linux" || String(scenario.target).startsWith("adversary_linux") || scenario.target === "linux";
  const skip = needsLinux ? linuxSkip(`scenario ${scenario.name}`) : undefined;
  test(`scenario ${scenario.name}`, skip ? { skip } : {}, async () => {
    for (const k of Object.keys(scenario)) if (!SCENARIO_KEYS.has(k)) throw new Error(`unknown scenario key ${JSON.stringify(k)}`);
    if (scenario.needs !== undefined && scenario.needs !== "linux") throw new Error(`unknown needs ${JSON.stringify(scenario.needs)}`);
    // A client the constructor refuses (a bad URL, cleartext to a non-loopback address) is that
    // refusal for every step: nothing was sent.
    let refusal: PlimsollError | undefined;
    let client: Client;
    try {
      client = new Client(targetUrl(scenario.target, scenario.name), clientOptions(scenario.target, scenario.client));
    } catch (e) {
      if (!(e instanceof PlimsollError)) throw e;
      refusal = e;
      client = new Client("http://127.0.0.1:9");
    }
    const state: State = { client };
    try {
      let n = 0;
      for (const step of scenario.steps) {
        n++;
        for (const k of Object.keys(step)) if (!STEP_KEYS.has(k)) throw new Error(`step ${n}: unknown step key ${JSON.stringify(k)}`);
        const started = performance.now();
        let outcome: { value?: unknown; error?: unknown };
        try {
          if (refusal) throw refusal;
          outcome = { value: await perform(state, step.op, step.args ?? {}) };
        } catch (e) {
          if (e instanceof PlimsollError) outcome = { error: e };
          else throw new Error(`step ${n} (${step.op}): ${(e as Error).message}`);
        }
        const elapsed = performance.now() - started;
        try {
          checkExpect(outcome, step.expect);
          if (step.max_ms !== undefined) assert.ok(elapsed <= step.max_ms, `took ${elapsed.toFixed(0)} ms, more than max_ms ${step.max_ms}`);
        } catch (e) {
          (e as Error).message = `step ${n} (${step.op}): ${(e as Error).message}`;
          throw e;
        }
      }
    } finally {
      if (state.session && !state.session.closed) await state.session.close().catch(() => undefined);
      state.client.close();
    }
  });
}
