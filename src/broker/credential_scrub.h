// Takes the credential out of an upstream's answer before the guest sees it
// (SPEC §8, issue 39).
//
// The broker attaches the credential on the host's side so that it never
// enters the sandbox; an upstream that echoes `Authorization` (an error page,
// a debug route) would hand it back in its answer. A CredentialScrubber is
// made once per run from the secrets that run's calls carry (the static
// token; or the minted JWT, its signature and the JWT secret) and replaces
// every occurrence of each in a text with kCredentialMarker, in these forms:
//   - the bytes as they are;
//   - with any of its bytes escaped, mixed freely: percent-encoded (%2F or
//     %2f), '+' for a space, a JSON escape (\/, \", \\, \n, \u002F), an HTML
//     character reference (&#47;, &#x2f;, &amp;, &quot;, &lt;, &gt;, &apos;);
//   - base64, standard or URL-safe alphabet, at each of the three alignments
//     a secret can have inside a longer encoded text (the characters that
//     depend on the secret alone, at least kMinBase64Form of them), also in
//     the escaped forms above.
// A body the broker cut at its cap may end inside a secret; ScrubCut also
// replaces a start of a form that runs to the very end.
//
// Not covered: an upstream that transforms the credential otherwise (hex,
// a hash, a part of it, across several answers). The marker may be longer
// than what it replaces: the caller cuts the result back to its own cap.
//
// Usage:
//
//   CredentialScrubber scrubber({token});
//   scrubber.Scrub(answer.content_type);
//   answer.truncated ? scrubber.ScrubCut(answer.body) : scrubber.Scrub(answer.body);
//   if (answer.body.size() > kMaxResponseBody) { cut it; answer.truncated = true; }
//
// Immutable after construction: thread-safe. Its copies of the secrets are
// wiped when it is destroyed.
#ifndef PLIMSOLL_BROKER_CREDENTIAL_SCRUB_H_
#define PLIMSOLL_BROKER_CREDENTIAL_SCRUB_H_

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace plimsoll::broker {

inline constexpr std::string_view kCredentialMarker = "[credential removed]";
// Shorter base64 forms are not looked for: they would match ordinary text,
// and a secret that short is no secret.
inline constexpr std::size_t kMinBase64Form = 6;

class CredentialScrubber {
 public:
  // Empty secrets are ignored.
  explicit CredentialScrubber(const std::vector<std::string_view>& secrets);
  ~CredentialScrubber();
  CredentialScrubber(const CredentialScrubber&) = delete;
  CredentialScrubber& operator=(const CredentialScrubber&) = delete;

  // Replaces every whole occurrence; whether anything was replaced.
  bool Scrub(std::string& text) const;
  // The same, and a start of a form running to the end of `text` (a text
  // that was cut, so a secret may continue past its end) is replaced too.
  bool ScrubCut(std::string& text) const;

 private:
  bool ScrubText(std::string& text, bool cut) const;

  std::vector<std::string> forms_;  // raw secrets and their base64 forms
  // By byte: the forms that start with it as it is (indexes into forms_).
  std::array<std::vector<std::size_t>, 256> starting_with_;
};

}  // namespace plimsoll::broker

#endif  // PLIMSOLL_BROKER_CREDENTIAL_SCRUB_H_
