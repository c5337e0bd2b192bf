/* console.* for the guest, with an "inspect-lite" formatter close to node's
 * util.inspect for what snippets usually print: top-level strings raw,
 * nested strings quoted, -0, 1n, [ 1, 2 ], { a: 1 }, Map(1) { 'a' => 1 },
 * Set(1) { 1 }, [Function: f], Errors with their stack, [Circular *1],
 * [Object] below depth 2, and printf-style %s %d %i %f %j %o %O %c %%.
 * Everything stays on one line (node breaks long objects over lines).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cutils.h"
#include "driver.h"
#include "quickjs.h"

#define INSPECT_MAX_DEPTH 2
#define INSPECT_MAX_ITEMS 100
#define INSPECT_MAX_NESTING 64
#define INSPECT_MAX_FRAMES 10

typedef struct Inspector {
  JSContext* ctx;
  DynBuf* out;
  void* path[INSPECT_MAX_NESTING]; /* objects being printed, for cycles */
  int path_length;
  int max_depth; /* deeper objects print as [Object] */
  int max_items; /* array items shown before "... N more items" */
  int show_hidden; /* %o: arrays also show [length], as node's showHidden */
} Inspector;

#define INSPECTOR(context, buffer)                                               \
  {                                                                              \
    .ctx = (context), .out = (buffer), .path_length = 0,                         \
    .max_depth = INSPECT_MAX_DEPTH, .max_items = INSPECT_MAX_ITEMS,              \
    .show_hidden = 0                                                             \
  }

static int inspect(Inspector* in, JSValueConst value, int depth, int top);

static void put_quoted(DynBuf* out, const char* text, size_t length) {
  char quote = '\'';
  if (memchr(text, '\'', length) && !memchr(text, '"', length)) quote = '"';
  dbuf_putc(out, (uint8_t)quote);
  for (size_t i = 0; i < length; i++) {
    unsigned char c = (unsigned char)text[i];
    switch (c) {
      case '\n': dbuf_putstr(out, "\\n"); break;
      case '\t': dbuf_putstr(out, "\\t"); break;
      case '\r': dbuf_putstr(out, "\\r"); break;
      case '\b': dbuf_putstr(out, "\\b"); break;
      case '\f': dbuf_putstr(out, "\\f"); break;
      case '\v': dbuf_putstr(out, "\\v"); break;
      case '\\': dbuf_putstr(out, "\\\\"); break;
      default:
        if (c == (unsigned char)quote) {
          dbuf_putc(out, '\\');
          dbuf_putc(out, c);
        } else if (c < 0x20 || c == 0x7f) {
          dbuf_printf(out, "\\x%02X", c);
        } else {
          dbuf_putc(out, c);
        }
    }
  }
  dbuf_putc(out, (uint8_t)quote);
}

/* Appends String(value); returns -1 with an exception pending. */
static int put_string_of(Inspector* in, JSValueConst value) {
  size_t length;
  const char* text = JS_ToCStringLen(in->ctx, &length, value);
  if (!text) return -1;
  dbuf_put(in->out, (const uint8_t*)text, length);
  JS_FreeCString(in->ctx, text);
  return 0;
}

static int put_property_string(Inspector* in, JSValueConst object,
                               const char* name) {
  JSValue value = JS_GetPropertyStr(in->ctx, object, name);
  if (JS_IsException(value)) return -1;
  int result = 0;
  if (!JS_IsUndefined(value)) result = put_string_of(in, value);
  JS_FreeValue(in->ctx, value);
  return result;
}

static int is_identifier(const char* text, size_t length) {
  if (length == 0) return 0;
  for (size_t i = 0; i < length; i++) {
    char c = text[i];
    int letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
                 c == '$';
    if (!letter && !(i > 0 && c >= '0' && c <= '9')) return 0;
  }
  return 1;
}

static int put_number(Inspector* in, JSValueConst value) {
  double number;
  if (JS_ToFloat64(in->ctx, &number, value)) return -1;
  if (number == 0 && signbit(number)) {
    dbuf_putstr(in->out, "-0");
    return 0;
  }
  return put_string_of(in, value);
}

