// PlantConformance: the googletest cases every plant test runs alike,
// written once as a type-parameterised suite that each plant's test
// (sims/NAME/NAME_test.cc) instantiates with its numbers: the shape it
// reports, where its scenarios start, the refusals of plant_abi.h's contract
// (plant_contract_checks.h), its example controllers (the passing one
// passes the default and other scenarios, the failing one passes none, the
// .js files hold the laws the test runs natively), that two runs give the
// same bits and the pinned FNV-1a of the passing trajectory. What only one
// plant does stays in its own TEST()s.
//
// For tests only (googletest). Usage, in NAME_test.cc after the plant's
// class, RunTrial, controllers and scenarios:
//
//   struct CartPoleNumbers { ... };  // what PlantConformanceNumbers asks, below
//   INSTANTIATE_TYPED_TEST_SUITE_P(CartPolePlant, PlantConformance, CartPoleNumbers);
//
// The cases are then CartPolePlant/PlantConformance/0.ReportsItsShape and
// so on (--gtest_filter='CartPolePlant*' runs the plant's all).
//
// A plant's numbers are a struct of static members (the concept
// PlantConformanceNumbers checks they are there):
//   Plant                  a testing::PlantOf (default-constructible,
//                          ReadState() -> State)
//   Controller             what kRunTrial takes
//   kRunTrial              the test's RunTrial(Plant&, scenario, Controller):
//                          a whole trial (testing::RunNative)
//   kShape                 the shape it reports (a PlantShape)
//   kDefaultScenario       the default scenario's values (count 0 is the
//                          same trial)
//   kStartScenario         another scenario, whose start is checked too
//   ExpectStartState(scenario, state)   checks the state right after
//                          plant_init(scenario)
//   kGoodScenario, kLowestScenario, kHighestScenario   an accepted
//                          scenario and the inclusive limits of every
//                          parameter (ExpectScenarioRangesRefused)
//   kRefusedParameter      the parameter ExpectARefusedScenarioLeavesItNotReady
//                          makes NaN
//   kGoodInputs            a good tick's inputs (the not-ready checks and
//                          after a trial's end)
//   kInputsToSpoil         the finite inputs ExpectNonFiniteInputsRefused
//                          makes NaN and ±infinity one by one
//   PassingController(), FailingController()   the examples, natively
//   kPassingScore          the score a finished trial needs to pass
//   kFinishesOnTheLastTick whether a finished trial took kShape.end_ticks ticks
//                          (false: the plant may finish earlier)
//   kOtherScenarios        scenarios the passing controller must pass too
//   Describe(scenario)     the scenario as a trace and reports name it
//   ExpectPassingTrial(trial, scenario)   the plant's own checks and report
//                          of each passing trial
//   ExpectFailingTrial(trial, scenario, is_default)   the same for each
//                          failing trial
//   kExamplesDirectory, PassingExampleLines(), FailingExampleLines()
//                          examples/ and the lines passing.js and
//                          failing.js must hold
//   ReproducibleControllers(), ReproducibleScenarios()   for
//                          ExpectReproducible (scenarios as vectors; empty:
//                          the default)
//   kPassingRowsFnv1a      the pin: FNV-1a of the passing controller's
//                          default-scenario rows
#ifndef PLIMSOLL_SIMS_PLANT_CONFORMANCE_H_
#define PLIMSOLL_SIMS_PLANT_CONFORMANCE_H_

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "native_trial.h"
#include "plant_abi.h"
#include "plant_contract_checks.h"
#include "plant_under_test.h"

