// Black-hole orbit (docs/plants/blackhole.md), the failing example: a PD
// law on the radius with the radial thruster only, as one would hover a
// lander over a surface: push toward r_target, damp the radial velocity.
//
// It never changes the angular momentum (only tangential thrust does), and
// an orbit's radius is set by its angular momentum: with the L of the
// 10 M circular orbit, staying at 7 M needs an inward push of about
// 0.0034, more than the thruster's 0.002. The law saturates, burns the
// whole 0.1 of Δv by tick 126 and leaves a coasting orbit that swings
// between about 8.7 M and 11.7 M: it finishes with score 0 on the default
// scenario. On others it runs out just the same, and where its pushes add
// up in the wrong phase of the radial swing it is captured or escapes.
//
// The arithmetic is plain doubles, so that the same law in
// sims/blackhole/blackhole_test.cc gives the same bits.
function control(r, ur, phi, L, E, fuel, rt) {
  return [-0.0005 * (r - rt) - 0.02 * ur, 0];
}
