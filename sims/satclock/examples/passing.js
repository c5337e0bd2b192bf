// Satellite clock (docs/plants/satclock.md), the passing example: a PI law
// on the measured time offset z, slow enough for the measurement delay.
// The proportional term (0.0005 ns/s per ns: 3 % of the offset removed per
// 60 s tick) is limited to ±2 ns/s, so a large initial offset is pulled in
// at a steady rate rather than with a steer the delay would overshoot. The
// integral (0.000008 ns/s per ns per tick) learns the steer that cancels
// the clock's own frequency offset (the relativistic drift of the orbit
// plus the oscillator's offset and aging, up to about ±0.9 ns/s), which the
// controller is not told; it integrates only while the proportional term is
// not limited (so the pull-in does not wind it up) and is kept within
// ±2 ns/s. The loop is slow against the delay: in every scenario tried
// (the test's five; the corners of the ranges and 400 random ones while
// tuning) the offset was within the band for the whole scored span, from
// 12 h on, and the measurement noise moves the steer very little. It reads
// z only: u, the last applied steer, is not needed, since the slew limit
// (0.1 ns/s per tick) only ramps the first large steer in over 20 ticks,
// which a loop this slow tolerates. It is told nothing of the scenario.
//
// The arithmetic is plain doubles, left to right, so that the same law in
// sims/satclock/satclock_test.cc gives the same bits.
let integral = 0;

function control(z, u) {
  const p = -0.0005 * z;
  if (Math.abs(p) < 2) integral = integral - 0.000008 * z;
  integral = Math.min(2, Math.max(-2, integral));
  return integral + Math.min(2, Math.max(-2, p));
}
