// Buck converter (docs/plants/buck.md), the passing example: a soft-started
// PI law on the output voltage with a damping term on the inductor current.
// The reference `ref` climbs 0.02 V per tick from 0 to 5 V (2.5 ms), so the
// start neither overshoots nor draws a large current. The integral (gain
// 0.02 per volt per tick, kept within [0, 2]) finds the duty that gives the
// reference whatever V_in and the load; the proportional term (0.2 per volt)
// answers a disturbance at once; −0.15·i acts as a resistance in series with
// the inductor and damps the LC resonance (Q = 10 at the default 10 Ω
// load). When the load steps at 10 ms the current rises, the voltage sags a
// little and the integral restores it within about 0.4 ms. The duty is kept
// within [0, 1]. It reads only v and i: it is not told V_in, R1 or R2.
//
// The arithmetic is plain doubles, left to right, so that the same law in
// sims/buck/buck_test.cc gives the same bits.
let ref = 0;
let integral = 0;

function control(v, i) {
  ref = Math.min(5, ref + 0.02);
  integral = integral + 0.02 * (ref - v);
  integral = Math.min(2, Math.max(0, integral));
  return Math.min(1, Math.max(0, integral + 0.2 * (ref - v) - 0.15 * i));
}
