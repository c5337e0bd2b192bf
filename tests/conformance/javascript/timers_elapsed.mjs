const t = Date.now();
const p = performance.now();
await new Promise(r => setTimeout(r, 1500));
const elapsed = Date.now() - t;
const perf = performance.now() - p;
console.log('elapsed in 1500-1600:', elapsed >= 1500 && elapsed <= 1600, elapsed >= 1500 && elapsed <= 1600 ? '' : elapsed);
// Both clocks advance; they agree to 100 ms (a frozen clock is off by 1500). Inside a microvm
// under TCG the guest's CLOCK_REALTIME and CLOCK_MONOTONIC were measured 33 ms apart over 1.5 s.
console.log('performance.now agrees:', Math.abs(perf - elapsed) < 100);
