// Shower (docs/plants/shower.md), the passing example in C: passing.js's
// reset-free integral law, the same operations in the same order on doubles
// (why it works: passing.js). The JavaScript top-level `let c` is a static.
#include <math.h>

static double c = 0;

double control(double T, double a, int k) {
  (void)a;
  (void)k;
  c = c + 0.0004 * (38 - T);
  c = fmin(1, fmax(0, c));
  return c;
}