/* "[object Date]" -> "Date" (at most 31 chars). */
static int tag_of(Inspector* in, JSValueConst value, char* tag, size_t size) {
  JSContext* ctx = in->ctx;
  JSValue global = JS_GetGlobalObject(ctx);
  JSValue object = JS_GetPropertyStr(ctx, global, "Object");
  JSValue prototype = JS_GetPropertyStr(ctx, object, "prototype");
  JSValue to_string = JS_GetPropertyStr(ctx, prototype, "toString");
  JSValue text = JS_Call(ctx, to_string, value, 0, NULL);
  JS_FreeValue(ctx, to_string);
  JS_FreeValue(ctx, prototype);
  JS_FreeValue(ctx, object);
  JS_FreeValue(ctx, global);
  if (JS_IsException(text)) return -1;
  const char* c_text = JS_ToCString(ctx, text);
  JS_FreeValue(ctx, text);
  if (!c_text) return -1;
  tag[0] = '\0';
  size_t length = strlen(c_text);
  if (length > 9 && c_text[length - 1] == ']') {
    size_t n = length - 9;
    if (n >= size) n = size - 1;
    memcpy(tag, c_text + 8, n);
    tag[n] = '\0';
  }
  JS_FreeCString(ctx, c_text);
  return 0;
}

static int put_function(Inspector* in, JSValueConst value) {
  JSContext* ctx = in->ctx;
  JSValue source = JS_GetPropertyStr(ctx, value, "toString");
  JSValue text = JS_IsFunction(ctx, source)
                     ? JS_Call(ctx, source, value, 0, NULL)
                     : JS_UNDEFINED;
  JS_FreeValue(ctx, source);
  int is_class = 0;
  if (JS_IsString(text)) {
    const char* c_text = JS_ToCString(ctx, text);
    is_class = c_text && strncmp(c_text, "class", 5) == 0 &&
               (c_text[5] == ' ' || c_text[5] == '{');
    JS_FreeCString(ctx, c_text);
  }
  JS_FreeValue(ctx, text);
  if (JS_IsException(text)) JS_FreeValue(ctx, JS_GetException(ctx));
  JSValue name = JS_GetPropertyStr(ctx, value, "name");
  if (JS_IsException(name)) return -1;
  size_t length = 0;
  const char* c_name = JS_IsString(name) ? JS_ToCStringLen(ctx, &length, name)
                                         : NULL;
  JS_FreeValue(ctx, name);
  if (is_class) {
    dbuf_putstr(in->out, length ? "[class " : "[class (anonymous)");
  } else {
    dbuf_putstr(in->out, length ? "[Function: " : "[Function (anonymous)");
  }
  if (c_name) dbuf_put(in->out, (const uint8_t*)c_name, length);
  JS_FreeCString(ctx, c_name);
  dbuf_putc(in->out, ']');
  return 0;
}

static int put_error(Inspector* in, JSValueConst value) {
  JSValue stack = JS_GetPropertyStr(in->ctx, value, "stack");
  if (JS_IsException(stack)) return -1;
  if (put_string_of(in, value) < 0) {
    JS_FreeValue(in->ctx, stack);
    return -1;
  }
  int result = 0;
  if (JS_IsString(stack)) {
    /* At most INSPECT_MAX_FRAMES frames, as node's Error.stackTraceLimit:
     * a deep recursion's trace would otherwise be thousands of lines. */
    size_t length;
    const char* text = JS_ToCStringLen(in->ctx, &length, stack);
    if (!text) {
      result = -1;
    } else {
      size_t end = 0;
      int frames = 0;
      while (end < length && frames < INSPECT_MAX_FRAMES) {
        const char* newline = memchr(text + end, '\n', length - end);
        end = newline ? (size_t)(newline - text) + 1 : length;
        frames++;
      }
      size_t shown = end;
      while (shown > 0 && text[shown - 1] == '\n') shown--;
      if (shown > 0) {
        dbuf_putc(in->out, '\n');
        dbuf_put(in->out, (const uint8_t*)text, shown);
      }
      if (end < length) dbuf_putstr(in->out, "\n    ...");
      JS_FreeCString(in->ctx, text);
    }
  }
  JS_FreeValue(in->ctx, stack);
  return result;
}

/* Calls `Array.from(value)` (for Map and Set). */
static JSValue array_from(JSContext* ctx, JSValueConst value) {
  JSValue global = JS_GetGlobalObject(ctx);
  JSValue array = JS_GetPropertyStr(ctx, global, "Array");
  JSValue from = JS_GetPropertyStr(ctx, array, "from");
  JSValue result = JS_Call(ctx, from, array, 1, &value);
  JS_FreeValue(ctx, from);
  JS_FreeValue(ctx, array);
  JS_FreeValue(ctx, global);
  return result;
}

