// One error type (clients/README.md "Errors"): PlimsollError, with the kinds RefusedError (the
// "nothing ran" mark is present) and DataLossError (code data_loss: the answer was not believed).
// A non-zero exit code is a result, never an error.

/** Why nothing ran (SPEC §3): the daemon's `not_dispatched`, or the client's own refusal. */
export type Reason =
  | "request"
  | "permission"
  | "protocol"
  | "unsupported"
  | "isolation"
  | "capacity"
  | "environment";

export const REASONS: readonly Reason[] = [
  "request", "permission", "protocol", "unsupported", "isolation", "capacity", "environment",
];

/** The wire error codes (api/openapi.yaml ErrorCode). */
export type ErrorCode =
  | "invalid_argument"
  | "unauthenticated"
  | "permission_denied"
  | "failed_precondition"
  | "resource_exhausted"
  | "unimplemented"
  | "not_found"
  | "deadline_exceeded"
  | "internal"
  | "data_loss";

export const ERROR_CODES: readonly ErrorCode[] = [
  "invalid_argument", "unauthenticated", "permission_denied", "failed_precondition",
  "resource_exhausted", "unimplemented", "not_found", "deadline_exceeded", "internal", "data_loss",
];

const RETRYABLE: ReadonlySet<Reason> = new Set<Reason>(["unsupported", "isolation", "environment", "capacity"]);

/** True only for the four reasons another daemon may not share (SPEC §12). */
export function isRetryableReason(reason: Reason | null | undefined): boolean {
  return reason != null && RETRYABLE.has(reason);
}

export interface ErrorDetails {
  notDispatched?: Reason | null;
  requestId?: string | null;
  httpStatus?: number | null;
}

export class PlimsollError extends Error {
  /** The wire code (`failed_precondition`, `data_loss`, ...). */
  readonly code: ErrorCode;
  /** The "nothing ran" mark, or null when the call may have run. */
  readonly notDispatched: Reason | null;
  /** The Plimsoll-Request-Id this call sent (null when nothing was sent). */
  readonly requestId: string | null;
  /** The HTTP status of the answer, or null when there was none. */
  readonly httpStatus: number | null;

  constructor(code: ErrorCode, message: string, details: ErrorDetails = {}) {
    super(message);
    this.code = code;
    this.notDispatched = details.notDispatched ?? null;
    this.requestId = details.requestId ?? null;
    this.httpStatus = details.httpStatus ?? null;
    this.name = "PlimsollError";
  }

  /** false: provably nothing ran; "unknown": the call may have run (SPEC §11). */
  get ran(): false | "unknown" {
    return this.notDispatched === null ? "unknown" : false;
  }

  /** True only for a refusal marked unsupported, isolation, environment or capacity. */
  get isRetryable(): boolean {
    return isRetryableReason(this.notDispatched);
  }

  override toString(): string {
    const mark = this.notDispatched ? `, not dispatched: ${this.notDispatched}` : "";
    return `${this.name} [${this.code}${mark}]: ${this.message}`;
  }

  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      code: this.code,
      message: this.message,
      not_dispatched: this.notDispatched,
      request_id: this.requestId,
      http_status: this.httpStatus,
      ran: this.ran,
      is_retryable: this.isRetryable,
    };
  }
}

/** A refusal carrying the "nothing ran" mark: safe to fix and resend. */
export class RefusedError extends PlimsollError {
  declare readonly notDispatched: Reason;
  constructor(code: ErrorCode, message: string, details: ErrorDetails & { notDispatched: Reason }) {
    super(code, message, details);
    this.name = "RefusedError";
  }
}

/** The answer was not believed (code data_loss); the call may have run. Never retry blindly. */
export class DataLossError extends PlimsollError {
  constructor(message: string, details: Omit<ErrorDetails, "notDispatched"> = {}) {
    super("data_loss", message, { ...details, notDispatched: null });
    this.name = "DataLossError";
  }
}

/** The error for a daemon's answer that passed the checks. */
export function errorFromDaemon(code: ErrorCode, message: string, details: ErrorDetails): PlimsollError {
  if (details.notDispatched) return new RefusedError(code, message, { ...details, notDispatched: details.notDispatched });
  if (code === "data_loss") return new DataLossError(message, details);
  return new PlimsollError(code, message, details);
}

/** A refusal made by the client before sending (bad URL or option): nothing ran. */
export function clientRefusal(code: ErrorCode, message: string, reason: Reason = "request"): RefusedError {
  return new RefusedError(code, message, { notDispatched: reason });
}
