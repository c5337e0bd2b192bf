console.log(typeof globalThis, globalThis === this || globalThis.globalThis === globalThis);
for (const name of ['queueMicrotask', 'structuredClone', 'atob', 'btoa', 'setTimeout', 'setInterval', 'clearTimeout',
                    'clearInterval', 'TextEncoder', 'TextDecoder', 'URL', 'URLSearchParams', 'AbortController',
                    'AbortSignal', 'Event', 'EventTarget', 'CustomEvent', 'DOMException', 'fetch']) {
  console.log(name, typeof globalThis[name]);
}
console.log(typeof performance, typeof performance.now(), performance.now() >= 0, typeof performance.timeOrigin,
            Math.abs(performance.timeOrigin + performance.now() - Date.now()) < 50);
console.log(typeof crypto, typeof crypto.getRandomValues, typeof crypto.randomUUID);
const bytes = crypto.getRandomValues(new Uint8Array(64));
console.log(bytes.length, bytes.some((b) => b !== 0), crypto.getRandomValues(new Uint32Array(4)).length);
console.log(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(crypto.randomUUID()),
            crypto.randomUUID() !== crypto.randomUUID());
try { crypto.getRandomValues(new Float64Array(2)); } catch (e) { console.log(e.name); }
try { crypto.getRandomValues(new Uint8Array(65537)); } catch (e) { console.log(e.name); }
const t0 = performance.now();
await new Promise((r) => setTimeout(r, 100));
const waited = performance.now() - t0;
console.log('performance.now advanced', waited >= 99 && waited < 400);
try {
  await fetch('http://127.0.0.1:9/');
  console.log('fetched');
} catch (e) {
  console.log('fetch rejected', e instanceof TypeError);
}
let order = [];
queueMicrotask(() => order.push('micro'));
await null;
order.push('after');
console.log(order.join());
