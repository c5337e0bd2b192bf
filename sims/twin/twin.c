/* Twin-paradox rocket (SPEC §10): a relativistic round trip on a fuel
 * budget. A photon rocket leaves Earth at rest, must stop at a star D
 * light-years away, and come home to rest before an Earth-time deadline;
 * the score is how much younger the traveller comes home than the Earth
 * twin. Physics, units, scenario, failure and score: docs/plants/twin.md.
 * The ABI: ../plant_abi.h.
 *
 * Units: c = 1; distance in light-years (ly), time in (Julian) years (yr),
 * acceleration in ly/yr² (1 ly/yr² = 9.49996 m/s² ≈ 0.969 g). Motion is
 * along one line, x from Earth toward the star.
 *
 * State (observation), plant_read_state order:
 *   [0] t        Earth (coordinate) time, yr
 *   [1] tau      the traveller's proper time, yr (ticks · 0.01)
 *   [2] x        the rocket's position, ly
 *   [3] eta      the rocket's rapidity (velocity β = tanh η)
 *   [4] fuel     the rapidity budget left (Σ|Δη| still available)
 *   [5] D        the star's distance, ly (the scenario's; observed)
 *   [6] visited  0 until the rocket has stopped at the star, then 1
 * Input: [0] a, the proper acceleration, ly/yr², clamped to [−1, 1] and
 * then to ±fuel/dτ (no fuel, no thrust).
 * Scenario parameters: (D, B, T), or none for the default (4, 6, 20):
 *   D  the star's distance, ly, 1..10
 *   B  the fuel budget, a rapidity (a photon rocket's mass ratio e^B), 1..20
 *   T  the Earth-time deadline for being home, yr, 1..30
 *
 * A tick is a fixed step of proper time, dτ = 0.01 yr, with a constant
 * over it, integrated exactly (no Euler): with h = a·dτ/2,
 * s = sinh(h)/h (1 when h = 0) and m = η + h,
 *   t' = t + cosh(m)·(dτ·s),  x' = x + sinh(m)·(dτ·s),
 *   η' = η + a·dτ,            fuel' = max(0, fuel − |a|·dτ).
 * These are (sinh η' − sinh η)/a and (cosh η' − cosh η)/a written without
 * the cancellation (and without the division by a).
 *
 * After each tick, in order: failed if t > T (the deadline), x < −0.01
 * (behind Earth), |η| > fuel + 0.005 (stranded: it can never be at rest
 * again); otherwise "at rest" means |η| ≤ 0.005: at rest within 0.01 ly of
 * the star the first time sets visited; at rest within 0.01 ly of Earth
 * once visited is set finishes the trial. A trial not finished after 3000
 * ticks (τ = 30 yr ≥ T) fails. Score: 1 − τ/t when it finishes (the
 * fraction of the Earth twin's ageing the traveller was spared), else 0.
 *
 * Determinism: no clock, no randomness, no imports; IEEE double in the
 * order written here, sinh and cosh from wasi-libc's libm compiled into
 * the module (the build passes -ffp-contract=off). Proper time is an
 * integer tick counter; t, x, η and fuel are sums, tick by tick. */
#include <math.h>
#include <stdint.h>

#include "plant_abi.h"
#include "plant_exports.h"
#include "plant_lifecycle.h"

/* Physical parameters. */
static const double kMaxAcceleration = 1.0; /* |a| at most this, ly/yr² */
static const double kPlaceTolerance = 0.01; /* within this of the star or Earth, ly */
static const double kRestRapidity = 0.005;  /* |η| at most this is at rest */
static const double kTickYears = 0.01;      /* dτ, yr of proper time */
static const double kHalfTickYears = 0.005; /* dτ/2 */

/* Time. A trial is at most kEndTicks ticks (30 yr of proper time). The ABI
 * asks for seconds: a Julian year is 31557600 s, so a tick is 315576 s and
 * the end 946728000 s (both exact doubles; their ratio is 3000). */
enum { kEndTicks = 3000 };
static const double kTickSeconds = 315576.0;
static const double kEndSeconds = 946728000.0;

/* The plant's shape (plant_abi.h). */
enum { kParamCount = 3, kStateWidth = 7, kInputCount = 1 };

/* Scenario ranges (inclusive). */
static const double kMinDistance = 1.0, kMaxDistance = 10.0; /* D, ly */
static const double kMinBudget = 1.0, kMaxBudget = 20.0;     /* B, rapidity */
static const double kMinDeadline = 1.0, kMaxDeadline = 30.0; /* T, yr */
static const double kDefaultScenario[kParamCount] = {4.0, 6.0, 20.0};

/* The exchange buffer g_buffer and the exports that only report the constants
 * above (plant_exports.h). */
