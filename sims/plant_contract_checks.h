// The checks of plant_abi.h's contract that every plant owes alike, for the
// plant tests (sims/NAME/NAME_test.cc): scenario ranges, parameter counts,
// not-ready states, non-finite inputs and reproducible runs, so each test
// states only its plant's numbers and its own extra cases.
//
// For tests only: failures are googletest failures of the running test. The
// Expect* checks are void functions: an ASSERT inside one ends that check,
// not the test (wrap a call in ASSERT_NO_FATAL_FAILURE where later lines
// depend on it).
//
// Usage:
//   testing::ExpectScenarioRangesRefused(plant, good, lows, highs);
//   testing::ExpectWrongCountsRefused(plant, 4);
//   testing::ExpectARefusedScenarioLeavesItNotReady(plant, good, 0, /*inputs=*/0.0);
//   testing::ExpectReproducible<CartPolePlant>(RunTrial, std::span(controllers),
//                                              std::span(scenarios));
//
// plant_conformance.h calls them, with each plant's numbers, for every plant.
#ifndef PLIMSOLL_SIMS_PLANT_CONTRACT_CHECKS_H_
#define PLIMSOLL_SIMS_PLANT_CONTRACT_CHECKS_H_

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "native_trial.h"
#include "plant_abi.h"
#include "plant_under_test.h"

namespace plimsoll::sims::testing {

// Each check takes the plant as a PlantUnderTest (a test's subclass binds
// to it; its own Step and ReadState overloads are bypassed) and the test's
// numbers: a good scenario, the inclusive limits, the inputs of one good
// tick. A plant's extra cases (integer parameters, −0, constraints between
// parameters) stay in its test, after the shared call. Each failure's
// trace names the test's line that called the check (the last argument,
// left to its default).

namespace internal {
// Where a shared check was called: the file and line of the call, taken by
// the builtins std::source_location is made of (Clang 14, which builds the
// sanitized tree, has no std::source_location).
struct CallSite {
  const char* file;
  int line;
  static constexpr CallSite Here(const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    return CallSite{file, line};
  }
};

// A trace entry naming the line that called a shared check.
class CalledFrom {
 public:
  explicit CalledFrom(const CallSite& where) : trace_(where.file, where.line, "called from here") {}

