/* Satellite clock (SPEC §10): the time offset of a navigation satellite's
 * clock from ground time, which drifts by the relativistic frequency shift
 * of its orbit plus its oscillator's own offset and aging. The controller
 * steers the clock's frequency and must bring the offset to zero and hold it
 * within ±10 ns, seeing it only through a delayed, noisy measurement. It is
 * told neither the orbit, nor the oscillator's offset, nor the delay.
 * Physics, units, scenario, failure and score: docs/plants/satclock.md. The
 * ABI: ../plant_abi.h.
 *
 * State (observation), plant_read_state order:
 *   [0] z  the measured time offset, ns: x from D ticks earlier plus noise
 *   [1] u  the steer applied on the last tick, ns/s (0 before the first)
 * Input: [0] u, the frequency steer in ns/s (a fractional frequency of
 * u·1e−9), clamped to [−3, 3] and then to within 0.1 of the last applied
 * steer (the slew limit).
 * Scenario parameters: (h, x0, y0, a, D, A, seed), or none for the default
 * (20180, 3000, −0.12, 0.01, 5, 2, 1):
 *   h     the orbit's altitude above R_E, km, 200..40000 (circular orbit)
 *   x0    the initial time offset, ns, −20000..20000
 *   y0    the oscillator's fractional frequency offset at t = 0, ns/s, −0.3..0.3
 *   a     the oscillator's aging, ns/s per day, −0.02..0.02
 *   D     the measurement delay, ticks, an integer 0..15
 *   A     the measurement noise's amplitude, ns, 0..5
 *   seed  the noise generator's seed, an integer 0..4294967295
 *
 * Equations, with T = 60 s the tick, n the ticks taken (an integer), GM,
 * c and R_E below:
 *   y_rel = GM/c² · (1/R_E − 1.5/r) · 1e9      r = R_E + 1000·h   (ns/s)
 *   a_s   = a / 86400                                             (ns/s²)
 *   x_{n+1} = x_n + ((y_rel + (y0 + a_s·(n·T))) + u_n)·T + 0.5·a_s·T·T
 * which integrates the frequency y_rel + y0 + a_s·t + u_n exactly over the
 * tick. The measurement the controller sees after n ticks is
 *   z_n = x_{max(n − D, 0)} + w_n,  w_n = A·(2·U_n − 1)
 * with U_n the n-th (from 0) output of splitmix64 seeded with `seed`, as
 * a double in [0, 1). A trial that does not fail lasts 3000 ticks (50 h).
 *
 * Failure: at the end of a tick, |x| > 100 µs (1e5 ns); a NaN counts.
 * Score: the fraction of ticks 721..3000 (counted from 1: the 2280 ticks
 * that start at or after t = 12 h) that end with |x| ≤ 10 ns; 0 once failed.
 *
 * Determinism: no clock, no imports, no libm call; the only randomness is
 * the documented generator, seeded from the scenario. IEEE double
 * operations in the order written here (wasm has no fused multiply-add, and
 * the build passes -ffp-contract=off). Time is an integer tick counter,
 * never an accumulated sum. */
#include <math.h>
#include <stdint.h>

#include "plant_abi.h"
#include "plant_exports.h"
#include "plant_lifecycle.h"

/* Physical constants. */
static const double kGm = 3.986004418e14;     /* GM of the Earth (WGS 84), m³/s² */
static const double kLight = 299792458.0;     /* c, m/s */
static const double kEarthRadius = 6378137.0; /* R_E (WGS 84 equatorial), m */
static const double kSecondsPerDay = 86400.0;

/* The clock and the task. */
static const double kMaxSteer = 3.0;     /* |u| at most this, ns/s */
static const double kMaxSlew = 0.1;      /* |u_n − u_{n−1}| at most this, ns/s */
static const double kBand = 10.0;        /* |x| within this scores, ns */
static const double kFailOffset = 1.0e5; /* |x| above this ends the trial, ns */

