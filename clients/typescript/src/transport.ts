// HTTP/1.1 with keep-alive over TCP, TLS (a custom CA file) or a Unix socket, through node:http
// and node:https (Node; Deno and Bun provide them too). The answer is capped by Content-Length
// and as it streams. Failures before the connection was made are refusals marked `capacity`
// (not one byte was sent); after it, nothing is marked: the call may have run.

import * as http from "node:http";
import * as https from "node:https";
import * as dns from "node:dns";
import type { LookupFunction, Socket } from "node:net";
import { PlimsollError, RefusedError, DataLossError } from "./errors.js";
import { isIpLiteral, isLoopbackAddress, type Target } from "./url.js";

export interface TransportOptions {
  allowCleartext: boolean;
  ca?: string | Uint8Array;
  maxResponseBytes: number;
  connectTimeoutMs: number;
}

export interface RawAnswer {
  status: number;
  /** Every value of each header, by lowercase name. */
  headers: Map<string, string[]>;
  body: string;
}

export interface Call {
  method: "GET" | "POST" | "DELETE";
  path: string;
  headers: Record<string, string>;
  body?: Uint8Array;
  timeoutMs: number;
  requestId: string;
  signal?: AbortSignal | undefined;
}

const CLEARTEXT = "plimsoll_cleartext_refused";
const fatalDecoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

export class Transport {
  private readonly agent: http.Agent;
  private readonly target: Target;
  private readonly options: TransportOptions;
  private readonly lookup: LookupFunction | undefined;
  /** Connections made so far (keep-alive makes this small). */
  connectionsOpened = 0;

  constructor(target: Target, options: TransportOptions) {
    this.target = target;
    this.options = options;
    const agentOptions = { keepAlive: true, keepAliveMsecs: 1000, maxSockets: 16, maxFreeSockets: 4 };
    this.agent = target.scheme === "https"
      ? new https.Agent({ ...agentOptions, ...(options.ca !== undefined ? { ca: options.ca as string } : {}) })
      : new http.Agent(agentOptions);
    if (target.scheme === "http" && !options.allowCleartext && !isIpLiteral(target.host)) {
      // A name: resolve, then refuse (before connecting) unless every address is loopback.
      this.lookup = ((hostname: string, opts: dns.LookupOptions, cb: (...a: unknown[]) => void) => {
        dns.lookup(hostname, { ...opts, all: true }, (err, addresses) => {
          if (err) return cb(err);
          const list = addresses as dns.LookupAddress[];
          if (list.length === 0 || !list.every((a) => isLoopbackAddress(a.address))) {
            const e = new Error(`${hostname} resolves to an address that is not loopback`) as NodeJS.ErrnoException;
            e.code = CLEARTEXT;
            return cb(e);
          }
          if (opts.all) cb(null, list);
          else cb(null, list[0]!.address, list[0]!.family);
        });
      }) as unknown as LookupFunction;
    }
  }

  close(): void {
    this.agent.destroy();
  }

