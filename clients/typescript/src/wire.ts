// Requests out, answers in: building the wire request a call sends, and reading an answer
// strictly for the fields this client knows (types and required fields; unknown fields are
// ignored, repeated keys were refused by json.ts). A failed read is `data_loss`, never a mark.

import { type BytesLike, base64Decode, fromWire, text, toWire, type WireBytes } from "./bytes.js";
import { wireFloat } from "./digest.js";
import { clientRefusal } from "./errors.js";
import type {
  Advice, Artifact, BrokerRoute, BrokerSummary, Description, Display, ImageInfo, ImagePackage, Kind,
  Limits, Outcome, RequestBytes, RunRecord, SentRequest, SessionClosed, SessionState, StepResult, Tier,
  WireRequest,
} from "./types.js";
import { PACKAGE_SOURCES, TIERS } from "./types.js";

export const PROTOCOL = 1;

// ---- requests ----

function bytesOut(v: RequestBytes, where: string): WireBytes {
  if (typeof v === "string" || v instanceof Uint8Array) return toWire(v as BytesLike);
  if (v !== null && typeof v === "object" && typeof (v as { base64?: unknown }).base64 === "string") {
    try {
      base64Decode(v.base64);
    } catch (e) {
      throw clientRefusal("invalid_argument", `${where}: ${(e as Error).message}.`);
    }
    return { base64: v.base64 };
  }
  throw clientRefusal("invalid_argument", `${where} must be a string, a Uint8Array or {base64}.`);
}

function strOut(v: unknown, where: string): string {
  if (typeof v !== "string") throw clientRefusal("invalid_argument", `${where} must be a string.`);
  return v;
}

/** Normalises a hand-built request into exactly what is sent (and hashed). */
export function buildRequest(req: WireRequest): SentRequest {
  if (req === null || typeof req !== "object") throw clientRefusal("invalid_argument", "The request must be an object.");
  const out: SentRequest = { protocol: req.protocol ?? PROTOCOL };
  if (!Number.isSafeInteger(out.protocol)) throw clientRefusal("invalid_argument", "protocol must be an integer.");
  if (req.minimum_isolation != null) out.minimum_isolation = strOut(req.minimum_isolation, "minimum_isolation");
  if (req.timeout_ms != null) {
    if (!Number.isSafeInteger(req.timeout_ms)) throw clientRefusal("invalid_argument", "timeout_ms must be an integer.");
    out.timeout_ms = req.timeout_ms;
  }
  if (req.trace_id != null) out.trace_id = strOut(req.trace_id, "trace_id");
  if (req.grant_profile != null) out.grant_profile = strOut(req.grant_profile, "grant_profile");
  if (req.environment != null) out.environment = strOut(req.environment, "environment");
  if (req.image != null) {
    // "" names the default image, as no field does: sent only when non-empty.
    const image = strOut(req.image, "image");
    if (image !== "") out.image = image;
  }
  if (req.javascript != null) out.javascript = { code: bytesOut(req.javascript.code, "javascript.code") };
  if (req.python != null) out.python = { code: bytesOut(req.python.code, "python.code") };
  if (req.project != null) {
    const p = req.project;
    out.project = {
      files: (p.files ?? []).map((f, i) => ({
        path: strOut(f.path, `project.files[${i}].path`),
        content: bytesOut(f.content, `project.files[${i}].content`),
      })),
      steps: (p.steps ?? []).map((argv, i) => {
        if (!Array.isArray(argv)) throw clientRefusal("invalid_argument", `project.steps[${i}] must be an argv list.`);
        return argv.map((a, j) => strOut(a, `project.steps[${i}][${j}]`));
      }),
      artifacts: (p.artifacts ?? []).map((a, i) => strOut(a, `project.artifacts[${i}]`)),
    };
  }
  for (const key of Object.keys(req)) {
    if (!KNOWN_REQUEST_FIELDS.has(key)) throw clientRefusal("invalid_argument", `Unknown request field ${key}.`);
  }
  if (req.cell != null) {
    out.cell = { language: strOut(req.cell.language, "cell.language"), code: bytesOut(req.cell.code, "cell.code") };
  }
  return out;
}

