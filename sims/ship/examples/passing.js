// Ship heading (docs/plants/ship.md): hold course 30° in waves.
// A PD law on the heading error: rudder = 3·(30 − ψ) − 30·r, in degrees.
// Overdamped (ζ ≈ 1.15 in the linear range) so that a large first turn, with
// the rudder saturated at ±35° and slewing at 3 °/s, does not overshoot:
// the yaw-rate term starts the counter-rudder early. The plant clamps the
// answer to ±35°. Plain double arithmetic, left to right, as ship_test.cc's
// native copy of this law.
function control(psi, r, delta) {
  return 3 * (30 - psi) - 30 * r;
}
