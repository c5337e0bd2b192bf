// @plimsoll/client: run untrusted code on a plimsolld and believe an answer only after checking
// it (the echo, the tier against the floor, the record digests, the session chain).
// Adapters for agent frameworks will live beside this entry point as subpath exports
// (src/adapters/<name>.ts -> "@plimsoll/client/<name>").

export { Client, VERSION, type ClientOptions } from "./client.js";
export { Session, type CellOptions } from "./session.js";
export { Pool, type PoolOptions } from "./pool.js";
export { Result } from "./wire.js";
export {
  PlimsollError, RefusedError, DataLossError, isRetryableReason, REASONS, ERROR_CODES,
  type Reason, type ErrorCode,
} from "./errors.js";
export { meetsFloor, PACKAGE_SOURCES, TIERS } from "./types.js";
export type {
  Tier, Kind, Outcome, Language, RunOptions, ProjectFile, ProjectSpec, RequestBytes, WireRequest,
  SentRequest, RunRecord, StepResult, Artifact, Display, BrokerSummary, BrokerRoute, Advice, Limits,
  Capabilities, Description, ImageInfo, ImagePackage, PackageSource, SessionOptions, SessionState,
  SessionClosed,
} from "./types.js";
export type { BytesLike, WireBytes } from "./bytes.js";
export * as digest from "./digest-api.js";
export { checkExchange, type ChainState } from "./exchange.js";
