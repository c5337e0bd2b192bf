// Ship heading (docs/plants/ship.md), the failing example in C: failing.js's
// law, the yaw-rate term's sign flipped, the same operations on doubles.
double control(double psi, double r, double delta, int k) {
  (void)delta;
  (void)k;
  return 3 * (30 - psi) + 30 * r;
}
