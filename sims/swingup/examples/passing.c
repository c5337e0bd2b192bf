// Cart-pole swing-up (docs/plants/swingup.md), the passing example in C:
// passing.js's energy pumping, then the balance law, the same operations in
// the same order on doubles (why it works: passing.js). Its cos is
// wasi-libc's, compiled into this module; passing.js's Math.cos is QuickJS's.
// The JavaScript top-level `let ticks` is a static (it equals k + 1).
#include <math.h>

static int ticks = 0;

double control(double x, double v, double theta, double omega, int k) {
  (void)k;
  ticks = ticks + 1;
  double a = theta;
  while (a > 3.141592653589793) a = a - 6.283185307179586;
  while (a <= -3.141592653589793) a = a + 6.283185307179586;
  if (fabs(a) < 0.3) return 40 * a + 5 * omega + x + v;
  const double e = omega * omega / 3 + 9.81 * (cos(theta) - 1);
  double pump = fmin(6, fmax(-6, 2 * e * omega * cos(theta)));
  if (ticks == 1) pump = 6;
  return pump - 2 * x - 3 * v;
}