 private:
  ::testing::ScopedTrace trace_;
};

inline std::string Describe(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

// The state as plant_read_state gives it, StateWidth() values; a width
// that is not the plant's is a test failure (the values are then NaN).
template <typename Instance>
std::vector<double> ReadWholeState(PlantUnderTest<Instance>& plant) {
  const int32_t width = plant.StateWidth();
  std::vector<double> state(width > 0 ? static_cast<size_t>(width) : 0);
  EXPECT_EQ(plant.ReadState(state), width) << "plant_read_state did not answer the state width";
  return state;
}
}  // namespace internal

// plant_init with `scenario` but its parameter `index` set to `value`.
template <typename Instance, size_t kCount>
int32_t InitWithOneChanged(PlantUnderTest<Instance>& plant, std::array<double, kCount> scenario,
                           size_t index, double value) {
  scenario.at(index) = value;
  return plant.Init(scenario);
}

// The refusal table of plant_init, one parameter at a time with the others
// as in `good` (a scenario the plant accepts): NaN and ±infinity are
// PLANT_ERROR_NOT_FINITE; the double just below lows[k], the double just
// above highs[k] and ±1e300 are PLANT_ERROR_RANGE; lows[k] and highs[k]
// themselves are accepted (the limits are inclusive). Then all the lows at
// once and all the highs at once are accepted.
template <typename Instance, size_t kCount>
void ExpectScenarioRangesRefused(PlantUnderTest<Instance>& plant,
                                 const std::array<double, kCount>& good,
                                 const std::array<double, kCount>& lows,
                                 const std::array<double, kCount>& highs,
                                 internal::CallSite where = internal::CallSite::Here()) {
  const internal::CalledFrom called_from(where);
  ASSERT_TRUE(plant.ok()) << "the plant did not start";
  constexpr double kInfinity = std::numeric_limits<double>::infinity();
  for (size_t k = 0; k < kCount; ++k) {
    SCOPED_TRACE("parameter " + std::to_string(k) + " (limits " + internal::Describe(lows[k]) +
                 " to " + internal::Describe(highs[k]) + ")");
    const std::pair<double, int32_t> table[] = {
        {std::numeric_limits<double>::quiet_NaN(), PLANT_ERROR_NOT_FINITE},
        {kInfinity, PLANT_ERROR_NOT_FINITE},
        {-kInfinity, PLANT_ERROR_NOT_FINITE},
        {std::nextafter(lows[k], -kInfinity), PLANT_ERROR_RANGE},
        {std::nextafter(highs[k], kInfinity), PLANT_ERROR_RANGE},
        {1e300, PLANT_ERROR_RANGE},
        {-1e300, PLANT_ERROR_RANGE},
        {lows[k], PLANT_OK},
        {highs[k], PLANT_OK},
    };
    for (const auto& [value, expected] : table) {
      EXPECT_EQ(InitWithOneChanged(plant, good, k, value), expected)
          << "parameter " << k << " = " << internal::Describe(value);
    }
  }
  EXPECT_EQ(plant.Init(lows), PLANT_OK) << "all the lower limits at once";
  EXPECT_EQ(plant.Init(highs), PLANT_OK) << "all the upper limits at once";
}

// plant_init refuses every count but 0 (the default scenario) and
// `param_count` with PLANT_ERROR_COUNT, before reading the buffer: every
// count from 1 to PLANT_BUFFER_DOUBLES + 1, negative counts and the
// extremes. Also checks that `param_count` is the plant's.
template <typename Instance>
void ExpectWrongCountsRefused(PlantUnderTest<Instance>& plant, int32_t param_count,
                              internal::CallSite where = internal::CallSite::Here()) {
  const internal::CalledFrom called_from(where);
  ASSERT_TRUE(plant.ok()) << "the plant did not start";
  EXPECT_EQ(plant.ParamCount(), param_count);
  std::vector<int32_t> counts = {-1, -2, std::numeric_limits<int32_t>::min(),
                                 std::numeric_limits<int32_t>::max()};
  for (int32_t count = 1; count <= PLANT_BUFFER_DOUBLES + 1; ++count) {
    if (count != param_count) counts.push_back(count);
  }
  for (int32_t count : counts) {
    EXPECT_EQ(plant.InitWithCount(count), PLANT_ERROR_COUNT) << "count " << count;
  }
}

// A refused scenario leaves the plant not ready, even after a good one:
// after a good init and one tick with `inputs`, a scenario with NaN at
// `bad_index` is refused, and then the plant takes no tick, counts 0
// ticks, scores 0 and has no state to read.
template <typename Instance, size_t kCount>
void ExpectARefusedScenarioLeavesItNotReady(
    PlantUnderTest<Instance>& plant, const std::array<double, kCount>& good, size_t bad_index,
    std::span<const double> inputs, internal::CallSite where = internal::CallSite::Here()) {
  const internal::CalledFrom called_from(where);
  ASSERT_TRUE(plant.ok()) << "the plant did not start";
  ASSERT_EQ(plant.Init(good), PLANT_OK);
  ASSERT_EQ(plant.Step(inputs), PLANT_RUNNING);
  EXPECT_EQ(InitWithOneChanged(plant, good, bad_index, std::numeric_limits<double>::quiet_NaN()),
            PLANT_ERROR_NOT_FINITE)
      << "NaN as parameter " << bad_index;
  EXPECT_EQ(plant.Step(inputs), PLANT_ERROR_NOT_READY);
  EXPECT_EQ(plant.Ticks(), 0);
  EXPECT_EQ(plant.Score(), 0.0);
  EXPECT_EQ(plant.ReadState(std::span<double>()), PLANT_ERROR_NOT_READY);
}
// The same for a plant with one input.
template <typename Instance, size_t kCount>
void ExpectARefusedScenarioLeavesItNotReady(
    PlantUnderTest<Instance>& plant, const std::array<double, kCount>& good, size_t bad_index,
    double input, internal::CallSite where = internal::CallSite::Here()) {
  ExpectARefusedScenarioLeavesItNotReady(plant, good, bad_index, std::span<const double>(&input, 1),
                                         where);
}

// Before its first plant_init a plant has no state to read, takes no tick
// (with `inputs`), counts 0 ticks and scores 0.
template <typename Instance>
void ExpectNotReadyBeforeAnInit(PlantUnderTest<Instance>& plant, std::span<const double> inputs,
                                internal::CallSite where = internal::CallSite::Here()) {
  const internal::CalledFrom called_from(where);
  ASSERT_TRUE(plant.ok()) << "the plant did not start";
  EXPECT_EQ(plant.ReadState(std::span<double>()), PLANT_ERROR_NOT_READY);
  EXPECT_EQ(plant.Step(inputs), PLANT_ERROR_NOT_READY);
  EXPECT_EQ(plant.Ticks(), 0);
  EXPECT_EQ(plant.Score(), 0.0);
}
// The same for a plant with one input.
template <typename Instance>
void ExpectNotReadyBeforeAnInit(PlantUnderTest<Instance>& plant, double input,
                                internal::CallSite where = internal::CallSite::Here()) {
  ExpectNotReadyBeforeAnInit(plant, std::span<const double>(&input, 1), where);
}

// A non-finite input is refused without taking a tick: from `scenario`
// (empty: the default) after one tick with `inputs` (finite, accepted),
// NaN and ±infinity in each input alone (the others as in `inputs`, and,
// with several inputs, the others 0) and in all of them at once answer
// PLANT_ERROR_NOT_FINITE and leave the tick count at 1 and the state as it
// was, to the bit. Then the trial goes on: `inputs` again is tick 2. The
// plant is left there, for a test's own checks of what the refusals did
// not change.
template <typename Instance>
void ExpectNonFiniteInputsRefused(PlantUnderTest<Instance>& plant, std::span<const double> inputs,
                                  std::span<const double> scenario = {},
                                  internal::CallSite where = internal::CallSite::Here()) {
  const internal::CalledFrom called_from(where);
  ASSERT_TRUE(plant.ok()) << "the plant did not start";
  ASSERT_EQ(plant.Init(scenario), PLANT_OK);
  ASSERT_EQ(plant.Step(inputs), PLANT_RUNNING);
  const std::vector<double> before = internal::ReadWholeState(plant);
  auto expect_refused = [&](const std::vector<double>& bad, const std::string& what) {
    SCOPED_TRACE(what);
    EXPECT_EQ(plant.Step(bad), PLANT_ERROR_NOT_FINITE);
    EXPECT_EQ(plant.Ticks(), 1);
    const std::vector<double> after = internal::ReadWholeState(plant);
    EXPECT_EQ(after, before);
    EXPECT_TRUE(SameBits(after, before));
  };
  constexpr double kInfinity = std::numeric_limits<double>::infinity();
  for (double value : {std::numeric_limits<double>::quiet_NaN(), kInfinity, -kInfinity}) {
    const std::string shown = internal::Describe(value);
    for (size_t k = 0; k < inputs.size(); ++k) {
      std::vector<double> bad(inputs.begin(), inputs.end());
      bad[k] = value;
      expect_refused(bad, "input " + std::to_string(k) + " = " + shown);
      if (inputs.size() > 1) {
        std::vector<double> zeros(inputs.size(), 0.0);
        zeros[k] = value;
        expect_refused(zeros, "input " + std::to_string(k) + " = " + shown + ", the others 0");
      }
    }
    if (inputs.size() > 1) {
      expect_refused(std::vector<double>(inputs.size(), value), "all " + shown);
    }
  }
  EXPECT_EQ(plant.Step(inputs), PLANT_RUNNING);  // the trial goes on
  EXPECT_EQ(plant.Ticks(), 2);
}
// The same for a plant with one input.
template <typename Instance>
void ExpectNonFiniteInputsRefused(PlantUnderTest<Instance>& plant, double input,
                                  std::span<const double> scenario = {},
                                  internal::CallSite where = internal::CallSite::Here()) {
  ExpectNonFiniteInputsRefused(plant, std::span<const double>(&input, 1), scenario, where);
}

// --- Reproducible runs -----------------------------------------------------
//
// `run_trial(plant, scenario, controller)` is a test's whole trial (its
// RunTrial: a NativeTrial from RunNative); `Plant` is the test's
// default-constructible PlantUnderTest subclass. A controller is passed to
// run_trial as given for every trial, so one with memory must be taken by
// value there (a copy of a fresh one each time) or be a factory.

// The rows of one trial from `scenario` on a fresh Plant; empty if the
// plant did not start (its constructor has already failed the test).
template <typename Plant, typename Run, typename Controller>
std::vector<double> FreshTrialRows(Run run_trial, std::span<const double> scenario,
                                   const Controller& controller) {
  Plant plant;
  if (!plant.ok()) return {};
  return run_trial(plant, scenario, controller).rows;
}

// Two runs give the same bits. For each controller: each scenario run on
// two fresh instances gives the same rows; one instance re-initialised for
// every trial (each scenario in turn, twice round) gives those rows again
// with the same end, tick count, score and final state; and the scenarios
// (which must differ) give rows that differ.
template <typename Plant, typename Run, typename Controller>
void ExpectReproducible(Run run_trial, std::span<const Controller> controllers,
                        std::span<const std::span<const double>> scenario_list,
                        internal::CallSite where = internal::CallSite::Here()) {
  const internal::CalledFrom called_from(where);
  using Trial = std::invoke_result_t<Run&, Plant&, std::span<const double>, const Controller&>;
  size_t controller_index = 0;
  for (const Controller& controller : controllers) {
    SCOPED_TRACE("controller " + std::to_string(controller_index++));
    std::vector<std::vector<double>> fresh;
    for (size_t k = 0; k < scenario_list.size(); ++k) {
      SCOPED_TRACE("scenario " + std::to_string(k) + ", two fresh instances");
      std::vector<double> first = FreshTrialRows<Plant>(run_trial, scenario_list[k], controller);
      const std::vector<double> second =
          FreshTrialRows<Plant>(run_trial, scenario_list[k], controller);
      ASSERT_FALSE(first.empty());
      EXPECT_TRUE(SameBits(first, second));
      fresh.push_back(std::move(first));
    }
    // Re-initialising one instance starts the same trial again, whatever
    // trial it ran before.
    Plant plant;
    ASSERT_TRUE(plant.ok());
    std::vector<Trial> first_round;
    for (int round = 0; round < 2; ++round) {
      for (size_t k = 0; k < scenario_list.size(); ++k) {
        SCOPED_TRACE("scenario " + std::to_string(k) + ", one instance, round " +
                     std::to_string(round + 1));
        Trial trial = run_trial(plant, scenario_list[k], controller);
        EXPECT_TRUE(SameBits(trial.rows, fresh[k]));
        if (round == 0) {
          first_round.push_back(std::move(trial));
          continue;
        }
        const Trial& once = first_round[k];
        EXPECT_EQ(trial.end, once.end);
        EXPECT_EQ(trial.ticks, once.ticks);
        EXPECT_EQ(trial.score, once.score);
        EXPECT_TRUE(SameBits(trial.final_state, once.final_state));
      }
    }
    // And different scenarios differ.
    for (size_t j = 0; j < fresh.size(); ++j) {
      for (size_t k = j + 1; k < fresh.size(); ++k) {
        EXPECT_FALSE(SameBits(fresh[j], fresh[k])) << "scenarios " << j << " and " << k;
      }
    }
  }
}

}  // namespace plimsoll::sims::testing

#endif  // PLIMSOLL_SIMS_PLANT_CONTRACT_CHECKS_H_
