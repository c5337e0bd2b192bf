/* setTimeout/setInterval/clearTimeout/clearInterval in real time, and the
 * event loop's timer phase (see driver.h for the contract).
 *
 * Timers keep their due time on the monotonic clock the host shares with
 * the guest (WASI clock_time_get, CLOCK_MONOTONIC). A delay below 1 ms (0,
 * negative, NaN, not a number) is 1 ms at every nesting level, as Node does
 * (browsers also clamp nested timers to 4 ms from the fifth level; we follow
 * Node, which agents' snippets are compared with). A delay above 2^31-1 ms is
 * 1 ms, as Node does too. Timers fire in due order, then creation order; an
 * interval is due again `delay` after its callback started.
 *
 * As in Node (libuv's loop time), a timer created inside a timer callback
 * (or the jobs that follow it) counts its delay from when that callback was
 * fired, not from the moment of the setTimeout call: a zero-delay timer
 * nested in a callback is due 1 ms after the callback began. A timer created
 * by the script itself counts from the call (so a 1500 ms wait is never
 * shorter than 1500 ms by Date.now()).
 *
 * When the next timer is not due yet the guest asks the host to sleep until
 * it (import sleep_until): a waiting run uses no CPU. The host never sleeps
 * past the run's soft deadline; reaching it ends the run as timed out.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "driver.h"

typedef struct Timer {
  int32_t id;
  int32_t repeat;      /* setInterval */
  int32_t keeps_alive; /* 0: the run may end with this timer pending */
  double due;          /* monotonic ms */
  double interval;
  uint64_t sequence;
  JSValue function;
  int argc;
  JSValue* argv;
} Timer;

/* One run per module instance: plain globals are per run. */
static Timer* g_timers;
static size_t g_timer_count, g_timer_capacity;
static int32_t g_next_timer_id = 1;
static uint64_t g_timer_sequence;
static double g_loop_time_ms; /* when the current timer phase began; 0: none yet */

#define TIMER_MAX_DELAY_MS 2147483647.0 /* as Node: larger means 1 ms */

double driver_monotonic_ms(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)now.tv_sec * 1e3 + (double)now.tv_nsec / 1e6;
}

static void free_timer(JSContext* ctx, Timer* timer) {
  JS_FreeValue(ctx, timer->function);
  for (int i = 0; i < timer->argc; i++) JS_FreeValue(ctx, timer->argv[i]);
  free(timer->argv);
}

static JSValue add_timer(JSContext* ctx, int argc, JSValueConst* argv, int repeat,
                         int keeps_alive) {
  if (argc < 1 || !JS_IsFunction(ctx, argv[0])) {
    return JS_ThrowTypeError(ctx, "The callback must be a function.");
  }
  double delay = 1;
  if (argc >= 2 && JS_ToFloat64(ctx, &delay, argv[1])) return JS_EXCEPTION;
  if (!(delay >= 1 && delay <= TIMER_MAX_DELAY_MS)) delay = 1;
  if (g_timer_count == g_timer_capacity) {
    size_t capacity = g_timer_capacity ? g_timer_capacity * 2 : 8;
    Timer* grown = realloc(g_timers, capacity * sizeof(Timer));
    if (!grown) return JS_ThrowOutOfMemory(ctx);
    g_timers = grown;
    g_timer_capacity = capacity;
  }
  int extra = argc > 2 ? argc - 2 : 0;
  JSValue* extra_args = NULL;
  if (extra > 0) {
    extra_args = malloc(sizeof(JSValue) * (size_t)extra);
    if (!extra_args) return JS_ThrowOutOfMemory(ctx);
    for (int i = 0; i < extra; i++) extra_args[i] = JS_DupValue(ctx, argv[2 + i]);
  }
  Timer* timer = &g_timers[g_timer_count++];
  timer->id = g_next_timer_id++;
  timer->repeat = repeat;
  timer->keeps_alive = keeps_alive;
  timer->interval = delay;
  timer->due = (g_loop_time_ms > 0 ? g_loop_time_ms : driver_monotonic_ms()) + delay;
  timer->sequence = g_timer_sequence++;
  timer->function = JS_DupValue(ctx, argv[0]);
  timer->argc = extra;
  timer->argv = extra_args;
  return JS_NewInt32(ctx, timer->id);
}

static JSValue js_set_timeout(JSContext* ctx, JSValueConst this_value, int argc,
                              JSValueConst* argv) {
  (void)this_value;
  return add_timer(ctx, argc, argv, 0, 1);
}

static JSValue js_set_interval(JSContext* ctx, JSValueConst this_value, int argc,
                               JSValueConst* argv) {
  (void)this_value;
  return add_timer(ctx, argc, argv, 1, 1);
}

JSValue driver_add_unref_timer(JSContext* ctx, int argc, JSValueConst* argv) {
  return add_timer(ctx, argc, argv, 0, 0);
}

