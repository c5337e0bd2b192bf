// Cart-pole swing-up (docs/plants/swingup.md), the failing example: the
// balance law of cartpole, u = 40θ + 5ω + x + v, on the angle wrapped to
// (−π, π], and nothing else. It only knows how to hold a pole that is
// already up: with the pole hanging down it asks for about 40·π N, the
// plant clamps that to 10 N, and the cart is shoved about without any
// regard for the pole's energy or the track; on the default scenario it
// runs off the end of the track (|x| > 2.4 m) after 23.76 s (tick 2376),
// and a trial that leaves the track scores 0.
//
// The arithmetic is plain doubles, left to right, so that the same law in
// sims/swingup/swingup_test.cc gives the same bits.
function control(x, v, theta, omega) {
  let a = theta;
  while (a > 3.141592653589793) a = a - 6.283185307179586;
  while (a <= -3.141592653589793) a = a + 6.283185307179586;
  return 40 * a + 5 * omega + x + v;
}