static int length_of(JSContext* ctx, JSValueConst value, int64_t* length) {
  JSValue length_value = JS_GetPropertyStr(ctx, value, "length");
  if (JS_IsException(length_value)) return -1;
  int result = JS_ToInt64(ctx, length, length_value);
  JS_FreeValue(ctx, length_value);
  return result;
}

/* Prints items [0, length) of an array-like; `pairs` prints [k, v] as k => v;
 * `hidden_length` appends node's showHidden "[length]: N". */
static int put_items(Inspector* in, JSValueConst list, int depth, int pairs, int hidden_length) {
  JSContext* ctx = in->ctx;
  int64_t length;
  if (length_of(ctx, list, &length)) return -1;
  if (length == 0) {
    if (hidden_length) {
      dbuf_putstr(in->out, "[ [length]: 0 ]");
      return 0;
    }
    dbuf_putstr(in->out, pairs >= 0 ? "{}" : "[]");
    return 0;
  }
  dbuf_putstr(in->out, pairs >= 0 ? "{ " : "[ ");
  int64_t shown = length < in->max_items ? length : in->max_items;
  for (int64_t i = 0; i < shown; i++) {
    if (i > 0) dbuf_putstr(in->out, ", ");
    JSValue item = JS_GetPropertyUint32(ctx, list, (uint32_t)i);
    if (JS_IsException(item)) return -1;
    int result;
    if (pairs == 1) {
      JSValue key = JS_GetPropertyUint32(ctx, item, 0);
      JSValue entry = JS_GetPropertyUint32(ctx, item, 1);
      result = inspect(in, key, depth + 1, 0);
      if (result == 0) {
        dbuf_putstr(in->out, " => ");
        result = inspect(in, entry, depth + 1, 0);
      }
      JS_FreeValue(ctx, key);
      JS_FreeValue(ctx, entry);
    } else {
      result = inspect(in, item, depth + 1, 0);
    }
    JS_FreeValue(ctx, item);
    if (result < 0) return -1;
  }
  if (length > shown) {
    dbuf_printf(in->out, ", ... %lld more item%s", (long long)(length - shown),
                length - shown == 1 ? "" : "s");
  }
  if (hidden_length) dbuf_printf(in->out, ", [length]: %lld", (long long)length);
  dbuf_putstr(in->out, pairs >= 0 ? " }" : " ]");
  return 0;
}

static int put_object_properties(Inspector* in, JSValueConst value,
                                 int depth) {
  JSContext* ctx = in->ctx;
  JSPropertyEnum* properties;
  uint32_t count;
  if (JS_GetOwnPropertyNames(ctx, &properties, &count, value,
                             JS_GPN_STRING_MASK | JS_GPN_ENUM_ONLY)) {
    return -1;
  }
  int result = 0;
  if (count == 0) {
    dbuf_putstr(in->out, "{}");
  } else {
    dbuf_putstr(in->out, "{ ");
    for (uint32_t i = 0; i < count && result == 0; i++) {
      if (i > 0) dbuf_putstr(in->out, ", ");
      if (i == INSPECT_MAX_ITEMS) {
        dbuf_printf(in->out, "... %u more item%s", count - i,
                    count - i == 1 ? "" : "s");
        break;
      }
      const char* key = JS_AtomToCString(ctx, properties[i].atom);
      if (!key) {
        result = -1;
        break;
      }
      size_t key_length = strlen(key);
      if (is_identifier(key, key_length)) {
        dbuf_put(in->out, (const uint8_t*)key, key_length);
      } else {
        put_quoted(in->out, key, key_length);
      }
      JS_FreeCString(ctx, key);
      dbuf_putstr(in->out, ": ");
      JSValue item = JS_GetProperty(ctx, value, properties[i].atom);
      if (JS_IsException(item)) {
        result = -1;
        break;
      }
      result = inspect(in, item, depth + 1, 0);
      JS_FreeValue(ctx, item);
    }
    if (result == 0) dbuf_putstr(in->out, " }");
  }
  for (uint32_t i = 0; i < count; i++) JS_FreeAtom(ctx, properties[i].atom);
  js_free(ctx, properties);
  return result;
}

