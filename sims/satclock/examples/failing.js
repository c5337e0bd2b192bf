// Satellite clock (docs/plants/satclock.md), the failing example: the
// passing example's proportional term alone, u = −0.0005·z. It is stable
// through the measurement delay and pulls a large offset in, but nothing in
// it learns the clock's own frequency offset (the orbit's relativistic
// drift plus the oscillator's offset): the offset settles where the steer
// just cancels that drift, x = y/0.0005, which on the default scenario
// (y ≈ 0.32 ns/s at first, growing with the aging) is about 650 to 690 ns,
// far outside the ±10 ns band. It finishes the trial with score 0.
//
// The arithmetic is plain doubles, so that the same law in
// sims/satclock/satclock_test.cc gives the same bits.
function control(z, u) {
  return -0.0005 * z;
}
