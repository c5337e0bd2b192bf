/* Ship heading (SPEC §10): hold course 30° in waves. A ship's yaw follows
 * Nomoto's first-order model; the controller commands the rudder, which
 * moves at a limited rate. Physics, units, scenario, failure and score:
 * docs/plants/ship.md. The ABI: ../plant_abi.h.
 *
 * State (observation), plant_read_state order:
 *   [0] ψ  heading, degrees (unwrapped: it is not reduced modulo 360)
 *   [1] r  yaw rate, degrees/s (positive turns ψ upward)
 *   [2] δ  the rudder's actual angle, degrees
 * Input: [0] the commanded rudder angle, degrees, clamped to ±35°.
 * Scenario parameters: (ψ0, r0, A, φ), or none for the default
 * (0, 0, 0.2, 0). The rudder starts at 0; the target course is 30° always.
 *
 * Nomoto's first-order model with a wave disturbance w on the yaw equation:
 *   T r' + r = K δ + w(t),   ψ' = r,   w(t) = A sin(2π t / P + φ)
 * with K = 0.1 /s, T = 10 s, P = 8 s. The rudder slews toward the command
 * at 3 °/s at most. Integrated by forward Euler: 10 substeps of 10 ms per
 * 100 ms tick. Each substep, in this order: moves the rudder (by at most
 * 3 °/s × dt), evaluates w at the substep's start time t = n·dt (n the
 * integer count of substeps since the start, never a running sum of dt),
 * then updates r and ψ, both from the values at the substep's start.
 *
 * Determinism: no clock, no randomness, no imports; only IEEE double
 * operations in the order written here (wasm has no fused multiply-add, and
 * the build passes -ffp-contract=off), sin from wasi-libc's libm compiled
 * into the module. */
#include <math.h>
#include <stdint.h>

#include "plant_abi.h"
#include "plant_exports.h"
#include "plant_lifecycle.h"

/* Physical parameters. */
static const double kGain = 0.1;          /* K, /s: deg/s of steady yaw rate per deg of rudder */
static const double kTimeConstant = 10.0; /* T, s */
static const double kRudderLimit = 35.0;  /* |δ| ≤ 35° (the command is clamped to it) */
static const double kRudderRate = 3.0;    /* |δ'| ≤ 3 °/s */
static const double kWavePeriod = 8.0;    /* P, s */
static const double kTwoPi = 6.283185307179586; /* 2π rounded to double */

/* The course to hold, degrees. */
static const double kTargetCourse = 30.0;

/* Time. A tick is kSubsteps Euler substeps of kSubstepSeconds; a trial that
 * is not lost lasts kEndTicks ticks (300 s). */
enum { kSubsteps = 10, kEndTicks = 3000 };
static const double kSubstepSeconds = 0.01;
static const double kTickSeconds = 0.1;
static const double kEndSeconds = 300.0;

/* Lost: |ψ − 30| > 120° at the end of a tick after t = 60 s, i.e. of the
 * ticks whose count (after the tick) exceeds kGraceTicks. */
enum { kGraceTicks = 600 };
static const double kLostError = 120.0;

/* The score counts ticks kScoreFirstTick..kEndTicks−1 (0-based; they start
 * at t = 100 s, 2000 ticks) that end with |ψ − 30| ≤ 2°. */
enum { kScoreFirstTick = 1000, kScoredTicks = kEndTicks - kScoreFirstTick };
static const double kOnCourseError = 2.0;

/* The plant's shape (plant_abi.h). */
enum { kParamCount = 4, kStateWidth = 3, kInputCount = 1 };

/* Scenario ranges (inclusive). */
static const double kMaxAbsHeading = 180.0;           /* |ψ0| ≤ 180° */
static const double kMaxAbsYawRate = 5.0;             /* |r0| ≤ 5 °/s */
static const double kMaxAmplitude = 0.5;              /* 0 ≤ A ≤ 0.5 °/s */
static const double kMaxAbsPhase = 3.141592653589793; /* |φ| ≤ π rounded to double, rad */
static const double kDefaultScenario[kParamCount] = {0.0, 0.0, 0.2, 0.0};

/* The exchange buffer g_buffer and the exports that only report the constants
 * above (plant_exports.h). */
PLANT_DEFINE_CONSTANT_EXPORTS(kParamCount, kStateWidth, kInputCount, kTickSeconds, kEndSeconds);

