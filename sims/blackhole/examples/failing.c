// Black-hole orbit (docs/plants/blackhole.md), the failing example in C:
// failing.js's PD law on the radius with the radial thruster only, the same
// operations on doubles. Two inputs, so the vector form.
void control(const double* state, double* inputs, int k) {
  (void)k;
  const double r = state[0], ur = state[1], rt = state[6];
  inputs[0] = -0.0005 * (r - rt) - 0.02 * ur;
  inputs[1] = 0;
}
