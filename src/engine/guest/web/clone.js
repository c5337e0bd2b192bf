// structuredClone (HTML's structured serialisation, in one step): primitives
// but symbols, the wrapper objects, Date, RegExp, ArrayBuffer, typed arrays,
// DataView, Map, Set, Array, Error types and plain objects (own enumerable
// string keys; class instances come back as plain objects), with shared and
// circular references kept. Anything else (functions, symbols, WeakMap,
// Promise, ...) throws a DOMException "DataCloneError". `transfer` is not
// supported (a non-empty list throws). Loaded by guest/web.c.
(function (native) {
  'use strict';

  const kErrors = { Error, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError };
  const toStringTag = (value) => Object.prototype.toString.call(value).slice(8, -1);

  function fail(value) {
    let text;
    try {
      text = typeof value === 'symbol' ? value.toString() : native.inspect(value, 0, 3);
    } catch {
      text = 'The value';
    }
    return new DOMException(text + ' could not be cloned.', 'DataCloneError');
  }

  function clone(value, memory) {
    if (typeof value === 'symbol') throw fail(value);
    if (typeof value === 'function') throw fail(value);
    if (value === null || typeof value !== 'object') return value;
    if (memory.has(value)) return memory.get(value);
    const tag = toStringTag(value);
    let out;
    if (Array.isArray(value)) {
      out = new Array(value.length);
      memory.set(value, out);
      for (const key of Object.keys(value)) out[key] = clone(value[key], memory);
      return out;
    }
    if (value instanceof Date) {
      out = new Date(value.getTime());
    } else if (value instanceof RegExp) {
      out = new RegExp(value.source, value.flags);
    } else if (value instanceof ArrayBuffer) {
      out = value.slice(0);
    } else if (ArrayBuffer.isView(value)) {
      const buffer = clone(value.buffer, memory);
      out = value instanceof DataView
        ? new DataView(buffer, value.byteOffset, value.byteLength)
        : new value.constructor(buffer, value.byteOffset, value.length);
    } else if (value instanceof Map) {
      out = new Map();
      memory.set(value, out);
      for (const [k, v] of value) out.set(clone(k, memory), clone(v, memory));
      return out;
    } else if (value instanceof Set) {
      out = new Set();
      memory.set(value, out);
      for (const v of value) out.add(clone(v, memory));
      return out;
    } else if (value instanceof Error) {
      const name = Object.prototype.hasOwnProperty.call(kErrors, value.name) ? value.name : 'Error';
      out = new kErrors[name]();
      memory.set(value, out);
      const message = value.message;
      if (message !== undefined) {
        Object.defineProperty(out, 'message', { value: String(message), writable: true, configurable: true });
      }
      if (typeof value.stack === 'string') {
        Object.defineProperty(out, 'stack', { value: value.stack, writable: true, configurable: true });
      }
      if ('cause' in value) {
        Object.defineProperty(out, 'cause', { value: clone(value.cause, memory), writable: true, configurable: true });
      }
      return out;
    } else if (tag === 'Boolean' || tag === 'Number' || tag === 'String' || tag === 'BigInt') {
      out = Object(value.valueOf());
    } else if (tag === 'Object' || tag === 'Arguments' || Object.getPrototypeOf(value) === null ||
               !['WeakMap', 'WeakSet', 'WeakRef', 'Promise', 'Proxy', 'FinalizationRegistry',
                 'Generator', 'AsyncGenerator'].includes(tag)) {
      if (tag !== 'Object' && tag !== 'Arguments' && !isPlainEnough(value)) throw fail(value);
      out = {};
      memory.set(value, out);
      for (const key of Object.keys(value)) out[key] = clone(value[key], memory);
      return out;
    } else {
      throw fail(value);
    }
    memory.set(value, out);
    return out;
  }

  // Platform objects (URL, Event, TextEncoder...) have a toStringTag of
  // their own and cannot be cloned; class instances of the script's own can.
  function isPlainEnough(value) {
    const prototype = Object.getPrototypeOf(value);
    return prototype === null || !Object.prototype.hasOwnProperty.call(prototype, Symbol.toStringTag);
  }

  function structuredClone(value, options = undefined) {
    if (arguments.length === 0) throw new TypeError('The "value" argument must be specified');
    if (options != null && options.transfer !== undefined && Array.from(options.transfer).length > 0) {
      throw new DOMException('Transferring objects is not supported.', 'DataCloneError');
    }
    return clone(value, new Map());
  }

  return { structuredClone };
})
