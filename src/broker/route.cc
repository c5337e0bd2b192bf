#include "broker/route.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <utility>

#include "base/utf8.h"

namespace plimsoll::broker {
namespace {

struct MethodName {
  HttpMethod method;
  std::string_view name;
};

constexpr std::array<MethodName, 6> kMethodNames = {{
    {HttpMethod::kGet, "GET"},
    {HttpMethod::kHead, "HEAD"},
    {HttpMethod::kPost, "POST"},
    {HttpMethod::kPut, "PUT"},
    {HttpMethod::kPatch, "PATCH"},
    {HttpMethod::kDelete, "DELETE"},
}};

bool IsAlphaNumeric(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// Unreserved characters (RFC 3986) and the sub-delimiters that mean nothing
// special to common servers. ';' (matrix parameters) and '*' (our wildcard)
// are not among them. These pass upstream unescaped; a template's literal
// segments are made of them only.
bool IsSafePathCharacter(unsigned char c) {
  if (IsAlphaNumeric(c)) return true;
  switch (c) {
    case '-':
    case '.':
    case '_':
    case '~':
    case ':':
    case '@':
    case '!':
    case '$':
    case '&':
    case '\'':
    case '(':
    case ')':
    case '+':
    case ',':
    case '=':
      return true;
    default:
      return false;
  }
}

bool IsControl(unsigned char c) {
  return c < 0x20 || c == 0x7f;
}

bool IsDotOnly(std::string_view segment) {
  return !segment.empty() && segment.find_first_not_of('.') == std::string_view::npos;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Code points that Unicode compatibility normalisation (NFKC) turns into
// text containing '/', '\\', '.', '?', '#', ';' or '%': an upstream that
// normalises after routing would read "..\uFF0Fadmin" as "../admin".
// Generated with Python 3's unicodedata (Unicode 14.0):
//   [hex(c) for c in range(0x80, 0x110000) if not 0xD800 <= c <= 0xDFFF
//    and (n := unicodedata.normalize("NFKC", chr(c))) != chr(c)
//    and any(x in "/\\.?#;%" or ord(x) < 0x20 or ord(x) == 0x7F for x in n)]
constexpr std::array<uint32_t, 52> kNormalisesToPunctuation = {
    0x37E,  0x2024, 0x2025, 0x2026, 0x2047, 0x2048, 0x2049, 0x2100, 0x2101, 0x2105, 0x2106,
    0x2488, 0x2489, 0x248A, 0x248B, 0x248C, 0x248D, 0x248E, 0x248F, 0x2490, 0x2491, 0x2492,
    0x2493, 0x2494, 0x2495, 0x2496, 0x2497, 0x2498, 0x2499, 0x249A, 0x249B, 0x33C2, 0x33C7,
    0x33D8, 0xFE14, 0xFE16, 0xFE19, 0xFE30, 0xFE52, 0xFE54, 0xFE56, 0xFE5F, 0xFE68, 0xFE6A,
    0xFF03, 0xFF05, 0xFF0E, 0xFF0F, 0xFF1B, 0xFF1F, 0xFF3C, 0x1F100};

static_assert(std::is_sorted(kNormalisesToPunctuation.begin(), kNormalisesToPunctuation.end()));

// The code point that starts at text[at], and its length in bytes.
// Precondition: `text` is valid UTF-8 and `at` starts a sequence.
uint32_t CodePointAt(std::string_view text, std::size_t at, std::size_t& length) {
  auto byte = static_cast<unsigned char>(text[at]);
  if (byte < 0x80) {
    length = 1;
    return byte;
  }
  length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : 2;
  uint32_t code_point = byte & (length == 2 ? 0x1F : length == 3 ? 0x0F : 0x07);
  for (std::size_t k = 1; k < length; ++k) {
    code_point = (code_point << 6) | (static_cast<unsigned char>(text[at + k]) & 0x3F);
  }
  return code_point;
}

// Precondition: `text` is valid UTF-8.
bool HasCodePointNormalisingToPunctuation(std::string_view text) {
  for (std::size_t i = 0, length = 0; i < text.size(); i += length) {
    if (std::binary_search(kNormalisesToPunctuation.begin(), kNormalisesToPunctuation.end(),
                           CodePointAt(text, i, length))) {
      return true;
    }
  }
  return false;
}

// Code points some upstream may trim from a segment's ends: Unicode's
// White_Space (what .NET, Python and Java's strip() remove, no-break spaces
// included) and the invisible ones a trim also drops (U+180E, once white
// space; U+200B..U+200D; U+2060; U+FEFF, which JavaScript's trim() removes).
// The ASCII controls among white space are refused before this is asked.
constexpr std::array<uint32_t, 31> kBlankCodePoints = {
    0x09,   0x0A,   0x0B,   0x0C,   0x0D,   0x20,   0x85,   0xA0,   0x1680, 0x180E, 0x2000,
    0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200A, 0x200B,
    0x200C, 0x200D, 0x2028, 0x2029, 0x202F, 0x205F, 0x2060, 0x3000, 0xFEFF};

static_assert(std::is_sorted(kBlankCodePoints.begin(), kBlankCodePoints.end()));

bool IsBlank(uint32_t code_point) {
  return std::binary_search(kBlankCodePoints.begin(), kBlankCodePoints.end(), code_point);
}

// Whether `segment` holds nothing but dots and blank code points: whatever
// an upstream trims from its ends (white space, trailing dots as Windows
// file APIs do), what is left may be "..", "." or nothing, so such a
// segment is refused even when it is not made of dots alone.
// Precondition: `segment` is valid UTF-8.
bool IsDotsOrBlanksOnly(std::string_view segment) {
  for (std::size_t i = 0, length = 0; i < segment.size(); i += length) {
    const uint32_t code_point = CodePointAt(segment, i, length);
    if (code_point != '.' && !IsBlank(code_point)) return false;
  }
  return true;
}

Error BadPath(std::string message) {
  return Refusal(NotDispatched::kRequest, std::move(message));
}

// A refusal for a byte that may never appear in a path, raw or decoded.
std::optional<std::string> ForbiddenCharacter(unsigned char c) {
  switch (c) {
    case '?':
      return "The path contains '?': query strings are not allowed.";
    case '#':
      return "The path contains '#': fragments are not allowed.";
    case '\\':
      return "The path contains a backslash, which some servers read as a '/'.";
    case ';':
      return "The path contains ';', which some servers read as a parameter separator.";
    default:
      break;
  }
  if (IsControl(c)) return "The path contains a control character.";
  return std::nullopt;
}

// Decodes one raw segment exactly once.
Expected<std::string> DecodeSegment(std::string_view raw) {
  std::string decoded;
  decoded.reserve(raw.size());
  for (std::size_t i = 0; i < raw.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(raw[i]);
    if (auto forbidden = ForbiddenCharacter(c)) return BadPath(*forbidden);
    if (c != '%') {
      decoded.push_back(static_cast<char>(c));
      continue;
    }
    int high = i + 2 < raw.size() ? HexValue(raw[i + 1]) : -1;
    int low = i + 2 < raw.size() ? HexValue(raw[i + 2]) : -1;
    if (high < 0 || low < 0) {
      return BadPath(
          "The path contains a malformed percent escape: '%' must be followed by two "
          "hexadecimal digits.");
    }
    unsigned char byte = static_cast<unsigned char>(high * 16 + low);
    if (byte == '/') return BadPath("The path contains an encoded '/' (%2F).");
    if (byte == '\\') return BadPath("The path contains an encoded backslash (%5C).");
    if (byte == '%') {
      return BadPath(
          "The path contains an encoded '%' (%25), which a server that decodes twice "
          "would read as a second escape.");
    }
    if (auto forbidden = ForbiddenCharacter(byte)) {
      return BadPath(std::string(forbidden->substr(0, forbidden->size() - 1)) +
                     " (percent-encoded).");
    }
    decoded.push_back(static_cast<char>(byte));
    i += 2;
  }
  return decoded;
}

void AppendEncoded(std::string_view segment, std::string& out) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (char ch : segment) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (IsSafePathCharacter(c)) {
      out.push_back(ch);
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xf]);
    }
  }
}