static JSValue js_clear_timer(JSContext* ctx, JSValueConst this_value, int argc,
                              JSValueConst* argv) {
  (void)this_value;
  int32_t id;
  /* As hosts: clearing nothing, undefined or an unknown id is a no-op. */
  if (argc < 1 || JS_ToInt32(ctx, &id, argv[0])) return JS_UNDEFINED;
  for (size_t i = 0; i < g_timer_count; i++) {
    if (g_timers[i].id == id) {
      free_timer(ctx, &g_timers[i]);
      memmove(&g_timers[i], &g_timers[i + 1], (g_timer_count - i - 1) * sizeof(Timer));
      g_timer_count--;
      break;
    }
  }
  return JS_UNDEFINED;
}

static JSValue microtask_job(JSContext* ctx, int argc, JSValueConst* argv) {
  (void)argc;
  JSValue result = JS_Call(ctx, argv[0], JS_UNDEFINED, 0, NULL);
  if (JS_IsException(result)) return result;
  JS_FreeValue(ctx, result);
  return JS_UNDEFINED;
}

static JSValue js_queue_microtask(JSContext* ctx, JSValueConst this_value, int argc,
                                  JSValueConst* argv) {
  (void)this_value;
  if (argc < 1 || !JS_IsFunction(ctx, argv[0])) {
    return JS_ThrowTypeError(ctx, "The callback must be a function.");
  }
  if (JS_EnqueueJob(ctx, microtask_job, 1, argv)) return JS_EXCEPTION;
  return JS_UNDEFINED;
}

int driver_install_timers(JSContext* ctx, JSValueConst global) {
  static const struct {
    const char* name;
    JSCFunction* function;
    int length;
  } kFunctions[] = {{"setTimeout", js_set_timeout, 2},
                    {"setInterval", js_set_interval, 2},
                    {"clearTimeout", js_clear_timer, 1},
                    {"clearInterval", js_clear_timer, 1},
                    {"queueMicrotask", js_queue_microtask, 1}};
  for (size_t i = 0; i < sizeof kFunctions / sizeof kFunctions[0]; i++) {
    JSValue function =
        JS_NewCFunction(ctx, kFunctions[i].function, kFunctions[i].name, kFunctions[i].length);
    if (JS_DefinePropertyValueStr(ctx, global, kFunctions[i].name, function,
                                  JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE) < 0) {
      return -1;
    }
  }
  return 0;
}

int driver_run_next_timer(JSContext* ctx) {
  size_t alive = 0;
  for (size_t i = 0; i < g_timer_count; i++) alive += g_timers[i].keeps_alive ? 1 : 0;
  if (alive == 0) return 0;
  size_t next = 0;
  for (size_t i = 1; i < g_timer_count; i++) {
    if (g_timers[i].due < g_timers[next].due ||
        (g_timers[i].due == g_timers[next].due && g_timers[i].sequence < g_timers[next].sequence)) {
      next = i;
    }
  }
  double now = driver_monotonic_ms();
  if (g_timers[next].due > now) {
    /* Sleep in the host; it returns early (1) once the soft deadline has
     * come, which ends the run as timed out whatever is left. */
    if (driver_sleep_until(g_timers[next].due)) return PLIMSOLL_EXIT_TIMEOUT;
    now = driver_monotonic_ms();
  }
  g_loop_time_ms = now;
  Timer timer = g_timers[next];
  if (timer.repeat) {
    g_timers[next].due = now + timer.interval;
    g_timers[next].sequence = g_timer_sequence++;
    /* Keep the function and its arguments alive across the call even if it
     * clears itself (QuickJS may read argv in place during the call). */
    timer.function = JS_DupValue(ctx, timer.function);
    if (timer.argc > 0) {
      JSValue* copy = malloc(sizeof(JSValue) * (size_t)timer.argc);
      if (!copy) {
        JS_FreeValue(ctx, timer.function);
        JS_ThrowOutOfMemory(ctx);
        return driver_report_exception(ctx, JS_GetException(ctx), "Uncaught ");
      }
      for (int i = 0; i < timer.argc; i++) copy[i] = JS_DupValue(ctx, timer.argv[i]);
      timer.argv = copy;
    }
  } else {
    memmove(&g_timers[next], &g_timers[next + 1], (g_timer_count - next - 1) * sizeof(Timer));
    g_timer_count--;
  }
  JSValue result =
      JS_Call(ctx, timer.function, JS_UNDEFINED, timer.argc, (JSValueConst*)timer.argv);
  free_timer(ctx, &timer);
  if (JS_IsException(result))
    return driver_report_exception(ctx, JS_GetException(ctx), "Uncaught ");
  JS_FreeValue(ctx, result);
  return -1;
}

void driver_release_timers(JSContext* ctx) {
  for (size_t i = 0; i < g_timer_count; i++) free_timer(ctx, &g_timers[i]);
  g_timer_count = 0;
  g_next_timer_id = 1;
  g_timer_sequence = 0;
  g_loop_time_ms = 0;
}
