// Shower (docs/plants/shower.md), the failing example: a high-gain
// proportional law, 0.1 of full opening per degree of error around a
// half-open valve. Against a 2 s pipe delay it cannot work: at the start it
// asks for the valve wide open (the plant clamps the command to 1), keeps
// asking while the pipe still delivers the cold water it held, and closes
// only once the hot water has reached the head: too late, the head scalds
// (T_head > 50 °C) before the trial's fifth second on the default scenario.
//
// The arithmetic is plain doubles, left to right, so that the same law in
// sims/shower/shower_test.cc gives the same bits.
function control(T, a) {
  return 0.5 + 0.1 * (38 - T);
}