/* The constructor's name when it is not plain Object, else "". */
static int constructor_name(Inspector* in, JSValueConst value, char* name,
                            size_t size, int* null_prototype) {
  JSContext* ctx = in->ctx;
  name[0] = '\0';
  JSValue prototype = JS_GetPrototype(ctx, value);
  if (JS_IsException(prototype)) return -1;
  *null_prototype = JS_IsNull(prototype);
  if (*null_prototype) return 0;
  JSValue constructor = JS_GetPropertyStr(ctx, prototype, "constructor");
  JS_FreeValue(ctx, prototype);
  if (JS_IsException(constructor)) return -1;
  JSValue name_value = JS_IsFunction(ctx, constructor)
                           ? JS_GetPropertyStr(ctx, constructor, "name")
                           : JS_UNDEFINED;
  JS_FreeValue(ctx, constructor);
  if (JS_IsException(name_value)) return -1;
  if (JS_IsString(name_value)) {
    const char* text = JS_ToCString(ctx, name_value);
    if (text && strcmp(text, "Object") != 0) {
      snprintf(name, size, "%s", text);
    }
    JS_FreeCString(ctx, text);
  }
  JS_FreeValue(ctx, name_value);
  return 0;
}

static int inspect_object(Inspector* in, JSValueConst value, int depth) {
  JSContext* ctx = in->ctx;
  void* self = JS_VALUE_GET_PTR(value);
  for (int i = 0; i < in->path_length; i++) {
    if (in->path[i] == self) {
      dbuf_putstr(in->out, "[Circular *1]");
      return 0;
    }
  }
  if (JS_IsFunction(ctx, value)) return put_function(in, value);
  if (JS_IsError(ctx, value)) return put_error(in, value);
  char tag[32];
  if (tag_of(in, value, tag, sizeof tag)) return -1;
  if (strcmp(tag, "Date") == 0 || strcmp(tag, "RegExp") == 0) {
    JSValue text = JS_UNDEFINED;
    if (strcmp(tag, "Date") == 0) {
      JSValue method = JS_GetPropertyStr(ctx, value, "toISOString");
      text = JS_Call(ctx, method, value, 0, NULL);
      JS_FreeValue(ctx, method);
      if (JS_IsException(text)) { /* Invalid Date */
        JS_FreeValue(ctx, JS_GetException(ctx));
        text = JS_NewString(ctx, "Invalid Date");
      }
    } else {
      text = JS_ToString(ctx, value);
    }
    if (JS_IsException(text)) return -1;
    int result = put_string_of(in, text);
    JS_FreeValue(ctx, text);
    return result;
  }
  if (strcmp(tag, "Promise") == 0) {
    dbuf_putstr(in->out, "Promise { ... }");
    return 0;
  }
  int is_array = JS_IsArray(ctx, value);
  if (is_array < 0) return -1;
  int is_map = strcmp(tag, "Map") == 0, is_set = strcmp(tag, "Set") == 0;
  int is_typed = strstr(tag, "Array") != NULL && !is_array &&
                 strcmp(tag, "Array") != 0;
  if (depth > in->max_depth) {
    dbuf_putstr(in->out, is_array ? "[Array]"
                         : is_map ? "[Map]"
                         : is_set ? "[Set]"
                                  : "[Object]");
    return 0;
  }
  if (in->path_length == INSPECT_MAX_NESTING) {
    dbuf_putstr(in->out, "[Object]");
    return 0;
  }
  in->path[in->path_length++] = self;
  int result;
  if (is_array) {
    result = put_items(in, value, depth, -1, in->show_hidden);
  } else if (is_map || is_set) {
    JSValue list = array_from(ctx, value);
    if (JS_IsException(list)) {
      result = -1;
    } else {
      int64_t size = 0;
      result = length_of(ctx, list, &size);
      if (result == 0) {
        dbuf_printf(in->out, "%s(%lld) ", tag, (long long)size);
        result = put_items(in, list, depth, is_map ? 1 : 0, 0);
      }
      JS_FreeValue(ctx, list);
    }
  } else if (is_typed) {
    int64_t size = 0;
    result = length_of(ctx, value, &size);
    if (result == 0) {
      dbuf_printf(in->out, "%s(%lld) ", tag, (long long)size);
      result = put_items(in, value, depth, -1, 0);
    }
  } else {
    char name[64];
    int null_prototype = 0;
    result = constructor_name(in, value, name, sizeof name, &null_prototype);
    if (result == 0) {
      if (null_prototype) {
        dbuf_putstr(in->out, "[Object: null prototype] ");
      } else if (name[0]) {
        dbuf_putstr(in->out, name);
        dbuf_putc(in->out, ' ');
      }
      result = put_object_properties(in, value, depth);
    }
  }
  in->path_length--;
  return result;
}

