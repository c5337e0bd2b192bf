/* The guest-side driver: runs one script in a fresh QuickJS runtime inside
 * the wasm module and returns the run's exit code (see abi.h).
 *
 * It gives the script console.*, real-time timers and queueMicrotask
 * (timers.c), the web APIs (web.c) and the `host` object; there is no std/os
 * module, no file or process API and no network.
 *
 * The event loop, as Node's for what a snippet can do: run the script, then
 * all jobs (microtasks), then the earliest timer (sleeping until it is due),
 * then all jobs again, until neither jobs nor timers are left. Host calls are
 * synchronous, so nothing else can keep the run alive.
 *
 * Built for wasm32-wasi (the engine) and natively (PLIMSOLL_GUEST_NATIVE, for
 * the benchmark's native baseline, which supplies the imports itself).
 */
#include "driver.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "abi.h"
#include "quickjs.h"

#ifdef PLIMSOLL_GUEST_NATIVE
#define PLIMSOLL_IMPORT(name)
#define PLIMSOLL_EXPORT(name)
#else
#define PLIMSOLL_IMPORT(name) __attribute__((import_module("plimsoll"), import_name(#name)))
#define PLIMSOLL_EXPORT(name) __attribute__((export_name(#name)))
#endif

PLIMSOLL_IMPORT(deadline_reached) int32_t plimsoll_deadline_reached(void);
PLIMSOLL_IMPORT(sleep_until) int32_t plimsoll_sleep_until(double monotonic_ms);
PLIMSOLL_IMPORT(host_call)
int32_t plimsoll_host_call(const char* request, int32_t length);
PLIMSOLL_IMPORT(host_response_length) int32_t plimsoll_host_response_length(void);
PLIMSOLL_IMPORT(host_response_read)
int32_t plimsoll_host_response_read(char* buffer, int32_t length);

/* QuickJS's own stack limit, well inside the module's shadow stack (linked
 * with -z stack-size, see cmake/QuickJSWasm.cmake) so deep recursion is a
 * RangeError, never a trap. */
#define DRIVER_JS_STACK_BYTES (768 * 1024)

typedef struct Rejection {
  JSValue promise;
  JSValue reason;
} Rejection;

/* One run per module instance: plain globals are per run. */
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

/* ---- interrupts, sleeping, rejections ------------------------------- */

int driver_sleep_until(double monotonic_ms) {
  if (plimsoll_sleep_until(monotonic_ms) == 0) return 0;
  g_interrupted = 1;
  return 1;
}

static int interrupt_handler(JSRuntime* rt, void* opaque) {
  (void)rt;
  (void)opaque;
  if (!g_interrupted && plimsoll_deadline_reached()) g_interrupted = 1;
  return g_interrupted;
}

static void rejection_tracker(JSContext* ctx, JSValueConst promise, JSValueConst reason,
                              JS_BOOL is_handled, void* opaque) {
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
    if (JS_VALUE_GET_PTR(g_rejections[i].promise) == JS_VALUE_GET_PTR(promise)) {
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
int driver_report_exception(JSContext* ctx, JSValue exception, const char* prefix) {
  if (g_interrupted) {
    JS_FreeValue(ctx, exception);
    return PLIMSOLL_EXIT_TIMEOUT;
  }
  int code =
      is_out_of_memory(ctx, exception) ? PLIMSOLL_EXIT_OUT_OF_MEMORY : PLIMSOLL_EXIT_UNCAUGHT;
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
      return driver_report_exception(job_context, JS_GetException(job_context), "Uncaught ");
    }
  }
  if (g_interrupted) return PLIMSOLL_EXIT_TIMEOUT;
  return -1;
}

static int check_rejections(JSContext* ctx) {
  if (g_rejection_count == 0) return -1;
  JSValue reason = JS_DupValue(ctx, g_rejections[0].reason);
  return driver_report_exception(ctx, reason, "Uncaught (in promise) ");
}

/* ---- Math.random ---------------------------------------------------- */

/* QuickJS seeds Math.random from the time of day when a context is made. A
 * run that starts from a snapshot (plimsoll_prepare) would then replay the
 * snapshot's sequence, so Math.random is ours: the same generator kind
 * (xorshift64*, 52 random bits in [0, 1)), seeded from the host's CSPRNG
 * (WASI random_get) on its first call in each run. */
static uint64_t g_random_state;
static int g_random_seeded;

