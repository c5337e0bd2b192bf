// libFuzzer target: an `Authorization` header value taken through what the
// daemon does with it (src/daemon/auth/: BearerTokenFromHeader,
// IsWellFormedToken, HashToken, TokenHashesEqual, CallerStore::Authenticate
// behind StoreAuthenticator), against a real SQLite caller store made once
// per process in a temporary directory.
//
// The store holds alice (active), bob (rotated once: his old token must
// fail) and carol (revoked). In the input, "@A", "@B", "@O" and "@R" stand
// for alice's token, bob's new one, bob's old one and carol's, so the
// fuzzer can reach the accepting path; tokens are deterministic (RAND_bytes
// is fuzz/fixed_random.cc's, through --wrap), so runs repeat exactly.
//
// Checked on every input:
//   - the header parser agrees with an independent reading of RFC 7235's
//     "Bearer" form (scheme case-insensitive, SP/HTAB around), returns a
//     view into the header, and refuses as unauthenticated with the
//     `permission` mark and a message;
//   - IsWellFormedToken agrees with an independent reading of the token
//     shape (prefix, 47 characters, base64url, canonical last character);
//   - the authenticator accepts exactly alice's token and bob's new one
//     (each as its own caller), refuses everything else with the
//     `permission` mark, and no refusal message contains the token;
//   - the full digest comparison is the constant-time one: every accepted
//     token went through CRYPTO_memcmp (counted through --wrap), and
//     TokenHashesEqual agrees with plain equality.
//
// Seeds: fuzz/corpus/caller_token/. fuzz/run runs it.
#include <openssl/crypto.h>
#include <stdlib.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>

#include "auth/caller_store.h"
#include "daemon/auth/store_authenticator.h"
#include "auth/token.h"
#include "request_checks.h"

// Link-time replacement (fuzz/CMakeLists.txt: -Wl,--wrap=CRYPTO_memcmp);
// RAND_bytes is fuzz/fixed_random.cc's.
extern "C" {
int __real_CRYPTO_memcmp(const void* a, const void* b, size_t size);
int __wrap_CRYPTO_memcmp(const void* a, const void* b, size_t size);
}

namespace {

namespace auth = plimsoll::auth;
using plimsoll::ErrorCode;
using plimsoll::NotDispatched;

int constant_time_compares = 0;

}  // namespace

int __wrap_CRYPTO_memcmp(const void* a, const void* b, size_t size) {
  ++constant_time_compares;
  return __real_CRYPTO_memcmp(a, b, size);
}

