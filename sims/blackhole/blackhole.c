/* Black-hole orbit (SPEC §10): a rocket on an equatorial orbit around a
 * Schwarzschild black hole, in geometrized units (G = c = M = 1: radii in
 * units of M, proper time in units of M). It starts on a circular orbit and
 * must move to a target circular orbit and hold it, with a thruster of
 * limited acceleration and a limited Δv budget. Physics, units, scenario,
 * failure and score: docs/plants/blackhole.md. The ABI: ../plant_abi.h.
 *
 * State (observation), plant_read_state order:
 *   [0] r         the areal radius, M
 *   [1] u_r       dr/dτ, the radial velocity in proper time (dimensionless)
 *   [2] phi       the azimuth, rad, not wrapped (starts at 0)
 *   [3] L         the specific angular momentum r² dφ/dτ, M
 *   [4] E         the specific energy (1 − 2/r) dt/dτ (from the normalization)
 *   [5] fuel      the Δv left, ∫|a| dτ still allowed (dimensionless, c)
 *   [6] r_target  the radius of the orbit to reach and hold, M (constant)
 * Inputs: [0] a_r, [1] a_phi: the thrust as a proper acceleration (units of
 * c²/GM = 1/M) along the rocket's own radial and tangential directions (an
 * orthonormal pair orthogonal to its 4-velocity; a_phi > 0 pushes toward
 * +φ, a_r > 0 outward). Each is clamped to ±0.002, the pair is scaled down
 * to |a| ≤ 0.002 and to the fuel left; the applied pair is written back.
 * Scenario parameters: (r0, u_r0, r_target, fuel0), or none for the default
 * (10, 0, 7, 0.1):
 *   r0        the start radius, M, 7..20; L starts at the circular orbit's
 *             r0 / √(r0 − 3), φ at 0
 *   u_r0      the start radial velocity, −0.02..0.02 (0: circular)
 *   r_target  the target radius, M, 6.5..20 (above the ISCO at 6 M)
 *   fuel0     the Δv budget, 0..0.5
 *
 * Equations (M = 1, f = 1 − 2/r), for y = (r, u_r, φ, L) with the thrust
 * (a_r, a_φ) constant over a tick:
 *   E     = √(u_r² + f (1 + L²/r²)),  D = √(u_r² + f)
 *   dr/dτ   = u_r
 *   du_r/dτ = −1/r² + L²/r³ − 3 L²/r⁴ + a_r D
 *   dφ/dτ   = L / r²
 *   dL/dτ   = (a_r u_r L + a_φ r E) / D
 * integrated with classical RK4, 10 substeps of h = 0.1 M per tick of
 * 1 M. The derivatives evaluate r as max(r, 2.25) (an RK4 stage can dip
 * below r only in a substep that ends the trial, which fails at 2.5), so f,
 * D and E stay positive and finite. A tick ends early, at the first substep
 * that ends with r ≤ 2.5 (captured) or r ≥ 50 (escaped): the trial fails.
 *
 * Score: the fraction of ticks 2001..3000 (counted from 1) that end with
 * |r − r_target| ≤ 0.05 and |u_r| ≤ 0.002; 0 once failed.
 *
 * Determinism: no clock, no randomness, no imports; only IEEE double +, −,
 * ×, ÷ and √ (correctly rounded everywhere) in the order written here (wasm
 * has no fused multiply-add, and the build passes -ffp-contract=off); no
 * other libm call. Time is an integer tick counter. */
#include <math.h>
#include <stdint.h>

#include "plant_abi.h"
#include "plant_exports.h"
#include "plant_lifecycle.h"

/* Physical and task parameters (docs/plants/blackhole.md). */
static const double kMaxThrust = 0.002;      /* |a|, each component and total, 1/M */
static const double kCaptureRadius = 2.5;    /* r at or below this fails, M */
static const double kEscapeRadius = 50.0;    /* r at or above this fails, M */
static const double kGuardRadius = 2.25;     /* the derivatives' floor on r, M */
static const double kRadiusTolerance = 0.05; /* |r − r_target| that scores, M */
static const double kSpeedTolerance = 0.002; /* |u_r| that scores */

/* Time. A tick is kSubsteps RK4 substeps of kStep (1 M of proper time in
 * all); a trial that does not fail lasts kEndTicks ticks. The plant reports
 * its time in seconds for a hole with GM/c³ = 1 ms (about 203 solar
 * masses): a tick is 1 ms, a trial 3 s. */
