/* Buck converter (SPEC §10): a synchronous step-down converter from V_in to
 * a 5 V output, in the averaged continuous-conduction model. The controller
 * sets the duty cycle and must hold 5 V ± 0.1 V through a load step it is
 * not told about. Physics, units, scenario, failure and score:
 * docs/plants/buck.md. The ABI: ../plant_abi.h.
 *
 * State (observation), plant_read_state order:
 *   [0] v  the output (capacitor) voltage, V
 *   [1] i  the inductor current, A
 * Input: [0] d, the duty cycle, clamped to [0, 1].
 * Scenario parameters: (V_in, R1, R2, v0), or none for the default
 * (12, 10, 2.5, 0):
 *   V_in  the input voltage, V, 8..20
 *   R1    the load before t = 10 ms, Ω, 2..20
 *   R2    the load from t = 10 ms, Ω, 1..20
 *   v0    the initial output voltage, V, 0..6; the initial current is 0
 *
 * Equations, with L = 100 µH, C = 100 µF and dt = 1 µs. Substep n (counted
 * from 0 since plant_init, an integer; it starts at t = n·dt) uses the load
 * R = R1 if n < 10000 and R = R2 from n = 10000 (t = 10 ms) on, and updates
 * both state values from their values at the substep's start (forward
 * Euler):
 *   i' = i + dt·((d·V_in − v)/L)
 *   v' = v + dt·((i − v/R)/C)
 * A tick is 10 substeps (10 µs) with d constant over it; a trial that does
 * not fail lasts 3000 ticks (30 ms). The load therefore changes between
 * tick 1000 and tick 1001 (counted from 1).
 *
 * Failure: at the end of a tick, v > 7 V (overvoltage) or |i| > 8 A
 * (overcurrent); a NaN counts as both. Score: the fraction of ticks
 * 501..3000 (counted from 1: the 2500 ticks that start at or after
 * t = 5 ms) that end with |v − 5| ≤ 0.1; 0 once failed.
 *
 * Determinism: no clock, no randomness, no imports, no libm call; only IEEE
 * double operations in the order written here (wasm has no fused
 * multiply-add, and the build passes -ffp-contract=off). Time is an integer
 * substep counter, never an accumulated sum. */
#include <math.h>
#include <stdint.h>

#include "plant_abi.h"
#include "plant_exports.h"
#include "plant_lifecycle.h"

/* Physical parameters (SPEC §10). */
static const double kInductance = 100e-6;  /* L, H */
static const double kCapacitance = 100e-6; /* C, F */
static const double kTarget = 5.0;         /* the output voltage asked for, V */
static const double kTolerance = 0.1;      /* the band around it that scores, V */
static const double kOvervoltage = 7.0;    /* v above this ends the trial, V */
static const double kOvercurrent = 8.0;    /* |i| above this ends the trial, A */

/* Time. A tick is kSubsteps Euler substeps of kSubstepSeconds; a trial that
 * does not fail lasts kEndTicks ticks (30 ms). The load steps from R1 to R2
 * at substep kLoadStepSubstep (t = 10 ms). */
enum { kSubsteps = 10, kEndTicks = 3000, kLoadStepSubstep = 10000 };
static const double kSubstepSeconds = 1e-6;
static const double kTickSeconds = 1e-5;
static const double kEndSeconds = 0.03;

/* The score counts the ticks after the first kUnscoredTicks (5 ms):
 * kScoredTicks = kEndTicks − kUnscoredTicks of them. */
enum { kUnscoredTicks = 500 };
static const double kScoredTicks = 2500.0;

/* The plant's shape (plant_abi.h). */
enum { kParamCount = 4, kStateWidth = 2, kInputCount = 1 };

/* Scenario ranges (inclusive). */
static const double kMinSupply = 8.0, kMaxSupply = 20.0; /* V_in, V */
static const double kMinLoad1 = 2.0, kMaxLoad1 = 20.0;   /* R1, Ω */
static const double kMinLoad2 = 1.0, kMaxLoad2 = 20.0;   /* R2, Ω */
static const double kMinStart = 0.0, kMaxStart = 6.0;    /* v0, V */
static const double kMinDuty = 0.0, kMaxDuty = 1.0;      /* the input d */
static const double kDefaultScenario[kParamCount] = {12.0, 10.0, 2.5, 0.0};

