// Exams on every tier (SPEC §10, docs/exams.md): plimsoll-trial steps the
// cart-pole plant against a controller sent as the project's only file, and
// the same controller gives the same fingerprint everywhere: JavaScript on
// qjs (the engine's own module, so identical bits on every tier) and
// Python, and C compiled to WebAssembly by the runner's build command
// (plimsoll-trial --build plimsoll-cc ...: after the scenario is gone) and
// run by plimsoll-wasm-controller. On the OS-level tiers
// the image's plimsoll-trial runs; `embedded` runs the JavaScript project in
// process (src/providers/embedded/exam_project.h: the runner's library, the
// controller in the engine) and refuses the Python and C controllers
// `unsupported`, nothing ran. The expected fingerprints are the ones the
// runner computes on the host (src/trial/trial_test.cc pins the rows to
// the plant's own in-process run), so a tier that computes one different
// number fails here.
//
// A module run (the model alone, no controller) gives the rows this process
// computes, on every provider including gVisor and embedded: there is no
// controller, so nothing to prove and no scenario to hide.
//
// Expected difference, gVisor (oci:runsc): gVisor does not make the /proc
// entries of a non-dumpable process root-owned (google/gvisor#160), so a
// process of the runner's own user can open the runner's descriptors there.
// The runner's proof (src/trial/same_user_probe.h) sees that and refuses
// to start (exit 4, naming what it could read): nothing is examined under a
// wall that would let the controller reach the runner. What still holds: no
// trial runs, and the refusal says why.
#include <openssl/sha.h>

#include <nlohmann/json.hpp>

#include "conformance/conformance.h"
#include "trial/module_run.h"

namespace plimsoll::conformance {
namespace {

constexpr char kAcceptedFingerprint[] =
    "8ba38f43b0a9067f49641258ae2e2555724e3eaad2fba84017746c7e849a5304";
constexpr char kDraftFingerprint[] =
    "baa2dfc23c6401607d77e1ceba0efe8c60ca0ec19f110c91d68b2e61615b1b81";

constexpr char kAcceptedJavascript[] =
    "function control(x, v, theta, omega) { return 40 * theta + 5 * omega + x + v; }\n";
constexpr char kDraftJavascript[] =
    "function control(x, v, theta, omega) { return 40 * theta + 5 * omega - x - v; }\n";
constexpr char kAcceptedC[] =
    "double control(double x, double v, double theta, double omega, int k) {\n"
    "  (void)k;\n"
    "  return 40 * theta + 5 * omega + x + v;\n"
    "}\n";
constexpr char kAcceptedPython[] =
    "import sys\n"
    "for line in sys.stdin:\n"
    "    x, v, th, om = map(float, line.split())\n"
    "    print(repr(40 * th + 5 * om + x + v), flush=True)\n";

std::string Sha256Hex(const std::string& bytes) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), digest);
  std::string hex;
  for (unsigned char byte : digest) {
    hex += "0123456789abcdef"[byte >> 4];
    hex += "0123456789abcdef"[byte & 15];
  }
  return hex;
}

class ExamTest : public ConformanceTest {
 protected:
  void SetUp() override {
    ConformanceTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    in_process_ = description().provider == "embedded";
    if (!Accepts(PayloadKind::kProject) && !in_process_)
      GTEST_SKIP() << "skipped: no project payloads";
  }

