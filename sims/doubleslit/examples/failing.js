// Double slit, 16 sources (docs/plants/doubleslit.md), the failing example:
// the textbook steering phases. To aim a uniform linear array at sin θ0,
// source k gets the phase −2π (d/λ) k sin θ0, so that every source's wave
// arrives in step at that angle; here sin θ0 is the target bin's
// −1 + j0/32 (j0 is state[64], d/λ is state[65]), each phase wrapped to
// (−π, π]. On an ideal array it would put 86 % of the power into the
// target window. But the plant's sources carry unknown phase errors (up to
// a full turn on the default scenario) and drift, which this law never
// looks at: it ignores the measured pattern, and the beam it forms is a
// random speckle with a few per cent of the power in the window.
//
// The arithmetic is plain doubles, left to right, so that the same law in
// sims/doubleslit/doubleslit_test.cc gives the same bits.
function control(...state) {
  const sine = -1 + state[64] / 32;
  const phases = [];
  for (let k = 0; k < 16; k++) {
    let p = -2 * Math.PI * state[65] * k * sine;
    while (p > Math.PI) p = p - 2 * Math.PI;
    while (p <= -Math.PI) p = p + 2 * Math.PI;
    phases.push(p);
  }
  return phases;
}
