#include "trial/trajectory.h"

#include <unistd.h>

#include <cerrno>

#include "trial/sha256.h"

namespace plimsoll::trial {

TrajectoryRecorder::TrajectoryRecorder(size_t state_width, size_t input_count, size_t max_rows)
    : state_width_(state_width), input_count_(input_count), max_rows_(max_rows) {
  values_.reserve(max_rows * row_doubles());
}

Status TrajectoryRecorder::Append(std::span<const double> state, std::span<const double> applied) {
  if (state.size() != state_width_ || applied.size() != input_count_) {
    return Failure(ErrorCode::kInternal, "A trajectory row has the wrong width.");
  }
  if (rows() >= max_rows_) {
    return Failure(ErrorCode::kInternal, "The plant ran past its own end (" +
                                             std::to_string(max_rows_) + " ticks).");
  }
  values_.insert(values_.end(), state.begin(), state.end());
  values_.insert(values_.end(), applied.begin(), applied.end());
  return Status::Ok();
}

std::string TrajectoryRecorder::FingerprintHex() const {
  return Sha256Hex(DoubleBytes(values_));
}

Status TrajectoryRecorder::WriteTo(int fd) const {
  std::span<const unsigned char> bytes = DoubleBytes(values_);
  while (!bytes.empty()) {
    const ssize_t written = write(fd, bytes.data(), bytes.size());
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return SystemError("writing the trajectory", written < 0 ? errno : EIO);
    bytes = bytes.subspan(static_cast<size_t>(written));
  }
  return Status::Ok();
}

}  // namespace plimsoll::trial