static JSValue js_math_random(JSContext* ctx, JSValueConst this_value, int argc,
                              JSValueConst* argv) {
  (void)this_value;
  (void)argc;
  (void)argv;
  if (!g_random_seeded) {
    if (getentropy(&g_random_state, sizeof g_random_state) != 0) {
      return JS_ThrowInternalError(ctx, "The host's random source failed.");
    }
    if (g_random_state == 0) g_random_state = 1; /* xorshift's one fixed point */
    g_random_seeded = 1;
  }
  uint64_t x = g_random_state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  g_random_state = x;
  uint64_t bits = (x * UINT64_C(0x2545F4914F6CDD1D)) >> 11; /* 53 bits */
  return JS_NewFloat64(ctx, (double)bits / 9007199254740992.0); /* / 2^53 */
}

static int install_math_random(JSContext* ctx, JSValueConst global) {
  JSValue math = JS_GetPropertyStr(ctx, global, "Math");
  if (JS_IsException(math)) return -1;
  int result = JS_DefinePropertyValueStr(ctx, math, "random",
                                         JS_NewCFunction(ctx, js_math_random, "random", 0),
                                         JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE);
  JS_FreeValue(ctx, math);
  return result < 0 ? -1 : 0;
}

/* ---- host ------------------------------------------------------------ */

static JSValue js_host_call(JSContext* ctx, JSValueConst this_value, int argc, JSValueConst* argv) {
  (void)this_value;
  JSValue request =
      JS_JSONStringify(ctx, argc > 0 ? argv[0] : JS_UNDEFINED, JS_UNDEFINED, JS_UNDEFINED);
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
    JS_DefinePropertyValueStr(ctx, plain, "message", JS_NewStringLen(ctx, answer, (size_t)read),
                              JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE);
    JS_DefinePropertyValueStr(
        ctx, plain, "code",
        JS_NewString(ctx, status == PLIMSOLL_HOST_NO_GRANT      ? "no_grant"
                          : status == PLIMSOLL_HOST_REFUSED     ? "refused"
                          : status == PLIMSOLL_HOST_BAD_REQUEST ? "bad_request"
                                                                : "failed"),
        JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE);
    result = JS_Throw(ctx, plain);
  }
  free(answer);
  return result;
}

/* As base/display_format.h's IsDisplayMime (the host checks again). */
static int is_display_mime(const char* mime, size_t length) {
  size_t slash = length;
  if (length == 0 || length > 127) return 0;
  for (size_t i = 0; i < length; i++) {
    char c = mime[i];
    if (c == '/' && slash == length) {
      slash = i;
    } else if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '+' ||
                 c == '-')) {
      return 0;
    }
  }
  return slash != length && slash != 0 && slash + 1 != length;
}

/* display(value[, mime]): one rich output of the run (Result::displays).
 * A string is shown as text/plain, or as `mime`; an ArrayBuffer or a typed
 * array (its bytes) needs `mime`; anything else is shown as console.log
 * prints it, as text/plain. The host checks the type and the caps; the
 * script is never told what was kept. Returns undefined. */