const KNOWN_REQUEST_FIELDS = new Set([
  "protocol", "minimum_isolation", "timeout_ms", "trace_id", "grant_profile", "environment",
  "image", "javascript", "python", "project", "cell",
]);

// ---- answers ----

/** Thrown by the readers; the client turns it into DataLossError. */
export class Unreadable extends Error {}

type Obj = Record<string, unknown>;

function obj(v: unknown, where: string): Obj {
  if (v === null || typeof v !== "object" || Array.isArray(v)) throw new Unreadable(`${where} is not an object`);
  return v as Obj;
}
function s(o: Obj, k: string, where: string): string {
  const v = o[k];
  if (typeof v !== "string") throw new Unreadable(`${where}.${k} is not a string`);
  return v;
}
function i(o: Obj, k: string, where: string): number {
  const v = o[k];
  if (typeof v !== "number" || !Number.isSafeInteger(v)) throw new Unreadable(`${where}.${k} is not an integer`);
  return v;
}
function b(o: Obj, k: string, where: string): boolean {
  const v = o[k];
  if (typeof v !== "boolean") throw new Unreadable(`${where}.${k} is not a boolean`);
  return v;
}
function by(o: Obj, k: string, where: string): Uint8Array {
  try {
    return fromWire(o[k]);
  } catch (e) {
    throw new Unreadable(`${where}.${k} ${(e as Error).message}`);
  }
}
function tier(o: Obj, k: string, where: string): Tier {
  const v = s(o, k, where);
  if (!(TIERS as readonly string[]).includes(v)) throw new Unreadable(`${where}.${k} is not a tier`);
  return v as Tier;
}
function arr(o: Obj, k: string, where: string, optional: boolean): unknown[] {
  const v = o[k];
  if (v == null && optional) return [];
  if (!Array.isArray(v)) throw new Unreadable(`${where}.${k} is not a list`);
  return v;
}
function strList(o: Obj, k: string, where: string, optional = false): string[] {
  const l = arr(o, k, where, optional);
  for (const x of l) if (typeof x !== "string") throw new Unreadable(`${where}.${k} holds a non-string`);
  return l as string[];
}
function present(v: unknown): boolean {
  return v !== undefined && v !== null;
}

const DISPLAY_FIELDS: readonly string[] = ["mime", "data", "width", "height"];

/**
 * One of a result's `displays` (SPEC §7). Stricter than the rest of an answer: no other key
 * (api/openapi.yaml says so, and the result digest would not cover one), `mime` not empty, and a
 * size present only as an integer ≥ 1 (the daemon leaves it out when it has none).
 */
function readDisplay(v: unknown, where: string): Display {
  const o = obj(v, where);
  for (const key of Object.keys(o)) {
    if (!DISPLAY_FIELDS.includes(key)) throw new Unreadable(`${where} has an unknown field ${JSON.stringify(key)}`);
  }
  const mime = s(o, "mime", where);
  if (mime === "") throw new Unreadable(`${where}.mime is empty`);
  const data = by(o, "data", where);
  const d: Display = { mime, data, dataText: text(data) };
  for (const k of ["width", "height"] as const) {
    if (!(k in o)) continue;
    const n = i(o, k, where);
    if (n < 1) throw new Unreadable(`${where}.${k} is not a positive integer`);
    d[k] = n;
  }
  return d;
}

/** A broker summary's call trace rows (SPEC §8): more is malformed. */
const MAX_BROKER_ROUTES = 256;

/** One row of a broker summary's call trace (SPEC §8). */
function readBrokerRoute(v: unknown, where: string): BrokerRoute {
  const o = obj(v, where);
  return {
    method: s(o, "method", where),
    route: s(o, "route", where),
    status: i(o, "status", where),
    allowed: b(o, "allowed", where),
    reason: s(o, "reason", where),
    count: i(o, "count", where),
  };
}

const KINDS: readonly string[] = ["javascript", "python", "project", "cell"];
const OUTCOMES: readonly string[] = ["completed", "setup_failed", "timed_out", "protocol_error"];

