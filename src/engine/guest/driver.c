/* The guest-side driver: runs one script in a fresh QuickJS runtime inside
 * the wasm module and returns the run's exit code (see abi.h).
 *
 * It gives the script console.*, virtual timers, queueMicrotask and the
 * `host` object; there is no std/os module, no file, process or network API.
 *
 * Timers are virtual: the run never sleeps. Timers fire in order of due time
 * (then creation order); virtual time advances to each timer's due time. A
 * timer due later than the run's budget means the run would have outlived its
 * deadline, so it ends as timed out (as a real clock would have).
 *
 * Built for wasm32-wasi (the engine) and natively (PLIMSOLL_GUEST_NATIVE, for
 * the benchmark's native baseline, which supplies the imports itself).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "abi.h"
#include "driver.h"
#include "quickjs.h"

#ifdef PLIMSOLL_GUEST_NATIVE
#define PLIMSOLL_IMPORT(name)
#define PLIMSOLL_EXPORT(name)
#else
#define PLIMSOLL_IMPORT(name) \
  __attribute__((import_module("plimsoll"), import_name(#name)))
#define PLIMSOLL_EXPORT(name) __attribute__((export_name(#name)))
#endif

PLIMSOLL_IMPORT(deadline_reached) int32_t plimsoll_deadline_reached(void);
PLIMSOLL_IMPORT(host_call)
int32_t plimsoll_host_call(const char* request, int32_t length);
PLIMSOLL_IMPORT(host_response_length) int32_t plimsoll_host_response_length(void);
PLIMSOLL_IMPORT(host_response_read)
int32_t plimsoll_host_response_read(char* buffer, int32_t length);

/* QuickJS's own stack limit, well inside the module's shadow stack (linked
 * with -z stack-size, see cmake/QuickJSWasm.cmake) so deep recursion is a
 * RangeError, never a trap. */
#define DRIVER_JS_STACK_BYTES (768 * 1024)

typedef struct Timer {
  int32_t id;
  int32_t repeat; /* setInterval */
  double due;     /* virtual ms since the start of the run */
  double interval;
  uint64_t sequence;
  JSValue function;
  int argc;
  JSValue* argv;
} Timer;

typedef struct Rejection {
  JSValue promise;
  JSValue reason;
} Rejection;

/* One run per module instance: plain globals are per run. */
static Timer* g_timers;
static size_t g_timer_count, g_timer_capacity;
static int32_t g_next_timer_id = 1;
static uint64_t g_timer_sequence;
static double g_virtual_now;
static Rejection* g_rejections;
static size_t g_rejection_count, g_rejection_capacity;
static int g_interrupted;

/* ---- output ---------------------------------------------------------- */

#ifdef PLIMSOLL_GUEST_NATIVE
/* The native benchmark build captures output itself. */
void plimsoll_native_write(int fd, const char* bytes, size_t length);
void driver_write(int fd, const char* bytes, size_t length) {
  plimsoll_native_write(fd, bytes, length);
}
#else
void driver_write(int fd, const char* bytes, size_t length) {
  while (length > 0) {
    ssize_t written = write(fd, bytes, length);
    if (written <= 0) return; /* the host dropped it: nothing else to do */
    bytes += written;
    length -= (size_t)written;
  }
}
#endif

/* ---- interrupts, rejections ----------------------------------------- */

static int interrupt_handler(JSRuntime* rt, void* opaque) {
  (void)rt;
  (void)opaque;
  if (!g_interrupted && plimsoll_deadline_reached()) g_interrupted = 1;
  return g_interrupted;
}

