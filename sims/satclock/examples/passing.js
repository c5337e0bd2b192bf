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
// ±2 ns/s. The loop is slow against the delay: the offset settles within
// about 11 h from any accepted start, for any delay from 0 to 15 ticks,
// and the measurement noise moves the steer very little. It reads z only
// (u, the last applied steer, is not needed: the law never asks for more
// than the plant's slew limit lets through for long).
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
