// Twin-paradox rocket (docs/plants/twin.md), the failing example in C:
// failing.js's plan braking by Newton, the same operations in the same order
// on doubles (why it fails: failing.js). Its tanh and atanh are wasi-libc's,
// compiled into this module; failing.js's are QuickJS's. The JavaScript
// top-level `let cruise` is a static.
#include <math.h>

static double cruise = 0;

double control(double t, double tau, double x, double eta, double fuel, double D, double visited,
               int k) {
  (void)t;
  (void)tau;
  (void)k;
  if (cruise == 0) cruise = 0.24 * fuel;
  const double goal = visited > 0 ? 0 : D;
  const double d = goal - x;
  const double beta = fmin(fmin(tanh(cruise), sqrt(1.8 * fabs(d))), 10 * fabs(d));
  double want = atanh(beta);
  if (d < 0) want = -want;
  return (want - eta) / 0.01;
}
