// Bytes as they travel (docs/wire-format.md "Bytes"): a JSON string when the bytes are valid
// UTF-8, otherwise {"base64": "..."} (RFC 4648, standard alphabet, padded, canonical). Only web
// APIs (TextEncoder/TextDecoder), so this module runs unchanged on Node, Deno, Bun and browsers.

/** Bytes, or text (its UTF-8 bytes). Accepted wherever the API takes bytes. */
export type BytesLike = Uint8Array | string;

/** The wire form of bytes. */
export type WireBytes = string | { base64: string };

const encoder = new TextEncoder();
// fatal: invalid UTF-8 (overlong forms, surrogates, > U+10FFFF, truncated) throws.
// ignoreBOM: a leading U+FEFF is part of the bytes, never swallowed.
const strictDecoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const lenientDecoder = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });

export function utf8(text: string): Uint8Array {
  return encoder.encode(text);
}

/** The bytes as text; invalid sequences become U+FFFD. */
export function text(bytes: Uint8Array): string {
  return lenientDecoder.decode(bytes);
}

/** The text of the bytes when they are valid UTF-8, else undefined. */
export function strictText(bytes: Uint8Array): string | undefined {
  try {
    return strictDecoder.decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * A caller's bytes or text as it goes on the wire. Text is made well-formed first (a lone
 * surrogate becomes U+FFFD, as TextEncoder does), so the JSON sent and the bytes hashed agree.
 */
export function toWire(value: BytesLike): WireBytes {
  if (typeof value === "string") return value.isWellFormed() ? value : value.toWellFormed();
  const asText = strictText(value);
  return asText !== undefined ? asText : { base64: base64Encode(value) };
}

/** The bytes a wire value stands for; throws TypeError on a malformed value. */
export function fromWire(value: unknown): Uint8Array {
  if (typeof value === "string") return encoder.encode(value);
  if (value !== null && typeof value === "object" && !Array.isArray(value)) {
    const keys = Object.keys(value);
    const b64 = (value as { base64?: unknown }).base64;
    if (keys.length === 1 && typeof b64 === "string") return base64Decode(b64);
  }
  throw new TypeError("is neither a string nor {\"base64\": ...}");
}

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const DECODE = new Int16Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) DECODE[ALPHABET.charCodeAt(i)] = i;

export function base64Encode(bytes: Uint8Array): string {
  let out = "";
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out += ALPHABET[n >> 18]! + ALPHABET[(n >> 12) & 63]! + ALPHABET[(n >> 6) & 63]! + ALPHABET[n & 63]!;
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = bytes[i]! << 16;
    out += ALPHABET[n >> 18]! + ALPHABET[(n >> 12) & 63]! + "==";
  } else if (rest === 2) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8);
    out += ALPHABET[n >> 18]! + ALPHABET[(n >> 12) & 63]! + ALPHABET[(n >> 6) & 63]! + "=";
  }
  return out;
}

/** Strict RFC 4648 decoding: padded, no whitespace, zero unused bits (canonical). */
export function base64Decode(s: string): Uint8Array {
  if (s.length % 4 !== 0) throw new TypeError("base64 length is not a multiple of 4");
  let pad = 0;
  if (s.endsWith("==")) pad = 2;
  else if (s.endsWith("=")) pad = 1;
  const out = new Uint8Array((s.length / 4) * 3 - pad);
  let o = 0;
  for (let i = 0; i < s.length; i += 4) {
    const last = i + 4 === s.length;
    const q = [0, 0, 0, 0];
    for (let j = 0; j < 4; j++) {
      const c = s.charCodeAt(i + j);
      if (last && c === 61 /* = */ && j >= 4 - pad) continue;
      const d = c < 128 ? DECODE[c]! : -1;
      if (d < 0) throw new TypeError("base64 has a character outside the alphabet");
      q[j] = d;
    }
    const n = (q[0]! << 18) | (q[1]! << 12) | (q[2]! << 6) | q[3]!;
    out[o++] = n >> 16;
    if (!last || pad < 2) out[o++] = (n >> 8) & 255;
    else if ((n & 0xffff) !== 0) throw new TypeError("base64 is not canonical");
    if (!last || pad < 1) out[o++] = n & 255;
    else if ((n & 0xff) !== 0) throw new TypeError("base64 is not canonical");
  }
  return out;
}

export function hex(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i++) out += HEX[bytes[i]!]!;
  return out;
}
const HEX: string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));
