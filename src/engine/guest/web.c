/* The web APIs of the guest (WinterTC's Minimum Common Web API, where it
 * applies to a run without network), written in our own JavaScript
 * (the files of guest/web/, embedded at build time) over a few native helpers.
 *
 * Start-up cost matters (a fresh instance per run): each global is an
 * accessor on globalThis until first use. Its getter evaluates the file that
 * defines it (once per run), replaces itself with an ordinary data property
 * (writable, configurable, not enumerable, like the ECMAScript built-ins)
 * and returns the value; assigning the global first replaces it the same way.
 * `typeof URL` is "function" whether or not URL was loaded.
 *
 * Each file is a function expression `(function (native) { ... return
 * {exports}; })`; `native` holds the helpers below.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "driver.h"
#include "web_sources.h" /* generated: kWebSource_<file>[] */

typedef struct WebFile {
  const char* name; /* for stack traces: <plimsoll:name> */
  const char* source;
  size_t length;
} WebFile;

enum { kFileDom, kFileEncoding, kFileUrl, kFileClone, kFileMisc, kFileTable, kFileCount };

static const WebFile kFiles[kFileCount] = {
    {"dom", kWebSource_dom, sizeof kWebSource_dom - 1},
    {"encoding", kWebSource_encoding, sizeof kWebSource_encoding - 1},
    {"url", kWebSource_url, sizeof kWebSource_url - 1},
    {"clone", kWebSource_clone, sizeof kWebSource_clone - 1},
    {"misc", kWebSource_misc, sizeof kWebSource_misc - 1},
    {"table", kWebSource_table, sizeof kWebSource_table - 1},
};

typedef struct WebGlobal {
  const char* name;
  int file;
} WebGlobal;

/* The lazily loaded globals; the order is the getters' magic numbers. */
static const WebGlobal kGlobals[] = {
    {"DOMException", kFileDom},
    {"Event", kFileDom},
    {"CustomEvent", kFileDom},
    {"EventTarget", kFileDom},
    {"AbortController", kFileDom},
    {"AbortSignal", kFileDom},
    {"TextEncoder", kFileEncoding},
    {"TextDecoder", kFileEncoding},
    {"atob", kFileEncoding},
    {"btoa", kFileEncoding},
    {"URL", kFileUrl},
    {"URLSearchParams", kFileUrl},
    {"structuredClone", kFileClone},
    {"performance", kFileMisc},
    {"crypto", kFileMisc},
    {"fetch", kFileMisc},
};
#define WEB_GLOBAL_COUNT (sizeof kGlobals / sizeof kGlobals[0])

/* Per run (one run per module instance). */
static JSValue g_exports[kFileCount];
static int g_loaded[kFileCount];
static JSValue g_native = {0};
static int g_native_made;
static double g_time_origin_monotonic_ms;
static double g_time_origin_unix_ms;

/* ---- native helpers ------------------------------------------------- */

/* inspect(value, maxDepth, maxItems) -> string */
static JSValue native_inspect(JSContext* ctx, JSValueConst this_value, int argc,
                              JSValueConst* argv) {
  (void)this_value;
  int32_t depth = 2, items = 100;
  if (argc > 1 && JS_ToInt32(ctx, &depth, argv[1])) return JS_EXCEPTION;
  if (argc > 2 && JS_ToInt32(ctx, &items, argv[2])) return JS_EXCEPTION;
  return driver_inspect(ctx, argc > 0 ? argv[0] : JS_UNDEFINED, depth, items);
}

/* now() -> ms since the run's time origin (performance.now) */
static JSValue native_now(JSContext* ctx, JSValueConst this_value, int argc, JSValueConst* argv) {
  (void)this_value;
  (void)argc;
  (void)argv;
  return JS_NewFloat64(ctx, driver_monotonic_ms() - g_time_origin_monotonic_ms);
}

/* randomFill(arrayBuffer, offset, length): the host's CSPRNG (WASI
 * random_get -> getrandom(2)). The caller checks types and the quota. */
static JSValue native_random_fill(JSContext* ctx, JSValueConst this_value, int argc,
                                  JSValueConst* argv) {
  (void)this_value;
  size_t size;
  uint8_t* bytes = argc > 0 ? JS_GetArrayBuffer(ctx, &size, argv[0]) : NULL;
  if (!bytes) return JS_ThrowTypeError(ctx, "randomFill needs an ArrayBuffer.");
  int64_t offset = 0, length = 0;
  if (argc < 3 || JS_ToInt64(ctx, &offset, argv[1]) || JS_ToInt64(ctx, &length, argv[2])) {
    return JS_EXCEPTION;
  }
  if (offset < 0 || length < 0 || (uint64_t)offset + (uint64_t)length > size) {
    return JS_ThrowRangeError(ctx, "randomFill: out of bounds.");
  }
  for (int64_t done = 0; done < length;) {
    size_t chunk = length - done > 256 ? 256 : (size_t)(length - done); /* getentropy's cap */
    if (getentropy(bytes + offset + done, chunk) != 0) {
      return JS_ThrowInternalError(ctx, "The host's random source failed.");
    }
    done += (int64_t)chunk;
  }
  return JS_UNDEFINED;
}

/* setUnrefTimeout(callback, ms) -> id: a timer that does not keep the run
 * alive (AbortSignal.timeout's, as Node's). Cleared with clearTimeout. */
static JSValue native_set_unref_timeout(JSContext* ctx, JSValueConst this_value, int argc,
                                        JSValueConst* argv) {
  (void)this_value;
  return driver_add_unref_timer(ctx, argc, argv);
}

