// The run-record digests of docs/run-records.md, computed from the wire JSON sent and received.
//
// A value is its length (u64 big-endian) then its bytes; a field is its name as a value then its
// content as a value; a digest is SHA-256 over the domain as a value followed by the fields in
// the documented order. Inputs are wire-form objects (snake_case, bytes as a string or
// {"base64": ...}) that have already passed the shape checks of wire.ts (or the vectors).

import { fromWire, utf8 } from "./bytes.js";
import { sha256Hex } from "./sha256.js";

export const REQUEST_DOMAIN = "plimsoll.run-request.v1";
export const RESULT_DOMAIN = "plimsoll.run-result.v1";
export const RECORD_DOMAIN = "plimsoll.run-record.v1";
export const POLICY_DOMAIN = "plimsoll.policy.v1";

type Json = unknown;
type Obj = Record<string, Json>;

const textEncoder = new TextEncoder();

/** Accumulates the bytes hashed by one digest; one SHA-256 call at the end. */
export class Encoder {
  private buf = new Uint8Array(1024);
  private view = new DataView(this.buf.buffer);
  private pos = 0;

  constructor(domain: string) {
    this.str(domain);
  }

  private reserve(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  private length(n: number): void {
    this.view.setUint32(this.pos, Math.floor(n / 0x100000000));
    this.view.setUint32(this.pos + 4, n >>> 0);
    this.pos += 8;
  }

  /** A value from raw bytes. */
  bytes(b: Uint8Array): void {
    this.reserve(8 + b.length);
    this.length(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  /** A value from a string's UTF-8 bytes. */
  str(s: string): void {
    this.reserve(8 + s.length * 3);
    const start = this.pos;
    this.pos += 8;
    const { written } = textEncoder.encodeInto(s, this.buf.subarray(this.pos));
    this.pos = start;
    this.length(written);
    this.pos += written;
  }

  fieldString(name: string, content: string): void {
    this.str(name);
    this.str(content);
  }
  fieldBytes(name: string, content: Uint8Array): void {
    this.str(name);
    this.bytes(content);
  }
  fieldWireBytes(name: string, content: Json): void {
    this.str(name);
    if (typeof content === "string") this.str(content);
    else this.bytes(fromWire(content));
  }
  fieldInt(name: string, content: number): void {
    if (!Number.isSafeInteger(content)) throw new TypeError(`${name} is not an exact integer`);
    this.str(name);
    this.str(String(content));
  }
  fieldBool(name: string, content: boolean): void {
    this.str(name);
    this.str(content ? "true" : "false");
  }
  fieldFloat(name: string, content: number): void {
    this.str(name);
    this.reserve(16);
    this.length(8);
    if (Number.isNaN(content)) {
      this.view.setUint32(this.pos, 0x7ff80000);
      this.view.setUint32(this.pos + 4, 0);
    } else {
      this.view.setFloat64(this.pos, content); // big-endian; -0.0 and ±inf keep their bits
    }
    this.pos += 8;
  }

  /** The exact bytes hashed so far (for debugging; the vectors' encoding_hex). */
  encoded(): Uint8Array {
    return this.buf.slice(0, this.pos);
  }

  async digest(): Promise<string> {
    return sha256Hex(this.buf.subarray(0, this.pos));
  }
}

function list(v: Json): Obj[] {
  return v === undefined || v === null ? [] : (v as Obj[]);
}
function present(v: Json): boolean {
  return v !== undefined && v !== null;
}
function str(v: Json): string {
  return v === undefined || v === null ? "" : (v as string);
}

/** A float as it travels: a JSON number, or "NaN", "Infinity", "-Infinity". */
export function wireFloat(v: Json): number {
  if (typeof v === "number") return v;
  if (v === "NaN") return NaN;
  if (v === "Infinity") return Infinity;
  if (v === "-Infinity") return -Infinity;
  throw new TypeError("is not a float");
}

/** The request digest (§3.1) of a wire request. */
export function requestEncoding(req: Obj): Encoder {
  const e = new Encoder(REQUEST_DOMAIN);
  e.fieldInt("protocol", req.protocol as number);
  e.fieldString("minimum_isolation", str(req.minimum_isolation));
  e.fieldInt("timeout_ms", present(req.timeout_ms) ? (req.timeout_ms as number) : 0);
  e.fieldString("grant_profile", str(req.grant_profile));
  // 4a: the one field encoded only when present (absent, null or "": no field at all), so a
  // request naming no image keeps the digest it always had.
  const image = str(req.image);
  if (image !== "") e.fieldString("image", image);
  const kinds = ["javascript", "python", "project", "cell"].filter((k) => present(req[k]));
  e.fieldInt("payloads", kinds.length);
  for (const kind of kinds) {
    const p = req[kind] as Obj;
    e.fieldString("kind", kind);
    if (kind === "javascript" || kind === "python") {
      e.fieldWireBytes(`${kind}.code`, p.code);
    } else if (kind === "project") {
      const files = list(p.files);
      e.fieldInt("project.files", files.length);
      for (const f of files) {
        e.fieldString("project.file.path", f.path as string);
        e.fieldWireBytes("project.file.content", f.content);
      }
      const steps = list(p.steps) as unknown as string[][];
      e.fieldInt("project.steps", steps.length);
      for (const argv of steps) {
        e.fieldInt("project.step.argv", argv.length);
        for (const arg of argv) e.fieldString("project.step.arg", arg);
      }
      const artifacts = list(p.artifacts) as unknown as string[];
      e.fieldInt("project.artifacts", artifacts.length);
      for (const a of artifacts) e.fieldString("project.artifact", a);
    } else {
      e.fieldString("cell.language", p.language as string);
      e.fieldWireBytes("cell.code", p.code);
    }
  }
  return e;
}

/** The result digest (§3.2, rows 1–19) of a wire answer (its `record` is ignored). */
export function resultEncoding(res: Obj): Encoder {
  const e = new Encoder(RESULT_DOMAIN);
  e.fieldString("provider", res.provider as string);
  e.fieldString("isolation", res.isolation as string);
  e.fieldString("environment", res.environment as string);
  e.fieldString("kind", res.kind as string);
  e.fieldInt("exit_code", res.exit_code as number);
  e.fieldBool("timed_out", res.timed_out as boolean);
  e.fieldWireBytes("stdout", res.stdout);
  e.fieldWireBytes("stderr", res.stderr);
  e.fieldBool("stdout_truncated", res.stdout_truncated as boolean);
  e.fieldBool("stderr_truncated", res.stderr_truncated as boolean);
  e.fieldInt("duration_ms", res.duration_ms as number);
  if (present(res.outcome)) e.fieldString("outcome", res.outcome as string);
  const steps = list(res.steps);
  e.fieldInt("steps", steps.length);
  for (const s of steps) {
    const command = s.command as string[];
    e.fieldInt("step.command", command.length);
    for (const arg of command) e.fieldString("step.command.arg", arg);
    e.fieldInt("step.exit_code", s.exit_code as number);
    e.fieldBool("step.timed_out", s.timed_out as boolean);
    e.fieldWireBytes("step.stdout", s.stdout);
    e.fieldWireBytes("step.stderr", s.stderr);
    e.fieldBool("step.stdout_truncated", s.stdout_truncated as boolean);
    e.fieldBool("step.stderr_truncated", s.stderr_truncated as boolean);
    e.fieldInt("step.duration_ms", s.duration_ms as number);
  }
  const artifacts = list(res.artifacts);
  e.fieldInt("artifacts", artifacts.length);
  for (const a of artifacts) {
    e.fieldString("artifact.path", a.path as string);
    e.fieldWireBytes("artifact.content", a.content);
    e.fieldBool("artifact.truncated", a.truncated as boolean);
  }
  if (present(res.value)) e.fieldWireBytes("cell.value", res.value);
  // The cell group: all three or none (a cell answer carries all three).
  if (present(res.value_truncated) || present(res.interpreter_started) || present(res.state_kept)) {
    e.fieldBool("cell.value_truncated", res.value_truncated as boolean);
    e.fieldBool("cell.interpreter_started", res.interpreter_started as boolean);
    e.fieldBool("cell.state_kept", res.state_kept as boolean);
  }
  if (present(res.broker)) {
    const b = res.broker as Obj;
    e.fieldString("broker.profile", b.profile as string);
    e.fieldInt("broker.calls", b.calls as number);
    e.fieldInt("broker.denied", b.denied as number);
    // The call trace's rows, then how many were left out ([] and 0 when absent).
    const routes = list(b.routes);
    e.fieldInt("broker.routes", routes.length);
    for (const r of routes) {
      e.fieldString("broker.route.method", r.method as string);
      e.fieldString("broker.route.route", r.route as string);
      e.fieldInt("broker.route.status", r.status as number);
      e.fieldBool("broker.route.allowed", r.allowed as boolean);
      e.fieldString("broker.route.reason", r.reason as string);
      e.fieldInt("broker.route.count", r.count as number);
    }
    e.fieldInt("broker.routes_dropped", present(b.routes_dropped) ? (b.routes_dropped as number) : 0);
  }
  const advice = list(res.advice);
  e.fieldInt("advice", advice.length);
  for (const a of advice) {
    e.fieldString("advice.pattern", a.pattern as string);
    e.fieldString("advice.route", a.route as string);
    e.fieldString("advice.message", a.message as string);
    e.fieldInt("advice.extra_calls", a.extra_calls as number);
    e.fieldFloat("advice.added_latency_ms", wireFloat(a.added_latency_ms));
    e.fieldInt("advice.bytes", a.bytes as number);
  }
  // 18, 19: rich outputs, last and only when there is something to say (no displays, [] and
  // displays_truncated false add no field), so a result without them keeps its digest.
  const displays = list(res.displays);
  if (displays.length > 0) {
    e.fieldInt("displays", displays.length);
    for (const d of displays) {
      e.fieldString("display.mime", d.mime as string);
      e.fieldWireBytes("display.data", d.data);
      e.fieldInt("display.width", present(d.width) ? (d.width as number) : 0);
      e.fieldInt("display.height", present(d.height) ? (d.height as number) : 0);
    }
  }
  if (res.displays_truncated === true) e.fieldBool("displays_truncated", true);
  return e;
}

/** The record digest (§3.3) of a wire record (its `record_sha256` is ignored). */
export function recordEncoding(rec: Obj): Encoder {
  const e = new Encoder(RECORD_DOMAIN);
  e.fieldInt("version", rec.version as number);
  e.fieldString("request_sha256", rec.request_sha256 as string);
  e.fieldString("result_sha256", rec.result_sha256 as string);
  e.fieldString("provider", rec.provider as string);
  e.fieldString("isolation", rec.isolation as string);
  e.fieldString("environment", rec.environment as string);
  e.fieldString("policy", rec.policy as string);
  e.fieldInt("started_unix_ms", rec.started_unix_ms as number);
  e.fieldInt("ended_unix_ms", rec.ended_unix_ms as number);
  if (present(rec.session) || present(rec.sequence) || present(rec.previous_sha256)) {
    e.fieldString("session", rec.session as string);
    e.fieldInt("sequence", rec.sequence as number);
    e.fieldString("previous_sha256", rec.previous_sha256 as string);
  }
  return e;
}

export const POLICY_FIELDS = [
  "memory_bytes", "cpus_millis", "pids", "tmp_bytes", "work_bytes", "output_cap_bytes",
  "snippet_timeout_default_ms", "snippet_timeout_max_ms", "project_timeout_default_ms",
  "project_timeout_max_ms", "run_ceiling_ms", "max_code_bytes", "max_project_files",
  "max_project_bytes", "max_artifacts", "max_artifact_bytes",
] as const;

/** The policy digest (§3.4) of a `limits` object. */
export function policyEncoding(limits: Obj): Encoder {
  const e = new Encoder(POLICY_DOMAIN);
  for (const name of POLICY_FIELDS) e.fieldInt(name, limits[name] as number);
  return e;
}

export function requestDigest(req: Obj): Promise<string> {
  return requestEncoding(req).digest();
}
export function resultDigest(res: Obj): Promise<string> {
  return resultEncoding(res).digest();
}
export function recordDigest(rec: Obj): Promise<string> {
  return recordEncoding(rec).digest();
}
export function policyDigest(limits: Obj): Promise<string> {
  return policyEncoding(limits).digest();
}
/** record.session: the plain SHA-256 of the session ID's bytes (no domain, no framing). */
export async function sessionDigest(sessionId: string): Promise<string> {
  return sha256Hex(utf8(sessionId));
}
