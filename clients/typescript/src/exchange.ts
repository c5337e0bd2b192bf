// What every answer must pass before anything in it is believed (clients/README.md): the echo,
// the mark repeated by its header, a readable body, and for runs CheckExchange
// (docs/run-records.md §5). A failure is DataLossError: never a mark, the call may have run.

import { recordDigest, requestDigest, resultDigest, sessionDigest } from "./digest.js";
import {
  DataLossError, ERROR_CODES, type ErrorCode, errorFromDaemon, type PlimsollError, REASONS, type Reason,
} from "./errors.js";
import { JsonError, parseStrict } from "./json.js";
import type { RawAnswer } from "./transport.js";
import { meetsFloor, type SentRequest } from "./types.js";
import { Result, Unreadable } from "./wire.js";

/**
 * A session's chain: the last sequence and record digest that passed every check, and the floor
 * the session was opened with. Every answer of the session must meet that floor, whatever the
 * call itself asks: an on-path rewriter can lower one call's tier and recompute every digest, and
 * only the floor catches that.
 */
export interface ChainState {
  session: string;
  sequence: number;
  previous: string;
  /** The session's floor (absent or "" for none). */
  floor?: string;
}

/** The body of a 2xx answer that passed the echo check, or the error it stands for. */
export function readAnswer(raw: RawAnswer, requestId: string): { ok: true; body: unknown } | { ok: false; error: PlimsollError } {
  const echoes = raw.headers.get("plimsoll-request-id");
  const echoOk = echoes !== undefined && echoes.length === 1 && echoes[0] === requestId;
  const status = raw.status;
  const details = { requestId, httpStatus: status };
  let body: unknown;
  let parseError: string | undefined;
  try {
    body = parseStrict(raw.body);
  } catch (e) {
    parseError = e instanceof JsonError ? e.message : String(e);
  }
  if (status >= 200 && status < 300) {
    if (!echoOk) {
      return { ok: false, error: new DataLossError(`The answer (HTTP ${status}) does not carry this call's Plimsoll-Request-Id ${describeEcho(echoes)}; not believed.`, details) };
    }
    if (parseError !== undefined) {
      return { ok: false, error: new DataLossError(`The answer (HTTP ${status}) is not readable JSON (${parseError}).`, details) };
    }
    return { ok: true, body };
  }
  // An error answer.
  const e = parseError === undefined ? errorFields(body) : undefined;
  if (!e) {
    return { ok: false, error: new DataLossError(`An error answer (HTTP ${status}) that cannot be read${parseError ? ` (${parseError})` : ""}; the call may have run.`, details) };
  }
  const quoted = `${e.code}: ${e.message}`;
  if (!echoOk || e.requestId !== requestId) {
    return { ok: false, error: new DataLossError(`An error answer (HTTP ${status}) without this call's request ID ${describeEcho(echoes)}, so its mark is not believed (it said ${quoted}).`, details) };
  }
  const marks = raw.headers.get("plimsoll-not-dispatched");
  const headerMark = marks === undefined ? null : marks.length === 1 ? marks[0]! : "(repeated)";
  if (headerMark !== e.notDispatched) {
    return { ok: false, error: new DataLossError(`An error answer (HTTP ${status}) whose not_dispatched (${e.notDispatched ?? "none"}) is not repeated by Plimsoll-Not-Dispatched (${headerMark ?? "none"}); not believed (it said ${quoted}).`, details) };
  }
  if (!(ERROR_CODES as readonly string[]).includes(e.code)) {
    return { ok: false, error: new DataLossError(`An error answer (HTTP ${status}) with an unknown code (it said ${quoted}); not believed.`, details) };
  }
  if (e.notDispatched !== null && !(REASONS as readonly string[]).includes(e.notDispatched)) {
    return { ok: false, error: new DataLossError(`An error answer (HTTP ${status}) with an unknown not_dispatched reason ${JSON.stringify(e.notDispatched)} (it said ${quoted}); not believed.`, details) };
  }
  return {
    ok: false,
    error: errorFromDaemon(e.code as ErrorCode, e.message, { ...details, notDispatched: e.notDispatched as Reason | null }),
  };
}