static void rejection_tracker(JSContext* ctx, JSValueConst promise,
                              JSValueConst reason, JS_BOOL is_handled,
                              void* opaque) {
  (void)opaque;
  if (!is_handled) {
    if (g_rejection_count == g_rejection_capacity) {
      size_t capacity = g_rejection_capacity ? g_rejection_capacity * 2 : 8;
      Rejection* grown = realloc(g_rejections, capacity * sizeof(Rejection));
      if (!grown) return;
      g_rejections = grown;
      g_rejection_capacity = capacity;
    }
    g_rejections[g_rejection_count].promise = JS_DupValue(ctx, promise);
    g_rejections[g_rejection_count].reason = JS_DupValue(ctx, reason);
    g_rejection_count++;
    return;
  }
  for (size_t i = 0; i < g_rejection_count; i++) {
    if (JS_VALUE_GET_PTR(g_rejections[i].promise) ==
        JS_VALUE_GET_PTR(promise)) {
      JS_FreeValue(ctx, g_rejections[i].promise);
      JS_FreeValue(ctx, g_rejections[i].reason);
      g_rejections[i] = g_rejections[--g_rejection_count];
      return;
    }
  }
}

static int is_out_of_memory(JSContext* ctx, JSValueConst exception) {
  if (JS_IsNull(exception) || JS_IsUninitialized(exception)) return 1;
  if (!JS_IsError(ctx, exception)) return 0;
  JSValue message = JS_GetPropertyStr(ctx, exception, "message");
  const char* text = JS_ToCString(ctx, message);
  int oom = text && strcmp(text, "out of memory") == 0;
  JS_FreeCString(ctx, text);
  JS_FreeValue(ctx, message);
  return oom;
}

/* Classifies a thrown value (consumed) and reports it on stderr. */
static int report_exception(JSContext* ctx, JSValue exception,
                            const char* prefix) {
  if (g_interrupted) {
    JS_FreeValue(ctx, exception);
    return PLIMSOLL_EXIT_TIMEOUT;
  }
  int code = is_out_of_memory(ctx, exception) ? PLIMSOLL_EXIT_OUT_OF_MEMORY
                                              : PLIMSOLL_EXIT_UNCAUGHT;
  if (code == PLIMSOLL_EXIT_OUT_OF_MEMORY && !JS_IsObject(exception)) {
    /* QuickJS could not even allocate the error object */
    static const char kMessage[] = "Uncaught InternalError: out of memory\n";
    driver_write(2, kMessage, sizeof kMessage - 1);
  } else {
    driver_print_uncaught(ctx, exception, prefix);
  }
  JS_FreeValue(ctx, exception);
  return code;
}

/* Runs every pending job. Returns -1 to go on, else an exit code. */
static int drain_jobs(JSRuntime* rt) {
  for (;;) {
    JSContext* job_context;
    int ran = JS_ExecutePendingJob(rt, &job_context);
    if (ran == 0) break;
    if (ran < 0) {
      return report_exception(job_context, JS_GetException(job_context),
                              "Uncaught ");
    }
  }
  if (g_interrupted) return PLIMSOLL_EXIT_TIMEOUT;
  return -1;
}

static int check_rejections(JSContext* ctx) {
  if (g_rejection_count == 0) return -1;
  JSValue reason = JS_DupValue(ctx, g_rejections[0].reason);
  return report_exception(ctx, reason, "Uncaught (in promise) ");
}

/* ---- timers ---------------------------------------------------------- */

static void free_timer(JSContext* ctx, Timer* timer) {
  JS_FreeValue(ctx, timer->function);
  for (int i = 0; i < timer->argc; i++) JS_FreeValue(ctx, timer->argv[i]);
  free(timer->argv);
}

static JSValue add_timer(JSContext* ctx, int argc, JSValueConst* argv,
                         int repeat) {
  if (argc < 1 || !JS_IsFunction(ctx, argv[0])) {
    return JS_ThrowTypeError(ctx, "The callback must be a function.");
  }
  double delay = 0;
  if (argc >= 2 && JS_ToFloat64(ctx, &delay, argv[1])) return JS_EXCEPTION;
  if (!(delay >= 1)) delay = 1; /* as node: NaN, 0 and negatives become 1 */
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
  timer->interval = delay;
  timer->due = g_virtual_now + delay;
  timer->sequence = g_timer_sequence++;
  timer->function = JS_DupValue(ctx, argv[0]);
  timer->argc = extra;
  timer->argv = extra_args;
  return JS_NewInt32(ctx, timer->id);
}

