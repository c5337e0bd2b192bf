/* Cart-pole swing-up (SPEC §10): the cart-pole of ../cartpole/cartpole.c
 * with the pole starting down, a weaker motor and a finite track; the
 * controller must swing the pole up and hold it there. Physics, units,
 * scenario, failure and score: docs/plants/swingup.md. The ABI:
 * ../plant_abi.h.
 *
 * State (observation), plant_read_state order:
 *   [0] x  cart position, m (positive to the right)
 *   [1] v  cart velocity, m/s
 *   [2] θ  pole angle from upright, rad (positive leans to +x), NOT wrapped:
 *          it grows by 2π per full turn; the controller wraps it itself
 *   [3] ω  pole angular velocity, rad/s
 * Input: [0] F, horizontal force on the cart, N, clamped to ±10 N.
 * Scenario parameters: (x0, v0, θ0, ω0), or none for the default
 * (0, 0, π, 0): the pole hanging straight down at rest (π rounded to
 * double, 3.141592653589793).
 *
 * Equations of Barto, Sutton & Anderson (1983), frictionless form, with
 * M = m_c + m_p, exactly as in cartpole.c:
 *   θ'' = (g sinθ + cosθ (−F − m_p l ω² sinθ) / M) / (l (4/3 − m_p cos²θ / M))
 *   x'' = (F + m_p l (ω² sinθ − θ'' cosθ)) / M
 * integrated by forward Euler: 10 substeps of 1 ms per 10 ms tick, each
 * substep updating all four variables from the values at its start.
 *
 * Order of operations per tick: clamp F; 10 substeps; count the tick; then
 * judge the end-of-tick state: off the track (|x| > 2.4 m, or any value not
 * finite) fails the trial; otherwise a tick from 2001 on whose wrapped angle
 * is within 0.2 rad of upright counts toward the score; tick 3000 finishes.
 * The wrap, for the score only: w = fmod(θ, 2π) (exact, in (−2π, 2π)),
 * then w − 2π if w > π, w + 2π if w ≤ −π, giving (−π, π] (2π and π as the
 * doubles 6.283185307179586 and 3.141592653589793).
 *
 * Determinism: no clock, no randomness, no imports; only IEEE double
 * operations in the order written here (wasm has no fused multiply-add, and
 * the build passes -ffp-contract=off), sin, cos and fmod from wasi-libc's
 * libm compiled into the module. */
#include <math.h>
#include <stdint.h>

#include "plant_abi.h"
#include "plant_exports.h"
#include "plant_lifecycle.h"

/* Physical parameters (SPEC §10; those of cartpole.c but the force). */
static const double kCartMass = 1.0;    /* m_c, kg */
static const double kPoleMass = 0.1;    /* m_p, kg */
static const double kHalfLength = 0.5;  /* l, m: hinge to the pole's centre of mass */
static const double kGravity = 9.81;    /* g, m/s² */
static const double kForceLimit = 10.0; /* |F| ≤ 10 N */

/* Time. A tick is kSubsteps Euler substeps of kSubstepSeconds; a trial that
 * does not fail lasts kEndTicks ticks (30 s). Ticks after kUnscoredTicks
 * (the last 10 s) are scored. */
enum { kSubsteps = 10, kEndTicks = 3000, kUnscoredTicks = 2000 };
static const double kSubstepSeconds = 0.001;
static const double kTickSeconds = 0.01;
static const double kEndSeconds = 30.0;
static const double kScoredTicks = 1000.0; /* kEndTicks − kUnscoredTicks */

/* The track's ends: the trial fails when |x| > 2.4 m after a tick. */
static const double kTrackHalfLength = 2.4;
/* The pole is up when its wrapped angle is within 0.2 rad of upright. */
static const double kUpAngle = 0.2;
static const double kPi = 3.141592653589793;    /* π rounded to double */
static const double kTwoPi = 6.283185307179586; /* 2π rounded to double */

/* The plant's shape (plant_abi.h). */
enum { kParamCount = 4, kStateWidth = 4, kInputCount = 1 };

/* Scenario ranges (inclusive). */
static const double kMaxAbsPosition = 1.0;         /* |x0| ≤ 1 m */
static const double kMaxAbsVelocity = 2.0;         /* |v0| ≤ 2 m/s */
static const double kMaxAbsAngle = 4.0;            /* |θ0| ≤ 4 rad (any start, up or down) */
static const double kMaxAbsAngularVelocity = 10.0; /* |ω0| ≤ 10 rad/s */
static const double kDefaultScenario[kParamCount] = {0.0, 0.0, 3.141592653589793, 0.0};

/* The exchange buffer g_buffer and the exports that only report the constants
 * above (plant_exports.h). */
PLANT_DEFINE_CONSTANT_EXPORTS(kParamCount, kStateWidth, kInputCount, kTickSeconds, kEndSeconds);

