// Double slit, 16 sources (docs/plants/doubleslit.md), the failing example in
// C: failing.js's textbook steering phases, the same operations in the same
// order on doubles. Sixteen inputs, so the vector form. Math.PI is spelled
// out (strict C11 has no M_PI). Source 0's phase is −2π·(d/λ)·0·sine = −0:
// JavaScript answers it as String(−0), "0", so the plant gets +0; C answers
// "-0". Adding 0 turns −0 into +0 and leaves every other value as it is.
static const double kPi = 3.141592653589793;

void control(const double* state, double* inputs, int tick) {
  (void)tick;
  const double sine = -1 + state[64] / 32;
  for (int k = 0; k < 16; k++) {
    double p = -2 * kPi * state[65] * k * sine;
    while (p > kPi) p = p - 2 * kPi;
    while (p <= -kPi) p = p + 2 * kPi;
    inputs[k] = p + 0;
  }
}
