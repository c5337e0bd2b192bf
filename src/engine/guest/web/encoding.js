// TextEncoder, TextDecoder (Encoding Standard, UTF-8 only: the fatal and
// ignoreBOM options, streaming decode) and atob/btoa (HTML's forgiving
// base64). Loaded by guest/web.c on first use of any of them.
(function (native) {
  'use strict';

  // ---- UTF-8 encode ---------------------------------------------------

  // Encodes `text` (lone surrogates become U+FFFD, as USVString conversion)
  // into `bytes` from 0; stops before a character that does not fit.
  // Returns [code units read, bytes written].
  function encodeInto(text, bytes) {
    let read = 0;
    let written = 0;
    const capacity = bytes.length;
    const length = text.length;
    while (read < length) {
      let c = text.charCodeAt(read);
      let units = 1;
      if (c >= 0xd800 && c <= 0xdfff) {
        const next = read + 1 < length ? text.charCodeAt(read + 1) : 0;
        if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
          c = 0x10000 + ((c - 0xd800) << 10) + (next - 0xdc00);
          units = 2;
        } else {
          c = 0xfffd;
        }
      }
      if (c < 0x80) {
        if (written + 1 > capacity) break;
        bytes[written++] = c;
      } else if (c < 0x800) {
        if (written + 2 > capacity) break;
        bytes[written++] = 0xc0 | (c >> 6);
        bytes[written++] = 0x80 | (c & 0x3f);
      } else if (c < 0x10000) {
        if (written + 3 > capacity) break;
        bytes[written++] = 0xe0 | (c >> 12);
        bytes[written++] = 0x80 | ((c >> 6) & 0x3f);
        bytes[written++] = 0x80 | (c & 0x3f);
      } else {
        if (written + 4 > capacity) break;
        bytes[written++] = 0xf0 | (c >> 18);
        bytes[written++] = 0x80 | ((c >> 12) & 0x3f);
        bytes[written++] = 0x80 | ((c >> 6) & 0x3f);
        bytes[written++] = 0x80 | (c & 0x3f);
      }
      read += units;
    }
    return [read, written];
  }

  class TextEncoder {
    get encoding() { return 'utf-8'; }
    encode(input = '') {
      const text = String(input);
      const scratch = new Uint8Array(text.length * 3);
      const [, written] = encodeInto(text, scratch);
      return scratch.slice(0, written);
    }
    encodeInto(source, destination) {
      if (!(destination instanceof Uint8Array)) {
        throw new TypeError('The "dest" argument must be an instance of Uint8Array.');
      }
      const [read, written] = encodeInto(String(source), destination);
      return { read, written };
    }
  }
  Object.defineProperty(TextEncoder.prototype, Symbol.toStringTag, { value: 'TextEncoder', configurable: true });

  // ---- UTF-8 decode ---------------------------------------------------

  const kUtf8Labels = ['unicode-1-1-utf-8', 'unicode11utf8', 'unicode20utf8', 'utf-8', 'utf8', 'x-unicode20utf8'];

  function bytesOf(input) {
    if (input === undefined) return new Uint8Array(0);
    if (input instanceof ArrayBuffer) return new Uint8Array(input);
    if (ArrayBuffer.isView(input)) return new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
    if (typeof SharedArrayBuffer === 'function' && input instanceof SharedArrayBuffer) return new Uint8Array(input);
    throw new TypeError('The "input" argument must be an instance of ArrayBuffer or ArrayBufferView.');
  }

  const decoderState = new WeakMap();
  function dec(decoder) {
    const found = decoderState.get(decoder);
    if (!found) throw new TypeError('Illegal invocation');
    return found;
  }

  class TextDecoder {
    constructor(label = 'utf-8', options = undefined) {
      const name = String(label).trim().toLowerCase();
      if (!kUtf8Labels.includes(name)) {
        throw new RangeError(`The "${label}" encoding is not supported`);
      }
      const o = options == null ? {} : options;
      decoderState.set(this, {
        fatal: !!o.fatal,
        ignoreBOM: !!o.ignoreBOM,
        // streaming state (Encoding Standard's UTF-8 decoder)
        codePoint: 0, needed: 0, seen: 0, lower: 0x80, upper: 0xbf,
        bomSeen: false,
      });
    }
    get encoding() { return 'utf-8'; }
    get fatal() { return dec(this).fatal; }
    get ignoreBOM() { return dec(this).ignoreBOM; }
    decode(input = undefined, options = undefined) {
      const s = dec(this);
      const bytes = bytesOf(input);
      const stream = options != null && !!options.stream;
      const units = [];
      let out = '';
      const flush = () => {
        out += String.fromCharCode.apply(null, units);
        units.length = 0;
      };
      const emit = (cp) => {
        if (!s.bomSeen) {
          s.bomSeen = true;
          if (cp === 0xfeff && !s.ignoreBOM) return;
        }
        if (cp < 0x10000) {
          units.push(cp);
        } else {
          cp -= 0x10000;
          units.push(0xd800 + (cp >> 10), 0xdc00 + (cp & 0x3ff));
        }
        if (units.length >= 8192) flush();
      };
      const error = () => {
        if (s.fatal) {
          reset(s);
          throw new TypeError('The encoded data was not valid for encoding utf-8');
        }
        emit(0xfffd);
      };
      for (let i = 0; i < bytes.length; i++) {
        const b = bytes[i];
        if (s.needed === 0) {
          if (b < 0x80) { emit(b); continue; }
          if (b >= 0xc2 && b <= 0xdf) { s.needed = 1; s.codePoint = b & 0x1f; continue; }
          if (b >= 0xe0 && b <= 0xef) {
            if (b === 0xe0) s.lower = 0xa0;
            if (b === 0xed) s.upper = 0x9f;
            s.needed = 2; s.codePoint = b & 0xf; continue;
          }
          if (b >= 0xf0 && b <= 0xf4) {
            if (b === 0xf0) s.lower = 0x90;
            if (b === 0xf4) s.upper = 0x8f;
            s.needed = 3; s.codePoint = b & 0x7; continue;
          }
          error();
          continue;
        }
        if (b < s.lower || b > s.upper) {
          // the sequence ends before this byte, which is processed again
          s.codePoint = 0; s.needed = 0; s.seen = 0; s.lower = 0x80; s.upper = 0xbf;
          error();
          i--;
          continue;
        }
        s.lower = 0x80; s.upper = 0xbf;
        s.codePoint = (s.codePoint << 6) | (b & 0x3f);
        if (++s.seen === s.needed) {
          const cp = s.codePoint;
          s.codePoint = 0; s.needed = 0; s.seen = 0;
          emit(cp);
        }
      }
      if (!stream) {
        if (s.needed !== 0) {
          s.codePoint = 0; s.needed = 0; s.seen = 0; s.lower = 0x80; s.upper = 0xbf;
          error();
        }
        s.bomSeen = false;
      }
      flush();
      return out;
    }
  }
  function reset(s) {
    s.codePoint = 0; s.needed = 0; s.seen = 0; s.lower = 0x80; s.upper = 0xbf; s.bomSeen = false;
  }
  Object.defineProperty(TextDecoder.prototype, Symbol.toStringTag, { value: 'TextDecoder', configurable: true });

  // ---- base64 ---------------------------------------------------------

  const kAlphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  const kValue = new Int16Array(128).fill(-1);
  for (let i = 0; i < 64; i++) kValue[kAlphabet.charCodeAt(i)] = i;

  function invalid(message) {
    return new DOMException(message, 'InvalidCharacterError');
  }

  function btoa(data) {
    if (arguments.length === 0) throw new TypeError('The "data" argument must be specified');
    const text = String(data);
    let out = '';
    for (let i = 0; i < text.length; i += 3) {
      const a = text.charCodeAt(i);
      const b = i + 1 < text.length ? text.charCodeAt(i + 1) : 0;
      const c = i + 2 < text.length ? text.charCodeAt(i + 2) : 0;
      if (a > 255 || b > 255 || c > 255) throw invalid('Invalid character');
      const n = (a << 16) | (b << 8) | c;
      out += kAlphabet[n >> 18] + kAlphabet[(n >> 12) & 63] +
        (i + 1 < text.length ? kAlphabet[(n >> 6) & 63] : '=') +
        (i + 2 < text.length ? kAlphabet[n & 63] : '=');
    }
    return out;
  }

  function atob(data) {
    if (arguments.length === 0) throw new TypeError('The "data" argument must be specified');
    let text = String(data).replace(/[\t\n\f\r ]+/g, '');
    if (text.length % 4 === 0) text = text.replace(/==?$/, '');
    if (text.length % 4 === 1) throw invalid('The string to be decoded is not correctly encoded.');
    let out = '';
    let buffer = 0;
    let bits = 0;
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      const value = code < 128 ? kValue[code] : -1;
      if (value < 0) throw invalid('The string to be decoded is not correctly encoded.');
      buffer = ((buffer << 6) | value) & 0xffffff;
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        out += String.fromCharCode((buffer >> bits) & 0xff);
      }
    }
    return out;
  }

  return { TextEncoder, TextDecoder, atob, btoa };
})