static JSValue js_set_timeout(JSContext* ctx, JSValueConst this_value,
                              int argc, JSValueConst* argv) {
  (void)this_value;
  return add_timer(ctx, argc, argv, 0);
}

static JSValue js_set_interval(JSContext* ctx, JSValueConst this_value,
                               int argc, JSValueConst* argv) {
  (void)this_value;
  return add_timer(ctx, argc, argv, 1);
}

static JSValue js_clear_timer(JSContext* ctx, JSValueConst this_value,
                              int argc, JSValueConst* argv) {
  (void)this_value;
  int32_t id;
  if (argc < 1 || JS_ToInt32(ctx, &id, argv[0])) return JS_UNDEFINED;
  for (size_t i = 0; i < g_timer_count; i++) {
    if (g_timers[i].id == id) {
      free_timer(ctx, &g_timers[i]);
      memmove(&g_timers[i], &g_timers[i + 1],
              (g_timer_count - i - 1) * sizeof(Timer));
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

static JSValue js_queue_microtask(JSContext* ctx, JSValueConst this_value,
                                  int argc, JSValueConst* argv) {
  (void)this_value;
  if (argc < 1 || !JS_IsFunction(ctx, argv[0])) {
    return JS_ThrowTypeError(ctx, "The callback must be a function.");
  }
  if (JS_EnqueueJob(ctx, microtask_job, 1, argv)) return JS_EXCEPTION;
  return JS_UNDEFINED;
}

/* Fires the earliest timer. Returns -1 to go on, 0 when none is left, else
 * an exit code. */
static int run_next_timer(JSContext* ctx, double budget_ms) {
  if (g_timer_count == 0) return 0;
  size_t next = 0;
  for (size_t i = 1; i < g_timer_count; i++) {
    if (g_timers[i].due < g_timers[next].due ||
        (g_timers[i].due == g_timers[next].due &&
         g_timers[i].sequence < g_timers[next].sequence)) {
      next = i;
    }
  }
  if (g_timers[next].due > budget_ms) {
    g_interrupted = 1;
    return PLIMSOLL_EXIT_TIMEOUT;
  }
  Timer timer = g_timers[next];
  g_virtual_now = timer.due;
  if (timer.repeat) {
    g_timers[next].due = g_virtual_now + timer.interval;
    g_timers[next].sequence = g_timer_sequence++;
    /* keep the function alive across the call even if it clears itself */
    timer.function = JS_DupValue(ctx, timer.function);
  } else {
    memmove(&g_timers[next], &g_timers[next + 1],
            (g_timer_count - next - 1) * sizeof(Timer));
    g_timer_count--;
  }
  JSValue result = JS_Call(ctx, timer.function, JS_UNDEFINED, timer.argc,
                           (JSValueConst*)timer.argv);
  if (timer.repeat) {
    JS_FreeValue(ctx, timer.function);
  } else {
    free_timer(ctx, &timer);
  }
  if (JS_IsException(result)) {
    return report_exception(ctx, JS_GetException(ctx), "Uncaught ");
  }
  JS_FreeValue(ctx, result);
  return -1;
}

/* ---- host ------------------------------------------------------------ */

static JSValue js_host_call(JSContext* ctx, JSValueConst this_value, int argc,
                            JSValueConst* argv) {
  (void)this_value;
  JSValue request = JS_JSONStringify(ctx, argc > 0 ? argv[0] : JS_UNDEFINED,
                                     JS_UNDEFINED, JS_UNDEFINED);
  if (JS_IsException(request)) return request;
  size_t length = 0;
  const char* text = JS_ToCStringLen(ctx, &length, request);
  JS_FreeValue(ctx, request);
  if (!text) return JS_EXCEPTION;
  if (length > PLIMSOLL_HOST_MAX_REQUEST) {
    JS_FreeCString(ctx, text);
    return JS_ThrowRangeError(ctx, "The host call request is too large.");
  }
  int32_t status = plimsoll_host_call(text, (int32_t)length);
  JS_FreeCString(ctx, text);
  int32_t answer_length = plimsoll_host_response_length();
  if (answer_length < 0) answer_length = 0;
  char* answer = malloc((size_t)answer_length + 1);
  if (!answer) return JS_ThrowOutOfMemory(ctx);
  int32_t read = plimsoll_host_response_read(answer, answer_length);
  if (read < 0 || read > answer_length) read = 0;
  answer[read] = '\0';
  JSValue result;
  if (status == PLIMSOLL_HOST_OK) {
    result = JS_ParseJSON(ctx, answer, (size_t)read, "<host>");
  } else {
    JSValue plain = JS_NewError(ctx);
    JS_DefinePropertyValueStr(ctx, plain, "message",
                              JS_NewStringLen(ctx, answer, (size_t)read),
                              JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE);
    JS_DefinePropertyValueStr(
        ctx, plain, "code",
        JS_NewString(ctx, status == PLIMSOLL_HOST_NO_GRANT ? "no_grant"
                          : status == PLIMSOLL_HOST_REFUSED ? "refused"
                          : status == PLIMSOLL_HOST_BAD_REQUEST
                              ? "bad_request"
                              : "failed"),
        JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE);
    result = JS_Throw(ctx, plain);
  }
  free(answer);
  return result;
}

static const char kHostHelpers[] =
    "(function (host) {\n"
    "  const call = host.call;\n"
    "  host.get = (path, options) => call({ ...options, method: 'GET', path });\n"
    "  host.post = (path, body, options) =>\n"
    "    call({ ...options, method: 'POST', path, body });\n"
    "  Object.freeze(host);\n"
    "})";

/* ---- setup ----------------------------------------------------------- */

static int install_globals(JSContext* ctx) {
  JSValue global = JS_GetGlobalObject(ctx);
  int failed = driver_install_console(ctx, global);
  JS_SetPropertyStr(ctx, global, "setTimeout",
                    JS_NewCFunction(ctx, js_set_timeout, "setTimeout", 2));
  JS_SetPropertyStr(ctx, global, "setInterval",
                    JS_NewCFunction(ctx, js_set_interval, "setInterval", 2));
  JS_SetPropertyStr(ctx, global, "clearTimeout",
                    JS_NewCFunction(ctx, js_clear_timer, "clearTimeout", 1));
  JS_SetPropertyStr(ctx, global, "clearInterval",
                    JS_NewCFunction(ctx, js_clear_timer, "clearInterval", 1));
  JS_SetPropertyStr(ctx, global, "queueMicrotask",
                    JS_NewCFunction(ctx, js_queue_microtask, "queueMicrotask", 1));
  JSValue host = JS_NewObject(ctx);
  JS_SetPropertyStr(ctx, host, "call",
                    JS_NewCFunction(ctx, js_host_call, "call", 1));
  JSValue helpers = JS_Eval(ctx, kHostHelpers, sizeof(kHostHelpers) - 1,
                            "<plimsoll>", JS_EVAL_TYPE_GLOBAL);
  if (JS_IsException(helpers)) {
    failed = 1;
  } else {
    JSValue done = JS_Call(ctx, helpers, JS_UNDEFINED, 1, (JSValueConst*)&host);
    if (JS_IsException(done)) failed = 1;
    JS_FreeValue(ctx, done);
  }
  JS_FreeValue(ctx, helpers);
  JS_SetPropertyStr(ctx, global, "host", host);
  JS_FreeValue(ctx, global);
  return failed ? -1 : 0;
}

static void release_run_state(JSContext* ctx) {
  for (size_t i = 0; i < g_timer_count; i++) free_timer(ctx, &g_timers[i]);
  g_timer_count = 0;
  for (size_t i = 0; i < g_rejection_count; i++) {
    JS_FreeValue(ctx, g_rejections[i].promise);
    JS_FreeValue(ctx, g_rejections[i].reason);
  }
  g_rejection_count = 0;
}

/* Evaluates the script, then runs jobs and timers until nothing is left. */
static int evaluate(JSContext* ctx, const char* code, size_t length,
                    double budget_ms) {
  JSRuntime* rt = JS_GetRuntime(ctx);
  JSValue completion = JS_Eval(ctx, code, length, "<input>",
                               JS_EVAL_TYPE_GLOBAL | JS_EVAL_FLAG_ASYNC);
  if (JS_IsException(completion)) {
    return report_exception(ctx, JS_GetException(ctx), "Uncaught ");
  }
  int code_out = -1;
  for (;;) {
    code_out = drain_jobs(rt);
    if (code_out >= 0) break;
    /* The script's own completion promise: a rejection is an uncaught
     * exception of the script, not an unhandled promise. */
    if (JS_PromiseState(ctx, completion) == JS_PROMISE_REJECTED) {
      JSValue reason = JS_PromiseResult(ctx, completion);
      for (size_t i = 0; i < g_rejection_count; i++) {
        if (JS_VALUE_GET_PTR(g_rejections[i].promise) ==
            JS_VALUE_GET_PTR(completion)) {
          JS_FreeValue(ctx, g_rejections[i].promise);
          JS_FreeValue(ctx, g_rejections[i].reason);
          g_rejections[i] = g_rejections[--g_rejection_count];
          break;
        }
      }
      code_out = report_exception(ctx, reason, "Uncaught ");
      break;
    }
    code_out = check_rejections(ctx);
    if (code_out >= 0) break;
    code_out = run_next_timer(ctx, budget_ms);
    if (code_out >= 0) break;
  }
  JS_FreeValue(ctx, completion);
  return code_out;
}

PLIMSOLL_EXPORT(plimsoll_alloc) void* plimsoll_alloc(uint32_t size) {
  return malloc(size ? size : 1);
}

PLIMSOLL_EXPORT(plimsoll_run)
int32_t plimsoll_run(const char* code, uint32_t length,
                     uint32_t js_memory_limit, double budget_ms) {
  JSRuntime* rt = JS_NewRuntime();
  if (!rt) return PLIMSOLL_EXIT_OUT_OF_MEMORY;
  JS_SetMemoryLimit(rt, js_memory_limit);
  JS_SetMaxStackSize(rt, DRIVER_JS_STACK_BYTES);
  JS_SetInterruptHandler(rt, interrupt_handler, NULL);
  JS_SetHostPromiseRejectionTracker(rt, rejection_tracker, NULL);
  JSContext* ctx = JS_NewContext(rt);
  if (!ctx) {
    JS_FreeRuntime(rt);
    return PLIMSOLL_EXIT_OUT_OF_MEMORY;
  }
  int exit_code;
  if (install_globals(ctx) != 0) {
    /* The deadline can pass while the globals are being set up (a tiny
     * budget, a loaded host): that is a timeout like any other. */
    JSValue exception = JS_GetException(ctx);
    exit_code = g_interrupted ? PLIMSOLL_EXIT_TIMEOUT
                : is_out_of_memory(ctx, exception) ? PLIMSOLL_EXIT_OUT_OF_MEMORY
                                                   : PLIMSOLL_EXIT_UNCAUGHT;
    JS_FreeValue(ctx, exception);
  } else {
    exit_code = evaluate(ctx, code, length, budget_ms);
  }
  release_run_state(ctx);
#ifdef PLIMSOLL_GUEST_NATIVE
  /* The wasm instance is thrown away whole; natively, tidy up for reuse. */
  JS_FreeContext(ctx);
  JS_FreeRuntime(rt);
  g_interrupted = 0;
  g_virtual_now = 0;
#endif
  return exit_code == -1 ? PLIMSOLL_EXIT_OK : exit_code;
}
