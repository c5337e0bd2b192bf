/* The exports every plant defines alike (plant_abi.h), written once.
 *
 * Every plant owns the exchange buffer and answers plant_abi_version,
 * plant_buffer, plant_param_count, plant_state_width, plant_input_count,
 * plant_tick_seconds and plant_end_seconds with its own constants and no
 * logic. PLANT_DEFINE_CONSTANT_EXPORTS defines that storage and those seven
 * exports, with their export names, from the constants; the plant writes
 * only what differs: plant_init, plant_read_state, plant_step, plant_ticks
 * and plant_score (plant_ticks reads the plant's own state, so it stays in
 * the plant; the openings those share are plant_lifecycle.h's).
 *
 * For plant sources compiled for wasm32 only (PlimsollPlant.cmake): the host
 * reads plant_abi.h, never this header, and calls the exports through wasm2c
 * (wasm2c_exports.h).
 *
 * Usage, once per plant, at file scope, after the constants and before the
 * first use of g_buffer:
 *
 *   #include "plant_abi.h"
 *   #include "plant_exports.h"
 *
 *   enum { kParamCount = 4, kStateWidth = 4, kInputCount = 1 };
 *   static const double kTickSeconds = 0.01;
 *   static const double kEndSeconds = 20.0;
 *
 *   PLANT_DEFINE_CONSTANT_EXPORTS(kParamCount, kStateWidth, kInputCount, kTickSeconds,
 *                                 kEndSeconds);
 *
 *   int32_t plant_init(int32_t count) { ... g_buffer[0] ... }
 */
#ifndef PLIMSOLL_SIMS_PLANT_EXPORTS_H_
#define PLIMSOLL_SIMS_PLANT_EXPORTS_H_

#if !defined(__wasm__)
#error "plant_exports.h defines a plant's exports: include it only in a plant compiled for wasm32"
#endif

#include <stdint.h>

#include "plant_abi.h"

/* Whether a count is from 0 to PLANT_BUFFER_DOUBLES (for the check below). */
#define PLANT_SHAPE_FITS_(count) ((count) >= 0 && (count) <= PLANT_BUFFER_DOUBLES)

/* Defines, in the including plant:
 *   g_buffer            static double[PLANT_BUFFER_DOUBLES], 8-byte aligned:
 *                       the exchange buffer the plant's own exports read and
 *                       write, returned by plant_buffer();
 *   plant_abi_version   PLANT_ABI_VERSION;
 *   plant_buffer        g_buffer;
 *   plant_param_count, plant_state_width, plant_input_count
 *                       param_count, state_width, input_count: integer
 *                       constant expressions, each from 0 to
 *                       PLANT_BUFFER_DOUBLES (checked at compile time: a
 *                       negative array size otherwise);
 *   plant_tick_seconds, plant_end_seconds
 *                       tick_seconds, end_seconds: double expressions,
 *                       evaluated at each call.
 * Ends with a file-scope typedef (the check), so the invocation takes a
 * semicolon like a declaration. Use it once per translation unit. */
#define PLANT_DEFINE_CONSTANT_EXPORTS(param_count, state_width, input_count, tick_seconds, \
                                      end_seconds)                                         \
  static double g_buffer[PLANT_BUFFER_DOUBLES] __attribute__((aligned(8)));                \
                                                                                           \
  PLANT_EXPORT(plant_abi_version) int32_t plant_abi_version(void) {                        \
    return PLANT_ABI_VERSION;                                                              \
  }                                                                                        \
  PLANT_EXPORT(plant_buffer) double* plant_buffer(void) {                                  \
    return g_buffer;                                                                       \
  }                                                                                        \
  PLANT_EXPORT(plant_param_count) int32_t plant_param_count(void) {                        \
    return (param_count);                                                                  \
  }                                                                                        \
  PLANT_EXPORT(plant_state_width) int32_t plant_state_width(void) {                        \
    return (state_width);                                                                  \
  }                                                                                        \
  PLANT_EXPORT(plant_input_count) int32_t plant_input_count(void) {                        \
    return (input_count);                                                                  \
  }                                                                                        \
  PLANT_EXPORT(plant_tick_seconds) double plant_tick_seconds(void) {                       \
    return (tick_seconds);                                                                 \
  }                                                                                        \
  PLANT_EXPORT(plant_end_seconds) double plant_end_seconds(void) {                         \
    return (end_seconds);                                                                  \
  }                                                                                        \
                                                                                           \
  typedef char plant_shape_fits_the_buffer[(PLANT_SHAPE_FITS_(param_count) &&              \
                                            PLANT_SHAPE_FITS_(state_width) &&              \
                                            PLANT_SHAPE_FITS_(input_count))                \
                                               ? 1                                         \
                                               : -1]

#endif /* PLIMSOLL_SIMS_PLANT_EXPORTS_H_ */