export function readRecord(v: unknown): RunRecord {
  const o = obj(v, "record");
  const r: RunRecord = {
    version: i(o, "version", "record"),
    requestSha256: s(o, "request_sha256", "record"),
    resultSha256: s(o, "result_sha256", "record"),
    provider: s(o, "provider", "record"),
    isolation: tier(o, "isolation", "record"),
    environment: s(o, "environment", "record"),
    policy: s(o, "policy", "record"),
    startedUnixMs: i(o, "started_unix_ms", "record"),
    endedUnixMs: i(o, "ended_unix_ms", "record"),
    recordSha256: s(o, "record_sha256", "record"),
  };
  const hasSession = [o.session, o.sequence, o.previous_sha256].map(present);
  if (hasSession.some((x) => x)) {
    if (!hasSession.every((x) => x)) throw new Unreadable("record has only part of the session fields");
    r.session = s(o, "session", "record");
    r.sequence = i(o, "sequence", "record");
    r.previousSha256 = s(o, "previous_sha256", "record");
  }
  return r;
}

/** A run's answer: exit code and outputs, where it ran, and its checked record. */
export class Result {
  /** Results always ran (an error is a PlimsollError with `ran` false or "unknown"). */
  readonly ran = true as const;
  readonly provider: string;
  readonly isolation: Tier;
  readonly environment: string;
  readonly kind: Kind;
  readonly exitCode: number;
  readonly timedOut: boolean;
  /** Exit code 137: the memory bound killed it. */
  readonly killedForMemory: boolean;
  readonly stdout: Uint8Array;
  readonly stderr: Uint8Array;
  readonly stdoutTruncated: boolean;
  readonly stderrTruncated: boolean;
  readonly durationMs: number;
  /** Projects only. */
  readonly outcome?: Outcome;
  readonly steps: StepResult[];
  readonly artifacts: Artifact[];
  /** Cells only: the printed form of the last expression, when it had one. */
  readonly value?: Uint8Array;
  readonly valueTruncated?: boolean;
  readonly interpreterStarted?: boolean;
  readonly stateKept?: boolean;
  /** Granted runs only: the broker's call summary and trace rows. */
  readonly broker?: BrokerSummary;
  readonly advice: Advice[];
  /** Rich outputs in the order shown (SPEC §7): figures, tables; [] when there are none. */
  readonly displays: Display[];
  /** Some displays were dropped by the daemon's caps (16 per result, 4 MiB of data together). */
  readonly displaysTruncated: boolean;
  readonly record: RunRecord;
  /** The Plimsoll-Request-Id of the call. */
  readonly requestId: string;