static struct {
  enum PlantPhase phase;
  double x, v, theta, omega;
  int32_t ticks;    /* ticks taken */
  int32_t up_ticks; /* scored ticks that ended with the pole up */
  int failed;       /* the cart left the track */
} g_plant;

/* Whether the cart is on the track and the state is finite (|x| ≤ 2.4 m).
 * Written so that NaN anywhere counts as off the track. */
static int cart_on_track(void) {
  return isfinite(g_plant.v) && isfinite(g_plant.theta) && isfinite(g_plant.omega) &&
         fabs(g_plant.x) <= kTrackHalfLength;
}

/* θ wrapped to (−π, π], for the score. fmod is exact, so w is θ minus a
 * whole number of (double) 2π, with |w| < 2π; one correction brings it into
 * (−π, π]. */
static double wrapped_angle(double theta) {
  double w = fmod(theta, kTwoPi);
  if (w > kPi) w = w - kTwoPi;
  if (w <= -kPi) w = w + kTwoPi;
  return w;
}

/* One forward-Euler substep of the Barto-Sutton-Anderson equations. */
static void substep(double force) {
  const double total_mass = kCartMass + kPoleMass;
  const double sin_theta = sin(g_plant.theta);
  const double cos_theta = cos(g_plant.theta);
  const double omega_squared = g_plant.omega * g_plant.omega;
  const double temp = (-force - kPoleMass * kHalfLength * omega_squared * sin_theta) / total_mass;
  const double theta_acc =
      (kGravity * sin_theta + cos_theta * temp) /
      (kHalfLength * (4.0 / 3.0 - kPoleMass * cos_theta * cos_theta / total_mass));
  const double x_acc =
      (force + kPoleMass * kHalfLength * (omega_squared * sin_theta - theta_acc * cos_theta)) /
      total_mass;
  const double x = g_plant.x + kSubstepSeconds * g_plant.v;
  const double v = g_plant.v + kSubstepSeconds * x_acc;
  const double theta = g_plant.theta + kSubstepSeconds * g_plant.omega;
  const double omega = g_plant.omega + kSubstepSeconds * theta_acc;
  g_plant.x = x;
  g_plant.v = v;
  g_plant.theta = theta;
  g_plant.omega = omega;
}

int32_t plant_init(int32_t count) {
  g_plant.phase = kNotReady;
  g_plant.ticks = 0;
  g_plant.up_ticks = 0;
  g_plant.failed = 0;
  PLANT_READ_SCENARIO_OR_REFUSE(params, count, kDefaultScenario);
  if (fabs(params[0]) > kMaxAbsPosition || fabs(params[1]) > kMaxAbsVelocity ||
      fabs(params[2]) > kMaxAbsAngle || fabs(params[3]) > kMaxAbsAngularVelocity) {
    return PLANT_ERROR_RANGE;
  }
  g_plant.x = params[0];
  g_plant.v = params[1];
  g_plant.theta = params[2];
  g_plant.omega = params[3];
  g_plant.phase = kRunning;
  return PLANT_OK;
}

int32_t plant_read_state(void) {
  PLANT_REFUSE_UNLESS_READY(g_plant.phase);
  g_buffer[0] = g_plant.x;
  g_buffer[1] = g_plant.v;
  g_buffer[2] = g_plant.theta;
  g_buffer[3] = g_plant.omega;
  return kStateWidth;
}

int32_t plant_step(void) {
  PLANT_REFUSE_UNLESS_RUNNING(g_plant.phase);
  double force = g_buffer[0];
  if (!isfinite(force)) return PLANT_ERROR_NOT_FINITE;
  if (force > kForceLimit) force = kForceLimit;
  if (force < -kForceLimit) force = -kForceLimit;
  g_buffer[0] = force;
  for (int i = 0; i < kSubsteps; ++i) substep(force);
  g_plant.ticks += 1;
  if (!cart_on_track()) {
    g_plant.failed = 1;
    g_plant.phase = kEnded;
    return PLANT_FAILED;
  }
  if (g_plant.ticks > kUnscoredTicks && fabs(wrapped_angle(g_plant.theta)) < kUpAngle) {
    g_plant.up_ticks += 1;
  }
  PLANT_FINISH_ON_THE_LAST_TICK(g_plant.phase, g_plant.ticks, kEndTicks);
}

int32_t plant_ticks(void) {
  return g_plant.ticks;
}

/* The fraction of the 1000 scored ticks (2001..3000, the last 10 s) that
 * ended with the pole up: the count so far / 1000 during a trial, 0 for a
 * trial that left the track. Passing: finished with a score ≥ 0.85. */
double plant_score(void) {
  if (g_plant.failed) return 0.0;
  return (double)g_plant.up_ticks / kScoredTicks;
}
