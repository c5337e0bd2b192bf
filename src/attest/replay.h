// `plimsoll-attest replay` (docs/attest.md): a bundle's runs sent again to
// a daemon, and what came back compared with what the bundle holds.
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

#include "plimsoll/result.h"

namespace plimsoll::attest {

struct ResultDifference {
  std::vector<std::string> fields;  // e.g. "stdout", "exit_code", "steps[1].duration_ms"
  bool timing_only = false;         // every field listed is a duration
};

// The fields of `then` and `now` that differ (the record excluded: it
// differs whenever anything, or the time, does).
ResultDifference DifferingFields(const Result& then, const Result& now);

}  // namespace plimsoll::attest

#endif  // PLIMSOLL_ATTEST_REPLAY_H_
