// Shower (docs/plants/shower.md), the passing example: a reset-free integral
// controller. Each tick it adds 0.0004 × (38 − T) to its command and keeps the
// command within the valve's range [0, 1]. The gain is small enough for the
// 2 s pipe delay: the loop settles without scalding whatever the supply
// temperatures of the tested scenarios, and the integral finds the opening
// that gives 38 °C without knowing them. It reads only T_head; it ignores the
// valve's actual opening `a`.
//
// The arithmetic is plain doubles, left to right, so that the same law in
// sims/shower/shower_test.cc gives the same bits.
let c = 0;

function control(T, a) {
  c = c + 0.0004 * (38 - T);
  c = Math.min(1, Math.max(0, c));
  return c;
}