static int inspect(Inspector* in, JSValueConst value, int depth, int top) {
  JSContext* ctx = in->ctx;
  switch (JS_VALUE_GET_NORM_TAG(value)) {
    case JS_TAG_STRING: {
      if (top) return put_string_of(in, value);
      size_t length;
      const char* text = JS_ToCStringLen(ctx, &length, value);
      if (!text) return -1;
      put_quoted(in->out, text, length);
      JS_FreeCString(ctx, text);
      return 0;
    }
    case JS_TAG_INT:
    case JS_TAG_FLOAT64:
      return put_number(in, value);
    case JS_TAG_BIG_INT:
    case JS_TAG_SHORT_BIG_INT:
      if (put_string_of(in, value)) return -1;
      dbuf_putc(in->out, 'n');
      return 0;
    case JS_TAG_SYMBOL: {
      dbuf_putstr(in->out, "Symbol(");
      if (put_property_string(in, value, "description")) return -1;
      dbuf_putc(in->out, ')');
      return 0;
    }
    case JS_TAG_OBJECT:
      return inspect_object(in, value, depth);
    default: /* undefined, null, booleans */
      return put_string_of(in, value);
  }
}

/* Formats console arguments as node does: printf-style directives in a
 * leading string, then the remaining arguments separated by spaces. */
static int format_arguments(JSContext* ctx, DynBuf* out, int argc,
                            JSValueConst* argv) {
  Inspector in = INSPECTOR(ctx, out);
  int next = 0;
  if (argc > 0 && JS_IsString(argv[0])) {
    size_t length;
    const char* format = JS_ToCStringLen(ctx, &length, argv[0]);
    if (!format) return -1;
    next = 1;
    int result = 0;
    for (size_t i = 0; i < length && result == 0; i++) {
      if (format[i] != '%' || i + 1 == length) {
        dbuf_putc(out, (uint8_t)format[i]);
        continue;
      }
      char directive = format[i + 1];
      if (directive == '%') {
        dbuf_putc(out, '%');
        i++;
        continue;
      }
      if (!strchr("sdifjoOc", directive) || next >= argc) {
        dbuf_putc(out, '%');
        continue;
      }
      i++;
      JSValueConst argument = argv[next++];
      switch (directive) {
        case 's':
          result = JS_IsObject(argument) || JS_IsSymbol(argument) ||
                           JS_IsBigInt(ctx, argument)
                       ? inspect(&in, argument, 1, 0)
                       : inspect(&in, argument, 0, 1);
          break;
        case 'd':
        case 'i':
        case 'f': {
          double number;
          if (JS_IsBigInt(ctx, argument)) {
            result = inspect(&in, argument, 0, 1);
            break;
          }
          if (JS_ToFloat64(ctx, &number, argument)) {
            result = -1;
            break;
          }
          if (directive == 'i') number = trunc(number); /* node: %d keeps fractions */
          JSValue as_number = JS_NewFloat64(ctx, number);
          result = put_number(&in, as_number);
          break;
        }
        case 'j': {
          JSValue json =
              JS_JSONStringify(ctx, argument, JS_UNDEFINED, JS_UNDEFINED);
          if (JS_IsException(json)) {
            result = -1;
            break;
          }
          result = put_string_of(&in, json);
          JS_FreeValue(ctx, json);
          break;
        }
        case 'o': /* node: showHidden, depth 4 */
          in.show_hidden = 1;
          in.max_depth = 4;
          result = inspect(&in, argument, 0, 0);
          in.show_hidden = 0;
          in.max_depth = INSPECT_MAX_DEPTH;
          break;
        case 'O':
          result = inspect(&in, argument, 0, 0);
          break;
        default: /* %c: CSS, ignored */
          break;
      }
    }
    JS_FreeCString(ctx, format);
    if (result) return -1;
  }
  for (int i = next; i < argc; i++) {
    if (i > 0) dbuf_putc(out, ' ');
    if (inspect(&in, argv[i], 0, 1)) return -1;
  }
  return 0;
}

