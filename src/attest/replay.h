// `plimsoll-attest replay` (docs/attest.md): a bundle's runs sent again to
// a daemon, and what came back compared with what the bundle holds.
//
// A replay sends the stored requests under the replaying user's token, so
// nothing is sent before CheckBeforeReplay has passed: the bundle verified
// with the signer's public key by VerifyBundle (the very checks `verify`
// makes; an edited request breaks its signed record), and no request that
// names a grant profile unless the caller allowed granted requests (a
// replay repeats their calls to the operator's APIs, side effects and all).
//
// The comparison is by result digest (ResultDigest, the record's
// result_sha256); when the digests differ, DifferingFields names the
// fields that differ, and whether only timing differs (duration_ms, a
// step's duration_ms): a run that computes the same thing differs in
// nothing else.
#ifndef PLIMSOLL_ATTEST_REPLAY_H_
#define PLIMSOLL_ATTEST_REPLAY_H_

#include <string>
#include <vector>

#include "attest/bundle.h"
#include "attest/keys.h"
#include "plimsoll/result.h"

namespace plimsoll::attest {

struct ResultDifference {
  std::vector<std::string> fields;  // e.g. "stdout", "exit_code", "steps[1].duration_ms"
  bool timing_only = false;         // every field listed is a duration
};

struct ReplayPolicy {
  bool allow_granted = false;  // --allow-granted: requests naming a grant profile may be sent
};

// Why `bundle` may not be replayed: VerifyBundle's problems (with `key`, no
// expectations), or else one line per request that names a grant profile
// when `policy` does not allow them. Empty: replay may send every entry.
// The caller replays the very BundleFile it checked (never the file read
// again), so what is sent is what was verified.
std::vector<std::string> CheckBeforeReplay(const BundleFile& bundle, const VerifyingKey& key,
                                           const ReplayPolicy& policy);

// The fields of `then` and `now` that differ (the record excluded: it
// differs whenever anything, or the time, does).
ResultDifference DifferingFields(const Result& then, const Result& now);

}  // namespace plimsoll::attest

#endif  // PLIMSOLL_ATTEST_REPLAY_H_