/* Time. A tick is kTickSeconds; a trial that does not fail lasts kEndTicks
 * ticks (50 h). */
enum { kEndTicks = 3000 };
static const double kTickSeconds = 60.0;
static const double kEndSeconds = 180000.0;

/* The score counts the ticks after the first kUnscoredTicks (12 h):
 * kScoredTicks = kEndTicks − kUnscoredTicks of them. */
enum { kUnscoredTicks = 720 };
static const double kScoredTicks = 2280.0;

/* The plant's shape (plant_abi.h). */
enum { kParamCount = 7, kStateWidth = 2, kInputCount = 1 };

/* The delay line holds the offsets of the last kMaxDelay + 1 ticks. */
enum { kMaxDelay = 15, kHistory = 16 };

/* Scenario ranges (inclusive). */
static const double kMinAltitude = 200.0, kMaxAltitude = 40000.0; /* h, km */
static const double kMaxStartOffset = 20000.0;                    /* |x0|, ns */
static const double kMaxFrequency = 0.3;                          /* |y0|, ns/s */
static const double kMaxAging = 0.02;                             /* |a|, ns/s per day */
static const double kMaxNoise = 5.0;                              /* A, ns */
static const double kMaxSeed = 4294967295.0;                      /* 2^32 − 1 */
static const double kDefaultScenario[kParamCount] = {20180.0, 3000.0, -0.12, 0.01, 5.0, 2.0, 1.0};

/* The exchange buffer g_buffer and the exports that only report the constants
 * above (plant_exports.h). */
PLANT_DEFINE_CONSTANT_EXPORTS(kParamCount, kStateWidth, kInputCount, kTickSeconds, kEndSeconds);

static struct {
  enum PlantPhase phase;
  double relativistic;      /* y_rel, ns/s */
  double start_frequency;   /* y0, ns/s */
  double aging;             /* a_s, ns/s² */
  double aging_half_step;   /* 0.5·a_s·T·T, ns */
  double start_offset;      /* x0, ns */
  double noise;             /* A, ns */
  int32_t delay;            /* D, ticks */
  uint64_t generator;       /* splitmix64's state */
  double offset;            /* x, ns */
  double steer;             /* the last applied u, ns/s */
  double measured;          /* z, ns */
  double history[kHistory]; /* x after n ticks at [n % kHistory] */
  int32_t ticks;            /* ticks taken */
  int32_t in_band_ticks;    /* scored ticks that ended with |x| ≤ 10 ns */
  int failed;               /* the trial ended with |x| > 100 µs */
} g_plant;

/* splitmix64 (Steele, Lea and Flood 2014), as a double in [0, 1): the top
 * 53 bits of the output times 2^−53. */
