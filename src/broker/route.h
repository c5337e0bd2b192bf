// Routes of a grant profile, and the canonical form of a path a guest sent.
//
// A RouteTemplate is one `allow` entry of a grants file: "METHOD /path/template",
// where each segment is a literal or `*` (exactly one non-empty segment). A
// CanonicalPath is a path from the guest decoded exactly once and checked
// against every trick that makes one path mean two things to two parsers
// (docs/grants.md, "Paths"). The broker matches only canonical paths, sends
// upstream only CanonicalPath::encoded(), and reports only the template that
// matched (traces and advice never carry a concrete path).
//
// Usage:
//
//   auto route = RouteTemplate::Parse("GET /items/*");        // Expected
//   auto path = CanonicalizePath(guest_path);                 // Expected
//   if (!path.ok()) return Refuse("bad_path", path.error());  // a whole sentence
//   if (Match(*route, HttpMethod::kGet, *path)) ...
//
//   RouteMatcher matcher(profile.allow);
//   const RouteTemplate* matched = matcher.Find(HttpMethod::kGet, *path);
//   // matched->text() == "GET /items/*", or null: not allowed.
//
// Everything here is a pure function or an immutable value: thread-safe.
#ifndef PLIMSOLL_BROKER_ROUTE_H_
#define PLIMSOLL_BROKER_ROUTE_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "plimsoll/error.h"

namespace plimsoll::broker {

enum class HttpMethod { kGet, kHead, kPost, kPut, kPatch, kDelete };

// "GET", "HEAD", ...
std::string_view HttpMethodName(HttpMethod method);
// Exact, upper case only ("get" is not a method here).
std::optional<HttpMethod> ParseHttpMethod(std::string_view name);

// The longest raw path the broker accepts, in bytes.
inline constexpr std::size_t kMaxPathBytes = 2048;

class RouteTemplate {
 public:
  // Parses "METHOD /a/*/b". On error the message is a whole sentence naming
  // what is wrong (the grants parser prefixes file, line and field).
  static Expected<RouteTemplate> Parse(std::string_view text);

  HttpMethod method() const { return method_; }
  // "/a/*/b"
  const std::string& path() const { return path_; }
  // "GET /a/*/b": the canonical text, as traces and advice report it.
  std::string text() const;
  // The segments; a wildcard segment is "*". Empty for "/".
  const std::vector<std::string>& segments() const { return segments_; }
  bool HasWildcard() const;

  friend bool operator==(const RouteTemplate&, const RouteTemplate&) = default;

 private:
  RouteTemplate() = default;
  HttpMethod method_ = HttpMethod::kGet;
  std::string path_;
  std::vector<std::string> segments_;
};

class CanonicalPath {
 public:
  // The decoded segments (never empty strings; empty for "/").
  const std::vector<std::string>& segments() const { return segments_; }
  // The path as sent upstream: "/" + segments, each re-encoded so that every
  // byte outside the unreserved and safe sub-delimiter characters is
  // percent-encoded. Decoding it once gives back segments() exactly.
  const std::string& encoded() const { return encoded_; }

  friend bool operator==(const CanonicalPath&, const CanonicalPath&) = default;

 private:
  friend Expected<CanonicalPath> CanonicalizePath(std::string_view raw);
  std::vector<std::string> segments_;
  std::string encoded_;
};

// Decodes `raw` (the path a guest asked for) exactly once and refuses it,
// as Refusal(kRequest, <whole sentence>), when it:
//   - is empty, does not start with "/", or is longer than kMaxPathBytes;
//   - contains `?`, `#`, `\`, `;`, or a control byte (< 0x20, 0x7f), raw or
//     percent-encoded;
//   - has an empty segment ("//", or a trailing "/" other than the path "/");
//   - has a segment made only of dots ("." "..", "..."), also when encoded
//     ("%2e%2e", ".%2E");
//   - has a segment made only of dots and white space, or of white space
//     alone ("..%20", "..%C2%A0", ". .", "%20"): ASCII and Unicode white
//     space (no-break spaces included) and the invisible code points a trim
//     drops (U+200B, U+FEFF), raw or encoded. An upstream that trims white
//     space or trailing dots would read ".." or an empty segment;
//   - encodes "/" or "\" ("%2f", "%5C"), or "%" itself ("%25": an upstream
//     that decodes twice would see a second layer);
//   - has a malformed escape ("%", "%4", "%zz");
//   - is not valid UTF-8 after decoding (overlong forms such as "%C0%AF",
//     surrogates, truncated sequences);
//   - contains a code point that Unicode compatibility normalisation (NFKC)
//     turns into '/', '\', '.', '?', '#', ';' or '%' (U+FF0F fullwidth
//     solidus, U+2025 two dot leader, ...): an upstream that normalises
//     after routing must not see a separator or a dot segment appear.
Expected<CanonicalPath> CanonicalizePath(std::string_view raw);

// Whether `path` requested with `method` is what `route` allows: same method,
// same number of segments, each literal equal byte for byte (case matters),
// each `*` matched by any one segment.
bool Match(const RouteTemplate& route, HttpMethod method, const CanonicalPath& path);

// The allow list of one profile, asked which entry a call matches.
class RouteMatcher {
 public:
  explicit RouteMatcher(std::vector<RouteTemplate> routes);

  // The matching template, or null when none matches (not allowed). When
  // several match, the most specific wins: comparing segment by segment from
  // the left, a literal beats `*` ("/items/new" before "/items/*").
  // The pointer lives as long as this matcher.
  const RouteTemplate* Find(HttpMethod method, const CanonicalPath& path) const;

  const std::vector<RouteTemplate>& routes() const { return routes_; }

 private:
  std::vector<RouteTemplate> routes_;
};

}  // namespace plimsoll::broker

#endif  // PLIMSOLL_BROKER_ROUTE_H_