  // Runs one trial, the project's one step: `controller` is the only file;
  // the default scenario; `build` (if any) is the runner's --build command
  // (a compile, run by the runner before the controller). Returns the
  // runner's summary, having checked that the trajectory artifact's SHA-256
  // is the fingerprint it states.
  nlohmann::json Trial(const std::string& file, const std::string& controller,
                       const std::vector<std::string>& controller_argv,
                       const std::vector<std::string>& build = {}) {
    std::vector<std::string> step = {"plimsoll-trial", "--plant", "cartpole", "--trajectory",
                                     "trajectory.f64"};
    if (!build.empty()) {
      step.push_back("--build");
      step.insert(step.end(), build.begin(), build.end());
    }
    step.push_back("--");
    step.insert(step.end(), controller_argv.begin(), controller_argv.end());
    Request request;
    request.timeout_ms = 120'000;  // 2000 ticks of python3, or clang, under TCG
    request.project = ProjectPayload{{{file, controller}}, {step}, {"trajectory.f64"}};
    if (in_process_ && controller_argv[0] != "qjs") {
      auto refused = sandbox().Run(request);
      EXPECT_FALSE(refused.ok()) << "embedded ran a " << controller_argv[0] << " controller";
      if (!refused.ok()) {
        EXPECT_EQ(refused.error().not_dispatched(), NotDispatched::kUnsupported)
            << refused.error().ToString();
      }
      return nlohmann::json::object();
    }
    Result result = RunChecked(request);
    EXPECT_EQ(result.steps.size(), 1u);
    if (!build.empty() && !result.steps.empty()) {
      std::printf("[ report   ] %s: the trial with --build %s took %lld ms\n",
                  description().provider.c_str(), build[0].c_str(),
                  static_cast<long long>(result.steps[0].duration_ms));
    }
    if (UnderGvisor()) {
      EXPECT_EQ(result.exit_code, 4) << result.stdout_bytes << result.stderr_bytes;
      EXPECT_NE(result.stderr_bytes.find("can read it (/proc/PID/environ, /proc/PID/fd/N"),
                std::string::npos)
          << result.stderr_bytes;
      EXPECT_EQ(result.stdout_bytes, "");
      return nlohmann::json::object();
    }
    EXPECT_EQ(result.exit_code, 0) << result.stderr_bytes;
    const nlohmann::json summary = nlohmann::json::parse(result.stdout_bytes, nullptr, false);
    if (!summary.is_object()) {
      ADD_FAILURE() << "no summary: stdout " << result.stdout_bytes << " stderr "
                    << result.stderr_bytes;
      return nlohmann::json::object();
    }
    if (result.artifacts.size() != 1) {
      ADD_FAILURE() << "no trajectory artifact";
      return summary;
    }
    EXPECT_FALSE(result.artifacts[0].truncated);
    EXPECT_EQ(Sha256Hex(result.artifacts[0].content), summary.value("fingerprint", ""));
    EXPECT_EQ(result.artifacts[0].content.size(), summary.value("trajectory_bytes", uint64_t{0}));
    std::printf("[ report   ] %s (tier %s): %s\n", description().provider.c_str(),
                std::string(TierName(result.isolation)).c_str(), summary.dump().c_str());
    return summary;
  }

  bool UnderGvisor() const { return GetParam() == "oci:runsc"; }
  bool in_process_ = false;  // embedded: the trial runs in the provider's process
};

TEST_P(ExamTest, TheAcceptedControllerGivesTheHostsFingerprintInJavascriptAndPython) {
  const nlohmann::json javascript =
      Trial("controller.js", kAcceptedJavascript, {"qjs", "--controller", "controller.js"});
  const nlohmann::json python =
      Trial("controller.py", kAcceptedPython, {"python3", "controller.py"});
  if (UnderGvisor()) return;  // refused, as the file comment says
  EXPECT_EQ(javascript.value("ended", ""), "finished");
  EXPECT_EQ(javascript.value("ticks", 0), 2000);
  EXPECT_EQ(javascript.value("fingerprint", ""), kAcceptedFingerprint);
  if (in_process_) return;  // no Python here: refused above
  EXPECT_EQ(python.value("fingerprint", ""), kAcceptedFingerprint);
}

// C compiled inside the sandbox (clang-14 for wasm32-wasi, the image's) by
// the runner's build command and run as WebAssembly gives the bits of every
// other language: wasm fixes every f64 operation, and the law is the same
// operations in the same order. Under gVisor the runner refuses before it
// builds anything (its proof, as for every controller).
TEST_P(ExamTest, TheAcceptedLawInCCompiledInTheSandboxGivesTheSameFingerprint) {
  const nlohmann::json c =
      Trial("controller.c", kAcceptedC, {"plimsoll-wasm-controller", "controller.wasm"},
            {"plimsoll-cc", "--plant", "cartpole", "controller.c", "-o", "controller.wasm"});
  if (UnderGvisor() || in_process_) return;  // refused, as the file comment says
  EXPECT_EQ(c.value("ended", ""), "finished");
  EXPECT_EQ(c.value("fingerprint", ""), kAcceptedFingerprint);
}

TEST_P(ExamTest, TheDraftDropsThePoleOnTheSameTickWithTheSameFingerprint) {
  const nlohmann::json draft =
      Trial("controller.js", kDraftJavascript, {"qjs", "--controller", "controller.js"});
  if (UnderGvisor()) return;  // refused, as the file comment says
  EXPECT_EQ(draft.value("ended", ""), "failed");
  EXPECT_EQ(draft.value("ticks", 0), 799);
  EXPECT_EQ(draft.value("ended_at_seconds", 0.0), 7.99);
  EXPECT_EQ(draft.value("fingerprint", ""), kDraftFingerprint);
}

