// Placement across daemons (SPEC §12): for each call, the daemons whose (cached) describe can
// take the request, tried in the order given; the next one only after a refusal marked
// unsupported, isolation, environment or capacity (a daemon that cannot be reached is such a
// refusal). Anything else, a result or an error that may have run, is returned at once. A
// session stays on the daemon that opened it.

import type { BytesLike } from "./bytes.js";
import { Client, type ClientOptions, projectWire, withOptions } from "./client.js";
import { PlimsollError, RefusedError, type Reason } from "./errors.js";
import type { Session } from "./session.js";
import { meetsFloor, type Description, type Kind, type ProjectSpec, type RunOptions, type SessionOptions, type WireRequest } from "./types.js";
import type { Result } from "./wire.js";

export interface PoolOptions extends ClientOptions {
  /** How long a daemon's describe is trusted (30 s). */
  describeTtlMs?: number;
}

interface Cached {
  at: number;
  description: Description;
}

interface Needs {
  kind?: Kind;
  session?: boolean;
  floor?: string | null | undefined;
  environment?: string | null | undefined;
  image?: string | null | undefined;
}

export class Pool {
  readonly clients: readonly Client[];
  readonly describeTtlMs: number;
  readonly #cache = new Map<Client, Cached>();

  constructor(urls: string[], options: PoolOptions = {}) {
    if (!Array.isArray(urls) || urls.length === 0) throw new RefusedError("invalid_argument", "A Pool needs at least one daemon URL.", { notDispatched: "request" });
    const { describeTtlMs, ...clientOptions } = options;
    this.describeTtlMs = describeTtlMs ?? 30_000;
    this.clients = urls.map((u) => new Client(u, clientOptions));
  }

  close(): void {
    for (const c of this.clients) c.close();
  }

  toString(): string {
    return `Pool(${this.clients.map((c) => c.url).join(", ")})`;
  }
  toJSON(): Record<string, unknown> {
    return { clients: this.clients.map((c) => c.toJSON()) };
  }
  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return this.toString();
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

  run(request: WireRequest, options: { signal?: AbortSignal | undefined } = {}): Promise<Result> {
    const kind = (["javascript", "python", "project", "cell"] as const).find((k) => request[k] != null);
    return this.#place(
      { ...(kind ? { kind } : {}), floor: request.minimum_isolation, environment: request.environment, image: request.image },
      (client) => client.run(request, options),
    );
  }

  /** Opens a session on the first daemon that can host it; the Session stays on that daemon. */
  openSession(options: SessionOptions = {}): Promise<Session> {
    return this.#place(
      { session: true, floor: options.minimumIsolation, environment: options.environment, image: options.image },
      (client) => client.openSession(options),
    );
  }

  /** The daemons that can take a request needing `needs`, each with its description. */
  async #describe(client: Client): Promise<Description> {
    const cached = this.#cache.get(client);
    const now = Date.now();
    if (cached && now - cached.at < this.describeTtlMs) return cached.description;
    const description = await client.describe();
    this.#cache.set(client, { at: Date.now(), description });
    return description;
  }

  async #place<T>(needs: Needs, call: (client: Client) => Promise<T>): Promise<T> {
    let last: PlimsollError | undefined;
    const skipped = new Set<Reason>();
    for (const client of this.clients) {
      let d: Description;
      try {
        d = await this.#describe(client);
      } catch (e) {
        if (e instanceof PlimsollError && e.isRetryable) {
          last = e;
          continue;
        }
        throw e;
      }
      const why = unfit(d, needs);
      if (why) {
        skipped.add(why);
        continue;
      }
      try {
        return await call(client);
      } catch (e) {
        if (e instanceof PlimsollError && e.isRetryable) {
          this.#cache.delete(client); // what it said may have changed (evidence, reachability)
          last = e;
          continue;
        }
        throw e;
      }
    }
    if (last) throw last;
    // The most telling reason among the daemons passed over (a disabled daemon says little).
    const reason = (["isolation", "environment", "unsupported"] as const).find((r) => skipped.has(r)) ?? "unsupported";
    throw new RefusedError(
      "failed_precondition",
      `No daemon in the pool can take this request (${reason}): ${this.clients.map((c) => c.url).join(", ")}.`,
      { notDispatched: reason },
    );
  }
}

/** Why a daemon cannot take the request, as the refusal reason it would give; undefined if it can. */
function unfit(d: Description, needs: Needs): Reason | undefined {
  if (d.tier === "none") return "unsupported";
  // A named image, when the daemon lists its images: its own tier and identity count (the
  // top-level ones are the default image's). One that does not list them is left to refuse.
  const named = needs.image ? d.images.find((i) => i.name === needs.image) : undefined;
  if (needs.image && d.images.length > 0 && !named) return "unsupported";
  if (needs.floor && !meetsFloor(named?.tier ?? d.tier, needs.floor)) return "isolation";
  if (needs.kind && !d.capabilities.payloads.includes(needs.kind)) return "unsupported";
  if (needs.session && !(d.sessionsEnabled && d.capabilities.sessions)) return "unsupported";
  if (needs.environment && (named?.environment ?? d.environment) !== needs.environment) return "environment";
  // A grant profile is not checked here: the daemon answers an unknown and a forbidden profile
  // with the same `permission` refusal, which is final (as the Python and Go pools do).
  return undefined;
}
