// Timers fire in due order (then creation order), microtasks run before the
// next timer, a cleared timer never fires, an interval clears itself.
// Due times are at least 80 ms apart so that a loaded machine does not reorder them.
const log = [];
setTimeout(() => log.push('t600'), 600);
const cancelled = setTimeout(() => log.push('cancelled'), 50);
setTimeout((a, b) => log.push('args ' + a + b), 400, 'x', 'y');
setTimeout(() => log.push('t120'), 120);
clearTimeout(cancelled);
clearTimeout(undefined);
clearTimeout(12345);
setTimeout(() => log.push('same due, first'), 800);
setTimeout(() => log.push('same due, second'), 800);
Promise.resolve().then(() => log.push('microtask'));
queueMicrotask(() => log.push('queued'));
setTimeout(() => {
  log.push('outer');
  Promise.resolve().then(() => log.push('outer microtask'));
  setTimeout(() => log.push('nested'), 0);
}, 0);
let n = 0;
const every = setInterval(() => {
  log.push('tick ' + ++n);
  if (n === 3) {
    clearInterval(every);
    setTimeout(() => console.log(log.join('\n')), 200);
  }
}, 240);
log.push('sync');