// What cannot run ends the same way everywhere: plimsoll-trial's exit status
// and one line on stderr, no summary.
TEST_P(ExamTest, ARefusedScenarioAndAMissingControllerEndAsPlimsollTrialEnds) {
  Request request;
  request.timeout_ms = 120'000;
  request.project =
      ProjectPayload{{{"controller.js", kAcceptedJavascript},
                      {"scenario.json", R"({"parameters": [0, 0, 2.0, 0]})"}},
                     {{"plimsoll-trial", "--plant", "cartpole", "--scenario", "scenario.json",
                       "--trajectory", "t.f64", "--", "qjs", "--controller", "controller.js"}},
                     {}};
  Result refused = RunChecked(request);
  EXPECT_EQ(refused.exit_code, UnderGvisor() ? 4 : 3) << refused.stderr_bytes;
  EXPECT_EQ(refused.stdout_bytes, "");
  if (!UnderGvisor()) {
    EXPECT_NE(refused.stderr_bytes.find("refused the scenario"), std::string::npos)
        << refused.stderr_bytes;
  }

  request.project = ProjectPayload{{{"other.js", kAcceptedJavascript}},
                                   {{"plimsoll-trial", "--plant", "cartpole", "--trajectory",
                                     "t.f64", "--", "qjs", "--controller", "controller.js"}},
                                   {"t.f64"}};
  Result missing = RunChecked(request);
  if (UnderGvisor()) return;
  EXPECT_EQ(missing.exit_code, 0) << missing.stderr_bytes;
  const nlohmann::json summary = nlohmann::json::parse(missing.stdout_bytes, nullptr, false);
  ASSERT_TRUE(summary.is_object()) << missing.stdout_bytes << missing.stderr_bytes;
  EXPECT_EQ(summary.value("ended", ""), "controller_exited");
  EXPECT_EQ(summary.value("ticks", -1), 0);
  EXPECT_NE(missing.stderr_bytes.find("cannot read controller.js"), std::string::npos)
      << missing.stderr_bytes;
}

// A module run (docs/exams.md, "Module runs"): the model once per row, no
// controller, on every tier the same rows as this process computes with the
// same library: the artifact byte for byte, its digest in the summary. A
// refused row is an error in its own line; the others run.
TEST_P(ExamTest, AModuleRunGivesTheHostsRowsOnEveryTier) {
  Request request;
  request.timeout_ms = 120'000;
  request.module =
      ModulePayload{"cartpole", {{0, 0, 0.05, 0}, {0, 0, 0, 0}, {0, 0, 3, 0}, {}}, 5, 0.01};
  Result result = RunChecked(request);
  EXPECT_EQ(result.kind, PayloadKind::kModule);
  ASSERT_EQ(result.exit_code, 0) << result.stderr_bytes;
  ASSERT_EQ(result.artifacts.size(), 1u);
  EXPECT_EQ(result.artifacts[0].path, kModuleRowsArtifact);
  const std::string& rows = result.artifacts[0].content;

  const trial::ModuleSpec spec{request.module->model, request.module->rows, request.module->end_time,
                              request.module->step};
  Expected<std::vector<trial::ModuleRowResult>> expected = trial::EvaluateModule(spec);
  ASSERT_TRUE(expected.ok()) << expected.error().message();
  const trial::ModuleOutput output = trial::FormatModuleOutput(spec, *expected);
  EXPECT_EQ(rows, output.rows_jsonl);
  EXPECT_EQ(result.stdout_bytes, output.summary_line);
  const nlohmann::json summary = nlohmann::json::parse(result.stdout_bytes, nullptr, false);
  ASSERT_TRUE(summary.is_object()) << result.stdout_bytes;
  EXPECT_EQ(summary.value("rows_sha256", ""), Sha256Hex(rows));
  EXPECT_EQ(summary.value("rows", 0), 4);
  EXPECT_EQ(summary.value("row_errors", 0), 1);
  EXPECT_NE(rows.find(R"({"row":2,"error":)"), std::string::npos) << rows;
  std::printf("[ report   ] %s (tier %s): module run, %s", description().provider.c_str(),
              std::string(TierName(result.isolation)).c_str(), result.stdout_bytes.c_str());
}

INSTANTIATE_TEST_SUITE_P(Providers, ExamTest, ::testing::ValuesIn(ProvidersUnderTest()));
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ExamTest);

}  // namespace
}  // namespace plimsoll::conformance
