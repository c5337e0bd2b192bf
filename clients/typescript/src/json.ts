// A strict JSON reader for answers: RFC 8259 syntax, and a key repeated in one object is an
// error (JSON.parse would silently keep the last one, so a proxy could hide a field behind its
// twin). Strings are decoded by JSON.parse itself, numbers by Number(); `-0.0` stays -0.

export class JsonError extends Error {}

const MAX_DEPTH = 128;

export function parseStrict(text: string): unknown {
  let i = 0;
  const n = text.length;

  const fail = (what: string): never => {
    throw new JsonError(`${what} at offset ${i}`);
  };
  const ws = (): void => {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 32 || c === 10 || c === 13 || c === 9) i++;
      else break;
    }
  };
  const string = (): string => {
    const start = i;
    i++; // opening quote
    let escaped = false;
    for (;;) {
      if (i >= n) fail("unterminated string");
      const c = text.charCodeAt(i);
      if (c === 34) break;
      if (c < 32) fail("control character in string");
      if (c === 92) {
        escaped = true;
        i += 2;
        continue;
      }
      i++;
    }
    i++;
    const raw = text.slice(start + 1, i - 1);
    if (!escaped) return raw;
    try {
      return JSON.parse(text.slice(start, i)) as string;
    } catch {
      return fail("bad escape in string");
    }
  };
  const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
  const value = (depth: number): unknown => {
    if (depth > MAX_DEPTH) fail("nesting too deep");
    ws();
    if (i >= n) fail("unexpected end");
    const c = text.charCodeAt(i);
    if (c === 123 /* { */) {
      i++;
      const obj: Record<string, unknown> = {};
      const seen = new Set<string>();
      ws();
      if (text.charCodeAt(i) === 125) {
        i++;
        return obj;
      }
      for (;;) {
        ws();
        if (text.charCodeAt(i) !== 34) fail("expected a key");
        const key = string();
        if (seen.has(key)) fail(`repeated key "${key}"`);
        seen.add(key);
        ws();
        if (text.charCodeAt(i) !== 58) fail("expected ':'");
        i++;
        const v = value(depth + 1);
        if (key === "__proto__") Object.defineProperty(obj, key, { value: v, enumerable: true, writable: true, configurable: true });
        else obj[key] = v;
        ws();
        const d = text.charCodeAt(i);
        if (d === 44) {
          i++;
          continue;
        }
        if (d === 125) {
          i++;
          return obj;
        }
        fail("expected ',' or '}'");
      }
    }
    if (c === 91 /* [ */) {
      i++;
      const arr: unknown[] = [];
      ws();
      if (text.charCodeAt(i) === 93) {
        i++;
        return arr;
      }
      for (;;) {
        arr.push(value(depth + 1));
        ws();
        const d = text.charCodeAt(i);
        if (d === 44) {
          i++;
          continue;
        }
        if (d === 93) {
          i++;
          return arr;
        }
        fail("expected ',' or ']'");
      }
    }
    if (c === 34) return string();
    if (text.startsWith("true", i)) {
      i += 4;
      return true;
    }
    if (text.startsWith("false", i)) {
      i += 5;
      return false;
    }
    if (text.startsWith("null", i)) {
      i += 4;
      return null;
    }
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(text);
    if (!m) return fail("unexpected character");
    i += m[0].length;
    return Number(m[0]);
  };

  const result = value(0);
  ws();
  if (i !== n) fail("trailing characters");
  return result;
}
