// SHA-256 and HMAC-SHA256 behind a small shim: node:crypto when the runtime has it (Node, Deno
// and Bun all do; its hash is synchronous, which keeps the per-answer checks in microseconds),
// otherwise WebCrypto (crypto.subtle), which every one of them and the browsers have.

import { hex } from "./bytes.js";

type SyncHash = (data: Uint8Array) => string;
type SyncHmac = (key: Uint8Array, data: Uint8Array) => string;

interface NodeCryptoLike {
  createHash(algorithm: string): { update(data: Uint8Array): { digest(encoding: "hex"): string } };
  createHmac(algorithm: string, key: Uint8Array): { update(data: Uint8Array): { digest(encoding: "hex"): string } };
}

let syncHash: SyncHash | undefined;
let syncHmac: SyncHmac | undefined;
try {
  const nodeCrypto = (await import("node:crypto")) as unknown as NodeCryptoLike;
  syncHash = (data) => nodeCrypto.createHash("sha256").update(data).digest("hex");
  syncHmac = (key, data) => nodeCrypto.createHmac("sha256", key).update(data).digest("hex");
} catch {
  syncHash = undefined;
}

/** Lowercase hex SHA-256. Synchronous where node:crypto exists, else awaits WebCrypto. */
export function sha256Hex(data: Uint8Array): string | Promise<string> {
  if (syncHash) return syncHash(data);
  return crypto.subtle.digest("SHA-256", data as Uint8Array<ArrayBuffer>).then((d) => hex(new Uint8Array(d)));
}

/** Lowercase hex HMAC-SHA256. */
export async function hmacSha256Hex(key: Uint8Array, data: Uint8Array): Promise<string> {
  if (syncHmac) return syncHmac(key, data);
  const k = await crypto.subtle.importKey("raw", key as Uint8Array<ArrayBuffer>, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return hex(new Uint8Array(await crypto.subtle.sign("HMAC", k, data as Uint8Array<ArrayBuffer>)));
}

/** 32 lowercase hex digits from the system's CSPRNG (crypto.getRandomValues). */
export function newRequestId(): string {
  const b = new Uint8Array(16);
  crypto.getRandomValues(b);
  return hex(b);
}