static double next_uniform(void) {
  g_plant.generator += 0x9E3779B97F4A7C15ull;
  uint64_t z = g_plant.generator;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z = z ^ (z >> 31);
  return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

/* The measurement after g_plant.ticks ticks: the offset D ticks earlier
 * (x0 while fewer than D ticks have passed) plus the next noise value. */
static void measure(void) {
  const int32_t seen = g_plant.ticks - g_plant.delay;
  const double offset = seen < 0 ? g_plant.start_offset : g_plant.history[seen % kHistory];
  g_plant.measured = offset + g_plant.noise * (2.0 * next_uniform() - 1.0);
}

int32_t plant_init(int32_t count) {
  g_plant.phase = kNotReady;
  g_plant.ticks = 0;
  g_plant.in_band_ticks = 0;
  g_plant.failed = 0;
  PLANT_READ_SCENARIO_OR_REFUSE(params, count, kDefaultScenario);
  const double altitude = params[0], start_offset = params[1], start_frequency = params[2];
  const double aging = params[3], delay = params[4], noise = params[5], seed = params[6];
  if (!within(altitude, kMinAltitude, kMaxAltitude) ||
      !within(start_offset, -kMaxStartOffset, kMaxStartOffset) ||
      !within(start_frequency, -kMaxFrequency, kMaxFrequency) ||
      !within(aging, -kMaxAging, kMaxAging) || !within(delay, 0.0, (double)kMaxDelay) ||
      !within(noise, 0.0, kMaxNoise) || !within(seed, 0.0, kMaxSeed)) {
    return PLANT_ERROR_RANGE;
  }
  /* Both are whole numbers (in range, so the conversions are exact). */
  if ((double)(int32_t)delay != delay || (double)(uint32_t)seed != seed) {
    return PLANT_ERROR_RANGE;
  }
  const double radius = kEarthRadius + 1000.0 * altitude;
  g_plant.relativistic = kGm / (kLight * kLight) * (1.0 / kEarthRadius - 1.5 / radius) * 1e9;
  g_plant.start_frequency = start_frequency;
  g_plant.aging = aging / kSecondsPerDay;
  g_plant.aging_half_step = 0.5 * g_plant.aging * kTickSeconds * kTickSeconds;
  g_plant.start_offset = start_offset;
  g_plant.noise = noise;
  g_plant.delay = (int32_t)delay;
  g_plant.generator = (uint64_t)(uint32_t)seed;
  g_plant.offset = start_offset;
  g_plant.steer = 0.0;
  for (int k = 0; k < kHistory; ++k) g_plant.history[k] = start_offset;
  measure();
  g_plant.phase = kRunning;
  return PLANT_OK;
}

int32_t plant_read_state(void) {
  PLANT_REFUSE_UNLESS_READY(g_plant.phase);
  g_buffer[0] = g_plant.measured;
  g_buffer[1] = g_plant.steer;
  return kStateWidth;
}

int32_t plant_step(void) {
  PLANT_REFUSE_UNLESS_RUNNING(g_plant.phase);
  double steer = g_buffer[0];
  if (!isfinite(steer)) return PLANT_ERROR_NOT_FINITE;
  /* The range, then the slew limit around the last applied steer (which is
   * within the range, so the result is too). */
  if (steer > kMaxSteer) steer = kMaxSteer;
  if (steer < -kMaxSteer) steer = -kMaxSteer;
  const double highest = g_plant.steer + kMaxSlew, lowest = g_plant.steer - kMaxSlew;
  if (steer > highest) steer = highest;
  if (steer < lowest) steer = lowest;
  g_buffer[0] = steer;
  g_plant.steer = steer;

  /* The oscillator's frequency at the tick's start, then the exact integral
   * of the total frequency over the tick. */
  const double oscillator =
      g_plant.start_frequency + g_plant.aging * ((double)g_plant.ticks * kTickSeconds);
  g_plant.offset = g_plant.offset + ((g_plant.relativistic + oscillator) + steer) * kTickSeconds +
                   g_plant.aging_half_step;
  g_plant.ticks += 1;
  g_plant.history[g_plant.ticks % kHistory] = g_plant.offset;
  measure();

  /* Written so that a NaN offset counts as a failure. */
  if (!(fabs(g_plant.offset) <= kFailOffset)) {
    g_plant.failed = 1;
    g_plant.phase = kEnded;
    return PLANT_FAILED;
  }
  if (g_plant.ticks > kUnscoredTicks && within(g_plant.offset, -kBand, kBand)) {
    g_plant.in_band_ticks += 1;
  }
  PLANT_FINISH_ON_THE_LAST_TICK(g_plant.phase, g_plant.ticks, kEndTicks);
}

int32_t plant_ticks(void) {
  return g_plant.ticks;
}

/* The fraction of the 2280 scored ticks (721..3000) that ended with
 * |x| ≤ 10 ns, counted so far; 0 for a trial that failed. 0.9 or more on a
 * finished trial (2052 ticks) passes. */
double plant_score(void) {
  if (g_plant.failed) return 0.0;
  return (double)g_plant.in_band_ticks / kScoredTicks;
}
