const source = { n: 1, s: 'x', d: new Date(0), r: /a+/gi, m: new Map([[1, { k: 'v' }]]), set: new Set([1, 2]),
  arr: [1, , 3], big: 10n, nested: { deep: [{ x: 1 }] }, u8: new Uint8Array([1, 2, 3]), buf: new ArrayBuffer(4),
  err: new RangeError('bad'), nul: null, und: undefined, bool: new Boolean(false) };
source.self = source;
const copy = structuredClone(source);
console.log(copy !== source, copy.self === copy, copy.d instanceof Date, copy.d.getTime(), copy.r.source, copy.r.flags);
console.log(copy.m.get(1).k, copy.m.get(1) !== source.m.get(1), copy.set.has(2), copy.arr.length, 1 in copy.arr, copy.big);
console.log(copy.nested.deep[0].x, copy.u8 instanceof Uint8Array, Array.from(copy.u8).join(), copy.buf.byteLength);
console.log(copy.err instanceof RangeError, copy.err.message, copy.nul, copy.und, 'und' in copy, typeof copy.bool, copy.bool.valueOf());
const shared = { v: 1 };
const pair = structuredClone([shared, shared]);
console.log(pair[0] === pair[1]);
class Point { constructor() { this.x = 1; } get y() { return 2; } }
const pt = structuredClone(new Point());
console.log(pt instanceof Point, JSON.stringify(pt));
for (const bad of [() => 1, Symbol('s'), { f() {} }, new WeakMap()]) {
  try { structuredClone(bad); console.log('cloned'); } catch (e) { console.log(e.name, e instanceof DOMException, e.code); }
}
console.log(structuredClone('str'), structuredClone(42), structuredClone(null));
