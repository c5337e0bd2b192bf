// The draft cart-pole controller in C: failing.js's law, the signs of the x
// and v terms flipped, the same operations in the same order on doubles.
double control(double x, double v, double theta, double omega, int k) {
  (void)k;
  return 40 * theta + 5 * omega - x - v;
}
