// Every plant's example controllers (sims/NAME/examples/{passing,failing}.js,
// docs/plants/NAME.md) run as a trial on the embedded engine, in process:
// the passing one passes, the failing one does not. The plants' own tests
// check the same laws written natively; this checks the JavaScript people
// read and copy.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "trial/javascript_controller.h"
#include "trial/plant_registry.h"
#include "trial/trial.h"

namespace plimsoll::trial {
namespace {

// What passing means for each plant (docs/plants/NAME.md): the trial
// finishes and the score reaches this.
struct PassingRule {
  std::string_view plant;
  double score;
};
constexpr PassingRule kPassing[] = {
    {"cartpole", 20.0},  // balanced for the whole 20 s
    {"shower", 0.9},     // within 38 ± 1 °C for 90 % of the last 40 s
    {"ship", 0.9},       // within 30 ± 2° for 90 % of the last 200 s
    {"buck", 0.9},       // within 5 ± 0.1 V for 90 % of the last 25 ms
    {"swingup", 0.85},   // within 0.2 rad of upright for 85 % of the last 10 s
    {"blackhole",
     0.9},           // within 0.05 M of the target orbit, |u_r| <= 0.002, 90 % of the last 1000 M
    {"twin", 0.25},  // home at rest after stopping at the star, aged <= 75 % of Earth's time
    {"satclock", 0.9},    // within ±10 ns for 90 % of the last 38 h
    {"doubleslit", 0.7},  // 70 % of the power in the 5 target bins over the last 4 s
};

std::string ReadExample(std::string_view plant, const char* name) {
  std::ifstream in(std::string(PLIMSOLL_SIMS_DIR) + "/" + std::string(plant) + "/examples/" + name);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TrialSummary Trial(std::string_view plant, const std::string& script) {
  std::string printed;
  Expected<InProcessTrial> trial =
      RunTrialInProcess(std::string(plant), {}, kAnswerDeadline, Deadline::max(),
                        [&] { return InProcessJavascriptController::Start(script, &printed); });
  EXPECT_TRUE(trial.ok()) << plant << ": " << trial.error().ToString();
  EXPECT_EQ(printed, "") << plant;
  return trial.ok() ? trial->summary : TrialSummary{};
}

TEST(PlantExamples, ThePassingControllerPassesAndTheFailingOneDoesNot) {
  for (const PlantEntry& entry : Plants()) {
    const PassingRule* rule = nullptr;
    for (const PassingRule& candidate : kPassing) {
      if (candidate.plant == entry.name) rule = &candidate;
    }
    ASSERT_NE(rule, nullptr) << entry.name << " has no passing rule here";
    const std::string passing = ReadExample(entry.name, "passing.js");
    const std::string failing = ReadExample(entry.name, "failing.js");
    ASSERT_FALSE(passing.empty()) << entry.name << ": no examples/passing.js";
    ASSERT_FALSE(failing.empty()) << entry.name << ": no examples/failing.js";
    const TrialSummary pass = Trial(entry.name, passing);
    EXPECT_EQ(TrialEndName(pass.ended), "finished") << entry.name << ": " << pass.detail;
    EXPECT_GE(pass.score, rule->score) << entry.name;
    const TrialSummary fail = Trial(entry.name, failing);
    EXPECT_FALSE(fail.ended == TrialEnd::kFinished && fail.score >= rule->score)
        << entry.name << ": the failing example passes (score " << fail.score << ")";
    std::printf("[ report   ] %.*s: passing %s score %g; failing %s at %g s, score %g\n",
                static_cast<int>(entry.name.size()), entry.name.data(),
                std::string(TrialEndName(pass.ended)).c_str(), pass.score,
                std::string(TrialEndName(fail.ended)).c_str(), fail.ended_at_seconds, fail.score);
  }
}

}  // namespace
}  // namespace plimsoll::trial
