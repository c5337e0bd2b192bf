// performance (now, timeOrigin, toJSON), crypto (getRandomValues,
// randomUUID, from the host's CSPRNG) and fetch (rejects: a run has no
// network). Loaded by guest/web.c on first use of any of them.
(function (native) {
  'use strict';

  class Performance {
    constructor(token) {
      if (token !== native) throw new TypeError('Illegal constructor');
    }
    now() { return native.now(); }
    get timeOrigin() { return native.timeOrigin; }
    toJSON() { return { timeOrigin: native.timeOrigin }; }
  }
  Object.defineProperty(Performance.prototype, Symbol.toStringTag, { value: 'Performance', configurable: true });
  const performance = new Performance(native);

  const kIntegerArrays = ['Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array',
                          'Int32Array', 'Uint32Array', 'BigInt64Array', 'BigUint64Array'];
  const kQuotaBytes = 65536;

  class Crypto {
    constructor(token) {
      if (token !== native) throw new TypeError('Illegal constructor');
    }
    getRandomValues(array) {
      if (!ArrayBuffer.isView(array) || array instanceof DataView ||
          !kIntegerArrays.includes(Object.prototype.toString.call(array).slice(8, -1))) {
        throw new DOMException('The data argument must be an integer-type TypedArray', 'TypeMismatchError');
      }
      if (array.byteLength > kQuotaBytes) {
        throw new DOMException(`The ArrayBufferView's byte length (${array.byteLength}) exceeds the number ` +
                               `of bytes of entropy available via this API (${kQuotaBytes})`, 'QuotaExceededError');
      }
      native.randomFill(array.buffer, array.byteOffset, array.byteLength);
      return array;
    }
    randomUUID() {
      const b = this.getRandomValues(new Uint8Array(16));
      b[6] = (b[6] & 0x0f) | 0x40; // version 4
      b[8] = (b[8] & 0x3f) | 0x80; // variant 10
      let hex = '';
      for (let i = 0; i < 16; i++) {
        hex += (b[i] < 16 ? '0' : '') + b[i].toString(16);
        if (i === 3 || i === 5 || i === 7 || i === 9) hex += '-';
      }
      return hex;
    }
  }
  Object.defineProperty(Crypto.prototype, Symbol.toStringTag, { value: 'Crypto', configurable: true });
  const crypto = new Crypto(native);

  // No grant, no broker yet: every fetch rejects, as a host with no network
  // would (a TypeError, like Node's "fetch failed").
  async function fetch(input, init = undefined) {
    const error = new TypeError(
      'fetch failed: this run has no network (plimsoll gives snippets no network access; ' +
      'host.call reaches the operator\'s APIs when the run has a grant).');
    error.code = 'ERR_NO_NETWORK';
    throw error;
  }

  return { performance, crypto, fetch };
})
