// What every plant test (sims/NAME/NAME_test.cc) does besides calling the
// plant: run a whole trial with a native controller the way the runner
// records one, compare and pin trajectories, read the plant's example
// controllers and print the measured numbers its doc quotes. The checks of
// plant_abi.h's contract every plant owes alike are plant_contract_checks.h.
//
// For tests only: it includes <gtest/gtest.h> and reports what goes wrong
// as a googletest failure of the running test.
//
// Usage:
//   using State = std::array<double, 4>;
//   testing::PlantUnderTest<Z_cartpole_instance_t> plant(kExports);
//   const auto trial = testing::RunNative<4>(plant, scenario,
//       [](const State& s) { return -10 * s[2]; }, kEndTicks);
//   EXPECT_EQ(trial.end, PLANT_FINISHED);
//   EXPECT_EQ(testing::Fnv1aOfRows(trial.rows), 0x0aa86f10486f2c6full);
#ifndef PLIMSOLL_SIMS_NATIVE_TRIAL_H_
#define PLIMSOLL_SIMS_NATIVE_TRIAL_H_

#include <gtest/gtest.h>

#include <array>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <span>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "plant_abi.h"
#include "plant_under_test.h"

namespace plimsoll::sims::testing {

// What a trial leaves: every tick's state then its applied inputs (the rows
// as the runner records them), how it ended and the plant's counters.
template <size_t kStateWidth>
struct NativeTrial {
  std::vector<double> rows;
  int32_t end = PLANT_RUNNING;
  int32_t ticks = 0;
  double score = 0;
  std::array<double, kStateWidth> final_state = {};
};

namespace internal {
template <typename T>
struct InputsOf {  // a control law returning a double: one input
  static constexpr size_t kCount = 1;
  static std::array<double, 1> AsArray(double input) { return {input}; }
};
template <size_t N>
struct InputsOf<std::array<double, N>> {
  static constexpr size_t kCount = N;
  static const std::array<double, N>& AsArray(const std::array<double, N>& inputs) {
    return inputs;
  }
};
}  // namespace internal

// Runs one trial of `plant` from `scenario` (empty: the default) with
// `control`, called once per tick in order with the state as an
// std::array<double, kStateWidth>; it answers a double for a one-input plant
// or an std::array<double, N> for N inputs. A plant that has not ended after
// `max_ticks` steps is a test failure (the trial stops there).
template <size_t kStateWidth, typename Instance, typename Control>
NativeTrial<kStateWidth> RunNative(PlantUnderTest<Instance>& plant,
                                   std::span<const double> scenario, Control&& control,
                                   int32_t max_ticks) {
  using State = std::array<double, kStateWidth>;
  using Result = std::decay_t<std::invoke_result_t<Control&, const State&>>;
  using Inputs = internal::InputsOf<Result>;
  NativeTrial<kStateWidth> trial;
  EXPECT_EQ(plant.Init(scenario), PLANT_OK);
  for (int32_t tick = 0; trial.end == PLANT_RUNNING; ++tick) {
    if (tick == max_ticks) {
      ADD_FAILURE() << "the plant has not ended after " << max_ticks << " ticks";
      break;
    }
    State state;
    EXPECT_EQ(plant.ReadState(state), static_cast<int32_t>(kStateWidth));
    const auto inputs = Inputs::AsArray(control(static_cast<const State&>(state)));
    std::array<double, Inputs::kCount> applied;
    applied.fill(std::numeric_limits<double>::quiet_NaN());
    trial.end = plant.Step(inputs, applied);
    trial.rows.insert(trial.rows.end(), state.begin(), state.end());
    trial.rows.insert(trial.rows.end(), applied.begin(), applied.end());
  }
  trial.ticks = plant.Ticks();
  trial.score = plant.Score();
  plant.ReadState(trial.final_state);
  return trial;
}

// Whether two trajectories are the same bits (not merely equal doubles:
// NaN rows and -0 count).
inline bool SameBits(std::span<const double> a, std::span<const double> b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size_bytes()) == 0;
}

// FNV-1a (64-bit) of the rows' bytes: a pin in a test, not a fingerprint
// (the runner hashes with SHA-256).
inline uint64_t Fnv1aOfRows(std::span<const double> rows) {
  uint64_t hash = 14695981039346656037ull;
  const auto* bytes = reinterpret_cast<const unsigned char*>(rows.data());
  for (size_t k = 0; k < rows.size_bytes(); ++k) {
    hash ^= bytes[k];
    hash *= 1099511628211ull;
  }
  return hash;
}

// The text of `directory`/`name` (a plant's examples/); a file that cannot
// be read is a test failure and reads as "".
inline std::string ReadExample(const std::string& directory, const std::string& name) {
  std::ifstream file(directory + "/" + name);
  if (!file) {
    ADD_FAILURE() << "cannot read " << directory << "/" << name;
    return "";
  }
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// Prints one "[ report   ]" line, printf-style (the numbers need %.17g):
// the measured numbers a plant's doc quotes.
__attribute__((format(printf, 1, 2))) inline void Report(const char* format, ...) {
  char text[512];
  va_list arguments;
  va_start(arguments, format);
  const int length = std::vsnprintf(text, sizeof text, format, arguments);
  va_end(arguments);
  if (length < 0) ADD_FAILURE() << "a report could not be formatted: " << format;
  const std::string line = std::string("[ report   ] ") + (length < 0 ? format : text) + "\n";
  if (std::fputs(line.c_str(), stdout) == EOF || std::fflush(stdout) != 0) {
    ADD_FAILURE() << "a report could not be written";
  }
}

}  // namespace plimsoll::sims::testing

#endif  // PLIMSOLL_SIMS_NATIVE_TRIAL_H_