enum { kSubsteps = 10, kEndTicks = 3000 };
static const double kStep = 0.1;  /* h, M */
static const double kTickM = 1.0; /* a tick's proper time, M: Δv per tick is |a|·kTickM */
static const double kTickSeconds = 0.001;
static const double kEndSeconds = 3.0;

/* The score counts the ticks after the first kUnscoredTicks:
 * kScoredTicks = kEndTicks − kUnscoredTicks of them. */
enum { kUnscoredTicks = 2000 };
static const double kScoredTicks = 1000.0;

/* The plant's shape (plant_abi.h). */
enum { kParamCount = 4, kStateWidth = 7, kInputCount = 2 };

/* Scenario ranges (inclusive). */
static const double kMinStart = 7.0, kMaxStart = 20.0;   /* r0, M */
static const double kMinSpeed = -0.02, kMaxSpeed = 0.02; /* u_r0 */
static const double kMinTarget = 6.5, kMaxTarget = 20.0; /* r_target, M */
static const double kMinFuel = 0.0, kMaxFuel = 0.5;      /* fuel0 */
static const double kDefaultScenario[kParamCount] = {10.0, 0.0, 7.0, 0.1};

/* The exchange buffer g_buffer and the exports that only report the constants
 * above (plant_exports.h). */
PLANT_DEFINE_CONSTANT_EXPORTS(kParamCount, kStateWidth, kInputCount, kTickSeconds, kEndSeconds);

/* The integrated variables. */
typedef struct {
  double r, ur, phi, l;
} Orbit;

static struct {
  enum PlantPhase phase;
  Orbit orbit;
  double fuel;           /* Δv left */
  double target;         /* r_target, M */
  int32_t ticks;         /* ticks taken */
  int32_t in_band_ticks; /* scored ticks that ended in the band */
  int failed;            /* the trial ended captured or escaped */
} g_plant;

/* r as the derivatives use it: never below kGuardRadius. */
static double guarded(double r) {
  return r < kGuardRadius ? kGuardRadius : r;
}

/* The specific energy from the normalization u·u = −1. */
static double energy(const Orbit* y) {
  const double r = guarded(y->r);
  const double f = 1.0 - 2.0 / r;
  return sqrt(y->ur * y->ur + f * (1.0 + y->l * y->l / (r * r)));
}

/* dy/dτ at y under the thrust (ar, aphi). */
static Orbit derivative(const Orbit* y, double ar, double aphi) {
  const double r = guarded(y->r);
  const double f = 1.0 - 2.0 / r;
  const double r2 = r * r;
  const double l2 = y->l * y->l;
  const double e = sqrt(y->ur * y->ur + f * (1.0 + l2 / r2));
  const double d = sqrt(y->ur * y->ur + f);
  Orbit dy;
  dy.r = y->ur;
  dy.ur = -1.0 / r2 + l2 / (r2 * r) - 3.0 * l2 / (r2 * r2) + ar * d;
  dy.phi = y->l / r2;
  dy.l = (ar * y->ur * y->l + aphi * r * e) / d;
  return dy;
}

/* y + c·k, component by component. */
static Orbit advance(const Orbit* y, double c, const Orbit* k) {
  Orbit out;
  out.r = y->r + c * k->r;
  out.ur = y->ur + c * k->ur;
  out.phi = y->phi + c * k->phi;
  out.l = y->l + c * k->l;
  return out;
}

/* (k1 + 2 k2 + 2 k3 + k4) / 6 for one component. */
static double blend(double k1, double k2, double k3, double k4) {
  return (k1 + 2.0 * k2 + 2.0 * k3 + k4) / 6.0;
}

/* One classical RK4 substep of kStep. */
static void substep(double ar, double aphi) {
  const Orbit* y = &g_plant.orbit;
  const Orbit k1 = derivative(y, ar, aphi);
  const Orbit y2 = advance(y, 0.5 * kStep, &k1);
  const Orbit k2 = derivative(&y2, ar, aphi);
  const Orbit y3 = advance(y, 0.5 * kStep, &k2);
  const Orbit k3 = derivative(&y3, ar, aphi);
  const Orbit y4 = advance(y, kStep, &k3);
  const Orbit k4 = derivative(&y4, ar, aphi);
  Orbit slope;
  slope.r = blend(k1.r, k2.r, k3.r, k4.r);
  slope.ur = blend(k1.ur, k2.ur, k3.ur, k4.ur);
  slope.phi = blend(k1.phi, k2.phi, k3.phi, k4.phi);
  slope.l = blend(k1.l, k2.l, k3.l, k4.l);
  g_plant.orbit = advance(y, kStep, &slope);
}

