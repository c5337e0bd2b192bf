/* Shower temperature (SPEC §10): a mixing valve blends hot and cold water,
 * the blend runs down a pipe to the shower head, and the controller turns
 * the valve. It sees the head's temperature two seconds late. Physics,
 * units, scenario, failure and score: docs/plants/shower.md. The ABI:
 * ../plant_abi.h.
 *
 * State (observation), plant_read_state order:
 *   [0] T_head  temperature of the water at the shower head, °C
 *   [1] a       the valve's actual opening, the hot fraction, 0..1
 * Input: [0] c, the commanded opening, clamped to [0, 1].
 * Scenario parameters: (T_cold, T_hot, a0, T0), or none for the default
 * (15, 60, 0, 15):
 *   T_cold  cold supply, °C, 0..30
 *   T_hot   hot supply, °C, 40..90, and T_hot − T_cold > 10
 *   a0      the valve's initial opening, 0..1
 *   T0      the initial temperature of the head and of all the water in
 *           the pipe, °C, 0..60
 *
 * Equations, with dt = 0.01 s, valve rate r = 0.5 /s, pipe delay
 * D = 2.0 s (N = D/dt = 200 substeps) and head time constant τ = 0.5 s.
 * Each substep, in this order:
 *   1. valve:  a moves toward c by at most r·dt = 0.005: if c − a > r·dt,
 *              a += r·dt; else if c − a < −r·dt, a −= r·dt; else a = c.
 *   2. mix:    T_mix = T_cold + a·(T_hot − T_cold), with the new a.
 *   3. pipe:   a ring of N entries; the entry at the ring's position is the
 *              value pushed N substeps ago: it leaves the pipe as T_out and
 *              T_mix takes its place; the position moves on by one. At
 *              init every entry is T0, so the first N substeps get
 *              T_out = T0 and substep n > N gets the T_mix of substep n − N.
 *   4. head:   forward Euler, T_head += dt·((T_out − T_head)/τ).
 * A tick is 10 substeps (0.1 s) with c constant over it; a trial that does
 * not fail lasts 600 ticks (60 s).
 *
 * Failure: T_head > 50 °C at the end of a tick (scalding). Score: the
 * fraction of ticks 201..600 (counted from 1: the 400 ticks that start at or
 * after t = 20 s) that end with |T_head − 38| ≤ 1; 0 once failed.
 *
 * Determinism: no clock, no randomness, no imports, no libm call; only IEEE
 * double operations in the order written here (wasm has no fused
 * multiply-add, and the build passes -ffp-contract=off). */
#include <math.h>
#include <stdint.h>

#include "plant_abi.h"
#include "plant_exports.h"
#include "plant_lifecycle.h"

/* Physical parameters (SPEC §10). */
static const double kValveRate = 0.5;   /* r, largest valve speed, opening per second */
static const double kHeadTau = 0.5;     /* τ, the head's first-order time constant, s */
static const double kTarget = 38.0;     /* the temperature the controller is asked for, °C */
static const double kTolerance = 1.0;   /* the band around it that scores, °C */
static const double kScaldLimit = 50.0; /* T_head above this ends the trial, °C */

/* Time. A tick is kSubsteps Euler substeps of kSubstepSeconds; a trial that
 * does not fail lasts kEndTicks ticks (60 s). The pipe holds one entry per
 * substep of its delay: kPipeEntries = D / dt = 2.0 s / 0.01 s. */
enum { kSubsteps = 10, kEndTicks = 600, kPipeEntries = 200 };
static const double kSubstepSeconds = 0.01;
static const double kTickSeconds = 0.1;
static const double kEndSeconds = 60.0;

/* The score counts the ticks after the first kUnscoredTicks (20 s):
 * kScoredTicks = kEndTicks − kUnscoredTicks of them. */
enum { kUnscoredTicks = 200 };
static const double kScoredTicks = 400.0;

/* The plant's shape (plant_abi.h). */
enum { kParamCount = 4, kStateWidth = 2, kInputCount = 1 };

/* Scenario ranges (inclusive), and T_hot − T_cold > kMinSpread (the
 * difference computed in double). */
static const double kMinCold = 0.0, kMaxCold = 30.0;      /* T_cold, °C */
static const double kMinHot = 40.0, kMaxHot = 90.0;       /* T_hot, °C */
static const double kMinSpread = 10.0;                    /* T_hot − T_cold > 10 °C */
static const double kMinOpening = 0.0, kMaxOpening = 1.0; /* a0, and the input c */
static const double kMinStart = 0.0, kMaxStart = 60.0;    /* T0, °C */
static const double kDefaultScenario[kParamCount] = {15.0, 60.0, 0.0, 15.0};

