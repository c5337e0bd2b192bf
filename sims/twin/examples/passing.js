// Twin-paradox rocket (docs/plants/twin.md), the passing example: a
// bang-coast-bang plan driven by the state, relativistic braking. On its
// first tick it sets a cruising rapidity of 0.24 of the fuel it sees (a
// round trip with a stop at the star takes four burns of that size, with 4 %
// kept for corrections). Each tick it asks for the rapidity it wants and
// for the acceleration that reaches it in one tick (the plant clamps it to
// ±1 ly/yr²): toward the goal (the star, then Earth once `visited` is 1)
// at most the cruising rapidity; no more than acosh(1 + 0.9·d), from which
// a constant 0.9 ly/yr² stops the rocket in the distance d left (the
// relativistic stopping distance is (cosh η − 1)/a, not v²/2a); and no
// more than 10·d, so that the last 0.02 ly close in without hunting, until
// it is at rest on the spot. It reads D and `visited` from the state;
// it is not told the fuel budget B (it reads the fuel left) or the
// deadline T.
//
// The arithmetic is plain doubles, left to right, so that the same law in
// sims/twin/twin_test.cc does the same operations (its acosh is the
// host's, this one QuickJS's: the outcomes agree, not necessarily the bits).
let cruise = 0;

function control(t, tau, x, eta, fuel, D, visited) {
  if (cruise === 0) cruise = 0.24 * fuel;
  const goal = visited > 0 ? 0 : D;
  const d = goal - x;
  let want = Math.min(cruise, Math.acosh(1 + 0.9 * Math.abs(d)), 10 * Math.abs(d));
  if (d < 0) want = -want;
  return (want - eta) / 0.01;
}
