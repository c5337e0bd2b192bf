// The typed shapes of requests and answers (camelCase). Wire names are in api/openapi.yaml.

import type { BytesLike, WireBytes } from "./bytes.js";

/** process < container < kernel < vm; `none` runs nothing; `unknown` meets no floor. */
export type Tier = "none" | "unknown" | "process" | "container" | "kernel" | "vm";
export const TIERS: readonly Tier[] = ["none", "unknown", "process", "container", "kernel", "vm"];
export type Kind = "javascript" | "python" | "project" | "cell";
export type Outcome = "completed" | "setup_failed" | "timed_out" | "protocol_error";
export type Language = "javascript" | "python";

const RANK: Record<string, number> = { process: 1, container: 2, kernel: 3, vm: 4 };

/** Whether `tier` meets `floor` (an empty floor is met by any tier; an unknown floor never). */
export function meetsFloor(tier: string, floor: string | null | undefined): boolean {
  if (!floor) return true;
  const f = RANK[floor];
  const t = RANK[tier];
  return f !== undefined && t !== undefined && t >= f;
}

/** Options shared by every run call. */
export interface RunOptions {
  /** The floor: nothing runs on a weaker tier (refused `isolation`). */
  minimumIsolation?: string;
  /** Bounds this one run; the daemon enforces it (exit code 124, `timedOut`). */
  timeoutMs?: number;
  /** The exact environment identity (`sha256:…`) required. */
  environment?: string;
  /** A grant profile by name (SPEC §8). */
  grantProfile?: string;
  /**
   * One of the daemon's images by name (SPEC §7; `describe().images`): `[a-z0-9-]{1,64}`, not
   * starting with `-`. Sent only when non-empty (else the default image); the daemon checks it.
   */
  image?: string;
  /** `[A-Za-z0-9._:-]{1,64}`, for the operator's logs. */
  traceId?: string;
  /** Aborts the call (before sending: refused `request`; after: `deadline_exceeded`, may have run). */
  signal?: AbortSignal;
}

export interface ProjectFile {
  path: string;
  content: BytesLike;
}

export interface ProjectSpec {
  files?: ProjectFile[];
  /** Argv lists, run in order; a failing step stops the rest. */
  steps?: string[][];
  /** Paths (relative to /work) to bring back. */
  artifacts?: string[];
}

/** Bytes in a hand-built request: text, bytes, or the wire's {"base64": ...}. */
export type RequestBytes = BytesLike | { base64: string };

/** A run request built by hand, in wire names (api/openapi.yaml RunRequest). */
export interface WireRequest {
  protocol?: number;
  minimum_isolation?: string | null;
  timeout_ms?: number | null;
  trace_id?: string | null;
  grant_profile?: string | null;
  environment?: string | null;
  /** Absent, null or "": the default image (nothing is sent). */
  image?: string | null;
  javascript?: { code: RequestBytes } | null;
  python?: { code: RequestBytes } | null;
  project?: {
    files?: { path: string; content: RequestBytes }[] | null;
    steps?: string[][] | null;
    artifacts?: string[] | null;
  } | null;
  cell?: { language: string; code: RequestBytes } | null;
}

/** The request exactly as sent (bytes in wire form). */
export interface SentRequest {
  protocol: number;
  minimum_isolation?: string;
  timeout_ms?: number;
  trace_id?: string;
  grant_profile?: string;
  environment?: string;
  /** Only when non-empty. */
  image?: string;
  javascript?: { code: WireBytes };
  python?: { code: WireBytes };
  project?: { files: { path: string; content: WireBytes }[]; steps: string[][]; artifacts: string[] };
  cell?: { language: string; code: WireBytes };
}

export interface RunRecord {
  version: number;
  requestSha256: string;
  resultSha256: string;
  provider: string;
  isolation: Tier;
  environment: string;
  policy: string;
  startedUnixMs: number;
  endedUnixMs: number;
  /** Session calls: SHA-256 of the session ID, the call's sequence (from 1), the previous digest. */
  session?: string;
  sequence?: number;
  previousSha256?: string;
  recordSha256: string;
}

export interface StepResult {
  command: string[];
  exitCode: number;
  timedOut: boolean;
  stdout: Uint8Array;
  stderr: Uint8Array;
  stdoutText: string;
  stderrText: string;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  durationMs: number;
}

export interface Artifact {
  path: string;
  content: Uint8Array;
  contentText: string;
  truncated: boolean;
}

/**
 * A rich output of a run (SPEC §7): a figure as `image/png`, a displayed DataFrame as `text/html`
 * and `text/plain`, what JavaScript's `display()` was given. Covered by the result digest
 * (docs/run-records.md §3.2, rows 18–19).
 */
