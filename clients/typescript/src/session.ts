// Session: one sandbox kept for many calls (SPEC §9, docs/sessions.md). Every answer must
// continue the session's record chain; close() checks that the daemon's close names the chain's
// last record and its call count. Calls on one Session are serialised (the daemon runs one at a
// time anyway, and the chain needs their order).
//
//   await using session = await client.openSession();
//   await session.runCell("javascript", "let x = 41");
//   (await session.runCell("javascript", "x + 1")).valueText;   // "42"

import type { BytesLike } from "./bytes.js";
import type { Client } from "./client.js";
import { projectWire, withOptions } from "./client.js";
import { DataLossError, clientRefusal } from "./errors.js";
import { type ChainState, sessionDigest } from "./exchange.js";
import { type Artifact, type Language, meetsFloor, type ProjectFile, type ProjectSpec, type RunOptions, type SessionClosed, type SessionState, type Tier, type WireRequest } from "./types.js";
import { buildRequest, readSessionClosed, readSessionState, type Result, type SessionOpened, Unreadable } from "./wire.js";

export interface CellOptions {
  /** Bounds this one cell (exit code 124, `timedOut`; the interpreter is then restarted). */
  timeoutMs?: number;
  /** A grant profile whose `allow_in_sessions` is on; its grant serves this cell only. */
  grantProfile?: string;
  signal?: AbortSignal;
}

export class Session implements AsyncDisposable {
  readonly provider: string;
  readonly isolation: Tier;
  readonly environment: string;
  /** The name of the image the session runs on (absent when the daemon names none). */
  readonly image?: string;
  readonly createdUnixMs: number;
  readonly expiresUnixMs: number;
  readonly idleTimeoutMs: number;
  readonly #client: Client;
  readonly #id: string;
  readonly #chain: ChainState;
  #closed: SessionClosed | undefined;
  #queue: Promise<unknown> = Promise.resolve();

  private constructor(client: Client, opened: SessionOpened, session: string, floor: string) {
    this.#client = client;
    this.#id = opened.sessionId;
    this.provider = opened.provider;
    this.isolation = opened.isolation;
    this.environment = opened.environment;
    if (opened.image !== undefined) this.image = opened.image;
    this.createdUnixMs = opened.createdUnixMs;
    this.expiresUnixMs = opened.expiresUnixMs;
    this.idleTimeoutMs = opened.idleTimeoutMs;
    // Every answer of the session is held to the floor it was opened with.
    this.#chain = { session, sequence: 0, previous: "", floor };
  }

  /** @internal `floor`: the minimumIsolation the session was opened with. */
  static async create(client: Client, opened: SessionOpened, floor = ""): Promise<Session> {
    return new Session(client, opened, await sessionDigest(opened.sessionId), floor);
  }

  /** The floor the session was opened with ("" for none): every answer of the session meets it. */
  get floor(): string {
    return this.#chain.floor ?? "";
  }

  /** The session ID: a bearer secret (never printed by toString, inspect or JSON). */
  get id(): string {
    return this.#id;
  }
  /** Calls answered and checked so far (the chain's last sequence). */
  get calls(): number {
    return this.#chain.sequence;
  }
  /** The last checked record digest ("" before the first call). */
  get lastRecordSha256(): string {
    return this.#chain.previous;
  }
  get closed(): boolean {
    return this.#closed !== undefined;
  }

