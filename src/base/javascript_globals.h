// The globals a JavaScript payload finds beyond the ECMAScript built-ins, on
// every tier: every provider that runs JavaScript runs one engine build
// (embedded in-process, the image's qjs elsewhere; docs/javascript.md). A
// fact of the payload, kept here below its users: the engine installs these
// (src/engine/engine.h; engine_test checks the list against the engine's
// globalThis), and Sandbox::Describe lists them under `javascript_globals`
// for a provider that runs JavaScript, without the core linking the engine.
//
// Usage:
//   description.details.emplace_back("javascript_globals", base::JavascriptGlobalsList());
//
// Thread-safety: constants and a pure function.
#ifndef PLIMSOLL_BASE_JAVASCRIPT_GLOBALS_H_
#define PLIMSOLL_BASE_JAVASCRIPT_GLOBALS_H_

#include <string>

namespace plimsoll::base {

// In the order `describe` lists them.
inline constexpr const char* kJavascriptGlobals[] = {
    "console",         "setTimeout",    "setInterval",
    "clearTimeout",    "clearInterval", "queueMicrotask",
    "structuredClone", "atob",          "btoa",
    "performance",     "crypto",        "TextEncoder",
    "TextDecoder",     "URL",           "URLSearchParams",
    "Event",           "EventTarget",   "CustomEvent",
    "AbortController", "AbortSignal",   "DOMException",
    "fetch",           "host",          "display"};

// kJavascriptGlobals joined with ", " (for describe's details).
inline std::string JavascriptGlobalsList() {
  std::string list;
  for (const char* name : kJavascriptGlobals) {
    if (!list.empty()) list += ", ";
    list += name;
  }
  return list;
}

}  // namespace plimsoll::base

#endif  // PLIMSOLL_BASE_JAVASCRIPT_GLOBALS_H_