namespace plimsoll::sims {

// What a plant reports of itself (plant_abi.h): its counts, valid before
// plant_init, and its tick and end, after the default scenario's.
struct PlantShape {
  int32_t param_count;
  int32_t state_width;
  int32_t input_count;
  double tick_seconds;
  double end_seconds;
  int32_t end_ticks;  // end_seconds / tick_seconds: a trial that does not fail
};

namespace testing {
// The arrays and the trial of a plant's numbers (PlantConformanceNumbers).
template <typename Numbers>
using ScenarioOf = std::array<double, Numbers::kShape.param_count>;
template <typename Numbers>
using StateOf = std::array<double, Numbers::kShape.state_width>;
template <typename Numbers>
using InputsOf = std::array<double, Numbers::kShape.input_count>;
template <typename Numbers>
using TrialOf = NativeTrial<Numbers::kShape.state_width>;
}  // namespace testing

template <typename Numbers>
concept PlantConformanceNumbers = requires(typename Numbers::Plant& plant,
                                           const testing::ScenarioOf<Numbers>& scenario,
                                           const testing::StateOf<Numbers>& state,
                                           const testing::TrialOf<Numbers>& trial,
                                           std::span<const double> sent) {
  { Numbers::kShape } -> std::convertible_to<PlantShape>;
  { plant.ReadState() } -> std::same_as<testing::StateOf<Numbers>>;
  { Numbers::PassingController() } -> std::convertible_to<typename Numbers::Controller>;
  { Numbers::FailingController() } -> std::convertible_to<typename Numbers::Controller>;
  {
    Numbers::kRunTrial(plant, sent, Numbers::PassingController())
    } -> std::same_as<testing::TrialOf<Numbers>>;
  { Numbers::kDefaultScenario } -> std::convertible_to<testing::ScenarioOf<Numbers>>;
  { Numbers::kStartScenario } -> std::convertible_to<testing::ScenarioOf<Numbers>>;
  Numbers::ExpectStartState(scenario, state);
  { Numbers::kGoodScenario } -> std::convertible_to<testing::ScenarioOf<Numbers>>;
  { Numbers::kLowestScenario } -> std::convertible_to<testing::ScenarioOf<Numbers>>;
  { Numbers::kHighestScenario } -> std::convertible_to<testing::ScenarioOf<Numbers>>;
  { Numbers::kRefusedParameter } -> std::convertible_to<size_t>;
  { Numbers::kGoodInputs } -> std::convertible_to<testing::InputsOf<Numbers>>;
  { Numbers::kInputsToSpoil } -> std::convertible_to<testing::InputsOf<Numbers>>;
  { Numbers::kPassingScore } -> std::convertible_to<double>;
  { Numbers::kFinishesOnTheLastTick } -> std::convertible_to<bool>;
  { Numbers::kOtherScenarios[0] } -> std::convertible_to<testing::ScenarioOf<Numbers>>;
  { Numbers::Describe(scenario) } -> std::convertible_to<std::string>;
  Numbers::ExpectPassingTrial(trial, scenario);
  Numbers::ExpectFailingTrial(trial, scenario, true);
  { Numbers::kExamplesDirectory } -> std::convertible_to<std::string>;
  { Numbers::PassingExampleLines() } -> std::convertible_to<std::vector<std::string>>;
  { Numbers::FailingExampleLines() } -> std::convertible_to<std::vector<std::string>>;
  {
    Numbers::ReproducibleControllers()
    } -> std::convertible_to<std::vector<typename Numbers::Controller>>;
  { Numbers::ReproducibleScenarios() } -> std::convertible_to<std::vector<std::vector<double>>>;
  { Numbers::kPassingRowsFnv1a } -> std::convertible_to<uint64_t>;
};

template <typename Numbers>
class PlantConformance : public ::testing::Test {
  static_assert(PlantConformanceNumbers<Numbers>,
                "a plant's numbers lack a member plant_conformance.h asks for");

 protected:
  using Plant = typename Numbers::Plant;
  using State = testing::StateOf<Numbers>;
  using Scenario = testing::ScenarioOf<Numbers>;
  using Trial = testing::TrialOf<Numbers>;

  // The plant as a PlantUnderTest: its Step with a span of inputs, whatever
  // Step overloads the plant's class adds.
  template <typename Instance>
  static testing::PlantUnderTest<Instance>& Underneath(testing::PlantUnderTest<Instance>& plant) {
    return plant;
  }