static void* realloc_for_dbuf(void* opaque, void* pointer, size_t size) {
  (void)opaque;
  return realloc(pointer, size);
}

JSValue driver_inspect(JSContext* ctx, JSValueConst value, int max_depth, int max_items) {
  DynBuf out;
  dbuf_init2(&out, NULL, realloc_for_dbuf);
  Inspector in = INSPECTOR(ctx, &out);
  in.max_depth = max_depth;
  in.max_items = max_items < 0 ? 0 : max_items;
  JSValue result = JS_EXCEPTION;
  if (inspect(&in, value, 0, 0) == 0) {
    result = dbuf_error(&out) ? JS_ThrowOutOfMemory(ctx)
                              : JS_NewStringLen(ctx, (const char*)out.buf, out.size);
  }
  dbuf_free(&out);
  return result;
}

/* magic: 1 = stdout, 2 = stderr, 3 = console.assert (stderr), 4 =
 * console.dir (stdout: its first argument inspected, as node: no format
 * directives, strings quoted). */
static JSValue js_console_print(JSContext* ctx, JSValueConst this_value,
                                int argc, JSValueConst* argv, int magic) {
  (void)this_value;
  DynBuf out;
  dbuf_init2(&out, NULL, realloc_for_dbuf);
  if (magic == 3) {
    if (argc > 0 && JS_ToBool(ctx, argv[0])) return JS_UNDEFINED;
    dbuf_putstr(&out, argc > 1 ? "Assertion failed: " : "Assertion failed");
    argc = argc > 0 ? argc - 1 : 0;
    argv = argv + 1;
  }
  int failed;
  if (magic == 4) {
    Inspector in = INSPECTOR(ctx, &out);
    failed = inspect(&in, argc > 0 ? argv[0] : JS_UNDEFINED, 0, 0);
  } else {
    failed = format_arguments(ctx, &out, argc, argv);
  }
  if (failed) {
    dbuf_free(&out);
    return JS_EXCEPTION;
  }
  dbuf_putc(&out, '\n');
  if (dbuf_error(&out)) {
    dbuf_free(&out);
    return JS_ThrowOutOfMemory(ctx);
  }
  driver_write(magic == 1 || magic == 4 ? 1 : 2, (const char*)out.buf, out.size);
  dbuf_free(&out);
  return JS_UNDEFINED;
}

int driver_install_console(JSContext* ctx, JSValueConst global) {
  static const struct {
    const char* name;
    int magic;
  } kMethods[] = {{"log", 1},  {"info", 1},  {"debug", 1}, {"dir", 4},
                  {"warn", 2}, {"error", 2}, {"trace", 2}, {"assert", 3}};
  JSValue console = JS_NewObject(ctx);
  if (JS_IsException(console)) return -1;
  for (size_t i = 0; i < sizeof kMethods / sizeof kMethods[0]; i++) {
    JSValue function =
        JS_NewCFunctionMagic(ctx, js_console_print, kMethods[i].name, 1,
                             JS_CFUNC_generic_magic, kMethods[i].magic);
    if (JS_SetPropertyStr(ctx, console, kMethods[i].name, function) < 0) {
      JS_FreeValue(ctx, console);
      return -1;
    }
  }
  return JS_SetPropertyStr(ctx, global, "console", console) < 0 ? -1 : 0;
}

void driver_print_uncaught(JSContext* ctx, JSValueConst exception,
                           const char* prefix) {
  DynBuf out;
  dbuf_init2(&out, NULL, realloc_for_dbuf);
  dbuf_putstr(&out, prefix);
  Inspector in = INSPECTOR(ctx, &out);
  if (inspect(&in, exception, 0, 0)) {
    /* printing itself failed (a throwing getter, no memory): say so */
    JS_FreeValue(ctx, JS_GetException(ctx));
    dbuf_putstr(&out, "(the thrown value could not be printed)");
  }
  dbuf_putc(&out, '\n');
  if (!dbuf_error(&out)) {
    driver_write(2, (const char*)out.buf, out.size);
  } else {
    static const char kFallback[] = "Uncaught exception (out of memory)\n";
    driver_write(2, kFallback, sizeof kFallback - 1);
  }
  dbuf_free(&out);
}