// Splits "/a/b" into {"a", "b"}; "/" into {}. Precondition: starts with '/'.
std::vector<std::string_view> SplitSegments(std::string_view path) {
  std::vector<std::string_view> segments;
  if (path == "/") return segments;
  std::size_t start = 1;
  while (true) {
    std::size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) {
      segments.push_back(path.substr(start));
      break;
    }
    segments.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  return segments;
}

}  // namespace

std::string_view HttpMethodName(HttpMethod method) {
  for (const auto& entry : kMethodNames) {
    if (entry.method == method) return entry.name;
  }
  return "GET";
}

std::optional<HttpMethod> ParseHttpMethod(std::string_view name) {
  for (const auto& entry : kMethodNames) {
    if (entry.name == name) return entry.method;
  }
  return std::nullopt;
}

Expected<RouteTemplate> RouteTemplate::Parse(std::string_view text) {
  auto invalid = [](std::string message) {
    return Failure(ErrorCode::kInvalidArgument, std::move(message));
  };
  std::size_t space = text.find(' ');
  if (space == std::string_view::npos) {
    return invalid("A route must be \"METHOD /path\", e.g. \"GET /items/*\".");
  }
  std::string_view method_name = text.substr(0, space);
  std::string_view path = text.substr(space + 1);
  auto method = ParseHttpMethod(method_name);
  if (!method) {
    return invalid("The method \"" + std::string(method_name.substr(0, 16)) +
                   "\" is not one of GET, HEAD, POST, PUT, PATCH, DELETE.");
  }
  if (path.empty() || path.front() != '/') {
    return invalid("The path of a route must start with \"/\" (one space after the method).");
  }
  if (path.size() > kMaxPathBytes) {
    return invalid("The path of a route is longer than 2048 bytes.");
  }
  RouteTemplate route;
  route.method_ = *method;
  route.path_ = std::string(path);
  for (std::string_view segment : SplitSegments(path)) {
    if (segment.empty()) {
      return invalid("The route \"" + std::string(path) +
                     "\" has an empty segment (\"//\" or a trailing \"/\").");
    }
    if (segment == "*") {
      route.segments_.emplace_back(segment);
      continue;
    }
    if (IsDotOnly(segment)) {
      return invalid("The route \"" + std::string(path) +
                     "\" has a segment made only of dots, which servers read as a directory step.");
    }
    for (char c : segment) {
      if (!IsSafePathCharacter(static_cast<unsigned char>(c))) {
        std::string shown =
            IsControl(static_cast<unsigned char>(c)) || static_cast<unsigned char>(c) >= 0x80
                ? std::string("a control or non-ASCII byte")
                : "'" + std::string(1, c) + "'";
        return invalid("The route \"" + std::string(path) + "\" contains " + shown +
                       ": literal segments use letters, digits and - . _ ~ : @ ! $ & ' ( ) + , = "
                       "only, and `*` stands alone as a whole segment.");
      }
    }
    route.segments_.emplace_back(segment);
  }
  return route;
}