export interface Display {
  /** Its media type, never empty: e.g. "image/png", "text/html", "text/plain". */
  mime: string;
  /** Its bytes (a PNG's bytes as they would be in a file). */
  data: Uint8Array;
  /** `data` as text (invalid UTF-8 becomes U+FFFD), for the text types. */
  dataText: string;
  /** Pixels, images only (absent otherwise). */
  width?: number;
  height?: number;
}

/**
 * One row of a granted run's call trace (SPEC §8): how many calls had this method, route
 * template, status and verdict. Never a concrete path.
 */
export interface BrokerRoute {
  /** GET, HEAD, POST, PUT, PATCH, DELETE, or OTHER. */
  method: string;
  /** The matching route template (e.g. "/items/*"); "" when none matched. */
  route: string;
  /** The upstream's HTTP status; 0 when it gave none. */
  status: number;
  /** Whether the broker let the calls go upstream. */
  allowed: boolean;
  /**
   * "" or why not: not_allowed, bad_path, max_calls, route_max_calls, circuit_open,
   * body_too_large, upstream_timeout, upstream_error.
   */
  reason: string;
  count: number;
}

/** The broker call summary of a granted run; covered by the result digest with every row. */
export interface BrokerSummary {
  profile: string;
  calls: number;
  denied: number;
  /** At most 256 rows, sorted by (method, route, status, allowed, reason); [] when none. */
  routes: BrokerRoute[];
  /** Distinct rows left out of `routes` (the least frequent); 0 when none. */
  routesDropped: number;
}

export interface Advice {
  pattern: string;
  route: string;
  message: string;
  extraCalls: number;
  addedLatencyMs: number;
  bytes: number;
}

export interface Limits {
  memoryBytes: number;
  cpusMillis: number;
  pids: number;
  tmpBytes: number;
  workBytes: number;
  outputCapBytes: number;
  snippetTimeoutDefaultMs: number;
  snippetTimeoutMaxMs: number;
  projectTimeoutDefaultMs: number;
  projectTimeoutMaxMs: number;
  runCeilingMs: number;
  maxCodeBytes: number;
  maxProjectFiles: number;
  maxProjectBytes: number;
  maxArtifacts: number;
  maxArtifactBytes: number;
}

/** Which package manager's records a package was read from. */
export type PackageSource = "debian" | "python" | "npm";
export const PACKAGE_SOURCES: readonly PackageSource[] = ["debian", "python", "npm"];

export interface ImagePackage {
  name: string;
  version: string;
  source: PackageSource;
}

/** One image a daemon serves (describe's `images`, SPEC §7). */
export interface ImageInfo {
  /** What a request's (or a session's) `image` names. */
  name: string;
  /** What a request naming no image runs on. */
  default: boolean;
  /** The image's identity (`sha256:…`). */
  environment: string;
  /** What its evidence proves now (never above the claim; `unknown` without evidence). */
  tier: Tier;
  /** Its evidence monitor's verdict. */
  confirmed: boolean;
  /** Of "javascript", "python", "node". */
  languages: string[];
  packages: ImagePackage[];
}

export interface Capabilities {
  payloads: Kind[];
  languages: Language[];
  projects: boolean;
  sessions: boolean;
  grants: boolean;
}

/** What `describe()` answers. `wire` is the whole answer as received. */
export interface Description {
  protocol: number;
  provider: string;
  tier: Tier;
  claimedTier: Tier;
  environment: string;
  capabilities: Capabilities;
  limits: Limits;
  sessionsEnabled: boolean;
  /** The grant profile names this caller may use (`grant_profiles`); absent without a broker. */
  grantProfiles?: string[];
  /** The images the daemon serves, the default first; [] from a daemon that does not list them. */
  images: ImageInfo[];
  wire: Record<string, unknown>;
}

export interface SessionOptions {
  minimumIsolation?: string;
  environment?: string;
  /** The image the session runs on, by name (sent only when non-empty; else the default). */
  image?: string;
  /** The end user's name; only its HMAC-SHA256 under the client's `ownerKey` is sent. */
  owner?: string;
  /** Bounds the session's whole life (not one run: that is a call's `timeoutMs`). */
  lifetimeMs?: number;
  /** The session ends after this long without a call. */
  idleTimeoutMs?: number;
  signal?: AbortSignal;
}

export interface SessionState {
  sessionId: string;
  provider: string;
  isolation: Tier;
  environment: string;
  /** The name of the image the session runs on (absent when it has none). */
  image?: string;
  createdUnixMs: number;
  expiresUnixMs: number;
  idleTimeoutMs: number;
  calls: number;
  busy: boolean;
  queued: boolean;
  lastUsedUnixMs: number;
  diskUsedBytes: number;
  diskBytes: number;
  interpreters: Language[];
  lastRecordSha256: string;
}

export interface SessionClosed {
  ended: string;
  calls: number;
  lastRecordSha256: string;
}
