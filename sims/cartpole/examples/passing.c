// The accepted cart-pole controller (SPEC §10) in C: passing.js's law,
// u = 40θ + 5ω + x + v, the same operations in the same order on doubles
// (docs/exams.md, "C controllers"). Compile with plimsoll-cc --plant cartpole.
double control(double x, double v, double theta, double omega, int k) {
  (void)k;
  return 40 * theta + 5 * omega + x + v;
}