  constructor(wire: unknown, requestId: string) {
    const o = obj(wire, "answer");
    const w = "answer";
    this.provider = s(o, "provider", w);
    this.isolation = tier(o, "isolation", w);
    this.environment = s(o, "environment", w);
    const kind = s(o, "kind", w);
    if (!KINDS.includes(kind)) throw new Unreadable("answer.kind is unknown");
    this.kind = kind as Kind;
    this.exitCode = i(o, "exit_code", w);
    this.timedOut = b(o, "timed_out", w);
    this.killedForMemory = this.exitCode === 137;
    this.stdout = by(o, "stdout", w);
    this.stderr = by(o, "stderr", w);
    this.stdoutTruncated = b(o, "stdout_truncated", w);
    this.stderrTruncated = b(o, "stderr_truncated", w);
    this.durationMs = i(o, "duration_ms", w);
    if (present(o.outcome)) {
      const outcome = s(o, "outcome", w);
      if (!OUTCOMES.includes(outcome)) throw new Unreadable("answer.outcome is unknown");
      this.outcome = outcome as Outcome;
    }
    this.steps = arr(o, "steps", w, true).map((x, n) => {
      const sw = `answer.steps[${n}]`;
      const so = obj(x, sw);
      const stdout = by(so, "stdout", sw);
      const stderr = by(so, "stderr", sw);
      return {
        command: strList(so, "command", sw),
        exitCode: i(so, "exit_code", sw),
        timedOut: b(so, "timed_out", sw),
        stdout,
        stderr,
        stdoutText: text(stdout),
        stderrText: text(stderr),
        stdoutTruncated: b(so, "stdout_truncated", sw),
        stderrTruncated: b(so, "stderr_truncated", sw),
        durationMs: i(so, "duration_ms", sw),
      };
    });
    this.artifacts = arr(o, "artifacts", w, true).map((x, n) => {
      const aw = `answer.artifacts[${n}]`;
      const ao = obj(x, aw);
      const content = by(ao, "content", aw);
      return { path: s(ao, "path", aw), content, contentText: text(content), truncated: b(ao, "truncated", aw) };
    });
    if (present(o.value)) this.value = by(o, "value", w);
    const cell = [o.value_truncated, o.interpreter_started, o.state_kept].map(present);
    if (cell.some((x) => x)) {
      this.valueTruncated = b(o, "value_truncated", w);
      this.interpreterStarted = b(o, "interpreter_started", w);
      this.stateKept = b(o, "state_kept", w);
    }
    if (present(o.broker)) {
      const bo = obj(o.broker, "answer.broker");
      const routes = arr(bo, "routes", "answer.broker", true).map((x, n) =>
        readBrokerRoute(x, `answer.broker.routes[${n}]`),
      );
      if (routes.length > MAX_BROKER_ROUTES) {
        throw new Unreadable(`answer.broker.routes has more than ${MAX_BROKER_ROUTES} rows`);
      }
      this.broker = {
        profile: s(bo, "profile", "answer.broker"),
        calls: i(bo, "calls", "answer.broker"),
        denied: i(bo, "denied", "answer.broker"),
        routes,
        routesDropped: present(bo.routes_dropped) ? i(bo, "routes_dropped", "answer.broker") : 0,
      };
    }
    this.advice = arr(o, "advice", w, true).map((x, n) => {
      const aw = `answer.advice[${n}]`;
      const ao = obj(x, aw);
      let latency: number;
      try {
        latency = wireFloat(ao.added_latency_ms);
      } catch {
        throw new Unreadable(`${aw}.added_latency_ms is not a float`);
      }
      return {
        pattern: s(ao, "pattern", aw),
        route: s(ao, "route", aw),
        message: s(ao, "message", aw),
        extraCalls: i(ao, "extra_calls", aw),
        addedLatencyMs: latency,
        bytes: i(ao, "bytes", aw),
      };
    });
    this.displays = arr(o, "displays", w, true).map((x, n) => readDisplay(x, `answer.displays[${n}]`));
    this.displaysTruncated = present(o.displays_truncated) ? b(o, "displays_truncated", w) : false;
    this.record = readRecord(o.record);
    this.requestId = requestId;
  }

  get stdoutText(): string {
    return text(this.stdout);
  }
  get stderrText(): string {
    return text(this.stderr);
  }
  /** The cell's value as text, or undefined when it had none. */
  get valueText(): string | undefined {
    return this.value === undefined ? undefined : text(this.value);
  }
}

function limits(v: unknown, where: string): Limits {
  const o = obj(v, where);
  return {
    memoryBytes: i(o, "memory_bytes", where),
    cpusMillis: i(o, "cpus_millis", where),
    pids: i(o, "pids", where),
    tmpBytes: i(o, "tmp_bytes", where),
    workBytes: i(o, "work_bytes", where),
    outputCapBytes: i(o, "output_cap_bytes", where),
    snippetTimeoutDefaultMs: i(o, "snippet_timeout_default_ms", where),
    snippetTimeoutMaxMs: i(o, "snippet_timeout_max_ms", where),
    projectTimeoutDefaultMs: i(o, "project_timeout_default_ms", where),
    projectTimeoutMaxMs: i(o, "project_timeout_max_ms", where),
    runCeilingMs: i(o, "run_ceiling_ms", where),
    maxCodeBytes: i(o, "max_code_bytes", where),
    maxProjectFiles: i(o, "max_project_files", where),
    maxProjectBytes: i(o, "max_project_bytes", where),
    maxArtifacts: i(o, "max_artifacts", where),
    maxArtifactBytes: i(o, "max_artifact_bytes", where),
  };
}

