// Buck converter (docs/plants/buck.md), the passing example in C:
// passing.js's soft-started PI law with current damping, the same operations
// in the same order on doubles (why it works: passing.js). The JavaScript
// top-level `let`s are statics.
#include <math.h>

static double ref = 0;
static double integral = 0;

double control(double v, double i, int k) {
  (void)k;
  ref = fmin(5, ref + 0.02);
  integral = integral + 0.02 * (ref - v);
  integral = fmin(2, fmax(0, integral));
  return fmin(1, fmax(0, integral + 0.2 * (ref - v) - 0.15 * i));
}