/* The exchange buffer g_buffer and the exports that only report the constants
 * above (plant_exports.h). */
PLANT_DEFINE_CONSTANT_EXPORTS(kParamCount, kStateWidth, kInputCount, kTickSeconds, kEndSeconds);

static struct {
  enum PlantPhase phase;
  double supply;         /* V_in, V */
  double load1, load2;   /* R1, R2, Ω */
  double voltage;        /* v, V */
  double current;        /* i, A */
  int32_t substeps;      /* substeps taken: the next one starts at substeps·dt */
  int32_t ticks;         /* ticks taken */
  int32_t in_band_ticks; /* scored ticks that ended within 5 ± 0.1 V */
  int failed;            /* the trial ended in overvoltage or overcurrent */
} g_plant;

/* One forward-Euler substep at duty d: both derivatives from the values at
 * the substep's start, the load chosen by the substep's start time. */
static void substep(double duty) {
  const double load = g_plant.substeps < kLoadStepSubstep ? g_plant.load1 : g_plant.load2;
  const double i = g_plant.current, v = g_plant.voltage;
  g_plant.current = i + kSubstepSeconds * ((duty * g_plant.supply - v) / kInductance);
  g_plant.voltage = v + kSubstepSeconds * ((i - v / load) / kCapacitance);
  g_plant.substeps += 1;
}

int32_t plant_init(int32_t count) {
  g_plant.phase = kNotReady;
  g_plant.substeps = 0;
  g_plant.ticks = 0;
  g_plant.in_band_ticks = 0;
  g_plant.failed = 0;
  PLANT_READ_SCENARIO_OR_REFUSE(params, count, kDefaultScenario);
  const double supply = params[0], load1 = params[1], load2 = params[2], start = params[3];
  if (!within(supply, kMinSupply, kMaxSupply) || !within(load1, kMinLoad1, kMaxLoad1) ||
      !within(load2, kMinLoad2, kMaxLoad2) || !within(start, kMinStart, kMaxStart)) {
    return PLANT_ERROR_RANGE;
  }
  g_plant.supply = supply;
  g_plant.load1 = load1;
  g_plant.load2 = load2;
  g_plant.voltage = start;
  g_plant.current = 0.0;
  g_plant.phase = kRunning;
  return PLANT_OK;
}

int32_t plant_read_state(void) {
  PLANT_REFUSE_UNLESS_READY(g_plant.phase);
  g_buffer[0] = g_plant.voltage;
  g_buffer[1] = g_plant.current;
  return kStateWidth;
}

int32_t plant_step(void) {
  PLANT_REFUSE_UNLESS_RUNNING(g_plant.phase);
  double duty = g_buffer[0];
  if (!isfinite(duty)) return PLANT_ERROR_NOT_FINITE;
  if (duty > kMaxDuty) duty = kMaxDuty;
  if (duty < kMinDuty) duty = kMinDuty;
  g_buffer[0] = duty;
  for (int k = 0; k < kSubsteps; ++k) substep(duty);
  g_plant.ticks += 1;
  /* Written so that a NaN voltage or current counts as a failure. */
  if (!(g_plant.voltage <= kOvervoltage) ||
      !(-kOvercurrent <= g_plant.current && g_plant.current <= kOvercurrent)) {
    g_plant.failed = 1;
    g_plant.phase = kEnded;
    return PLANT_FAILED;
  }
  if (g_plant.ticks > kUnscoredTicks &&
      within(g_plant.voltage, kTarget - kTolerance, kTarget + kTolerance)) {
    g_plant.in_band_ticks += 1;
  }
  PLANT_FINISH_ON_THE_LAST_TICK(g_plant.phase, g_plant.ticks, kEndTicks);
}

int32_t plant_ticks(void) {
  return g_plant.ticks;
}

/* The fraction of the 2500 scored ticks (501..3000) that ended within
 * 5 ± 0.1 V, counted so far; 0 for a trial that failed. 0.9 or more on a
 * finished trial (2250 ticks) passes. */
double plant_score(void) {
  if (g_plant.failed) return 0.0;
  return (double)g_plant.in_band_ticks / kScoredTicks;
}
