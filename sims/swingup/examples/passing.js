// Cart-pole swing-up (docs/plants/swingup.md), the passing example: energy
// pumping, then the balance law. Far from upright it pushes the cart in
// step with the swing, F ∝ e·ω·cosθ (e, the pole's energy per m_p·l in the
// cart's frame, is −2g hanging at rest and 0 upright at rest, so it pumps
// while e < 0 and brakes past 0), limited to ±6 N so that the centring
// terms −2x − 3v keep the cart on the track. Within 0.3 rad of upright
// (the angle wrapped to (−π, π] here: the plant reports it unwrapped) it
// switches to u = 40θ + 5ω + x + v. A pole hanging exactly at rest gives
// e·ω = 0, so the first tick kicks with 6 N.
//
// The arithmetic is plain doubles, left to right, so that the same law in
// sims/swingup/swingup_test.cc does the same operations (its cos is the
// host's, this one QuickJS's: the outcomes agree, not necessarily the bits).
let ticks = 0;

function control(x, v, theta, omega) {
  ticks = ticks + 1;
  let a = theta;
  while (a > 3.141592653589793) a = a - 6.283185307179586;
  while (a <= -3.141592653589793) a = a + 6.283185307179586;
  if (Math.abs(a) < 0.3) return 40 * a + 5 * omega + x + v;
  const e = omega * omega / 3 + 9.81 * (Math.cos(theta) - 1);
  let pump = Math.min(6, Math.max(-6, 2 * e * omega * Math.cos(theta)));
  if (ticks === 1) pump = 6;
  return pump - 2 * x - 3 * v;
}
