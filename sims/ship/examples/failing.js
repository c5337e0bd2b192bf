// Ship heading (docs/plants/ship.md): the passing PD law with the sign of
// the yaw-rate term flipped, rudder = 3·(30 − ψ) + 30·r. The "damping" now
// pushes the turn on: the heading swings through 30° and back in a growing
// oscillation until the rudder saturates, a limit cycle of about ±65° that
// is almost never within 2° of the course. Plain double arithmetic, left to
// right, as ship_test.cc's native copy of this law.
function control(psi, r, delta) {
  return 3 * (30 - psi) + 30 * r;
}