namespace {

struct Fixture {
  std::filesystem::path directory;
  std::unique_ptr<auth::StoreAuthenticator> authenticator;
  std::string alice, bob, bob_old, carol;
};

Fixture* fixture = nullptr;

void RemoveStore() {
  if (fixture == nullptr) return;
  fixture->authenticator.reset();
  std::error_code ignored;
  std::filesystem::remove_all(fixture->directory, ignored);
}

std::string Issue(auth::CallerStore& store, const std::string& name) {
  auto issued = store.Create({.name = name, .scopes = {"runs"}});
  FUZZ_CHECK(issued.ok(), "could not create a caller: " + issued.error().ToString());
  return issued->token;
}

void MakeFixture() {
  fixture = new Fixture;
  std::string pattern =
      (std::filesystem::temp_directory_path() / "plimsoll-token-fuzz-XXXXXX").string();
  FUZZ_CHECK(mkdtemp(pattern.data()) != nullptr, "mkdtemp failed");
  fixture->directory = pattern;
  std::atexit(RemoveStore);
  auth::StoreOptions options;
  options.create_if_missing = true;
  options.now = [] { return int64_t{1'700'000'000}; };
  auto path = fixture->directory / "callers.db";
  {
    auto store = auth::CallerStore::Open(path, options);
    FUZZ_CHECK(store.ok(), "could not create the store: " + store.error().ToString());
    fixture->alice = Issue(**store, "alice");
    fixture->bob_old = Issue(**store, "bob");
    auto rotated = (*store)->Rotate("bob");
    FUZZ_CHECK(rotated.ok(), "could not rotate bob");
    fixture->bob = rotated->token;
    fixture->carol = Issue(**store, "carol");
    FUZZ_CHECK((*store)->Revoke("carol").ok(), "could not revoke carol");
  }
  auto authenticator = auth::OpenStoreAuthenticator(path);
  FUZZ_CHECK(authenticator.ok(), "could not open the store: " + authenticator.error().ToString());
  fixture->authenticator = std::move(*authenticator);
}

std::string Substitute(std::string_view input) {
  std::string out;
  for (size_t i = 0; i < input.size(); ++i) {
    if (input[i] == '@' && i + 1 < input.size()) {
      const std::string* token = nullptr;
      switch (input[i + 1]) {
        case 'A':
          token = &fixture->alice;
          break;
        case 'B':
          token = &fixture->bob;
          break;
        case 'O':
          token = &fixture->bob_old;
          break;
        case 'R':
          token = &fixture->carol;
          break;
        default:
          break;
      }
      if (token != nullptr) {
        out += *token;
        ++i;
        continue;
      }
    }
    out += input[i];
  }
  return out;
}

bool IsBlank(char c) {
  return c == ' ' || c == '\t';
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && IsBlank(text.front())) text.remove_prefix(1);
  while (!text.empty() && IsBlank(text.back())) text.remove_suffix(1);
  return text;
}

// RFC 7235: credentials = auth-scheme [ 1*SP token68 ]; the scheme is
// case-insensitive; the daemon also allows HTAB and blanks around.
std::optional<std::string_view> ReferenceBearer(std::string_view header) {
  header = Trim(header);
  if (header.size() < 7 || !IsBlank(header[6])) return std::nullopt;
  static constexpr std::string_view kScheme = "bearer";
  for (size_t i = 0; i < kScheme.size(); ++i) {
    char c = header[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + ('a' - 'A'));
    if (c != kScheme[i]) return std::nullopt;
  }
  return Trim(header.substr(6));
}

bool ReferenceWellFormed(std::string_view token) {
  static constexpr std::string_view kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  if (token.size() != 47 || token.substr(0, 4) != "plm_") return false;
  for (char c : token.substr(4)) {
    if (kAlphabet.find(c) == std::string_view::npos) return false;
  }
  // 32 bytes are 256 bits; 43 characters carry 258: the last two bits are 0.
  return kAlphabet.find(token.back()) % 4 == 0;
}

void CheckRefusal(const plimsoll::Error& error, std::string_view token, std::string_view what) {
  FUZZ_CHECK(error.not_dispatched() == NotDispatched::kPermission,
             std::string(what) + " refused without the permission mark: " + error.ToString());
  FUZZ_CHECK(error.code() == ErrorCode::kUnauthenticated || error.code() == ErrorCode::kInternal,
             std::string(what) + " refused with an unexpected code: " + error.ToString());
  FUZZ_CHECK(!error.message().empty(), std::string(what) + " refused without a message");
  for (const std::string* secret :
       {&fixture->alice, &fixture->bob, &fixture->bob_old, &fixture->carol}) {
    FUZZ_CHECK(error.message().find(*secret) == std::string::npos,
               std::string(what) + ": a refusal message holds a token");
  }
  // The presented token, when it looks like one: a shorter or other text
  // may well be a piece of the fixed refusal sentence itself (the fuzzer
  // found "rmed, rotated or rev"), and those sentences hold "plm_" only as
  // "plm_...\"." (9 characters).
  if (token.starts_with(auth::kTokenPrefix) && token.size() >= 16) {
    FUZZ_CHECK(error.message().find(token) == std::string::npos,
               std::string(what) + ": a refusal message holds the presented token");
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  MakeFixture();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string header = Substitute(std::string_view(reinterpret_cast<const char*>(data), size));

  auto parsed = auth::BearerTokenFromHeader(header);
  std::optional<std::string_view> expected = ReferenceBearer(header);
  FUZZ_CHECK(parsed.ok() == expected.has_value(),
             "BearerTokenFromHeader and RFC 7235's Bearer form disagree on: " + header);
  std::string_view token;
  if (!parsed.ok()) {
    CheckRefusal(parsed.error(), {}, "BearerTokenFromHeader");
  } else {
    token = *parsed;
    FUZZ_CHECK(token == *expected, "BearerTokenFromHeader returned another token");
    FUZZ_CHECK(token.empty() || (token.data() >= header.data() &&
                                 token.data() + token.size() <= header.data() + header.size()),
               "the token does not view into the header");
    FUZZ_CHECK(auth::IsWellFormedToken(token) == ReferenceWellFormed(token),
               "IsWellFormedToken and the token shape disagree on: " + std::string(token));
  }

  const bool genuine = parsed.ok() && (token == fixture->alice || token == fixture->bob);
  constant_time_compares = 0;
  auto caller = fixture->authenticator->Authenticate(header);
  FUZZ_CHECK(caller.ok() == genuine, genuine ? "a genuine token was refused"
                                             : "a token that is not alice's or bob's new one "
                                               "was accepted: " +
                                                   std::string(token));
  if (caller.ok()) {
    FUZZ_CHECK(caller->name == (token == fixture->alice ? "alice" : "bob"),
               "a token authenticated the wrong caller");
    FUZZ_CHECK(constant_time_compares > 0,
               "a token was accepted without a constant-time digest comparison");
  } else {
    CheckRefusal(caller.error(), token, "the authenticator");
  }

  // The comparison itself: equality of digests, in constant time.
  auth::TokenHash presented = auth::HashToken(token);
  auth::TokenHash alice = auth::HashToken(fixture->alice);
  constant_time_compares = 0;
  bool same = auth::TokenHashesEqual(presented, alice);
  FUZZ_CHECK(constant_time_compares == 1, "TokenHashesEqual did not use CRYPTO_memcmp");
  FUZZ_CHECK(same == (token == fixture->alice), "TokenHashesEqual disagrees with equality");
  FUZZ_CHECK(same == (std::memcmp(presented.data(), alice.data(), alice.size()) == 0),
             "TokenHashesEqual disagrees with the digests' bytes");
  return 0;
}
