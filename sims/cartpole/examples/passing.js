// The accepted cart-pole controller (SPEC §10): u = 40θ + 5ω + x + v.
function control(x, v, theta, omega) {
  return 40 * theta + 5 * omega + x + v;
}
