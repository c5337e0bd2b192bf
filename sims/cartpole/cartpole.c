/* Cart-pole balance (SPEC §10): a pole hinged on a cart that moves on a
 * frictionless straight track; the controller pushes the cart. Physics,
 * units, scenario, failure and score: docs/plants/cartpole.md. The ABI:
 * ../plant_abi.h.
 *
 * State (observation), plant_read_state order:
 *   [0] x  cart position, m (positive to the right)
 *   [1] v  cart velocity, m/s
 *   [2] θ  pole angle from upright, rad (positive leans to +x)
 *   [3] ω  pole angular velocity, rad/s
 * Input: [0] F, horizontal force on the cart, N, clamped to ±20 N.
 * Scenario parameters: (x0, v0, θ0, ω0), or none for the default
 * (0, 0, 0.05, 0).
 *
 * Equations of Barto, Sutton & Anderson (1983), frictionless form, with
 * M = m_c + m_p:
 *   θ'' = (g sinθ + cosθ (−F − m_p l ω² sinθ) / M) / (l (4/3 − m_p cos²θ / M))
 *   x'' = (F + m_p l (ω² sinθ − θ'' cosθ)) / M
 * integrated by forward Euler: 10 substeps of 1 ms per 10 ms tick, each
 * substep updating all four variables from the values at its start.
 *
 * Determinism: no clock, no randomness, no imports; only IEEE double
 * operations in the order written here (wasm has no fused multiply-add, and
 * the build passes -ffp-contract=off), sin and cos from wasi-libc's libm
 * compiled into the module. */
#include <math.h>
#include <stdint.h>

#include "plant_abi.h"
#include "plant_exports.h"
#include "plant_lifecycle.h"

/* Physical parameters (SPEC §10). */
static const double kCartMass = 1.0;    /* m_c, kg */
static const double kPoleMass = 0.1;    /* m_p, kg */
static const double kHalfLength = 0.5;  /* l, m: hinge to the pole's centre of mass */
static const double kGravity = 9.81;    /* g, m/s² */
static const double kForceLimit = 20.0; /* |F| ≤ 20 N */

/* Time. A tick is kSubsteps Euler substeps of kSubstepSeconds; a trial that
 * does not fail lasts kEndTicks ticks (20 s). */
enum { kSubsteps = 10, kEndTicks = 2000 };
static const double kSubstepSeconds = 0.001;
static const double kTickSeconds = 0.01;
static const double kEndSeconds = 20.0;
static const double kTicksPerSecond = 100.0; /* for the score: ticks / 100 */

/* The pole has fallen when |θ| > π/2. */
static const double kFallAngle = 1.5707963267948966; /* π/2 rounded to double */

/* The plant's shape (plant_abi.h). */
enum { kParamCount = 4, kStateWidth = 4, kInputCount = 1 };

/* Scenario ranges (inclusive). */
static const double kMaxAbsPosition = 10.0;        /* |x0| ≤ 10 m */
static const double kMaxAbsVelocity = 10.0;        /* |v0| ≤ 10 m/s */
static const double kMaxAbsAngle = 1.5;            /* |θ0| ≤ 1.5 rad (< π/2: starts up) */
static const double kMaxAbsAngularVelocity = 10.0; /* |ω0| ≤ 10 rad/s */
static const double kDefaultScenario[kParamCount] = {0.0, 0.0, 0.05, 0.0};

/* The exchange buffer g_buffer and the exports that only report the constants
 * above (plant_exports.h). */
PLANT_DEFINE_CONSTANT_EXPORTS(kParamCount, kStateWidth, kInputCount, kTickSeconds, kEndSeconds);

static struct {
  enum PlantPhase phase;
  double x, v, theta, omega;
  int32_t ticks;          /* ticks taken */
  int32_t balanced_ticks; /* ticks that ended with the pole up */
} g_plant;

/* Whether the pole is up and the state is finite (|θ| ≤ π/2). Written so
 * that NaN anywhere counts as fallen. */
static int pole_is_up(void) {
  return isfinite(g_plant.x) && isfinite(g_plant.v) && isfinite(g_plant.omega) &&
         fabs(g_plant.theta) <= kFallAngle;
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
  g_plant.balanced_ticks = 0;
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
  if (!pole_is_up()) {
    g_plant.phase = kEnded;
    return PLANT_FAILED;
  }
  g_plant.balanced_ticks += 1;
  PLANT_FINISH_ON_THE_LAST_TICK(g_plant.phase, g_plant.ticks, kEndTicks);
}

int32_t plant_ticks(void) {
  return g_plant.ticks;
}

/* Seconds the pole was up at the ends of ticks: balanced ticks / 100, so
 * 20 exactly means the trial passed, and a pole that falls on tick n scores
 * (n − 1) / 100. */
double plant_score(void) {
  return (double)g_plant.balanced_ticks / kTicksPerSecond;
}