static JSValue js_display(JSContext* ctx, JSValueConst this_value, int argc, JSValueConst* argv) {
  (void)this_value;
  JSValueConst value = argc > 0 ? argv[0] : JS_UNDEFINED;
  const char* mime = NULL;
  size_t mime_length = 0;
  if (argc > 1 && !JS_IsUndefined(argv[1])) {
    mime = JS_ToCStringLen(ctx, &mime_length, argv[1]);
    if (!mime) return JS_EXCEPTION;
  }
  JSValue held = JS_UNDEFINED; /* keeps `bytes` alive: a buffer or a text */
  const char* text = NULL;
  const uint8_t* bytes = NULL;
  size_t length = 0;
  size_t buffer_size = 0;
  if (JS_IsObject(value) && (bytes = JS_GetArrayBuffer(ctx, &buffer_size, value)) != NULL) {
    length = buffer_size;
  } else if (JS_IsObject(value)) {
    JS_FreeValue(ctx, JS_GetException(ctx)); /* not an ArrayBuffer: clear that */
    size_t offset = 0, element = 0;
    held = JS_GetTypedArrayBuffer(ctx, value, &offset, &length, &element);
    if (JS_IsException(held)) {
      JS_FreeValue(ctx, JS_GetException(ctx)); /* not a typed array either */
      held = JS_UNDEFINED;
    } else {
      uint8_t* base = JS_GetArrayBuffer(ctx, &buffer_size, held);
      if (!base || offset + length > buffer_size) {
        JS_FreeValue(ctx, held);
        JS_FreeCString(ctx, mime);
        return JS_ThrowTypeError(ctx, "display(): the typed array's buffer is detached");
      }
      bytes = base + offset;
    }
  }
  if (bytes != NULL && mime == NULL) {
    JS_FreeValue(ctx, held);
    return JS_ThrowTypeError(ctx, "display(bytes, mime): bytes need a MIME type");
  }
  if (bytes == NULL) {
    JSValue shown =
        JS_IsString(value) ? JS_DupValue(ctx, value) : driver_inspect(ctx, value, 2, 100);
    if (JS_IsException(shown)) {
      JS_FreeCString(ctx, mime);
      return JS_EXCEPTION;
    }
    text = JS_ToCStringLen(ctx, &length, shown);
    JS_FreeValue(ctx, shown);
    if (!text) {
      JS_FreeCString(ctx, mime);
      return JS_EXCEPTION;
    }
    bytes = (const uint8_t*)text;
  }
  if (mime && !is_display_mime(mime, mime_length)) {
    if (text) JS_FreeCString(ctx, text);
    JS_FreeValue(ctx, held);
    JSValue error = JS_ThrowTypeError(ctx,
                                      "display(): \"%s\" is not a MIME type (type/subtype, "
                                      "lowercase)",
                                      mime);
    JS_FreeCString(ctx, mime);
    return error;
  }
  const char* type = mime ? mime : "text/plain";
  size_t type_length = mime ? mime_length : 10;
  char* record = malloc(type_length + 1 + length);
  if (record) {
    memcpy(record, type, type_length);
    record[type_length] = '\n';
    memcpy(record + type_length + 1, bytes, length);
    driver_write(PLIMSOLL_DISPLAY_FD, record, type_length + 1 + length);
    free(record);
  }
  if (text) JS_FreeCString(ctx, text);
  JS_FreeValue(ctx, held);
  JS_FreeCString(ctx, mime);
  if (!record) return JS_ThrowOutOfMemory(ctx);
  return JS_UNDEFINED;
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

static int install_globals(JSContext* ctx, uint32_t flags) {
  JSValue global = JS_GetGlobalObject(ctx);
  int failed = driver_install_console(ctx, global) || driver_install_timers(ctx, global) ||
               install_math_random(ctx, global);
  if (!failed && !(flags & PLIMSOLL_RUN_NO_WEB_APIS)) failed = driver_install_web(ctx, global);
  JSValue host = JS_NewObject(ctx);
  JS_SetPropertyStr(ctx, host, "call", JS_NewCFunction(ctx, js_host_call, "call", 1));
  JSValue helpers =
      JS_Eval(ctx, kHostHelpers, sizeof(kHostHelpers) - 1, "<plimsoll>", JS_EVAL_TYPE_GLOBAL);
  if (JS_IsException(helpers)) {
    failed = 1;
  } else {
    JSValue done = JS_Call(ctx, helpers, JS_UNDEFINED, 1, (JSValueConst*)&host);
    if (JS_IsException(done)) failed = 1;
    JS_FreeValue(ctx, done);
  }
  JS_FreeValue(ctx, helpers);
  JS_SetPropertyStr(ctx, global, "host", host);
  JS_SetPropertyStr(ctx, global, "display", JS_NewCFunction(ctx, js_display, "display", 2));
  JS_FreeValue(ctx, global);
  return failed ? -1 : 0;
}

static void release_run_state(JSContext* ctx) {
  driver_release_timers(ctx);
  driver_release_web(ctx);
  for (size_t i = 0; i < g_rejection_count; i++) {
    JS_FreeValue(ctx, g_rejections[i].promise);
    JS_FreeValue(ctx, g_rejections[i].reason);
  }
  g_rejection_count = 0;
}

/* Evaluates the script, then runs jobs and timers until nothing is left.
 * With `value` set (a session cell), a script that completed stores its
 * completion value there (owned by the caller; JS_UNDEFINED when none). */
static int evaluate(JSContext* ctx, const char* code, size_t length, JSValue* value) {
  JSRuntime* rt = JS_GetRuntime(ctx);
  JSValue completion = JS_Eval(ctx, code, length, value ? "<cell>" : "<input>",
                               JS_EVAL_TYPE_GLOBAL | JS_EVAL_FLAG_ASYNC);
  if (JS_IsException(completion)) {
    return driver_report_exception(ctx, JS_GetException(ctx), "Uncaught ");
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
        if (JS_VALUE_GET_PTR(g_rejections[i].promise) == JS_VALUE_GET_PTR(completion)) {
          JS_FreeValue(ctx, g_rejections[i].promise);
          JS_FreeValue(ctx, g_rejections[i].reason);
          g_rejections[i] = g_rejections[--g_rejection_count];
          break;
        }
      }
      code_out = driver_report_exception(ctx, reason, "Uncaught ");
      break;
    }
    code_out = check_rejections(ctx);
    if (code_out >= 0) break;
    code_out = driver_run_next_timer(ctx);
    if (code_out >= 0) break;
  }
  /* An async script resolves to { value: <completion value> }. */
  if (value && code_out == 0 && JS_PromiseState(ctx, completion) == JS_PROMISE_FULFILLED) {
    JSValue wrapper = JS_PromiseResult(ctx, completion);
    *value = JS_IsObject(wrapper) ? JS_GetPropertyStr(ctx, wrapper, "value") : JS_UNDEFINED;
    JS_FreeValue(ctx, wrapper);
  }
  JS_FreeValue(ctx, completion);
  return code_out;
}

