/* Double slit (SPEC §10), generalised to a 16-source array: 16 coherent
 * point sources on a line, each behind a phase shifter the controller
 * commands, make a far-field pattern measured in 64 angle bins. Each source
 * also has an unknown static phase error, an unknown amplitude and a slow
 * phase drift, so the textbook steering phases alone do not form the beam:
 * the controller must put the power into a target window of 5 bins from
 * the measured pattern. Physics, units, scenario and score:
 * docs/plants/doubleslit.md. The ABI: ../plant_abi.h.
 *
 * State (observation), plant_read_state order:
 *   [0..63] I_j  the normalised intensity in bin j (dimensionless, ≥ 0)
 *   [64]    the target bin j0 (an integer, 8..56)
 *   [65]    the spacing d/λ
 * Inputs: [0..15] the commanded phase of source k, rad, clamped to
 * [−2π, 2π], then slew-limited to 0.5 rad per tick.
 * Scenario parameters: (d/λ, j0, seed, σ, D, a), or none for the default
 * (0.5, 40, 2026, π, 0.02, 0.2):
 *   d/λ   the source spacing in wavelengths, 0.4..0.5
 *   j0    the target bin, an integer 8..56
 *   seed  the generator's seed, an integer 0..4294967295
 *   σ     the static phase errors' amplitude, rad, 0..π
 *   D     the drift's largest step, rad per tick, 0..0.03
 *   a     the amplitudes' spread, 0..0.25
 *
 * Equations, with N = 16 sources, M = 64 bins, s_j = −1 + j/32 (the sine of
 * bin j's angle) and the phase of source k at bin j
 *   ψ_k + 2π (d/λ) k s_j,  ψ_k = φ_k + e_k
 * (φ_k the applied phase, e_k the phase error):
 *   I_j = |Σ_k A_k exp(i (ψ_k + 2π (d/λ) k s_j))|² / N²
 * computed as E_j = Σ_k (A_k cos ψ_k + i A_k sin ψ_k)(G_jk + i H_jk) with
 * G_jk = cos(2π (d/λ) k s_j) and H_jk = sin(2π (d/λ) k s_j) tabulated at
 * plant_init, the sum over k in increasing order.
 *
 * The errors: a splitmix64 generator seeded with `seed` gives draws
 * v = 2 u − 1 in [−1, 1), u = (z >> 11) · 2⁻⁵³. At plant_init, 16 draws give
 * e_k = σ v (k = 0..15), then 16 more A_k = 1 + a v. Each tick, after the
 * inputs are applied, 16 more draws step the errors: e_k += D v (a random
 * walk; drawn even when D = 0).
 *
 * A tick: check the inputs (all finite), clamp each command c to [−2π, 2π],
 * slew (φ_k ← φ_k + 0.5 if c > φ_k + 0.5, φ_k − 0.5 if c < φ_k − 0.5, else
 * c itself), write the applied φ back, step the drift, compute the 64 intensities, score. A trial
 * lasts 600 ticks of 10 ms and never fails. Score: the mean, over ticks
 * 201..600 (counted from 1), of the fraction of the 64 bins' total
 * intensity that falls in bins j0 − 2..j0 + 2.
 *
 * Determinism: no clock, no imports; the only randomness is the seeded
 * generator (integer arithmetic). IEEE double operations in the order
 * written here, cos and sin from wasi-libc's libm compiled into the module
 * (wasm has no fused multiply-add, and the build passes -ffp-contract=off). */
#include <math.h>
#include <stdint.h>

#include "plant_abi.h"
#include "plant_exports.h"
#include "plant_lifecycle.h"

enum { kSources = 16, kBins = 64, kWindowHalfWidth = 2 };

/* The normalisation N² of the intensities. */
static const double kSourcesSquared = 256.0;
static const double kPi = 3.141592653589793;
static const double kTwoPi = 6.283185307179586;
static const double kSlew = 0.5; /* largest change of an applied phase per tick, rad */

/* Time: a trial that does not fail (none does) lasts kEndTicks ticks. */
enum { kEndTicks = 600, kUnscoredTicks = 200 };
static const double kScoredTicks = 400.0;
static const double kTickSeconds = 0.01;
static const double kEndSeconds = 6.0;

/* The plant's shape (plant_abi.h). */
enum { kParamCount = 6, kStateWidth = kBins + 2, kInputCount = kSources };

/* Scenario ranges (inclusive). */
static const double kMinRatio = 0.4, kMaxRatio = 0.5;        /* d/λ */
static const double kMinTarget = 8.0, kMaxTarget = 56.0;     /* j0, an integer */
static const double kMinSeed = 0.0, kMaxSeed = 4294967295.0; /* an integer */
static const double kMinError = 0.0;                         /* σ, up to kPi */
static const double kMinDrift = 0.0, kMaxDrift = 0.03;       /* D, rad per tick */
static const double kMinSpread = 0.0, kMaxSpread = 0.25;     /* a */
static const double kDefaultScenario[kParamCount] = {0.5,  40.0, 2026.0, 3.141592653589793,
                                                     0.02, 0.2};

/* The exchange buffer g_buffer and the exports that only report the constants
 * above (plant_exports.h). */
PLANT_DEFINE_CONSTANT_EXPORTS(kParamCount, kStateWidth, kInputCount, kTickSeconds, kEndSeconds);

/* cos and sin of each source's geometric phase at each bin. */
static double g_geometry_cos[kBins][kSources];
static double g_geometry_sin[kBins][kSources];

