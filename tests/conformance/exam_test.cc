// Exams on every tier (SPEC §10, docs/exams.md): the image's plimsoll-trial
// steps the cart-pole plant against a controller sent as the project's only
// file, and the same controller gives the same fingerprint everywhere:
// JavaScript on the image's qjs (the engine's own module, so identical bits
// on every tier) and Python. The expected fingerprints are the ones the
// runner computes on the host (sims/runner/trial_test.cc pins the rows to
// the plant's own in-process run), so a tier that computes one different
// number fails here.
//
// Expected difference, gVisor (oci:runsc): gVisor does not make the /proc
// entries of a non-dumpable process root-owned (google/gvisor#160), so a
// process of the runner's own user can open the runner's descriptors there.
// The runner's proof (sims/runner/same_user_probe.h) sees that and refuses
// to start (exit 4, naming what it could read): nothing is examined under a
// wall that would let the controller reach the runner. What still holds: no
// trial runs, and the refusal says why.
#include <openssl/sha.h>

#include <nlohmann/json.hpp>

#include "conformance/conformance.h"

namespace plimsoll::conformance {
namespace {

constexpr char kAcceptedFingerprint[] = "8ba38f43b0a9067f49641258ae2e2555724e3eaad2fba84017746c7e849a5304";
constexpr char kDraftFingerprint[] = "baa2dfc23c6401607d77e1ceba0efe8c60ca0ec19f110c91d68b2e61615b1b81";

constexpr char kAcceptedJavascript[] =
    "function control(x, v, theta, omega) { return 40 * theta + 5 * omega + x + v; }\n";
constexpr char kDraftJavascript[] =
    "function control(x, v, theta, omega) { return 40 * theta + 5 * omega - x - v; }\n";
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
    if (!Accepts(PayloadKind::kProject)) {
      GTEST_SKIP() << "skipped: no project payloads (the embedded provider runs no image programs; "
                      "exams there are not built yet, docs/exams.md)";
    }
  }

  // Runs one trial: `controller` is the only file; the default scenario.
  // Returns the runner's summary, having checked that the trajectory
  // artifact's SHA-256 is the fingerprint it states.
  nlohmann::json Trial(const std::string& file, const std::string& controller,
                       const std::vector<std::string>& controller_argv) {
    std::vector<std::string> step = {"plimsoll-trial", "--plant", "cartpole", "--trajectory", "trajectory.f64",
                                     "--"};
    step.insert(step.end(), controller_argv.begin(), controller_argv.end());
    Request request;
    request.timeout_ms = 120'000;  // 2000 ticks of python3 under TCG
    request.project = ProjectPayload{{{file, controller}}, {step}, {"trajectory.f64"}};
    Result result = RunChecked(request);
    if (UnderGvisor()) {
      EXPECT_EQ(result.exit_code, 4) << result.stdout_bytes << result.stderr_bytes;
      EXPECT_NE(result.stderr_bytes.find("can read it (/proc/PID/environ, /proc/PID/fd/N"), std::string::npos)
          << result.stderr_bytes;
      EXPECT_EQ(result.stdout_bytes, "");
      return nlohmann::json::object();
    }
    EXPECT_EQ(result.exit_code, 0) << result.stderr_bytes;
    const nlohmann::json summary = nlohmann::json::parse(result.stdout_bytes, nullptr, false);
    if (!summary.is_object()) {
      ADD_FAILURE() << "no summary: stdout " << result.stdout_bytes << " stderr " << result.stderr_bytes;
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
};

TEST_P(ExamTest, TheAcceptedControllerGivesTheHostsFingerprintInJavascriptAndPython) {
  const nlohmann::json javascript =
      Trial("controller.js", kAcceptedJavascript, {"qjs", "--controller", "controller.js"});
  const nlohmann::json python = Trial("controller.py", kAcceptedPython, {"python3", "controller.py"});
  if (UnderGvisor()) return;  // refused, as the file comment says
  EXPECT_EQ(javascript.value("ended", ""), "finished");
  EXPECT_EQ(javascript.value("ticks", 0), 2000);
  EXPECT_EQ(javascript.value("fingerprint", ""), kAcceptedFingerprint);
  EXPECT_EQ(python.value("fingerprint", ""), kAcceptedFingerprint);
}

TEST_P(ExamTest, TheDraftDropsThePoleOnTheSameTickWithTheSameFingerprint) {
  const nlohmann::json draft = Trial("controller.js", kDraftJavascript, {"qjs", "--controller", "controller.js"});
  if (UnderGvisor()) return;  // refused, as the file comment says
  EXPECT_EQ(draft.value("ended", ""), "failed");
  EXPECT_EQ(draft.value("ticks", 0), 799);
  EXPECT_EQ(draft.value("ended_at_seconds", 0.0), 7.99);
  EXPECT_EQ(draft.value("fingerprint", ""), kDraftFingerprint);
}

INSTANTIATE_TEST_SUITE_P(Providers, ExamTest, ::testing::ValuesIn(ProvidersUnderTest()));
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ExamTest);

}  // namespace
}  // namespace plimsoll::conformance
