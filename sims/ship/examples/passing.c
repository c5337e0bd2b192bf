// Ship heading (docs/plants/ship.md), the passing example in C: passing.js's
// PD law, rudder = 3·(30 − ψ) − 30·r, the same operations on doubles.
double control(double psi, double r, double delta, int k) {
  (void)delta;
  (void)k;
  return 3 * (30 - psi) - 30 * r;
}
