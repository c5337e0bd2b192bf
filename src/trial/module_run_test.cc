// Module runs: the spec, the evaluation against the plant run by hand, the
// per-row errors, and plimsoll-model end to end.
#include "trial/module_run.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "plant_abi.h"
#include "trial/plant_registry.h"
#include "trial/sha256.h"

namespace plimsoll::trial {
namespace {

ModuleSpec CartPole(std::vector<std::vector<double>> rows, double end_time = 5) {
  return ModuleSpec{"cartpole", std::move(rows), end_time, 0.01};
}

TEST(ModuleRun, EachRowIsTheModelsFreeResponse) {
  const std::vector<double> tilted = {0.1, 0, 0.05, 0};
  Expected<std::vector<ModuleRowResult>> rows =
      EvaluateModule(CartPole({tilted, {}, {0, 0, 0, 0}}, 20));
  ASSERT_TRUE(rows.ok()) << rows.error().message();
  ASSERT_EQ(rows->size(), 3u);
  // The same row stepped by hand with zero force.
  auto plant = CreatePlant("cartpole");
  ASSERT_TRUE(plant.ok());
  ASSERT_EQ(*(*plant)->Init(tilted), PLANT_OK);
  std::vector<double> zero = {0}, applied = {0}, state(4);
  int64_t ticks = 0;
  int32_t end = PLANT_RUNNING;
  while (end == PLANT_RUNNING) end = *(*plant)->Step(zero, applied), ++ticks;
  ASSERT_TRUE((*plant)->ReadState(state).ok());
  const ModuleRowResult& first = (*rows)[0];
  EXPECT_EQ(first.row, 0u);
  EXPECT_EQ(first.ended, "failed");  // the pole falls without a controller
  EXPECT_EQ(first.ticks, ticks);
  EXPECT_EQ(first.final_state, state);
  EXPECT_EQ(first.score, *(*plant)->Score());
  EXPECT_DOUBLE_EQ(first.time, ticks * 0.01);
  // The default scenario is [], and the upright pole stays up to the end.
  EXPECT_EQ((*rows)[1].ended, "failed");
  EXPECT_EQ((*rows)[2].ended, "finished");
  EXPECT_EQ((*rows)[2].ticks, 2000);
  EXPECT_EQ((*rows)[2].score, 20.0);
}

TEST(ModuleRun, EndTimeStopsARowEarly) {
  Expected<std::vector<ModuleRowResult>> rows = EvaluateModule(CartPole({{0, 0, 0, 0}}, 0.5));
  ASSERT_TRUE(rows.ok()) << rows.error().message();
  EXPECT_EQ((*rows)[0].ended, "end_time");
  EXPECT_EQ((*rows)[0].ticks, 50);
  EXPECT_EQ((*rows)[0].time, 0.5);
}

TEST(ModuleRun, ARowsOwnErrorLeavesTheOthersRunning) {
  Expected<std::vector<ModuleRowResult>> rows =
      EvaluateModule(CartPole({{0, 0, 2.0, 0}, {1, 2}, {0, 0, 0.01, 0}}));
  ASSERT_TRUE(rows.ok()) << rows.error().message();
  EXPECT_NE((*rows)[0].error.find("out of range"), std::string::npos) << (*rows)[0].error;
  EXPECT_NE((*rows)[1].error.find("wrong count"), std::string::npos) << (*rows)[1].error;
  EXPECT_EQ((*rows)[2].error, "");
  EXPECT_EQ(ModuleRowJson((*rows)[1]),
            R"({"row":1,"error":"The model refused the row's parameters (wrong count)."})");
  const nlohmann::json line = nlohmann::json::parse(ModuleRowJson((*rows)[2]));
  EXPECT_EQ(line["row"], 2);
  EXPECT_EQ(line["final_state"].size(), 4u);
  EXPECT_EQ(line["final_state"][0].get<double>(), (*rows)[2].final_state[0]);  // round trip
}

void ExpectRefused(Expected<std::vector<ModuleRowResult>> rows, const std::string& words) {
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(rows.error().message().find(words), std::string::npos) << rows.error().message();
}

TEST(ModuleRun, RefusesASpecThatDoesNotFitTheModel) {
  ExpectRefused(EvaluateModule(ModuleSpec{"no-such-model", {}, 1, 0.01}), "no-such-model");
  ExpectRefused(EvaluateModule(ModuleSpec{"cartpole", {}, 1, 0.001}),
                "step must be the model's tick, 0.01");
  ExpectRefused(EvaluateModule(ModuleSpec{"cartpole", {}, 0.015, 0.01}), "whole number");
  ExpectRefused(EvaluateModule(ModuleSpec{"cartpole", {}, 20.01, 0.01}), "at most its end");
  ExpectRefused(EvaluateModule(ModuleSpec{"cartpole", {}, 0.001, 0.01}), "whole number");
}

TEST(ModuleRun, ParsesTheSpecStrictly) {
  Expected<ModuleSpec> spec =
      ParseModuleSpec(R"({"model":"shower","rows":[[],[1,2]],"end_time":60,"step":0.1})");
  ASSERT_TRUE(spec.ok()) << spec.error().message();
  EXPECT_EQ(spec->model, "shower");
  EXPECT_EQ(spec->rows.size(), 2u);
  EXPECT_EQ(spec->rows[1], (std::vector<double>{1, 2}));
  for (const char* bad : {"", "[]", "{\"model\":1,\"rows\":[],\"end_time\":1,\"step\":1}",
                          R"({"model":"m","rows":[],"end_time":1})",
                          R"({"model":"m","rows":[],"end_time":0,"step":1})",
                          R"({"model":"m","rows":[],"end_time":-1,"step":1})",
                          R"({"model":"m","rows":[["x"]],"end_time":1,"step":1})",
                          R"({"model":"m","rows":[1],"end_time":1,"step":1})",
                          R"({"model":"m","rows":[],"end_time":1,"step":1,"extra":0})"}) {
    EXPECT_FALSE(ParseModuleSpec(bad).ok()) << bad;
  }
  std::string many = R"({"model":"m","end_time":1,"step":1,"rows":[)";
  for (size_t i = 0; i <= kMaxModuleRows; ++i) many += i == 0 ? "[]" : ",[]";
  many += "]}";
  Expected<ModuleSpec> too_many = ParseModuleSpec(many);
  ASSERT_FALSE(too_many.ok());
  EXPECT_NE(too_many.error().message().find("more than 10000 rows"), std::string::npos);
}

TEST(ModuleRun, PlimsollModelWritesOneLinePerRowAndItsDigest) {
  char pattern[] = "/tmp/plimsoll-model-XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const std::string directory = pattern;
  std::ofstream(directory + "/spec.json")
      << R"({"model":"cartpole","rows":[[0,0,0.05,0],[9,9,9,9]],"end_time":1,"step":0.01})";
  const std::string command = std::string(PLIMSOLL_MODEL_BINARY) + " " + directory + "/spec.json " +
                              directory + "/rows.jsonl";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  char buffer[4096];
  std::string summary_text;
  for (size_t got; (got = fread(buffer, 1, sizeof buffer, pipe)) > 0;)
    summary_text.append(buffer, got);
  const int status = pclose(pipe);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << summary_text;
  std::ifstream rows_file(directory + "/rows.jsonl", std::ios::binary);
  std::stringstream rows;
  rows << rows_file.rdbuf();
  const nlohmann::json summary = nlohmann::json::parse(summary_text, nullptr, false);
  ASSERT_TRUE(summary.is_object()) << summary_text;
  EXPECT_EQ(summary["rows"], 2);
  EXPECT_EQ(summary["row_errors"], 1);
  const std::string bytes = rows.str();
  EXPECT_EQ(summary["rows_sha256"],
            Sha256Hex({reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size()}));
  EXPECT_EQ(std::count(bytes.begin(), bytes.end(), '\n'), 2);
  EXPECT_NE(bytes.find("\n{\"row\":1,\"error\":"), std::string::npos) << bytes;
  // A refused spec: exit 3, one line on stderr.
  std::ofstream(directory + "/spec.json") << R"({"model":"cartpole"})";
  const int refused = std::system((command + " 2>/dev/null").c_str());
  EXPECT_TRUE(WIFEXITED(refused) && WEXITSTATUS(refused) == 3);
  std::system(("rm -rf " + directory).c_str());
}

}  // namespace
}  // namespace plimsoll::trial