static double clamp(double x, double low, double high) {
  if (x > high) return high;
  if (x < low) return low;
  return x;
}

int32_t plant_init(int32_t count) {
  g_plant.phase = kNotReady;
  g_plant.ticks = 0;
  g_plant.in_band_ticks = 0;
  g_plant.failed = 0;
  PLANT_READ_SCENARIO_OR_REFUSE(params, count, kDefaultScenario);
  const double start = params[0], speed = params[1], target = params[2], fuel = params[3];
  if (!within(start, kMinStart, kMaxStart) || !within(speed, kMinSpeed, kMaxSpeed) ||
      !within(target, kMinTarget, kMaxTarget) || !within(fuel, kMinFuel, kMaxFuel)) {
    return PLANT_ERROR_RANGE;
  }
  g_plant.orbit.r = start;
  g_plant.orbit.ur = speed;
  g_plant.orbit.phi = 0.0;
  g_plant.orbit.l = start / sqrt(start - 3.0); /* the circular orbit's L at r0 */
  g_plant.fuel = fuel;
  g_plant.target = target;
  g_plant.phase = kRunning;
  return PLANT_OK;
}

int32_t plant_read_state(void) {
  PLANT_REFUSE_UNLESS_READY(g_plant.phase);
  g_buffer[0] = g_plant.orbit.r;
  g_buffer[1] = g_plant.orbit.ur;
  g_buffer[2] = g_plant.orbit.phi;
  g_buffer[3] = g_plant.orbit.l;
  g_buffer[4] = energy(&g_plant.orbit);
  g_buffer[5] = g_plant.fuel;
  g_buffer[6] = g_plant.target;
  return kStateWidth;
}

int32_t plant_step(void) {
  PLANT_REFUSE_UNLESS_RUNNING(g_plant.phase);
  double ar = g_buffer[0], aphi = g_buffer[1];
  if (!isfinite(ar) || !isfinite(aphi)) return PLANT_ERROR_NOT_FINITE;
  /* Each component, then the total, then the fuel: |a|·kTickM ≤ fuel. */
  ar = clamp(ar, -kMaxThrust, kMaxThrust);
  aphi = clamp(aphi, -kMaxThrust, kMaxThrust);
  const double limit = g_plant.fuel < kMaxThrust * kTickM ? g_plant.fuel / kTickM : kMaxThrust;
  const double asked = sqrt(ar * ar + aphi * aphi);
  if (asked > limit) {
    if (limit > 0.0) {
      const double scale = limit / asked; /* asked > limit > 0 */
      ar = ar * scale;
      aphi = aphi * scale;
    } else {
      ar = 0.0;
      aphi = 0.0;
    }
  }
  g_buffer[0] = ar;
  g_buffer[1] = aphi;
  const double spent = sqrt(ar * ar + aphi * aphi) * kTickM;
  g_plant.fuel = g_plant.fuel - spent;
  if (g_plant.fuel < 0.0) g_plant.fuel = 0.0;

  int failed = 0;
  for (int k = 0; k < kSubsteps && !failed; ++k) {
    substep(ar, aphi);
    /* Written so that a NaN radius would count as a failure. */
    failed = !(kCaptureRadius < g_plant.orbit.r && g_plant.orbit.r < kEscapeRadius);
  }
  g_plant.ticks += 1;
  if (failed) {
    g_plant.failed = 1;
    g_plant.phase = kEnded;
    return PLANT_FAILED;
  }
  if (g_plant.ticks > kUnscoredTicks &&
      within(g_plant.orbit.r, g_plant.target - kRadiusTolerance,
             g_plant.target + kRadiusTolerance) &&
      within(g_plant.orbit.ur, -kSpeedTolerance, kSpeedTolerance)) {
    g_plant.in_band_ticks += 1;
  }
  PLANT_FINISH_ON_THE_LAST_TICK(g_plant.phase, g_plant.ticks, kEndTicks);
}

int32_t plant_ticks(void) {
  return g_plant.ticks;
}

/* The fraction of the 1000 scored ticks (2001..3000) that ended within
 * 0.05 M of r_target with |u_r| ≤ 0.002, counted so far; 0 for a trial that
 * failed. 0.9 or more on a finished trial (900 ticks) passes. */
double plant_score(void) {
  if (g_plant.failed) return 0.0;
  return (double)g_plant.in_band_ticks / kScoredTicks;
}
