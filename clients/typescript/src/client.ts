// Client: one daemon, every call checked (clients/README.md, docs/client.md).
//
//   const client = new Client(process.env.PLIMSOLL_URL ?? "http://127.0.0.1:8470");
//   const result = await client.runJavascript("console.log(6*7)");
//   result.exitCode; result.stdoutText; result.isolation; result.record.recordSha256;
//
// A Client may be shared by concurrent calls (each HTTP request gets a connection of the
// keep-alive pool). close() ends its idle connections.

import { readFileSync } from "node:fs";
import { type BytesLike, utf8 } from "./bytes.js";
import { clientRefusal, type PlimsollError } from "./errors.js";
import { checkRun, type ChainState, readAnswer, requestDigest } from "./exchange.js";
import { hmacSha256Hex, newRequestId } from "./sha256.js";
import { Session } from "./session.js";
import { type Call, Transport } from "./transport.js";
import { meetsFloor } from "./types.js";
import type { Description, ProjectSpec, RunOptions, SentRequest, SessionOptions, WireRequest } from "./types.js";
import { isIpLiteral, isLoopbackAddress, parseTarget, type Target } from "./url.js";
import { buildRequest, PROTOCOL, readDescription, readSessionOpened, type Result, Unreadable } from "./wire.js";
import { DataLossError } from "./errors.js";

export const VERSION = "0.1.0";

export interface ClientOptions {
  /** Bearer token; else the PLIMSOLL_TOKEN environment variable. Never printed. */
  token?: string;
  /** Allow http:// to an address that is not loopback. */
  allowCleartext?: boolean;
  /** https: a PEM file of the CAs to trust (else the system's). */
  caFile?: string;
  /** https: the CAs to trust, as PEM text (instead of caFile). */
  ca?: string;
  /** The largest answer body read (32 MiB). */
  maxResponseBytes?: number;
  /** Connecting and the TLS handshake (10 s). */
  connectTimeoutMs?: number;
  /** A whole call other than a run (30 s). */
  callTimeoutMs?: number;
  /** A run may take its timeoutMs plus this (30 s). */
  runTimeoutMarginMs?: number;
  /** The bound of a run without timeoutMs (300 s). */
  unspecifiedRunTimeoutMs?: number;
  /** The key of the owner HMAC (sessions' `owner`). Never printed. */
  ownerKey?: string | Uint8Array;
}

const TOKEN = /^[A-Za-z0-9\-._~+/=]+$/;
const INSPECT = Symbol.for("nodejs.util.inspect.custom");
const DENO_INSPECT = Symbol.for("Deno.customInspect");

function envToken(): string | undefined {
  const proc = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
  let value: string | undefined;
  try {
    value = proc?.env?.PLIMSOLL_TOKEN;
  } catch {
    // Deno without --allow-env(=PLIMSOLL_TOKEN) throws NotCapable here: to this program the
    // variable is not set (a daemon that wants a token then answers permission_denied).
    return undefined;
  }
  return value === "" ? undefined : value;
}

function positive(name: string, v: number | undefined, fallback: number): number {
  if (v === undefined) return fallback;
  if (typeof v !== "number" || !Number.isFinite(v) || v <= 0) throw clientRefusal("invalid_argument", `${name} must be a positive number.`);
  return v;
}

export class Client {
  readonly url: string;
  readonly maxResponseBytes: number;
  readonly connectTimeoutMs: number;
  readonly callTimeoutMs: number;
  readonly runTimeoutMarginMs: number;
  readonly unspecifiedRunTimeoutMs: number;
  readonly #target: Target;
  readonly #transport: Transport;
  readonly #token: string | undefined;
  readonly #ownerKey: Uint8Array | undefined;
  readonly #baseHeaders: Record<string, string>;

