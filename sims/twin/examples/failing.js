// Twin-paradox rocket (docs/plants/twin.md), the failing example: the same
// plan as passing.js, but braking by Newton. It thinks in velocity: it
// wants β = min(tanh(cruise), sqrt(1.8·d), 10·d), the largest speed from
// which 0.9 ly/yr² stops it in the distance d left if v²/2a were the
// stopping distance, and asks for the rapidity atanh(β). Near c that is
// badly wrong: from η = 1.44 (β = 0.894) a relativistic rocket needs
// (cosh η − 1)/a = 1.37 ly to stop at 0.9 ly/yr², Newton says 0.44 ly. So
// it starts braking far too late and overshoots the star; coming back to
// stop there costs fuel the plan had not set aside, and on the way home it
// is stranded: moving homeward faster than the fuel left can cancel. It
// reads the same state as passing.js.
//
// The arithmetic is plain doubles, left to right, so that the same law in
// sims/twin/twin_test.cc does the same operations (its tanh and atanh are
// the host's, these QuickJS's: the outcomes agree, not necessarily the
// bits).
let cruise = 0;

function control(t, tau, x, eta, fuel, D, visited) {
  if (cruise === 0) cruise = 0.24 * fuel;
  const goal = visited > 0 ? 0 : D;
  const d = goal - x;
  const beta = Math.min(Math.tanh(cruise), Math.sqrt(1.8 * Math.abs(d)), 10 * Math.abs(d));
  let want = Math.atanh(beta);
  if (d < 0) want = -want;
  return (want - eta) / 0.01;
}
