// Satellite clock (docs/plants/satclock.md), the failing example in C:
// failing.js's proportional term alone, u = −0.0005·z.
double control(double z, double u, int k) {
  (void)u;
  (void)k;
  return -0.0005 * z;
}