/* The exchange buffer g_buffer and the exports that only report the constants
 * above (plant_exports.h). */
PLANT_DEFINE_CONSTANT_EXPORTS(kParamCount, kStateWidth, kInputCount, kTickSeconds, kEndSeconds);

static struct {
  enum PlantPhase phase;
  double cold, hot;          /* T_cold, T_hot, °C */
  double head;               /* T_head, °C */
  double opening;            /* a */
  double pipe[kPipeEntries]; /* the water in the pipe, °C; a ring */
  int32_t pipe_position;     /* the entry that leaves next */
  int32_t ticks;             /* ticks taken */
  int32_t in_band_ticks;     /* scored ticks that ended within 38 ± 1 °C */
  int failed;                /* the trial ended scalding */
} g_plant;

/* One substep: valve, mix, pipe, head, in that order. */
static void substep(double command) {
  const double largest_move = kValveRate * kSubstepSeconds;
  const double gap = command - g_plant.opening;
  if (gap > largest_move) {
    g_plant.opening = g_plant.opening + largest_move;
  } else if (gap < -largest_move) {
    g_plant.opening = g_plant.opening - largest_move;
  } else {
    g_plant.opening = command;
  }
  const double mixed = g_plant.cold + g_plant.opening * (g_plant.hot - g_plant.cold);
  const double leaving = g_plant.pipe[g_plant.pipe_position];
  g_plant.pipe[g_plant.pipe_position] = mixed;
  g_plant.pipe_position = g_plant.pipe_position + 1 == kPipeEntries ? 0 : g_plant.pipe_position + 1;
  g_plant.head = g_plant.head + kSubstepSeconds * ((leaving - g_plant.head) / kHeadTau);
}

int32_t plant_init(int32_t count) {
  g_plant.phase = kNotReady;
  g_plant.ticks = 0;
  g_plant.in_band_ticks = 0;
  g_plant.failed = 0;
  PLANT_READ_SCENARIO_OR_REFUSE(params, count, kDefaultScenario);
  const double cold = params[0], hot = params[1], opening = params[2], start = params[3];
  if (!within(cold, kMinCold, kMaxCold) || !within(hot, kMinHot, kMaxHot) ||
      !(hot - cold > kMinSpread) || !within(opening, kMinOpening, kMaxOpening) ||
      !within(start, kMinStart, kMaxStart)) {
    return PLANT_ERROR_RANGE;
  }
  g_plant.cold = cold;
  g_plant.hot = hot;
  g_plant.opening = opening;
  g_plant.head = start;
  for (int i = 0; i < kPipeEntries; ++i) g_plant.pipe[i] = start;
  g_plant.pipe_position = 0;
  g_plant.phase = kRunning;
  return PLANT_OK;
}

int32_t plant_read_state(void) {
  PLANT_REFUSE_UNLESS_READY(g_plant.phase);
  g_buffer[0] = g_plant.head;
  g_buffer[1] = g_plant.opening;
  return kStateWidth;
}

int32_t plant_step(void) {
  PLANT_REFUSE_UNLESS_RUNNING(g_plant.phase);
  double command = g_buffer[0];
  if (!isfinite(command)) return PLANT_ERROR_NOT_FINITE;
  if (command > kMaxOpening) command = kMaxOpening;
  if (command < kMinOpening) command = kMinOpening;
  g_buffer[0] = command;
  for (int i = 0; i < kSubsteps; ++i) substep(command);
  g_plant.ticks += 1;
  /* Written so that a NaN temperature counts as scalding. */
  if (!(g_plant.head <= kScaldLimit)) {
    g_plant.failed = 1;
    g_plant.phase = kEnded;
    return PLANT_FAILED;
  }
  if (g_plant.ticks > kUnscoredTicks &&
      within(g_plant.head, kTarget - kTolerance, kTarget + kTolerance)) {
    g_plant.in_band_ticks += 1;
  }
  PLANT_FINISH_ON_THE_LAST_TICK(g_plant.phase, g_plant.ticks, kEndTicks);
}

int32_t plant_ticks(void) {
  return g_plant.ticks;
}

/* The fraction of the 400 scored ticks (201..600) that ended within
 * 38 ± 1 °C, counted so far; 0 for a trial that scalded. 0.9 or more on a
 * finished trial (360 ticks) passes. */
double plant_score(void) {
  if (g_plant.failed) return 0.0;
  return (double)g_plant.in_band_ticks / kScoredTicks;
}
