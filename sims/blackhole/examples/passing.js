// Black-hole orbit (docs/plants/blackhole.md), the passing example: a slow,
// guided spiral from the start orbit to the target one, then hold.
//
// A reference radius `ref` starts at the first r it sees and moves toward
// r_target by 0.01 M per tick (about 300 ticks from 10 M to 7 M; 1350 from
// 20 M to 6.5 M), always well before the scored last 1000 ticks start. The
// tangential thrust steers the angular momentum L to that of a circular
// orbit at ref, r/√(r − 3) in units of M (a first-order loop, 0.01 per
// tick: L changes only by thrust); the radial thrust is a PD law that pulls
// r to ref and damps the radial velocity u_r. Because the spiral is slow,
// the orbit stays nearly circular the whole way, and once ref = r_target
// the loop brings L to the target's circular value, where the radial
// thrust has nothing left to do. It uses about 0.06 of the default 0.1 of
// Δv and never asks for more than the 0.002 the thruster gives. It reads
// r_target from the state like the other values; it is not told r0, u_r0
// or the fuel budget.
//
// The arithmetic is plain doubles, left to right (Math.sqrt is correctly
// rounded), so that the same law in sims/blackhole/blackhole_test.cc gives
// the same bits.
let ref = -1;

function control(r, ur, phi, L, E, fuel, rt) {
  if (ref < 0) ref = r;
  if (ref < rt) ref = Math.min(rt, ref + 0.01);
  else ref = Math.max(rt, ref - 0.01);
  const lref = ref / Math.sqrt(ref - 3);
  return [-0.0005 * (r - ref) - 0.02 * ur, 0.01 * (lref - L)];
}
