// Twin-paradox rocket (docs/plants/twin.md), the passing example in C:
// passing.js's bang-coast-bang plan with relativistic braking, the same
// operations in the same order on doubles (why it works: passing.js). Its
// acosh is wasi-libc's, compiled into this module; passing.js's Math.acosh
// is QuickJS's. Math.min of three is two fmin, left to right. The
// JavaScript top-level `let cruise` is a static.
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
  double want = fmin(fmin(cruise, acosh(1 + 0.9 * fabs(d))), 10 * fabs(d));
  if (d < 0) want = -want;
  return (want - eta) / 0.01;
}
