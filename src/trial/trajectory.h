// A trial's trajectory (SPEC §10, docs/exams.md): one row per tick taken,
// the state the controller was shown on that tick followed by the inputs as
// the plant applied them (clamped), every value a little-endian float64.
// A row is state_width + input_count doubles; the state after the last tick
// (which no controller answered) is not a row. The fingerprint is SHA-256 of
// exactly the file's bytes.
//
// Usage:
//   TrajectoryRecorder trajectory(/*state_width=*/4, /*input_count=*/1, max_rows);
//   trajectory.Append(state, applied);        // each tick
//   trajectory.WriteTo(fd);  trajectory.FingerprintHex();
//
// Thread-safety: one owner.
#ifndef PLIMSOLL_TRIAL_TRAJECTORY_H_
#define PLIMSOLL_TRIAL_TRAJECTORY_H_

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "plimsoll/error.h"

namespace plimsoll::trial {

class TrajectoryRecorder {
 public:
  // At most `max_rows` rows (the plant's tick count): memory is bounded.
  TrajectoryRecorder(size_t state_width, size_t input_count, size_t max_rows);

  size_t row_doubles() const { return state_width_ + input_count_; }
  size_t rows() const { return values_.size() / row_doubles(); }
  size_t byte_size() const { return values_.size() * sizeof(double); }
  std::span<const double> values() const { return values_; }

  // Appends one row. kInternal past max_rows or for a wrong width.
  Status Append(std::span<const double> state, std::span<const double> applied);

  // SHA-256 of the bytes, lowercase hex.
  std::string FingerprintHex() const;

  // Writes every byte to `fd` (blocking). kInternal with errno on failure.
  Status WriteTo(int fd) const;

 private:
  size_t state_width_;
  size_t input_count_;
  size_t max_rows_;
  std::vector<double> values_;
};

}  // namespace plimsoll::trial

#endif  // PLIMSOLL_TRIAL_TRAJECTORY_H_
