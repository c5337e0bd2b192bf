// Satellite clock (docs/plants/satclock.md), the passing example in C:
// passing.js's PI law on the measured offset, the same operations in the
// same order on doubles (why it works: passing.js). The JavaScript
// top-level `let integral` is a static.
#include <math.h>

static double integral = 0;

double control(double z, double u, int k) {
  (void)u;
  (void)k;
  const double p = -0.0005 * z;
  if (fabs(p) < 2) integral = integral - 0.000008 * z;
  integral = fmin(2, fmax(-2, integral));
  return integral + fmin(2, fmax(-2, p));
}