  toString(): string {
    return `Session(${this.provider}, ${this.isolation}, calls ${this.calls})`;
  }
  toJSON(): Record<string, unknown> {
    return { provider: this.provider, isolation: this.isolation, calls: this.calls, closed: this.closed };
  }
  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return `Session { provider: ${JSON.stringify(this.provider)}, isolation: ${JSON.stringify(this.isolation)}, calls: ${this.calls} }`;
  }

  /** Code for the kept interpreter of `language`; `value` is its last expression's printed form. */
  runCell(language: Language, code: BytesLike, options: CellOptions = {}): Promise<Result> {
    const request: WireRequest = { cell: { language, code } };
    if (options.timeoutMs !== undefined) request.timeout_ms = options.timeoutMs;
    if (options.grantProfile !== undefined) request.grant_profile = options.grantProfile;
    return this.run(request, options);
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

  /**
   * Writes files into /work: a project payload with the files and one step, `true` (the daemon
   * wants at least one). A call of the chain like any other.
   */
  upload(files: ProjectFile[], options: RunOptions = {}): Promise<Result> {
    return this.runProject({ files, steps: [["true"]] }, options);
  }

  /** Reads files from /work: a project payload (one step, `true`) asking for them as artifacts. */
  async download(paths: string[], options: RunOptions = {}): Promise<Artifact[]> {
    const result = await this.runProject({ steps: [["true"]], artifacts: paths }, options);
    return result.artifacts;
  }

  /** A hand-built request run inside the session, checked and chained. */
  run(request: WireRequest, options: { signal?: AbortSignal | undefined } = {}): Promise<Result> {
    const sent = buildRequest(request);
    return this.#serial(() => {
      this.#open();
      return this.#client.exchangeRun(`/v1/sessions/${encodeURIComponent(this.#id)}/runs`, sent, this.#chain, options.signal);
    });
  }

  /** The session's state (GET /v1/sessions/{id}). */
  info(options: { signal?: AbortSignal } = {}): Promise<SessionState> {
    return this.#serial(async () => {
      this.#open();
      const { body, requestId, status } = await this.#client.request("GET", `/v1/sessions/${encodeURIComponent(this.#id)}`, undefined, this.#client.callTimeoutMs, options.signal);
      let state: SessionState;
      try {
        state = readSessionState(body);
      } catch (e) {
        if (e instanceof Unreadable) throw new DataLossError(`The session state cannot be read: ${e.message}.`, { requestId, httpStatus: status });
        throw e;
      }
      if (this.floor && !meetsFloor(state.isolation, this.floor)) {
        throw new DataLossError(`The session state has tier ${state.isolation}, below the floor ${this.floor} the session was opened with; not believed.`, { requestId, httpStatus: status });
      }
      return state;
    });
  }

  /**
   * Closes the session and checks that the close names this chain's last record and call count.
   * A second close returns the first one's answer.
   */
  close(options: { signal?: AbortSignal } = {}): Promise<SessionClosed> {
    return this.#serial(async () => {
      if (this.#closed) return this.#closed;
      const { body, requestId, status } = await this.#client.request("DELETE", `/v1/sessions/${encodeURIComponent(this.#id)}`, undefined, this.#client.callTimeoutMs, options.signal);
      let closed: SessionClosed;
      try {
        closed = readSessionClosed(body);
      } catch (e) {
        if (e instanceof Unreadable) throw new DataLossError(`The close answer cannot be read: ${e.message}.`, { requestId, httpStatus: status });
        throw e;
      }
      this.#closed = closed;
      if (closed.calls !== this.#chain.sequence || closed.lastRecordSha256 !== this.#chain.previous) {
        throw new DataLossError(
          `The close names ${closed.calls} calls ending in record ${closed.lastRecordSha256 || "(none)"}, but this client checked ${this.#chain.sequence} ending in ${this.#chain.previous || "(none)"}: the chain is broken.`,
          { requestId, httpStatus: status },
        );
      }
      return closed;
    });
  }

  async [Symbol.asyncDispose](): Promise<void> {
    if (!this.#closed) await this.close();
  }

  #open(): void {
    if (this.#closed) throw clientRefusal("failed_precondition", "This session is closed.");
  }

  #serial<T>(f: () => Promise<T>): Promise<T> {
    const next = this.#queue.then(f, f);
    this.#queue = next.catch(() => undefined);
    return next;
  }
}
