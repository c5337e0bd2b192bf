// Black-hole orbit (docs/plants/blackhole.md), the passing example in C:
// passing.js's guided spiral, the same operations in the same order on
// doubles (why it works: passing.js). Two inputs, so the vector form:
// state = r, u_r, φ, L, E, fuel, r_target; inputs = radial, tangential.
// The JavaScript top-level `let ref` is a static.
#include <math.h>

static double ref = -1;

void control(const double* state, double* inputs, int k) {
  (void)k;
  const double r = state[0], ur = state[1], L = state[3], rt = state[6];
  if (ref < 0) ref = r;
  if (ref < rt)
    ref = fmin(rt, ref + 0.01);
  else
    ref = fmax(rt, ref - 0.01);
  const double lref = ref / sqrt(ref - 3);
  inputs[0] = -0.0005 * (r - ref) - 0.02 * ur;
  inputs[1] = 0.01 * (lref - L);
}