function readImage(v: unknown, where: string): ImageInfo {
  const o = obj(v, where);
  return {
    name: s(o, "name", where),
    default: b(o, "default", where),
    environment: s(o, "environment", where),
    tier: tier(o, "tier", where),
    confirmed: b(o, "confirmed", where),
    languages: strList(o, "languages", where),
    packages: arr(o, "packages", where, false).map((x, n): ImagePackage => {
      const pw = `${where}.packages[${n}]`;
      const po = obj(x, pw);
      const source = s(po, "source", pw);
      if (!(PACKAGE_SOURCES as readonly string[]).includes(source)) throw new Unreadable(`${pw}.source is unknown`);
      return { name: s(po, "name", pw), version: s(po, "version", pw), source: source as ImagePackage["source"] };
    }),
  };
}

export function readDescription(v: unknown): Description {
  const o = obj(v, "describe");
  const w = "describe";
  const caps = obj(o.capabilities, "describe.capabilities");
  const cw = "describe.capabilities";
  const d: Description = {
    protocol: i(o, "protocol", w),
    provider: s(o, "provider", w),
    tier: tier(o, "tier", w),
    claimedTier: tier(o, "claimed_tier", w),
    environment: s(o, "environment", w),
    capabilities: {
      payloads: strList(caps, "payloads", cw) as Kind[],
      languages: strList(caps, "languages", cw) as Description["capabilities"]["languages"],
      projects: b(caps, "projects", cw),
      sessions: b(caps, "sessions", cw),
      grants: b(caps, "grants", cw),
    },
    limits: limits(o.limits, "describe.limits"),
    sessionsEnabled: b(obj(o.sessions, "describe.sessions"), "enabled", "describe.sessions"),
    // Several images per daemon (SPEC §7): absent from older daemons.
    images: arr(o, "images", w, true).map((x, n) => readImage(x, `describe.images[${n}]`)),
    wire: o,
  };
  // The grant profiles this caller may name (SPEC §8); absent from a daemon without a broker.
  if (present(o.grant_profiles)) d.grantProfiles = strList(o, "grant_profiles", w);
  return d;
}

export interface SessionOpened {
  sessionId: string;
  provider: string;
  isolation: Tier;
  environment: string;
  /** The name of the image the session runs on (absent when it has none). */
  image?: string;
  createdUnixMs: number;
  expiresUnixMs: number;
  idleTimeoutMs: number;
  limits: Limits;
}

export function readSessionOpened(v: unknown): SessionOpened {
  const o = obj(v, "session");
  const w = "session";
  const opened: SessionOpened = {
    sessionId: s(o, "session_id", w),
    provider: s(o, "provider", w),
    isolation: tier(o, "isolation", w),
    environment: s(o, "environment", w),
    createdUnixMs: i(o, "created_unix_ms", w),
    expiresUnixMs: i(o, "expires_unix_ms", w),
    idleTimeoutMs: i(o, "idle_timeout_ms", w),
    limits: limits(o.limits, "session.limits"),
  };
  if (present(o.image)) opened.image = s(o, "image", w);
  return opened;
}

export function readSessionState(v: unknown): SessionState {
  const o = obj(v, "session");
  const w = "session";
  const state: SessionState = {
    sessionId: s(o, "session_id", w),
    provider: s(o, "provider", w),
    isolation: tier(o, "isolation", w),
    environment: s(o, "environment", w),
    createdUnixMs: i(o, "created_unix_ms", w),
    expiresUnixMs: i(o, "expires_unix_ms", w),
    idleTimeoutMs: i(o, "idle_timeout_ms", w),
    calls: i(o, "calls", w),
    busy: b(o, "busy", w),
    queued: b(o, "queued", w),
    lastUsedUnixMs: i(o, "last_used_unix_ms", w),
    diskUsedBytes: i(o, "disk_used_bytes", w),
    diskBytes: i(o, "disk_bytes", w),
    interpreters: strList(o, "interpreters", w) as SessionState["interpreters"],
    lastRecordSha256: s(o, "last_record_sha256", w),
  };
  if (present(o.image)) state.image = s(o, "image", w);
  return state;
}

export function readSessionClosed(v: unknown): SessionClosed {
  const o = obj(v, "closed");
  return {
    ended: s(o, "ended", "closed"),
    calls: i(o, "calls", "closed"),
    lastRecordSha256: s(o, "last_record_sha256", "closed"),
  };
}
