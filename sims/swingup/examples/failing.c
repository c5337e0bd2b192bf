// Cart-pole swing-up (docs/plants/swingup.md), the failing example in C:
// failing.js's balance law alone on the angle wrapped to (−π, π], the same
// operations in the same order on doubles.
double control(double x, double v, double theta, double omega, int k) {
  (void)k;
  double a = theta;
  while (a > 3.141592653589793) a = a - 6.283185307179586;
  while (a <= -3.141592653589793) a = a + 6.283185307179586;
  return 40 * a + 5 * omega + x + v;
}
