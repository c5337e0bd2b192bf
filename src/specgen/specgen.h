// specgen: an OpenAPI 3.0 or 3.1 document -> a grant profile's routes
// (SPEC §8) and a short preamble an agent's prompt can carry
// (docs/specgen.md).
//
// Each selected operation becomes an `allow` entry "METHOD /path/template"
// in which every templated segment (`{id}`) is `*`, the grants file's "exactly
// one non-empty segment". An operation whose path cannot be said that way
// (`/files/{name}.json`, a `;`, `?`, `#`, `%`, a `.` or `..` segment, an empty
// segment) is left out with a warning naming it: a grant must never allow more
// than the document's route, and the broker refuses such paths anyway.
//
// The function is pure: text and options in, routes and warnings out. It
// never throws; a document that cannot be read is an Error whose message
// names the line.
//
// Usage:
//
//   specgen::Options options;
//   options.only = {"Bookings"};
//   auto spec = specgen::Generate(document_text, options);
//   if (!spec.ok()) return spec.error();
//   for (const std::string& warning : spec->warnings) err << warning << "\n";
//   out << specgen::RenderProfileYaml(*spec) << "---\n"
//       << specgen::RenderPreamble(*spec, /*as_comment=*/true);
#ifndef PLIMSOLL_SPECGEN_SPECGEN_H_
#define PLIMSOLL_SPECGEN_SPECGEN_H_

#include <string>
#include <string_view>
#include <vector>

#include "plimsoll/error.h"

namespace plimsoll::specgen {

// What `allowed_callers` and an unknown `base_url` are written as: a value
// the grants file refuses, so that a profile nobody filled in cannot serve.
inline constexpr std::string_view kFillIn = "<fill in>";

struct Options {
  // Keep only operations carrying one of these tags, or whose path template
  // is one of these exactly. Empty: every operation.
  std::vector<std::string> only;
  // HTTP methods, any case. Empty: the read-only ones, GET and HEAD.
  std::vector<std::string> methods;
  // The profile's name. Empty: made from info.title ("Train Travel API" ->
  // "train-travel-api"), else "api".
  std::string profile;
  // An absolute http(s) URL. Its origin is the profile's base_url and its
  // path (if any) is put before every route. Empty: the document's first
  // servers[].url.
  std::string base_url;
};

struct Parameter {
  std::string name;
  std::string in;  // "path" or "query"
  bool required = false;
  friend bool operator==(const Parameter&, const Parameter&) = default;
};

struct Route {
  std::string method;                 // "GET"
  std::string path;                   // the request path's template: "/v1/bookings/{bookingId}"
  std::string allow;                  // the grant entry: "GET /v1/bookings/*"
  std::vector<Parameter> parameters;  // path ones in template order, then query ones
  std::string summary;                // one line, at most 120 characters; may be empty
};

// A per-item route whose items the collection route returns in one call
// ("GET /bookings/*" batched by "GET /bookings"): the efficiency advisor's
// fan-out hint.
struct BatchHint {
  std::string item;        // "GET /bookings/*"
  std::string collection;  // "GET /bookings"
  friend bool operator==(const BatchHint&, const BatchHint&) = default;
};

struct Spec {
  std::string title;    // info.title
  std::string version;  // info.version
  std::string openapi;  // "3.0.3", "3.1.0"
  std::string profile;
  std::string base_url;            // an origin, or kFillIn when it is not known
  std::vector<Route> routes;       // document order
  std::vector<std::string> allow;  // the distinct allow entries, in route order
  std::vector<BatchHint> batch_of;
  std::vector<std::string> warnings;  // whole sentences, one per thing left out or guessed
};

// Whether the options themselves are usable (methods, profile, base_url);
// the message names the flag ("--methods: ..."). Generate checks them too.
Status CheckOptions(const Options& options);

// Reads `document` (YAML or JSON) and selects its operations. Errors
// (invalid_argument): not YAML/JSON, not OpenAPI 3.0/3.1, a bad option, or
// no operation selected at all.
Expected<Spec> Generate(std::string_view document, const Options& options);

// The grants file holding this one profile:
//   profiles: {NAME: {base_url, allow, allowed_callers, batch_of}}
// as YAML (with comments on what to fill in) or as JSON.
std::string RenderProfileYaml(const Spec& spec);
std::string RenderProfileJson(const Spec& spec);

// The preamble's lines: a heading, one line per route ("GET /bookings/{bookingId}
// (path: bookingId required): Get a booking"), one per batch hint, and how
// the code calls the routes. With `as_comment`, each line starts with "# ".
std::vector<std::string> PreambleLines(const Spec& spec);
std::string RenderPreamble(const Spec& spec, bool as_comment);

}  // namespace plimsoll::specgen

#endif  // PLIMSOLL_SPECGEN_SPECGEN_H_
