// Double slit, 16 sources (docs/plants/doubleslit.md), the passing example:
// stochastic parallel gradient descent on the 16 phases, with a
// deterministic dither. The plant's phase errors (up to a full turn), its
// unequal amplitudes and its drift are unknown, so the controller climbs
// the one number it can measure: J, the fraction of the pattern's total
// intensity that falls in the target window (bins j0 − 2..j0 + 2; j0 is
// state[64]).
//
// It starts from the textbook steering phases for the target (d/λ is
// state[65]), wrapped to (−π, π]. Each iteration takes two ticks: it
// commands p + 0.1 b, then p − 0.1 b, where b is a ±1 row of the 16 × 16
// Walsh-Hadamard matrix (rows 1..15 in turn, stepping by 7; row 0, the
// same shift on every source, changes nothing), reads J+ and J− one tick
// later each, and moves p by 4 (J+ − J−) / (J+ + J−) along b. A phase that
// wanders past ±5 rad is brought back by a turn, so the commands stay
// inside the shifters' ±2π range. The dither costs about 1 % of the window
// power; the drift is followed as it comes. No random numbers, no
// trigonometry.
//
// The arithmetic is plain doubles, left to right, so that the same law in
// sims/doubleslit/doubleslit_test.cc gives the same bits.
let phases = null;
let iteration = 0;
let half = 0;
let plus = 0;
let row = 0;

// (−1) to the number of bits that k and r share: entry (r, k) of the
// Walsh-Hadamard matrix.
function sign(k, r) {
  let x = k & r;
  let s = 1;
  while (x !== 0) {
    if ((x & 1) === 1) s = -s;
    x = x >> 1;
  }
  return s;
}

// J: the fraction of the 64 bins' total intensity in the target window.
function windowFraction(state) {
  const target = state[64];
  let inside = 0;
  let total = 0;
  for (let j = 0; j < 64; j++) {
    total = total + state[j];
    if (Math.abs(j - target) <= 2) inside = inside + state[j];
  }
  return inside / total;
}

function control(...state) {
  if (phases === null) {
    phases = [];
    const sine = -1 + state[64] / 32;
    for (let k = 0; k < 16; k++) {
      let p = -2 * Math.PI * state[65] * k * sine;
      while (p > Math.PI) p = p - 2 * Math.PI;
      while (p <= -Math.PI) p = p + 2 * Math.PI;
      phases.push(p);
    }
  }
  if (half === 1) {
    plus = windowFraction(state);
    half = 0;
    return phases.map((p, k) => p - 0.1 * sign(k, row));
  }
  if (iteration > 0) {
    const minus = windowFraction(state);
    const change = plus + minus > 0 ? 4 * (plus - minus) / (plus + minus) : 0;
    for (let k = 0; k < 16; k++) {
      let p = phases[k] + change * sign(k, row);
      if (p > 5) p = p - 2 * Math.PI;
      if (p < -5) p = p + 2 * Math.PI;
      phases[k] = p;
    }
  }
  row = 1 + (iteration * 7) % 15;
  iteration = iteration + 1;
  half = 1;
  return phases.map((p, k) => p + 0.1 * sign(k, row));
}