static struct {
  enum PlantPhase phase;
  double psi, r, delta;           /* heading, yaw rate, rudder angle */
  double amplitude, phase_offset; /* the waves' A and φ */
  int32_t substeps;               /* substeps taken: the waves' clock */
  int32_t ticks;                  /* ticks taken */
  int32_t on_course_ticks;        /* scored ticks that ended within 2° of the course */
  int lost;                       /* the trial ended PLANT_FAILED */
} g_plant;

/* |ψ − 30|, the heading error in degrees. */
static double course_error(void) {
  return fabs(g_plant.psi - kTargetCourse);
}

/* Whether the state is finite (NaN anywhere counts as lost). */
static int state_is_finite(void) {
  return isfinite(g_plant.psi) && isfinite(g_plant.r) && isfinite(g_plant.delta);
}

/* One forward-Euler substep with the (clamped) rudder command. */
static void substep(double command) {
  /* The rudder first: toward the command by at most 3 °/s × dt. */
  const double slew = kRudderRate * kSubstepSeconds;
  const double gap = command - g_plant.delta;
  if (gap > slew) {
    g_plant.delta = g_plant.delta + slew;
  } else if (gap < -slew) {
    g_plant.delta = g_plant.delta - slew;
  } else {
    g_plant.delta = command;
  }
  /* The waves at the substep's start time, from the integer substep count. */
  const double t = (double)g_plant.substeps * kSubstepSeconds;
  const double wave = g_plant.amplitude * sin(kTwoPi * t / kWavePeriod + g_plant.phase_offset);
  /* Nomoto: r' = (K δ + w − r) / T, ψ' = r; both from the substep's start. */
  const double yaw_acc = (kGain * g_plant.delta + wave - g_plant.r) / kTimeConstant;
  const double r = g_plant.r + kSubstepSeconds * yaw_acc;
  const double psi = g_plant.psi + kSubstepSeconds * g_plant.r;
  g_plant.r = r;
  g_plant.psi = psi;
  g_plant.substeps += 1;
}

int32_t plant_init(int32_t count) {
  g_plant.phase = kNotReady;
  g_plant.substeps = 0;
  g_plant.ticks = 0;
  g_plant.on_course_ticks = 0;
  g_plant.lost = 0;
  PLANT_READ_SCENARIO_OR_REFUSE(params, count, kDefaultScenario);
  if (fabs(params[0]) > kMaxAbsHeading || fabs(params[1]) > kMaxAbsYawRate || !(params[2] >= 0.0) ||
      params[2] > kMaxAmplitude || fabs(params[3]) > kMaxAbsPhase) {
    return PLANT_ERROR_RANGE;
  }
  g_plant.psi = params[0];
  g_plant.r = params[1];
  g_plant.delta = 0.0;
  g_plant.amplitude = params[2];
  g_plant.phase_offset = params[3];
  g_plant.phase = kRunning;
  return PLANT_OK;
}

int32_t plant_read_state(void) {
  PLANT_REFUSE_UNLESS_READY(g_plant.phase);
  g_buffer[0] = g_plant.psi;
  g_buffer[1] = g_plant.r;
  g_buffer[2] = g_plant.delta;
  return kStateWidth;
}

int32_t plant_step(void) {
  PLANT_REFUSE_UNLESS_RUNNING(g_plant.phase);
  double command = g_buffer[0];
  if (!isfinite(command)) return PLANT_ERROR_NOT_FINITE;
  if (command > kRudderLimit) command = kRudderLimit;
  if (command < -kRudderLimit) command = -kRudderLimit;
  g_buffer[0] = command;
  for (int i = 0; i < kSubsteps; ++i) substep(command);
  const int32_t tick = g_plant.ticks; /* 0-based index of the tick just taken */
  g_plant.ticks += 1;
  if (!state_is_finite() || (g_plant.ticks > kGraceTicks && course_error() > kLostError)) {
    g_plant.phase = kEnded;
    g_plant.lost = 1;
    return PLANT_FAILED;
  }
  if (tick >= kScoreFirstTick && course_error() <= kOnCourseError) g_plant.on_course_ticks += 1;
  PLANT_FINISH_ON_THE_LAST_TICK(g_plant.phase, g_plant.ticks, kEndTicks);
}

int32_t plant_ticks(void) {
  return g_plant.ticks;
}

/* The fraction of the 2000 scored ticks (those starting at t = 100 s or
 * later) that ended within 2° of the course, so far; 0 once the ship is
 * lost. A finished trial passes with 0.9 or more. */
double plant_score(void) {
  if (g_plant.lost) return 0.0;
  return (double)g_plant.on_course_ticks / (double)kScoredTicks;
}
