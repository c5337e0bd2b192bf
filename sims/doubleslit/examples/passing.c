// Double slit, 16 sources (docs/plants/doubleslit.md), the passing example in
// C: passing.js's stochastic parallel gradient descent with a Walsh-Hadamard
// dither, the same operations in the same order on doubles (why it works:
// passing.js). Sixteen inputs, so the vector form: state[0..63] the bins,
// state[64] j0, state[65] d/λ. The JavaScript top-level `let`s are statics
// (`phases === null` is `have_phases == 0`); Math.PI is spelled out (strict
// C11 has no M_PI).
#include <math.h>

static const double kPi = 3.141592653589793;

static double phases[16];
static int have_phases = 0;
static int iteration = 0;
static int half = 0;
static double plus = 0;
static int row = 0;

// (−1) to the number of bits that k and r share: entry (r, k) of the
// Walsh-Hadamard matrix.
static int sign(int k, int r) {
  int x = k & r;
  int s = 1;
  while (x != 0) {
    if ((x & 1) == 1) s = -s;
    x = x >> 1;
  }
  return s;
}

// J: the fraction of the 64 bins' total intensity in the target window.
static double window_fraction(const double* state) {
  const double target = state[64];
  double inside = 0;
  double total = 0;
  for (int j = 0; j < 64; j++) {
    total = total + state[j];
    if (fabs(j - target) <= 2) inside = inside + state[j];
  }
  return inside / total;
}

void control(const double* state, double* inputs, int tick) {
  (void)tick;
  if (have_phases == 0) {
    have_phases = 1;
    const double sine = -1 + state[64] / 32;
    for (int k = 0; k < 16; k++) {
      double p = -2 * kPi * state[65] * k * sine;
      while (p > kPi) p = p - 2 * kPi;
      while (p <= -kPi) p = p + 2 * kPi;
      phases[k] = p;
    }
  }
  if (half == 1) {
    plus = window_fraction(state);
    half = 0;
    for (int k = 0; k < 16; k++) inputs[k] = phases[k] - 0.1 * sign(k, row);
    return;
  }
  if (iteration > 0) {
    const double minus = window_fraction(state);
    const double change = plus + minus > 0 ? 4 * (plus - minus) / (plus + minus) : 0;
    for (int k = 0; k < 16; k++) {
      double p = phases[k] + change * sign(k, row);
      if (p > 5) p = p - 2 * kPi;
      if (p < -5) p = p + 2 * kPi;
      phases[k] = p;
    }
  }
  row = 1 + (iteration * 7) % 15;
  iteration = iteration + 1;
  half = 1;
  for (int k = 0; k < 16; k++) inputs[k] = phases[k] + 0.1 * sign(k, row);
}
