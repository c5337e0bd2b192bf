// zero-delay timers nested 20 deep: each waits at least 1 ms (as Node)
const start = performance.now();
let depth = 0;
await new Promise(resolve => {
  const step = () => { if (++depth === 20) resolve(); else setTimeout(step, 0); };
  setTimeout(step, 0);
});
console.log(depth, performance.now() - start >= 19);
// an interval that clears itself from inside, and one cleared by a timeout
let a = 0, b = 0;
await new Promise(resolve => {
  const i = setInterval(() => { if (++a === 5) { clearInterval(i); resolve(); } }, 1);
});
const j = setInterval(() => b++, 10);
await new Promise(r => setTimeout(r, 55));
clearInterval(j);
const atClear = b;
await new Promise(r => setTimeout(r, 40));
// (how many ticks fit in 55 ms depends on the machine's load, in Node too)
console.log(a, b >= 1 && b === atClear);
