// `plimsoll-attest verify` (docs/attest.md): everything a bundle claims,
// checked with the signer's public key and nothing else.
//
// For every line, in order: it parses; its index is its position; its
// envelope is DSSE with payloadType application/vnd.in-toto+json and an
// Ed25519 signature by the key; the signed statement equals the statement
// rebuilt from the line's stored exchange, link included (the line's index
// and the previous line's SHA-256: a dropped, reordered or inserted line
// breaks it); the exchange itself checks out exactly as the client checks
// it (CheckExchange: both digests recomputed, record fields, tier against
// the floor, the record digest; for session calls the chain too). Then:
// every session's calls are numbered from 1 without gaps and it ends with
// a close that names its call count and last record; a torn last line is a
// problem; and, when asked, the run and call request digests equal the
// caller's own list in order, or their count is the one expected.
//
// Each problem is one line of text naming the bundle line it concerns; an
// empty list means the bundle is intact.
#ifndef PLIMSOLL_ATTEST_VERIFY_H_
#define PLIMSOLL_ATTEST_VERIFY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "attest/bundle.h"
#include "attest/keys.h"

namespace plimsoll::attest {

struct Expectations {
  std::optional<std::vector<std::string>> request_digests;  // in bundle order
  std::optional<int64_t> count;                             // runs plus session calls
};

struct Verdict {
  std::vector<std::string> problems;
  int64_t runs = 0;
  int64_t session_calls = 0;
  int64_t sessions_closed = 0;
  std::vector<std::string> request_digests;  // of runs and calls, in order
};

Verdict VerifyBundle(const BundleFile& bundle, const VerifyingKey& key,
                     const Expectations& expect = {});

}  // namespace plimsoll::attest

#endif  // PLIMSOLL_ATTEST_VERIFY_H_
