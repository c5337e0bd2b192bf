/* The plant ABI: what every plant (SPEC §10) exports to the trial runner.
 *
 * A plant is a simulated physical system written in C99 and compiled to a
 * wasm32-wasi *reactor* (no main; `_initialize` plus the exports below). The
 * runner uses the module translated to C by wasm2c, on every tier, so a
 * trajectory is the same bits everywhere. This header is read by clang for
 * wasm32 (the plant) and by the host's C/C++ compiler (the runner, the tests):
 * on the host it gives the constants only; the host calls the exports through
 * the wasm2c names (Z_<plant>Z_plant_init(instance, ...) and so on).
 *
 * A plant imports nothing (no WASI calls, no host functions: it cannot read
 * a clock, a file or randomness) and allocates nothing: all its state is
 * static, so its linear memory never grows. Its arithmetic is IEEE double in
 * a fixed order; its libm (sin, cos, ...) is wasi-libc's, compiled into the
 * module, so identical inputs give identical bits on every host.
 *
 * Data crosses the boundary through one exchange buffer: PLANT_BUFFER_DOUBLES
 * float64 values in the plant's static data, 8-byte aligned, at the guest
 * address plant_buffer() returns (an offset into the exported memory
 * `memory`; fixed for the instance's life). The host writes scenario
 * parameters and inputs there before a call and reads the state there after
 * one; the plant owns the storage, so the host never calls a guest
 * allocator. Values are little-endian float64, as wasm memory is.
 *
 * Usage (host side, through wasm2c; error handling elided):
 *
 *   Z_cartpole_instantiate(&instance);
 *   Z_cartpoleZ__initialize(&instance);             // once, before the rest
 *   u32 at = Z_cartpoleZ_plant_buffer(&instance);   // check at + 8 * cap fits
 *   double* buffer = (double*)(memory->data + at);  // (memcpy in practice)
 *   // write the scenario into buffer[0..n), then:
 *   if (Z_cartpoleZ_plant_init(&instance, n) != PLANT_OK) refuse the scenario;
 *   for (;;) {
 *     Z_cartpoleZ_plant_read_state(&instance);      // buffer[0..width)
 *     // ask the controller; write its inputs into buffer[0..inputs)
 *     s32 r = Z_cartpoleZ_plant_step(&instance);    // buffer: applied inputs
 *     if (r != PLANT_RUNNING) break;                // FAILED, FINISHED, error
 *   }
 *   double score = Z_cartpoleZ_plant_score(&instance);
 *
 * Calls are not thread-safe per instance (an instance is one trial); separate
 * instances are independent.
 */
#ifndef PLIMSOLL_SIMS_PLANT_ABI_H_
#define PLIMSOLL_SIMS_PLANT_ABI_H_

#include <stdint.h>

/* Bumped whenever an export's meaning or signature changes. */
#define PLANT_ABI_VERSION 1

/* Capacity of the exchange buffer in float64 values. A plant's parameter
 * count, state width and input count are each at most this. */
#define PLANT_BUFFER_DOUBLES 256

/* Results of plant_init and plant_read_state (errors are negative). */
#define PLANT_OK 0
/* The parameter count is neither 0 (default scenario) nor the plant's
 * plant_param_count(), or is negative or above PLANT_BUFFER_DOUBLES. */
#define PLANT_ERROR_COUNT (-1)
/* A parameter (plant_init) or an input (plant_step) is NaN or infinite. */
#define PLANT_ERROR_NOT_FINITE (-2)
/* A parameter is finite but outside the range the plant documents. */
#define PLANT_ERROR_RANGE (-3)
/* No successful plant_init yet (or the last one failed). */
#define PLANT_ERROR_NOT_READY (-4)
/* plant_step after the trial ended (PLANT_FAILED or PLANT_FINISHED). */
#define PLANT_ERROR_ENDED (-5)

/* Results of plant_step (errors are the negative codes above). */
#define PLANT_RUNNING 0  /* the tick was taken; the trial goes on */
#define PLANT_FAILED 1   /* the tick was taken and the plant failed (e.g. the pole fell) */
#define PLANT_FINISHED 2 /* the tick was taken, it was the last, nothing failed */

#if defined(__wasm__)
#define PLANT_EXPORT(name) __attribute__((export_name(#name)))
#else
#define PLANT_EXPORT(name)
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* PLANT_ABI_VERSION as the plant was built. The host refuses a mismatch. */
PLANT_EXPORT(plant_abi_version) int32_t plant_abi_version(void);

/* The exchange buffer: PLANT_BUFFER_DOUBLES float64 values, 8-byte aligned,
 * owned by the plant, the same address for the instance's life. */
PLANT_EXPORT(plant_buffer) double* plant_buffer(void);

/* The plant's shape; constants of the plant, valid before plant_init:
 *   plant_param_count(): how many scenario parameters a full scenario has;
 *   plant_state_width(): how many float64 plant_read_state writes;
 *   plant_input_count(): how many float64 plant_step reads. */
PLANT_EXPORT(plant_param_count) int32_t plant_param_count(void);
PLANT_EXPORT(plant_state_width) int32_t plant_state_width(void);
PLANT_EXPORT(plant_input_count) int32_t plant_input_count(void);

/* The length of one tick and the trial's end time, in seconds, as the plant
 * reports them. Valid after a successful plant_init (a plant may derive them
 * from its scenario). end / tick is an integer: the number of ticks of a
 * trial that does not fail. */
PLANT_EXPORT(plant_tick_seconds) double plant_tick_seconds(void);
PLANT_EXPORT(plant_end_seconds) double plant_end_seconds(void);

/* Starts a trial (again, if one ran): reads `count` scenario parameters from
 * buffer[0..count). count 0 selects the plant's documented default scenario;
 * otherwise count must equal plant_param_count(). Returns PLANT_OK, or
 * PLANT_ERROR_COUNT / PLANT_ERROR_NOT_FINITE / PLANT_ERROR_RANGE; after an
 * error the plant is not ready (plant_step refuses) until an init succeeds.
 * The buffer's contents afterwards are unspecified. */
PLANT_EXPORT(plant_init) int32_t plant_init(int32_t count);

/* Writes the current state (the observation, plant_state_width() float64 in
 * the plant's documented order and units) to buffer[0..width) and returns
 * the width; PLANT_ERROR_NOT_READY before a successful plant_init. Valid
 * after the trial ended too (the final state). */
PLANT_EXPORT(plant_read_state) int32_t plant_read_state(void);

/* Takes one tick with the inputs in buffer[0..plant_input_count()). The plant
 * clamps each input to its documented physical range and writes the inputs
 * as applied (clamped) back to buffer[0..inputs). Returns PLANT_RUNNING,
 * PLANT_FAILED or PLANT_FINISHED; or, taking no tick and changing nothing,
 * PLANT_ERROR_NOT_READY, PLANT_ERROR_ENDED, or PLANT_ERROR_NOT_FINITE (an
 * input is NaN or infinite: a plant never guesses what such an input means;
 * the runner ends the trial before it gets here). */
PLANT_EXPORT(plant_step) int32_t plant_step(void);

/* Ticks taken since the last successful plant_init (0 before any). */
PLANT_EXPORT(plant_ticks) int32_t plant_ticks(void);

/* The trial's score so far, in the plant's documented unit (0 before a
 * successful plant_init). Each plant documents what a passing score is. */
PLANT_EXPORT(plant_score) double plant_score(void);

#ifdef __cplusplus
}
#endif

#endif /* PLIMSOLL_SIMS_PLANT_ABI_H_ */
