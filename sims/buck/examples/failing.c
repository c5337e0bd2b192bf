// Buck converter (docs/plants/buck.md), the failing example in C:
// failing.js's open loop, the duty 5/12 on every tick.
double control(double v, double i, int k) {
  (void)v;
  (void)i;
  (void)k;
  return 5.0 / 12;
}