function describeEcho(echoes: string[] | undefined): string {
  if (echoes === undefined) return "(no echo)";
  if (echoes.length > 1) return `(${echoes.length} echoes)`;
  return "(a different ID)";
}

function errorFields(body: unknown): { code: string; message: string; notDispatched: string | null; requestId: string | null } | undefined {
  if (body === null || typeof body !== "object" || Array.isArray(body)) return undefined;
  const err = (body as { error?: unknown }).error;
  if (err === null || typeof err !== "object" || Array.isArray(err)) return undefined;
  const o = err as Record<string, unknown>;
  if (typeof o.code !== "string" || typeof o.message !== "string") return undefined;
  if (o.not_dispatched != null && typeof o.not_dispatched !== "string") return undefined;
  if (o.request_id != null && typeof o.request_id !== "string") return undefined;
  return {
    code: o.code,
    message: o.message,
    notDispatched: (o.not_dispatched as string | undefined) ?? null,
    requestId: (o.request_id as string | undefined) ?? null,
  };
}

/**
 * Reads a run's answer and runs CheckExchange on it. `chain` (session calls) advances only when
 * every check passed.
 */
export async function checkRun(sent: SentRequest, requestSha256: string, body: unknown, requestId: string, httpStatus: number, chain?: ChainState): Promise<Result> {
  const details = { requestId, httpStatus };
  let result: Result;
  try {
    result = new Result(body, requestId);
  } catch (e) {
    if (e instanceof Unreadable) throw new DataLossError(`The answer cannot be read: ${e.message}.`, details);
    throw e;
  }
  const wire = body as Record<string, unknown>;
  const rec = result.record;
  const fail = (why: string): never => {
    throw new DataLossError(`The answer fails the record check: ${why}; not believed (the call may have run).`, details);
  };
  if (rec.version !== 1) fail(`record version ${rec.version}, expected 1`);
  if (rec.requestSha256 !== requestSha256) fail("the record's request_sha256 names another request than the one sent");
  let resultSha: string;
  try {
    resultSha = await resultDigest(wire);
  } catch (e) {
    return fail(`the result cannot be hashed (${(e as Error).message})`);
  }
  if (rec.resultSha256 !== resultSha) fail("the record's result_sha256 does not match the answer received");
  if (rec.provider !== result.provider) fail("the record's provider differs from the answer's");
  if (rec.isolation !== result.isolation) fail("the record's isolation differs from the answer's");
  if (rec.environment !== result.environment) fail("the record's environment differs from the answer's");
  if (sent.minimum_isolation && !meetsFloor(result.isolation, sent.minimum_isolation)) {
    fail(`the answer's tier ${result.isolation} is below the floor ${sent.minimum_isolation}`);
  }
  if (chain?.floor && !meetsFloor(result.isolation, chain.floor)) {
    fail(`the answer's tier ${result.isolation} is below the floor ${chain.floor} the session was opened with`);
  }
  if (sent.environment && result.environment !== sent.environment) fail("the answer's environment is not the one required");
  if (rec.startedUnixMs > rec.endedUnixMs) fail("the record ends before it starts");
  if (rec.recordSha256 !== (await recordDigest(wire.record as Record<string, unknown>))) fail("record_sha256 does not match the record");
  if (chain) {
    if (rec.session === undefined) fail("a session call's record has no session fields");
    if (rec.session !== chain.session) fail("the record names another session");
    if (rec.sequence !== chain.sequence + 1) fail(`the record's sequence is ${rec.sequence}, expected ${chain.sequence + 1}`);
    if (rec.previousSha256 !== chain.previous) fail("the record does not link to the previous record of this session");
    chain.sequence = rec.sequence!;
    chain.previous = rec.recordSha256;
  } else if (rec.session !== undefined) {
    fail("a run outside a session carries session fields");
  }
  return result;
}

export { requestDigest, sessionDigest };

/**
 * CheckExchange on a stored exchange: `request` as sent and `answer` as received (wire JSON).
 * Resolves to the checked Result, or rejects with DataLossError. With `chain`, the record must
 * continue it (and `chain` advances).
 */
export async function checkExchange(request: Record<string, unknown>, answer: unknown, chain?: ChainState): Promise<Result> {
  const sent = request as unknown as SentRequest;
  return checkRun(sent, await requestDigest(request), answer, "", 200, chain);
}