  // The scenarios a controller is tried on: the default one (sent as count
  // 0, as the runner sends it), then kOtherScenarios. `check` gets each
  // fresh trial, its scenario's values and whether it is the default.
  template <typename Check>
  static void ForEachScenario(const typename Numbers::Controller& controller, Check check) {
    for (size_t k = 0; k <= Numbers::kOtherScenarios.size(); ++k) {
      const Scenario& scenario =
          k == 0 ? Numbers::kDefaultScenario : Numbers::kOtherScenarios[k - 1];
      SCOPED_TRACE(Numbers::Describe(scenario));
      Plant plant;
      ASSERT_TRUE(plant.ok());
      const std::span<const double> sent =
          k == 0 ? std::span<const double>() : std::span<const double>(scenario);
      const Trial trial = Numbers::kRunTrial(plant, sent, controller);
      // The trial is over: no more ticks, the final state stays readable.
      EXPECT_EQ(Underneath(plant).Step(Numbers::kGoodInputs), PLANT_ERROR_ENDED);
      EXPECT_EQ(plant.Ticks(), trial.ticks);
      EXPECT_EQ(plant.ReadState(), trial.final_state);
      check(trial, scenario, k == 0);
    }
  }
};

TYPED_TEST_SUITE_P(PlantConformance);

TYPED_TEST_P(PlantConformance, ReportsItsShape) {
  using Numbers = TypeParam;
  typename TestFixture::Plant plant;
  ASSERT_TRUE(plant.ok());
  EXPECT_EQ(plant.ParamCount(), Numbers::kShape.param_count);
  EXPECT_EQ(plant.StateWidth(), Numbers::kShape.state_width);
  EXPECT_EQ(plant.InputCount(), Numbers::kShape.input_count);
  ASSERT_EQ(plant.Init(std::span<const double>()), PLANT_OK);
  const double tick = plant.TickSeconds();
  const double end = plant.EndSeconds();
  EXPECT_EQ(tick, Numbers::kShape.tick_seconds);
  EXPECT_EQ(end, Numbers::kShape.end_seconds);
  EXPECT_EQ(std::round(end / tick), Numbers::kShape.end_ticks);
}

// The default scenario (count 0) starts where ExpectStartState says, with
// no ticks and score 0; its values sent explicitly are the same trial, to
// the bit; kStartScenario starts where ExpectStartState says too.
TYPED_TEST_P(PlantConformance, StartsFromTheScenario) {
  using Numbers = TypeParam;
  typename TestFixture::Plant plant;
  ASSERT_TRUE(plant.ok());
  ASSERT_EQ(plant.Init(std::span<const double>()), PLANT_OK);
  int32_t width = 0;
  const typename TestFixture::State start = plant.ReadState(&width);
  EXPECT_EQ(width, Numbers::kShape.state_width);
  EXPECT_EQ(plant.Ticks(), 0);
  EXPECT_EQ(plant.Score(), 0.0);
  {
    SCOPED_TRACE("the default scenario, count 0");
    Numbers::ExpectStartState(Numbers::kDefaultScenario, start);
  }
  ASSERT_EQ(plant.Init(Numbers::kDefaultScenario), PLANT_OK);
  EXPECT_TRUE(testing::SameBits(plant.ReadState(), start))
      << "the explicit default scenario is another trial than count 0";

  ASSERT_EQ(plant.Init(Numbers::kStartScenario), PLANT_OK);
  const typename TestFixture::State other = plant.ReadState(&width);
  EXPECT_EQ(width, Numbers::kShape.state_width);
  SCOPED_TRACE(Numbers::Describe(Numbers::kStartScenario));
  Numbers::ExpectStartState(Numbers::kStartScenario, other);
}

TYPED_TEST_P(PlantConformance, IsNotReadyBeforeAnInit) {
  typename TestFixture::Plant plant;
  ASSERT_TRUE(plant.ok());
  testing::ExpectNotReadyBeforeAnInit(plant, std::span<const double>(TypeParam::kGoodInputs));
}

// The contract's refusals of a scenario; a plant's own (integers, a
// constraint between parameters) are its test's.
TYPED_TEST_P(PlantConformance, RefusesBadScenarios) {
  using Numbers = TypeParam;
  typename TestFixture::Plant plant;
  ASSERT_TRUE(plant.ok());
  testing::ExpectScenarioRangesRefused(plant, Numbers::kGoodScenario, Numbers::kLowestScenario,
                                       Numbers::kHighestScenario);
  testing::ExpectWrongCountsRefused(plant, Numbers::kShape.param_count);
  testing::ExpectARefusedScenarioLeavesItNotReady(plant, Numbers::kGoodScenario,
                                                  Numbers::kRefusedParameter,
                                                  std::span<const double>(Numbers::kGoodInputs));
}

TYPED_TEST_P(PlantConformance, RefusesANonFiniteInputWithoutTakingATick) {
  typename TestFixture::Plant plant;
  ASSERT_TRUE(plant.ok());
  testing::ExpectNonFiniteInputsRefused(plant, std::span<const double>(TypeParam::kInputsToSpoil));
}

// The passing controller finishes the default scenario and every other
// one with a passing score; ExpectPassingTrial checks and reports the rest.
TYPED_TEST_P(PlantConformance, ThePassingControllerPasses) {
  using Numbers = TypeParam;
  const auto check = [](const typename TestFixture::Trial& trial,
                        const typename TestFixture::Scenario& scenario, bool) {
    EXPECT_EQ(trial.end, PLANT_FINISHED);
    if (Numbers::kFinishesOnTheLastTick) {
      EXPECT_EQ(trial.ticks, Numbers::kShape.end_ticks);
    }
    EXPECT_GE(trial.score, Numbers::kPassingScore);
    Numbers::ExpectPassingTrial(trial, scenario);
  };
  TestFixture::ForEachScenario(Numbers::PassingController(), check);
}

// The failing controller passes no scenario: each trial fails, or finishes
// below the passing score; ExpectFailingTrial checks and reports the rest.
TYPED_TEST_P(PlantConformance, TheFailingControllerDoesNotPass) {
  using Numbers = TypeParam;
  const auto check = [](const typename TestFixture::Trial& trial,
                        const typename TestFixture::Scenario& scenario, bool is_default) {
    EXPECT_TRUE(trial.end == PLANT_FAILED ||
                (trial.end == PLANT_FINISHED && trial.score < Numbers::kPassingScore))
        << "the failing controller passes: ended " << trial.end << ", score " << trial.score;
    Numbers::ExpectFailingTrial(trial, scenario, is_default);
  };
  TestFixture::ForEachScenario(Numbers::FailingController(), check);
}

// examples/*.js hold the laws PassingController() and FailingController()
// run natively, spelled as there, so the measured numbers are theirs.
TYPED_TEST_P(PlantConformance, ExamplesHoldTheseLaws) {
  using Numbers = TypeParam;
  const std::pair<const char*, std::vector<std::string>> examples[] = {
      {"passing.js", Numbers::PassingExampleLines()},
      {"failing.js", Numbers::FailingExampleLines()},
  };
  for (const auto& [name, lines] : examples) {
    const std::string text = testing::ReadExample(Numbers::kExamplesDirectory, name);
    ASSERT_FALSE(text.empty()) << name;
    EXPECT_FALSE(lines.empty()) << name;
    for (const std::string& line : lines) {
      EXPECT_NE(text.find(line), std::string::npos) << name << " lacks: " << line;
    }
  }
}

TYPED_TEST_P(PlantConformance, TwoRunsGiveTheSameBits) {
  using Numbers = TypeParam;
  const std::vector<typename Numbers::Controller> controllers = Numbers::ReproducibleControllers();
  const std::vector<std::vector<double>> scenarios = Numbers::ReproducibleScenarios();
  const std::vector<std::span<const double>> scenario_spans(scenarios.begin(), scenarios.end());
  testing::ExpectReproducible<typename TestFixture::Plant>(
      Numbers::kRunTrial, std::span<const typename Numbers::Controller>(controllers),
      std::span<const std::span<const double>>(scenario_spans));
}

// The passing controller's default-scenario trajectory (rows: the state the
// controller saw, then the inputs as applied), pinned to the bit, and the
// same from a second fresh instance. It changes only when the plant's
// numbers change: its source, the toolchain that builds it (clang 14,
// wasi-libc's libm, wabt 1.0.32) or the flags of the generated C (compiled
// with GCC's default -ffp-contract=fast and -march=native, a machine with
// FMA fuses multiply-adds and the pin breaks; hence -ffp-contract=off), or
// the controller's arithmetic in the test (its inputs are in the rows; the
// tests are compiled with -ffp-contract=off too). Each plant's doc says
// whether QuickJS running examples/passing.js gives the same rows. A
// change means old fingerprints no longer reproduce: say so in the commit,
// then update the pin.
TYPED_TEST_P(PlantConformance, ThePassingTrajectoryHasPinnedBits) {
  using Numbers = TypeParam;
  using PlantOfTheTest = typename TestFixture::Plant;
  constexpr size_t kRowDoubles =
      size_t{Numbers::kShape.state_width} + size_t{Numbers::kShape.input_count};
  const std::vector<double> rows = testing::FreshTrialRows<PlantOfTheTest>(
      Numbers::kRunTrial, std::span<const double>(), Numbers::PassingController());
  if (Numbers::kFinishesOnTheLastTick) {
    ASSERT_EQ(rows.size(), kRowDoubles * Numbers::kShape.end_ticks);
  } else {
    ASSERT_FALSE(rows.empty());
    EXPECT_EQ(rows.size() % kRowDoubles, 0u);
  }
  EXPECT_TRUE(testing::SameBits(
      rows, testing::FreshTrialRows<PlantOfTheTest>(Numbers::kRunTrial, std::span<const double>(),
                                                    Numbers::PassingController())));
  testing::Report("passing controller, default scenario: %zu rows, FNV-1a %016llx",
                  rows.size() / kRowDoubles,
                  static_cast<unsigned long long>(testing::Fnv1aOfRows(rows)));
  EXPECT_EQ(testing::Fnv1aOfRows(rows), Numbers::kPassingRowsFnv1a);
}

REGISTER_TYPED_TEST_SUITE_P(PlantConformance, ReportsItsShape, StartsFromTheScenario,
                            IsNotReadyBeforeAnInit, RefusesBadScenarios,
                            RefusesANonFiniteInputWithoutTakingATick, ThePassingControllerPasses,
                            TheFailingControllerDoesNotPass, ExamplesHoldTheseLaws,
                            TwoRunsGiveTheSameBits, ThePassingTrajectoryHasPinnedBits);

}  // namespace plimsoll::sims

#endif  // PLIMSOLL_SIMS_PLANT_CONFORMANCE_H_
