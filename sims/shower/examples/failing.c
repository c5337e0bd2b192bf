// Shower (docs/plants/shower.md), the failing example in C: failing.js's
// high-gain proportional law, the same operations on doubles.
double control(double T, double a, int k) {
  (void)a;
  (void)k;
  return 0.5 + 0.1 * (38 - T);
}