PLIMSOLL_EXPORT(plimsoll_alloc) void* plimsoll_alloc(uint32_t size) {
  return malloc(size ? size : 1);
}

/* A fresh runtime and context with the globals installed, in *out. Returns
 * -1 on success, else the exit code of the failure (the context is then
 * freed). */
static int new_context(uint32_t js_memory_limit, uint32_t flags, JSContext** out) {
  *out = NULL;
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
  *out = ctx;
  if (install_globals(ctx, flags) == 0) return -1;
  /* The deadline can pass while the globals are being set up (a tiny
   * budget, a loaded host): that is a timeout like any other. */
  JSValue exception = JS_GetException(ctx);
  int exit_code = g_interrupted                      ? PLIMSOLL_EXIT_TIMEOUT
                  : is_out_of_memory(ctx, exception) ? PLIMSOLL_EXIT_OUT_OF_MEMORY
                                                     : PLIMSOLL_EXIT_UNCAUGHT;
  JS_FreeValue(ctx, exception);
  return exit_code;
}

PLIMSOLL_EXPORT(plimsoll_free) void plimsoll_free(void* pointer) {
  free(pointer);
}

PLIMSOLL_EXPORT(plimsoll_run)
int32_t plimsoll_run(const char* code, uint32_t length, uint32_t js_memory_limit, uint32_t flags) {
  JSContext* ctx;
  int exit_code = new_context(js_memory_limit, flags, &ctx);
  if (!ctx) return exit_code;
  if (exit_code == -1) exit_code = evaluate(ctx, code, length, NULL);
  release_run_state(ctx);
#ifdef PLIMSOLL_GUEST_NATIVE
  /* The wasm instance is thrown away whole; natively, tidy up for reuse. */
  JSRuntime* rt = JS_GetRuntime(ctx);
  JS_FreeContext(ctx);
  JS_FreeRuntime(rt);
  g_interrupted = 0;
  g_random_seeded = 0;
#endif
  return exit_code == -1 ? PLIMSOLL_EXIT_OK : exit_code;
}

/* ---- snapshots: a context made once, runs started from its image ------ */

/* The context plimsoll_prepare made. The host captures the instance's memory
 * right after plimsoll_prepare returns and starts each later run from a
 * private copy of that image (engine/snapshot.h); a run never sees another
 * run's writes, only this freshly made context. */
static JSContext* g_prepared;

/* Makes a fresh context into *slot (which must be empty): the exit code of
 * new_context's failure, else PLIMSOLL_EXIT_OK. */
static int keep_new_context(uint32_t js_memory_limit, uint32_t flags, JSContext** slot) {
  if (*slot) return PLIMSOLL_EXIT_UNCAUGHT;
  JSContext* ctx;
  int exit_code = new_context(js_memory_limit, flags, &ctx);
  if (exit_code == -1) {
    *slot = ctx;
    return PLIMSOLL_EXIT_OK;
  }
  if (ctx) {
    release_run_state(ctx);
    JSRuntime* rt = JS_GetRuntime(ctx);
    JS_FreeContext(ctx);
    JS_FreeRuntime(rt);
  }
  return exit_code;
}