  constructor(url: string, options: ClientOptions = {}) {
    this.#target = parseTarget(url);
    this.url = url;
    this.maxResponseBytes = positive("maxResponseBytes", options.maxResponseBytes, 32 * 1024 * 1024);
    this.connectTimeoutMs = positive("connectTimeoutMs", options.connectTimeoutMs, 10_000);
    this.callTimeoutMs = positive("callTimeoutMs", options.callTimeoutMs, 30_000);
    this.runTimeoutMarginMs = positive("runTimeoutMarginMs", options.runTimeoutMarginMs, 30_000);
    this.unspecifiedRunTimeoutMs = positive("unspecifiedRunTimeoutMs", options.unspecifiedRunTimeoutMs, 300_000);
    const token = options.token ?? envToken();
    if (token !== undefined && !TOKEN.test(token)) {
      throw clientRefusal("invalid_argument", "The token has characters outside A-Za-z0-9-._~+/= (is there a stray newline?).");
    }
    this.#token = token;
    this.#ownerKey = typeof options.ownerKey === "string" ? utf8(options.ownerKey) : options.ownerKey;
    const t = this.#target;
    if (t.scheme === "http" && !options.allowCleartext && isIpLiteral(t.host) && !isLoopbackAddress(t.host)) {
      throw clientRefusal("failed_precondition", `Refusing cleartext HTTP to ${t.host}, which is not a loopback address (use https://, or set allowCleartext).`);
    }
    let ca: string | undefined = options.ca;
    if (options.caFile !== undefined) {
      if (t.scheme !== "https") throw clientRefusal("invalid_argument", "caFile is only for https:// URLs.");
      try {
        ca = readFileSync(options.caFile, "utf8");
      } catch (e) {
        throw clientRefusal("failed_precondition", `Cannot read the CA file ${options.caFile}: ${(e as Error).message}.`);
      }
    }
    this.#transport = new Transport(t, {
      allowCleartext: options.allowCleartext ?? false,
      maxResponseBytes: this.maxResponseBytes,
      connectTimeoutMs: this.connectTimeoutMs,
      ...(ca !== undefined ? { ca } : {}),
    });
    this.#baseHeaders = { Accept: "application/json", "User-Agent": `plimsoll-typescript/${VERSION}` };
    if (token !== undefined) this.#baseHeaders.Authorization = `Bearer ${token}`;
  }

  /** Connections opened so far (keep-alive reuses them). */
  get connectionsOpened(): number {
    return this.#transport.connectionsOpened;
  }

  /** Ends the idle kept connections. */
  close(): void {
    this.#transport.close();
  }

  toString(): string {
    return `Client(${this.url})`;
  }
  toJSON(): Record<string, unknown> {
    return { url: this.url, token: this.#token === undefined ? "unset" : "set" };
  }
  [INSPECT](): string {
    return `Client { url: ${JSON.stringify(this.url)}, token: ${this.#token === undefined ? "unset" : "set"} }`;
  }
  [DENO_INSPECT](): string {
    return this[INSPECT]();
  }

  /** What the daemon runs and how strong its wall is (GET /v1/describe). */
  async describe(options: { signal?: AbortSignal } = {}): Promise<Description> {
    const { body, requestId, status } = await this.request("GET", "/v1/describe", undefined, this.callTimeoutMs, options.signal);
    try {
      return readDescription(body);
    } catch (e) {
      throw unreadable(e, "describe", requestId, status);
    }
  }

  runJavascript(code: BytesLike, options: RunOptions = {}): Promise<Result> {
    return this.run(withOptions({ javascript: { code } }, options), options);
  }

  runPython(code: BytesLike, options: RunOptions = {}): Promise<Result> {
    return this.run(withOptions({ python: { code } }, options), options);
  }

  runProject(project: ProjectSpec, options: RunOptions = {}): Promise<Result> {
    return this.run(withOptions({ project: projectWire(project) }, options), options);
  }

  /** Sends a request built by hand (wire names); the answer is checked as for the other calls. */
  run(request: WireRequest, options: { signal?: AbortSignal | undefined } = {}): Promise<Result> {
    return this.exchangeRun("/v1/runs", buildRequest(request), undefined, options.signal);
  }

  /** Opens a session (SPEC §9): one sandbox kept for many calls. */
  async openSession(options: SessionOptions = {}): Promise<Session> {
    const body: Record<string, unknown> = { protocol: PROTOCOL };
    if (options.minimumIsolation) body.minimum_isolation = options.minimumIsolation;
    if (options.environment) body.environment = options.environment;
    if (options.image) body.image = options.image;
    if (options.owner !== undefined) {
      if (!this.#ownerKey) throw clientRefusal("invalid_argument", "owner needs the client option ownerKey (only its HMAC is sent).");
      body.owner = await hmacSha256Hex(this.#ownerKey, utf8(options.owner));
    }
    if (options.lifetimeMs !== undefined) body.lifetime_ms = options.lifetimeMs;
    if (options.idleTimeoutMs !== undefined) body.idle_timeout_ms = options.idleTimeoutMs;
    const { body: answer, requestId, status } = await this.request("POST", "/v1/sessions", utf8(JSON.stringify(body)), this.callTimeoutMs, options.signal);
    let opened;
    try {
      opened = readSessionOpened(answer);
    } catch (e) {
      throw unreadable(e, "open_session", requestId, status);
    }
    const fail = (why: string) => new DataLossError(`The session answer ${why}; not believed.`, { requestId, httpStatus: status });
    if (options.minimumIsolation && !meetsFloor(opened.isolation, options.minimumIsolation)) {
      throw fail(`has tier ${opened.isolation}, below the floor ${options.minimumIsolation}`);
    }
    if (options.environment && opened.environment !== options.environment) throw fail("has another environment than the one required");
    if (options.image && opened.image !== options.image) throw fail("names another image than the one required");
    return Session.create(this, opened, options.minimumIsolation);
  }

  /** @internal One HTTP exchange: the echo and the error rules of readAnswer. */
  async request(method: Call["method"], path: string, body: Uint8Array | undefined, timeoutMs: number, signal?: AbortSignal): Promise<{ body: unknown; requestId: string; status: number }> {
    const requestId = newRequestId();
    const headers: Record<string, string> = { ...this.#baseHeaders, "Plimsoll-Request-Id": requestId };
    if (body) headers["Content-Type"] = "application/json";
    const raw = await this.#transport.send({ method, path, headers, timeoutMs, requestId, signal, ...(body ? { body } : {}) });
    const answer = readAnswer(raw, requestId);
    if (!answer.ok) throw answer.error;
    return { body: answer.body, requestId, status: raw.status };
  }

  /** @internal A run (or session call) with CheckExchange. */
  async exchangeRun(path: string, sent: SentRequest, chain: ChainState | undefined, signal?: AbortSignal): Promise<Result> {
    const requestSha256 = await requestDigest(sent as unknown as Record<string, unknown>);
    const bound = sent.timeout_ms !== undefined && sent.timeout_ms > 0 ? sent.timeout_ms + this.runTimeoutMarginMs : this.unspecifiedRunTimeoutMs;
    const { body, requestId, status } = await this.request("POST", path, utf8(JSON.stringify(sent)), bound, signal);
    return checkRun(sent, requestSha256, body, requestId, status, chain);
  }
}

/** @internal */
export function withOptions(request: WireRequest, o: RunOptions): WireRequest {
  if (o.minimumIsolation !== undefined) request.minimum_isolation = o.minimumIsolation;
  if (o.timeoutMs !== undefined) request.timeout_ms = o.timeoutMs;
  if (o.environment !== undefined) request.environment = o.environment;
  if (o.grantProfile !== undefined) request.grant_profile = o.grantProfile;
  if (o.image !== undefined) request.image = o.image;
  if (o.traceId !== undefined) request.trace_id = o.traceId;
  return request;
}

/** @internal */
export function projectWire(p: ProjectSpec): NonNullable<WireRequest["project"]> {
  return {
    files: (p.files ?? []).map((f) => ({ path: f.path, content: f.content })),
    steps: p.steps ?? [],
    artifacts: p.artifacts ?? [],
  };
}

function unreadable(e: unknown, what: string, requestId?: string, httpStatus?: number): PlimsollError {
  if (e instanceof Unreadable) return new DataLossError(`The ${what} answer cannot be read: ${e.message}.`, { requestId: requestId ?? null, httpStatus: httpStatus ?? null });
  throw e;
}
