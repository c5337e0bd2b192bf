#include "broker/credential_scrub.h"

#include <openssl/crypto.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <utility>

#include "broker/jwt.h"

namespace plimsoll::broker {
namespace {

constexpr std::size_t kNone = std::string_view::npos;

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The value of `digits` hex digits at text[at]; -1 when one is missing.
int HexAt(std::string_view text, std::size_t at, std::size_t digits) {
  if (at + digits > text.size()) return -1;
  int value = 0;
  for (std::size_t k = 0; k < digits; ++k) {
    const int digit = HexValue(text[at + k]);
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

// The byte a JSON escape "\<c>" stands for; -1 for none.
int JsonEscaped(char c) {
  switch (c) {
    case '"':
    case '\\':
    case '/':
      return c;
    case 'b':
      return '\b';
    case 'f':
      return '\f';
    case 'n':
      return '\n';
    case 'r':
      return '\r';
    case 't':
      return '\t';
    default:
      return -1;
  }
}

struct NamedReference {
  std::string_view name;  // between '&' and ';'
  char byte;
};

// HTML's named references for the ASCII punctuation a token or secret may
// hold (the ones escapers use, and their HTML5 spellings).
constexpr std::array<NamedReference, 34> kNamedReferences = {{
    {"amp", '&'},    {"lt", '<'},     {"gt", '>'},     {"quot", '"'},   {"apos", '\''},
    {"excl", '!'},   {"num", '#'},    {"dollar", '$'}, {"percnt", '%'}, {"lpar", '('},
    {"rpar", ')'},   {"ast", '*'},    {"midast", '*'}, {"plus", '+'},   {"comma", ','},
    {"period", '.'}, {"sol", '/'},    {"colon", ':'},  {"semi", ';'},   {"equals", '='},
    {"quest", '?'},  {"commat", '@'}, {"lsqb", '['},   {"lbrack", '['}, {"bsol", '\\'},
    {"rsqb", ']'},   {"rbrack", ']'}, {"Hat", '^'},    {"lowbar", '_'}, {"grave", '`'},
    {"lcub", '{'},   {"lbrace", '{'}, {"verbar", '|'}, {"rcub", '}'},
}};

// Where an HTML character reference for `want` that starts at text[at]
// ('&') ends, or kNone: "&#47;", "&#x2F;", "&sol;" (the ';' of a numeric
// reference may be missing, as browsers allow).
std::size_t HtmlReferenceEnd(std::string_view text, std::size_t at, unsigned char want) {
  std::size_t p = at + 1;
  if (p < text.size() && text[p] == '#') {
    ++p;
    const bool hex = p < text.size() && (text[p] == 'x' || text[p] == 'X');
    if (hex) ++p;
    const std::size_t digits_start = p;
    long value = 0;
    while (p < text.size() && p - digits_start < 8) {
      const int digit =
          hex ? HexValue(text[p])
              : (std::isdigit(static_cast<unsigned char>(text[p])) ? text[p] - '0' : -1);
      if (digit < 0) break;
      value = value * (hex ? 16 : 10) + digit;
      ++p;
    }
    if (p == digits_start || value != want) return kNone;
    return p < text.size() && text[p] == ';' ? p + 1 : p;
  }
  for (const NamedReference& reference : kNamedReferences) {
    if (static_cast<unsigned char>(reference.byte) != want) continue;
    const std::string_view rest = text.substr(p);
    if (rest.size() > reference.name.size() && rest.starts_with(reference.name) &&
        rest[reference.name.size()] == ';') {
      return p + reference.name.size() + 1;
    }
  }
  return kNone;
}

bool IsEscapeStart(char c) {
  return c == '%' || c == '\\' || c == '&' || c == '+';
}

// Appends to `ends` where each spelling of the byte `want` that starts at
// text[at] ends. Precondition: at < text.size().
void AppendEnds(std::string_view text, std::size_t at, unsigned char want,
                std::vector<std::size_t>& ends) {
  const char c = text[at];
  if (static_cast<unsigned char>(c) == want) ends.push_back(at + 1);
  switch (c) {
    case '%':
      if (HexAt(text, at + 1, 2) == want) ends.push_back(at + 3);
      break;
    case '+':
      if (want == ' ') ends.push_back(at + 1);
      break;
    case '\\':
      if (at + 1 >= text.size()) break;
      if (text[at + 1] == 'u') {
        if (want < 0x80 && HexAt(text, at + 2, 4) == want) ends.push_back(at + 6);
      } else if (JsonEscaped(text[at + 1]) == want) {
        ends.push_back(at + 2);
      }
      break;
    case '&':
      if (want < 0x80) {
        if (std::size_t end = HtmlReferenceEnd(text, at, want); end != kNone) ends.push_back(end);
      }
      break;
    default:
      break;
  }
}

bool StartsWithIgnoringCase(std::string_view text, std::string_view prefix) {
  return text.size() <= prefix.size() &&
         std::equal(text.begin(), text.end(), prefix.begin(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) ==
                  std::tolower(static_cast<unsigned char>(b));
         });
}

// Whether `rest` (the end of a cut text) is the start of an escaped
// spelling of `want` that the cut did not let finish.
bool IsCutSpelling(std::string_view rest, unsigned char want) {
  if (rest.empty() || rest.size() > 12) return false;
  char hex[3];
  std::snprintf(hex, sizeof hex, "%02X", want);
  std::vector<std::string> spellings = {std::string("%") + hex};
  if (want < 0x80) {
    spellings.push_back(std::string("\\u00") + hex);
    spellings.push_back("&#" + std::to_string(want) + ";");
    spellings.push_back(std::string("&#x") + hex + ";");
    if (JsonEscaped(static_cast<char>(want)) == want) {
      spellings.push_back(std::string("\\") + static_cast<char>(want));
    }
    for (const NamedReference& reference : kNamedReferences) {
      if (static_cast<unsigned char>(reference.byte) == want) {
        spellings.push_back("&" + std::string(reference.name) + ";");
      }
    }
  }
  return std::any_of(spellings.begin(), spellings.end(), [&](const std::string& spelling) {
    return rest.size() < spelling.size() && StartsWithIgnoringCase(rest, spelling);
  });
}

// Scratch space for Match, kept across the calls of one scrub.
struct Scratch {
  std::vector<std::size_t> positions;
  std::vector<std::size_t> next;
};

// Where the furthest spelling of `form` that starts at text[start] ends, or
// kNone. `cut_inside` is set when the text ends while a spelling of it was
// still under way (at least its first byte begun).
std::size_t Match(std::string_view text, std::size_t start, std::string_view form, Scratch& scratch,
                  bool& cut_inside) {
  auto& positions = scratch.positions;
  auto& next = scratch.next;
  positions.assign(1, start);
  for (char byte : form) {
    const auto want = static_cast<unsigned char>(byte);
    next.clear();
    for (std::size_t p : positions) {
      if (p >= text.size()) {
        cut_inside = true;
        continue;
      }
      if (IsCutSpelling(text.substr(p), want)) cut_inside = true;
      AppendEnds(text, p, want, next);
    }
    if (next.empty()) return kNone;
    std::sort(next.begin(), next.end());
    next.erase(std::unique(next.begin(), next.end()), next.end());
    positions.swap(next);
  }
  return positions.back();
}

}  // namespace

CredentialScrubber::CredentialScrubber(const std::vector<std::string_view>& secrets) {
  for (std::string_view secret : secrets) {
    if (secret.empty()) continue;
    forms_.emplace_back(secret);
    // In base64 the secret's characters depend on where it sits in the
    // encoded text (its offset modulo 3); each alignment has a middle run
    // of characters fixed by the secret alone, found in any encoding of any
    // text that holds the secret at that alignment.
    for (std::size_t shift = 0; shift < 3; ++shift) {
      std::string padded(shift, '\0');
      padded.append(secret);
      std::string encoded = Base64UrlEncode(padded);
      const std::size_t first = (8 * shift + 5) / 6;
      const std::size_t last = 8 * (shift + secret.size()) / 6;
      if (last > first && last - first >= kMinBase64Form) {
        std::string url = encoded.substr(first, last - first);
        std::string standard = url;
        std::replace(standard.begin(), standard.end(), '-', '+');
        std::replace(standard.begin(), standard.end(), '_', '/');
        if (standard != url) forms_.push_back(std::move(standard));
        forms_.push_back(std::move(url));
      }
      OPENSSL_cleanse(padded.data(), padded.size());
      OPENSSL_cleanse(encoded.data(), encoded.size());
    }
  }
  for (std::size_t index = 0; index < forms_.size(); ++index) {
    starting_with_[static_cast<unsigned char>(forms_[index].front())].push_back(index);
  }
}

CredentialScrubber::~CredentialScrubber() {
  for (std::string& form : forms_) OPENSSL_cleanse(form.data(), form.size());
}

bool CredentialScrubber::Scrub(std::string& text) const {
  return ScrubText(text, /*cut=*/false);
}

bool CredentialScrubber::ScrubCut(std::string& text) const {
  return ScrubText(text, /*cut=*/true);
}

bool CredentialScrubber::ScrubText(std::string& text, bool cut) const {
  const std::string_view view(text);
  Scratch scratch;
  std::string out;
  std::size_t copied = 0;
  bool changed = false;
  std::vector<std::size_t> every_form(forms_.size());
  for (std::size_t index = 0; index < forms_.size(); ++index) every_form[index] = index;
  for (std::size_t at = 0; at < view.size();) {
    const char c = view[at];
    // An escape may spell any form's first byte; otherwise only the forms
    // that start with this byte can start here.
    const std::vector<std::size_t>& candidates =
        IsEscapeStart(c) ? every_form : starting_with_[static_cast<unsigned char>(c)];
    std::size_t end = kNone;
    for (std::size_t index : candidates) {
      const std::string& form = forms_[index];
      // The second byte must start as it is or as an escape: most positions
      // are ruled out without Match.
      if (!IsEscapeStart(c) && form.size() > 1 && at + 1 < view.size() && view[at + 1] != form[1] &&
          !IsEscapeStart(view[at + 1])) {
        continue;
      }
      bool cut_inside = false;
      std::size_t found = Match(view, at, form, scratch, cut_inside);
      if (found == kNone && cut && cut_inside) found = view.size();
      if (found != kNone && (end == kNone || found > end)) end = found;
    }
    if (end == kNone) {
      ++at;
      continue;
    }
    out.append(view.substr(copied, at - copied));
    out.append(kCredentialMarker);
    copied = at = end;
    changed = true;
  }
  if (!changed) return false;
  out.append(view.substr(copied));
  // The text held the secret: wipe it before its memory goes back.
  OPENSSL_cleanse(text.data(), text.size());
  text = std::move(out);
  return true;
}

}  // namespace plimsoll::broker