std::string RouteTemplate::text() const {
  std::string text(HttpMethodName(method_));
  text += ' ';
  text += path_;
  return text;
}

bool RouteTemplate::HasWildcard() const {
  for (const auto& segment : segments_) {
    if (segment == "*") return true;
  }
  return false;
}

Expected<CanonicalPath> CanonicalizePath(std::string_view raw) {
  if (raw.empty()) return BadPath("The path is empty; it must start with \"/\".");
  if (raw.size() > kMaxPathBytes) return BadPath("The path is longer than 2048 bytes.");
  if (raw.front() != '/') return BadPath("The path does not start with \"/\".");
  // Every forbidden raw byte is reported before the segment checks, so that
  // "/a?x=1" says "query" rather than something about segments.
  for (char c : raw) {
    if (auto forbidden = ForbiddenCharacter(static_cast<unsigned char>(c))) {
      return BadPath(*forbidden);
    }
  }
  CanonicalPath path;
  path.encoded_.reserve(raw.size());
  for (std::string_view raw_segment : SplitSegments(raw)) {
    if (raw_segment.empty()) {
      return BadPath("The path has an empty segment (\"//\" or a trailing \"/\").");
    }
    auto segment = DecodeSegment(raw_segment);
    if (!segment.ok()) return segment.error();
    if (IsDotOnly(*segment)) {
      return BadPath(
          "The path has a segment made only of dots (such as \"..\"), raw or "
          "percent-encoded.");
    }
    if (!base::IsValidUtf8(*segment)) {
      return BadPath(
          "The path is not valid UTF-8 once decoded (overlong, truncated or "
          "out-of-range sequences are refused).");
    }
    if (IsDotsOrBlanksOnly(*segment)) {
      return BadPath(
          "The path has a segment made only of dots and white space (such as \"..%20\" or "
          "\"..%C2%A0\"), which an upstream that trims white space or trailing dots reads as "
          "\"..\" or an empty segment.");
    }
    if (HasCodePointNormalisingToPunctuation(*segment)) {
      return BadPath(
          "The path contains a character that Unicode normalisation turns into '/', "
          "'\\', '.', '?', '#', ';' or '%' (such as a fullwidth solidus).");
    }
    path.encoded_ += '/';
    AppendEncoded(*segment, path.encoded_);
    path.segments_.push_back(std::move(*segment));
  }
  if (path.segments_.empty()) path.encoded_ = "/";
  return path;
}

bool Match(const RouteTemplate& route, HttpMethod method, const CanonicalPath& path) {
  if (route.method() != method) return false;
  const auto& want = route.segments();
  const auto& have = path.segments();
  if (want.size() != have.size()) return false;
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (want[i] == "*") {
      if (have[i].empty()) return false;
      continue;
    }
    if (want[i] != have[i]) return false;
  }
  return true;
}

RouteMatcher::RouteMatcher(std::vector<RouteTemplate> routes) : routes_(std::move(routes)) {}

const RouteTemplate* RouteMatcher::Find(HttpMethod method, const CanonicalPath& path) const {
  const RouteTemplate* best = nullptr;
  // More specific: at the first segment where the two differ in kind, the
  // literal wins.
  auto more_specific = [](const RouteTemplate& a, const RouteTemplate& b) {
    for (std::size_t i = 0; i < a.segments().size() && i < b.segments().size(); ++i) {
      bool a_wild = a.segments()[i] == "*";
      bool b_wild = b.segments()[i] == "*";
      if (a_wild != b_wild) return b_wild;
    }
    return false;
  };
  for (const auto& route : routes_) {
    if (!Match(route, method, path)) continue;
    if (best == nullptr || more_specific(route, *best)) best = &route;
  }
  return best;
}

}  // namespace plimsoll::broker
