/* The lifecycle every plant's exports share (plant_abi.h), written once.
 *
 * Every plant keeps its trial in one phase (not ready, running, ended) and
 * opens and closes its exports alike: plant_init resets the phase and then
 * picks and checks its scenario the same way; plant_read_state answers only
 * a ready plant; plant_step takes a tick only while the trial runs, and
 * finishes it on the last tick. This header writes those openings and that
 * closing once, as statement macros over the plant's own state, so the
 * plant writes only what differs: its ranges, its physics, its failure and
 * its score.
 *
 * Macros, not functions: a plant is one translation unit whose exports the
 * compiler inlines everything into, and each macro expands to the very
 * statements the plants wrote by hand, so the built NAME.wasm is the same
 * bytes (sims/plant_wasm.sha256 pins them). They return from the export
 * they stand in, which their names say (…_OR_REFUSE, …_FINISH…).
 *
 * For plant sources compiled for wasm32 only (PlimsollPlant.cmake), after
 * plant_exports.h's PLANT_DEFINE_CONSTANT_EXPORTS (they use its g_buffer)
 * and the plant's kParamCount. Usage:
 *
 *   #include "plant_abi.h"
 *   #include "plant_exports.h"
 *   #include "plant_lifecycle.h"
 *
 *   static struct {
 *     enum PlantPhase phase;
 *     int32_t ticks;
 *     ...
 *   } g_plant;
 *
 *   int32_t plant_init(int32_t count) {
 *     g_plant.phase = kNotReady;
 *     g_plant.ticks = 0;  (and the plant's other counters)
 *     PLANT_READ_SCENARIO_OR_REFUSE(params, count, kDefaultScenario);
 *     if (!within(params[0], kMinX, kMaxX)) return PLANT_ERROR_RANGE;
 *     ...
 *     g_plant.phase = kRunning;
 *     return PLANT_OK;
 *   }
 *   int32_t plant_read_state(void) {
 *     PLANT_REFUSE_UNLESS_READY(g_plant.phase);
 *     ...
 *   }
 *   int32_t plant_step(void) {
 *     PLANT_REFUSE_UNLESS_RUNNING(g_plant.phase);
 *     ... (the inputs, the physics, the failure, the score)
 *     PLANT_FINISH_ON_THE_LAST_TICK(g_plant.phase, g_plant.ticks, kEndTicks);
 *   }
 */
#ifndef PLIMSOLL_SIMS_PLANT_LIFECYCLE_H_
#define PLIMSOLL_SIMS_PLANT_LIFECYCLE_H_

#if !defined(__wasm__)
#error "plant_lifecycle.h opens a plant's exports: include it only in a plant compiled for wasm32"
#endif

#include <math.h>
#include <stdint.h>

#include "plant_abi.h"

/* Where a plant's trial is: before a successful plant_init (or after a
 * refused one), running, or ended (it failed or finished; plant_step
 * refuses, the final state stays readable). */
enum PlantPhase { kNotReady, kRunning, kEnded };

/* Whether x lies in [low, high]; false for NaN. The inclusive range test of
 * a scenario's parameters and of a score's band. */
static inline int within(double x, double low, double high) {
  return low <= x && x <= high;
}

/* plant_init's opening, after the plant has set its phase to kNotReady and
 * reset its counters (so a refused scenario leaves it not ready with 0
 * ticks and score 0): returns PLANT_ERROR_COUNT unless `count` is 0 or
 * kParamCount; declares `const double* params`, the plant's
 * `default_scenario` (kParamCount values) for count 0, else the exchange
 * buffer; and returns PLANT_ERROR_NOT_FINITE if a parameter is NaN or
 * infinite. The plant checks its ranges next. */
#define PLANT_READ_SCENARIO_OR_REFUSE(params, count, default_scenario)   \
  if ((count) != 0 && (count) != kParamCount) return PLANT_ERROR_COUNT;  \
  const double* params = (count) == 0 ? (default_scenario) : g_buffer;   \
  for (int plant_param_ = 0; plant_param_ < kParamCount; ++plant_param_) \
    if (!isfinite((params)[plant_param_])) return PLANT_ERROR_NOT_FINITE

/* plant_read_state's opening: PLANT_ERROR_NOT_READY before a successful
 * plant_init. */
#define PLANT_REFUSE_UNLESS_READY(phase) \
  if ((phase) == kNotReady) return PLANT_ERROR_NOT_READY

/* plant_step's opening: PLANT_ERROR_NOT_READY before a successful
 * plant_init, PLANT_ERROR_ENDED once the trial ended; no tick taken. */
#define PLANT_REFUSE_UNLESS_RUNNING(phase)                \
  if ((phase) == kNotReady) return PLANT_ERROR_NOT_READY; \
  if ((phase) == kEnded) return PLANT_ERROR_ENDED

/* plant_step's closing, after a tick that did not fail: PLANT_FINISHED
 * (and the trial ended) when that tick was the `end_ticks`-th, else
 * PLANT_RUNNING. */
#define PLANT_FINISH_ON_THE_LAST_TICK(phase, ticks, end_ticks) \
  if ((ticks) == (end_ticks)) {                                \
    (phase) = kEnded;                                          \
    return PLANT_FINISHED;                                     \
  }                                                            \
  return PLANT_RUNNING

#endif /* PLIMSOLL_SIMS_PLANT_LIFECYCLE_H_ */