/* What the prepared context must not keep from the snapshot: the memory
 * limit becomes this run's (or session's), the stack top this call's, the
 * time origin now. */
static void start_with_prepared(uint32_t js_memory_limit) {
  JSRuntime* rt = JS_GetRuntime(g_prepared);
  JS_SetMemoryLimit(rt, js_memory_limit);
  JS_UpdateStackTop(rt);
  driver_start_web_run();
}

PLIMSOLL_EXPORT(plimsoll_prepare)
int32_t plimsoll_prepare(uint32_t js_memory_limit, uint32_t flags) {
  return keep_new_context(js_memory_limit, flags, &g_prepared);
}

/* Runs one script in the prepared context of an instance started from the
 * image: this run's memory limit and stack top, a time origin of now, then
 * as plimsoll_run. The instance is thrown away afterwards. */
PLIMSOLL_EXPORT(plimsoll_run_prepared)
int32_t plimsoll_run_prepared(const char* code, uint32_t length, uint32_t js_memory_limit) {
  if (!g_prepared) return PLIMSOLL_EXIT_UNCAUGHT;
  start_with_prepared(js_memory_limit);
  int exit_code = evaluate(g_prepared, code, length, NULL);
  return exit_code == -1 ? PLIMSOLL_EXIT_OK : exit_code;
}

/* ---- sessions: one context kept across cells ------------------------- */

/* The session's context; a module instance holds at most one. */
static JSContext* g_session;

PLIMSOLL_EXPORT(plimsoll_session_open)
int32_t plimsoll_session_open(uint32_t js_memory_limit, uint32_t flags) {
  return keep_new_context(js_memory_limit, flags, &g_session);
}

/* In an instance started from the snapshot's image: makes the prepared
 * context the session's (this session's memory limit, stack top and time
 * origin), as plimsoll_session_open would make a fresh one. */
PLIMSOLL_EXPORT(plimsoll_session_adopt)
int32_t plimsoll_session_adopt(uint32_t js_memory_limit) {
  if (g_session || !g_prepared) return PLIMSOLL_EXIT_UNCAUGHT;
  start_with_prepared(js_memory_limit);
  g_session = g_prepared;
  g_prepared = NULL;
  return PLIMSOLL_EXIT_OK;
}

/* Writes the REPL's printed form of `value` (consumed) to fd 3, the value
 * channel; nothing for undefined (the cell ended in a statement or an
 * expression without a value). */
static int write_value(JSContext* ctx, JSValue value) {
  if (JS_IsUndefined(value)) return PLIMSOLL_EXIT_OK;
  JSValue text = driver_inspect(ctx, value, 2, 100);
  JS_FreeValue(ctx, value);
  if (JS_IsException(text)) {
    return driver_report_exception(ctx, JS_GetException(ctx), "Uncaught ");
  }
  size_t length = 0;
  const char* bytes = JS_ToCStringLen(ctx, &length, text);
  JS_FreeValue(ctx, text);
  if (!bytes) return driver_report_exception(ctx, JS_GetException(ctx), "Uncaught ");
  driver_write(PLIMSOLL_VALUE_FD, bytes, length);
  JS_FreeCString(ctx, bytes);
  return PLIMSOLL_EXIT_OK;
}

PLIMSOLL_EXPORT(plimsoll_session_cell)
int32_t plimsoll_session_cell(const char* code, uint32_t length) {
  if (!g_session) return PLIMSOLL_EXIT_UNCAUGHT;
  g_interrupted = 0;
  JSValue value = JS_UNDEFINED;
  int exit_code = evaluate(g_session, code, length, &value);
  if (exit_code == -1) exit_code = PLIMSOLL_EXIT_OK;
  if (exit_code == PLIMSOLL_EXIT_OK) {
    exit_code = write_value(g_session, value);
  } else {
    JS_FreeValue(g_session, value);
  }
  /* Unhandled rejections are reported once, with the cell that made them. */
  for (size_t i = 0; i < g_rejection_count; i++) {
    JS_FreeValue(g_session, g_rejections[i].promise);
    JS_FreeValue(g_session, g_rejections[i].reason);
  }
  g_rejection_count = 0;
  return exit_code;
}