PLANT_DEFINE_CONSTANT_EXPORTS(kParamCount, kStateWidth, kInputCount, kTickSeconds, kEndSeconds);

static struct {
  enum PlantPhase phase;
  double distance; /* D, ly */
  double deadline; /* T, yr */
  double earth;    /* t, yr */
  double position; /* x, ly */
  double rapidity; /* η */
  double fuel;     /* the rapidity budget left */
  int visited;     /* the rocket has been at rest at the star */
  int32_t ticks;   /* ticks taken: the proper time is ticks·dτ */
  double score;    /* 1 − τ/t once finished, else 0 */
} g_plant;

static double proper_time(void) {
  return (double)g_plant.ticks * kTickYears;
}

/* One tick at constant proper acceleration a (already clamped): the exact
 * hyperbolic motion. */
static void advance(double a) {
  const double h = a * kHalfTickYears;
  const double s = h == 0.0 ? 1.0 : sinh(h) / h;
  const double m = g_plant.rapidity + h;
  const double k = kTickYears * s;
  g_plant.earth = g_plant.earth + cosh(m) * k;
  g_plant.position = g_plant.position + sinh(m) * k;
  g_plant.rapidity = g_plant.rapidity + a * kTickYears;
  const double fuel = g_plant.fuel - fabs(a) * kTickYears;
  g_plant.fuel = fuel > 0.0 ? fuel : 0.0;
  g_plant.ticks += 1;
}

int32_t plant_init(int32_t count) {
  g_plant.phase = kNotReady;
  g_plant.ticks = 0;
  g_plant.visited = 0;
  g_plant.score = 0.0;
  PLANT_READ_SCENARIO_OR_REFUSE(params, count, kDefaultScenario);
  const double distance = params[0], budget = params[1], deadline = params[2];
  if (!within(distance, kMinDistance, kMaxDistance) || !within(budget, kMinBudget, kMaxBudget) ||
      !within(deadline, kMinDeadline, kMaxDeadline)) {
    return PLANT_ERROR_RANGE;
  }
  g_plant.distance = distance;
  g_plant.deadline = deadline;
  g_plant.earth = 0.0;
  g_plant.position = 0.0;
  g_plant.rapidity = 0.0;
  g_plant.fuel = budget;
  g_plant.phase = kRunning;
  return PLANT_OK;
}

int32_t plant_read_state(void) {
  PLANT_REFUSE_UNLESS_READY(g_plant.phase);
  g_buffer[0] = g_plant.earth;
  g_buffer[1] = proper_time();
  g_buffer[2] = g_plant.position;
  g_buffer[3] = g_plant.rapidity;
  g_buffer[4] = g_plant.fuel;
  g_buffer[5] = g_plant.distance;
  g_buffer[6] = g_plant.visited ? 1.0 : 0.0;
  return kStateWidth;
}

int32_t plant_step(void) {
  PLANT_REFUSE_UNLESS_RUNNING(g_plant.phase);
  double a = g_buffer[0];
  if (!isfinite(a)) return PLANT_ERROR_NOT_FINITE;
  if (a > kMaxAcceleration) a = kMaxAcceleration;
  if (a < -kMaxAcceleration) a = -kMaxAcceleration;
  /* No more thrust than the fuel left pays for over the tick. */
  const double affordable = g_plant.fuel / kTickYears;
  if (a > affordable) a = affordable;
  if (a < -affordable) a = -affordable;
  g_buffer[0] = a;
  advance(a);

  const double x = g_plant.position, eta = g_plant.rapidity;
  /* Written so that a NaN would count as a failure (none can arise: |η|
   * stays within the budget, at most 20). */
  if (!(g_plant.earth <= g_plant.deadline) || !(x >= -kPlaceTolerance) ||
      !(fabs(eta) <= g_plant.fuel + kRestRapidity)) {
    g_plant.phase = kEnded;
    return PLANT_FAILED;
  }
  const int at_rest = fabs(eta) <= kRestRapidity;
  if (!g_plant.visited) {
    if (at_rest && fabs(x - g_plant.distance) <= kPlaceTolerance) g_plant.visited = 1;
  } else if (at_rest && fabs(x) <= kPlaceTolerance) {
    g_plant.score = 1.0 - proper_time() / g_plant.earth;
    g_plant.phase = kEnded;
    return PLANT_FINISHED;
  }
  if (g_plant.ticks == kEndTicks) {
    g_plant.phase = kEnded;
    return PLANT_FAILED;
  }
  return PLANT_RUNNING;
}

int32_t plant_ticks(void) {
  return g_plant.ticks;
}

/* 1 − τ/t on the tick the rocket came home at rest after the visit; 0
 * before that and for a trial that failed. 0.25 or more passes. */
double plant_score(void) {
  return g_plant.score;
}