  send(call: Call): Promise<RawAnswer> {
    if (call.signal?.aborted) {
      return Promise.reject(new RefusedError("deadline_exceeded", `The call to ${this.target.display} was aborted before it was sent.`, { requestId: call.requestId, notDispatched: "request" }));
    }
    return new Promise<RawAnswer>((resolve, reject) => {
      const t = this.target;
      const { requestId } = call;
      let connected = false;
      let settled = false;
      let connectTimer: ReturnType<typeof setTimeout> | undefined;
      let failure: PlimsollError | undefined;
      const finish = (err: PlimsollError | undefined, answer?: RawAnswer) => {
        if (settled) return;
        settled = true;
        clearTimeout(callTimer);
        clearTimeout(connectTimer);
        call.signal?.removeEventListener("abort", onAbort);
        if (err) reject(err);
        else resolve(answer!);
      };
      const abortWith = (err: PlimsollError) => {
        failure = err;
        req.destroy();
        finish(err);
      };
      const onAbort = () =>
        abortWith(
          connected
            ? new PlimsollError("deadline_exceeded", `The call to ${t.display} was aborted after the request left; it may have run.`, { requestId })
            : new RefusedError("deadline_exceeded", `The call to ${t.display} was aborted before it was sent.`, { requestId, notDispatched: "request" }),
        );

      const headers: Record<string, string> = { ...call.headers };
      if (call.body) headers["Content-Length"] = String(call.body.length);
      const options: http.RequestOptions = {
        method: call.method,
        path: t.prefix + call.path,
        headers,
        agent: this.agent,
      };
      if (t.socketPath) options.socketPath = t.socketPath;
      else {
        options.host = t.host;
        options.port = t.port;
        if (this.lookup) options.lookup = this.lookup;
      }
      let req: http.ClientRequest;
      try {
        req = (t.scheme === "https" ? https : http).request(options);
      } catch (e) {
        // Node reports a failed connect as an 'error' event; Deno throws here when its permissions
        // do not allow the address (NotCapable), before anything was sent. Either way: a refusal.
        const message = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
        return reject(new RefusedError("failed_precondition", `Cannot connect to ${t.display}: ${message}.`, { requestId: null, notDispatched: "capacity" }));
      }

      const callTimer = setTimeout(() => {
        abortWith(
          connected
            ? new PlimsollError("deadline_exceeded", `No complete answer from ${t.display} within ${call.timeoutMs} ms; the call may have run.`, { requestId })
            : new RefusedError("deadline_exceeded", `Could not connect to ${t.display} within ${call.timeoutMs} ms.`, { requestId, notDispatched: "capacity" }),
        );
      }, call.timeoutMs);
      call.signal?.addEventListener("abort", onAbort, { once: true });

      req.on("socket", (socket: Socket) => {
        const markConnected = () => {
          connected = true;
          clearTimeout(connectTimer);
        };
        if (!socket.connecting) {
          markConnected(); // a kept connection (for TLS, already verified)
          return;
        }
        this.connectionsOpened++;
        connectTimer = setTimeout(() => {
          abortWith(new RefusedError("deadline_exceeded", `Could not connect to ${t.display} within ${this.options.connectTimeoutMs} ms.`, { requestId, notDispatched: "capacity" }));
        }, this.options.connectTimeoutMs);
        socket.once(t.scheme === "https" ? "secureConnect" : "connect", markConnected);
      });

      req.on("error", (e: NodeJS.ErrnoException) => {
        if (failure) return finish(failure);
        if (e.code === CLEARTEXT) {
          return finish(new RefusedError("failed_precondition", `Refusing cleartext HTTP to ${t.display}: ${e.message} (set allowCleartext to allow it).`, { requestId: null, notDispatched: "request" }));
        }
        if (!connected) {
          return finish(new RefusedError("failed_precondition", `Cannot connect to ${t.display}: ${e.message}.`, { requestId: null, notDispatched: "capacity" }));
        }
        finish(new DataLossError(`The connection to ${t.display} was lost after the request left (${e.message}); the call may have run.`, { requestId }));
      });

      req.on("response", (res: http.IncomingMessage) => {
        connected = true;
        const status = res.statusCode ?? 0;
        const cap = this.options.maxResponseBytes;
        const lengthHeader = res.headers["content-length"];
        if (lengthHeader !== undefined && Number(lengthHeader) > cap) {
          return abortWith(new DataLossError(`The answer from ${t.display} is ${lengthHeader} bytes, above max_response_bytes (${cap}); not read.`, { requestId, httpStatus: status }));
        }
        const chunks: Uint8Array[] = [];
        let size = 0;
        res.on("data", (chunk: Uint8Array) => {
          size += chunk.length;
          if (size > cap) {
            abortWith(new DataLossError(`The answer from ${t.display} exceeds max_response_bytes (${cap}); not read.`, { requestId, httpStatus: status }));
            res.destroy();
            return;
          }
          chunks.push(chunk);
        });
        res.on("error", () => {
          if (!settled) finish(failure ?? new DataLossError(`The answer from ${t.display} was cut off; the call may have run.`, { requestId, httpStatus: status }));
        });
        res.on("aborted", () => {
          if (!settled) finish(new DataLossError(`The answer from ${t.display} was cut off; the call may have run.`, { requestId, httpStatus: status }));
        });
        res.on("end", () => {
          if (settled) return;
          if (!res.complete) {
            return finish(new DataLossError(`The answer from ${t.display} was cut off; the call may have run.`, { requestId, httpStatus: status }));
          }
          let body: string;
          try {
            body = fatalDecoder.decode(chunks.length === 1 ? chunks[0]! : concat(chunks, size));
          } catch {
            return finish(new DataLossError(`The answer from ${t.display} is not UTF-8; not believed.`, { requestId, httpStatus: status }));
          }
          const headerMap = new Map<string, string[]>();
          const raw = res.rawHeaders;
          for (let k = 0; k < raw.length; k += 2) {
            const name = raw[k]!.toLowerCase();
            const list = headerMap.get(name);
            if (list) list.push(raw[k + 1]!);
            else headerMap.set(name, [raw[k + 1]!]);
          }
          finish(undefined, { status, headers: headerMap, body });
        });
      });

      if (call.body) req.end(call.body);
      else req.end();
    });
  }
}

function concat(chunks: Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}