static int make_native(JSContext* ctx) {
  if (g_native_made) return 0;
  static const JSCFunctionListEntry kNative[] = {
      JS_CFUNC_DEF("inspect", 3, native_inspect),
      JS_CFUNC_DEF("now", 0, native_now),
      JS_CFUNC_DEF("randomFill", 3, native_random_fill),
      JS_CFUNC_DEF("setUnrefTimeout", 2, native_set_unref_timeout),
  };
  JSValue native = JS_NewObject(ctx);
  if (JS_IsException(native)) return -1;
  JS_SetPropertyFunctionList(ctx, native, kNative, sizeof kNative / sizeof kNative[0]);
  if (JS_HasException(ctx) ||
      JS_DefinePropertyValueStr(ctx, native, "timeOrigin",
                                JS_NewFloat64(ctx, g_time_origin_unix_ms), 0) < 0) {
    JS_FreeValue(ctx, native);
    return -1;
  }
  g_native = native;
  g_native_made = 1;
  return 0;
}

/* ---- loading -------------------------------------------------------- */

/* The exports object of a file (borrowed), or JS_EXCEPTION. */
static JSValue load_file(JSContext* ctx, int file) {
  if (g_loaded[file]) return g_exports[file];
  if (make_native(ctx)) return JS_EXCEPTION;
  char filename[32];
  snprintf(filename, sizeof filename, "<plimsoll:%s>", kFiles[file].name);
  JSValue factory = JS_Eval(ctx, kFiles[file].source, kFiles[file].length, filename,
                            JS_EVAL_TYPE_GLOBAL | JS_EVAL_FLAG_STRICT);
  if (JS_IsException(factory)) return factory;
  JSValue exports = JS_Call(ctx, factory, JS_UNDEFINED, 1, (JSValueConst*)&g_native);
  JS_FreeValue(ctx, factory);
  if (JS_IsException(exports)) return exports;
  g_exports[file] = exports;
  g_loaded[file] = 1;
  return exports;
}

static int define_global(JSContext* ctx, const char* name, JSValue value) {
  JSValue global = JS_GetGlobalObject(ctx);
  int result =
      JS_DefinePropertyValueStr(ctx, global, name, value, JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE);
  JS_FreeValue(ctx, global);
  return result;
}

static JSValue web_global_get(JSContext* ctx, JSValueConst this_value, int magic) {
  (void)this_value;
  const WebGlobal* entry = &kGlobals[magic];
  JSValue exports = load_file(ctx, entry->file);
  if (JS_IsException(exports)) return exports;
  JSValue value = JS_GetPropertyStr(ctx, exports, entry->name);
  if (JS_IsException(value)) return value;
  if (define_global(ctx, entry->name, JS_DupValue(ctx, value)) < 0) {
    JS_FreeValue(ctx, value);
    return JS_EXCEPTION;
  }
  return value;
}

static JSValue web_global_set(JSContext* ctx, JSValueConst this_value, JSValueConst value,
                              int magic) {
  (void)this_value;
  if (define_global(ctx, kGlobals[magic].name, JS_DupValue(ctx, value)) < 0) return JS_EXCEPTION;
  return JS_UNDEFINED;
}

/* console.table(data, properties): table.js, with console as `this`. */
static JSValue js_console_table(JSContext* ctx, JSValueConst this_value, int argc,
                                JSValueConst* argv) {
  JSValue exports = load_file(ctx, kFileTable);
  if (JS_IsException(exports)) return exports;
  JSValue table = JS_GetPropertyStr(ctx, exports, "table");
  if (JS_IsException(table)) return table;
  JSValue result = JS_Call(ctx, table, this_value, argc, argv);
  JS_FreeValue(ctx, table);
  return result;
}

#define WEB_GETSET(i) JS_CGETSET_MAGIC_DEF(NULL, web_global_get, web_global_set, i)

void driver_start_web_run(void) {
  g_time_origin_monotonic_ms = driver_monotonic_ms();
  struct timeval now;
  gettimeofday(&now, NULL);
  g_time_origin_unix_ms = (double)now.tv_sec * 1e3 + (double)now.tv_usec / 1e3;
}

int driver_install_web(JSContext* ctx, JSValueConst global) {
  driver_start_web_run();

  /* One static list: JS_SetPropertyFunctionList makes the accessors in one
   * pass (names filled in below: the entries need constant initialisers). */
  static JSCFunctionListEntry entries[WEB_GLOBAL_COUNT];
  static int entries_ready;
  if (!entries_ready) {
    for (size_t i = 0; i < WEB_GLOBAL_COUNT; i++) {
      JSCFunctionListEntry entry = WEB_GETSET((int16_t)i);
      entry.name = kGlobals[i].name;
      entries[i] = entry;
    }
    entries_ready = 1;
  }
  JS_SetPropertyFunctionList(ctx, global, entries, WEB_GLOBAL_COUNT);
  if (JS_HasException(ctx)) return -1;

  JSValue console = JS_GetPropertyStr(ctx, global, "console");
  if (JS_IsException(console)) return -1;
  int result = JS_DefinePropertyValueStr(
      ctx, console, "table", JS_NewCFunction(ctx, js_console_table, "table", 1),
      JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE | JS_PROP_ENUMERABLE);
  JS_FreeValue(ctx, console);
  return result < 0 ? -1 : 0;
}

void driver_release_web(JSContext* ctx) {
  for (int i = 0; i < kFileCount; i++) {
    if (g_loaded[i]) JS_FreeValue(ctx, g_exports[i]);
    g_loaded[i] = 0;
  }
  if (g_native_made) JS_FreeValue(ctx, g_native);
  g_native_made = 0;
}