static struct {
  enum PlantPhase phase;
  double ratio;               /* d/λ */
  int32_t target;             /* j0 */
  double drift;               /* D, rad per tick */
  uint64_t generator;         /* splitmix64's state */
  double amplitude[kSources]; /* A_k */
  double error[kSources];     /* e_k, rad */
  double applied[kSources];   /* φ_k, rad */
  double intensity[kBins];    /* I_j */
  int32_t ticks;              /* ticks taken */
  double fraction_sum;        /* the scored ticks' window fractions, summed */
} g_plant;

/* splitmix64 (Steele, Lea and Flood 2014), then a double in [−1, 1). */
static double draw(void) {
  g_plant.generator += 0x9E3779B97F4A7C15ull;
  uint64_t z = g_plant.generator;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z = z ^ (z >> 31);
  const double u = (double)(z >> 11) * 0x1p-53;
  return 2.0 * u - 1.0;
}

/* The 64 intensities from the applied phases, errors and amplitudes. */
static void measure(void) {
  double field_cos[kSources], field_sin[kSources];
  for (int k = 0; k < kSources; ++k) {
    const double psi = g_plant.applied[k] + g_plant.error[k];
    field_cos[k] = g_plant.amplitude[k] * cos(psi);
    field_sin[k] = g_plant.amplitude[k] * sin(psi);
  }
  for (int j = 0; j < kBins; ++j) {
    double re = 0.0, im = 0.0;
    for (int k = 0; k < kSources; ++k) {
      re = re + (field_cos[k] * g_geometry_cos[j][k] - field_sin[k] * g_geometry_sin[j][k]);
      im = im + (field_cos[k] * g_geometry_sin[j][k] + field_sin[k] * g_geometry_cos[j][k]);
    }
    g_plant.intensity[j] = (re * re + im * im) / kSourcesSquared;
  }
}

/* The fraction of the bins' total intensity in the target window; 0 if the
 * total is 0 (which the physics rules out: see the doc). */
static double window_fraction(void) {
  double inside = 0.0, total = 0.0;
  for (int j = 0; j < kBins; ++j) {
    total = total + g_plant.intensity[j];
    if (j >= g_plant.target - kWindowHalfWidth && j <= g_plant.target + kWindowHalfWidth) {
      inside = inside + g_plant.intensity[j];
    }
  }
  return total > 0.0 ? inside / total : 0.0;
}

int32_t plant_init(int32_t count) {
  g_plant.phase = kNotReady;
  g_plant.ticks = 0;
  g_plant.fraction_sum = 0.0;
  PLANT_READ_SCENARIO_OR_REFUSE(params, count, kDefaultScenario);
  const double ratio = params[0], target = params[1], seed = params[2];
  const double error = params[3], drift = params[4], spread = params[5];
  if (!within(ratio, kMinRatio, kMaxRatio) || !within(target, kMinTarget, kMaxTarget) ||
      target != floor(target) || !within(seed, kMinSeed, kMaxSeed) || seed != floor(seed) ||
      !within(error, kMinError, kPi) || !within(drift, kMinDrift, kMaxDrift) ||
      !within(spread, kMinSpread, kMaxSpread)) {
    return PLANT_ERROR_RANGE;
  }
  g_plant.ratio = ratio;
  g_plant.target = (int32_t)target;
  g_plant.drift = drift;
  g_plant.generator = (uint64_t)seed;
  for (int k = 0; k < kSources; ++k) g_plant.error[k] = error * draw();
  for (int k = 0; k < kSources; ++k) g_plant.amplitude[k] = 1.0 + spread * draw();
  for (int k = 0; k < kSources; ++k) g_plant.applied[k] = 0.0;
  for (int j = 0; j < kBins; ++j) {
    const double sine = -1.0 + (double)j / 32.0;
    for (int k = 0; k < kSources; ++k) {
      const double geometric = kTwoPi * ratio * (double)k * sine;
      g_geometry_cos[j][k] = cos(geometric);
      g_geometry_sin[j][k] = sin(geometric);
    }
  }
  measure();
  g_plant.phase = kRunning;
  return PLANT_OK;
}

int32_t plant_read_state(void) {
  PLANT_REFUSE_UNLESS_READY(g_plant.phase);
  for (int j = 0; j < kBins; ++j) g_buffer[j] = g_plant.intensity[j];
  g_buffer[kBins] = (double)g_plant.target;
  g_buffer[kBins + 1] = g_plant.ratio;
  return kStateWidth;
}

int32_t plant_step(void) {
  PLANT_REFUSE_UNLESS_RUNNING(g_plant.phase);
  for (int k = 0; k < kSources; ++k) {
    if (!isfinite(g_buffer[k])) return PLANT_ERROR_NOT_FINITE;
  }
  for (int k = 0; k < kSources; ++k) {
    double command = g_buffer[k];
    if (command > kTwoPi) command = kTwoPi;
    if (command < -kTwoPi) command = -kTwoPi;
    const double from = g_plant.applied[k];
    if (command > from + kSlew) {
      command = from + kSlew;
    } else if (command < from - kSlew) {
      command = from - kSlew;
    }
    g_plant.applied[k] = command;
    g_buffer[k] = command;
  }
  for (int k = 0; k < kSources; ++k) g_plant.error[k] = g_plant.error[k] + g_plant.drift * draw();
  measure();
  g_plant.ticks += 1;
  if (g_plant.ticks > kUnscoredTicks)
    g_plant.fraction_sum = g_plant.fraction_sum + window_fraction();
  PLANT_FINISH_ON_THE_LAST_TICK(g_plant.phase, g_plant.ticks, kEndTicks);
}

int32_t plant_ticks(void) {
  return g_plant.ticks;
}

/* The scored ticks' window fractions summed so far, over the 400 scored
 * ticks (201..600). 0.7 or more on a finished trial passes. */
double plant_score(void) {
  return g_plant.fraction_sum / kScoredTicks;
}
