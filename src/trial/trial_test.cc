// The trial runner against real controller processes: small python3
// scripts in a temporary directory, the cart-pole plant linked in.
#include "trial/trial.h"

#include <gtest/gtest.h>
#include <openssl/sha.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "trial/unprivileged_for_tests.h"

namespace plimsoll::trial {
namespace {

using namespace std::chrono_literals;

// The accepted controller u = 40θ + 5ω + x + v, evaluated left to right as
// the plant's own test does; `answer(n, x, v, th, om)` lets a script change
// what it prints on tick n (0-based). repr() is shortest round-trip.
std::string Controller(const std::string& answer_body, const std::string& prelude = "") {
  return "import os, sys\n" + prelude + "def answer(n, x, v, th, om):\n" + answer_body +
         "n = 0\n"
         "while True:\n"
         "    line = sys.stdin.readline()\n"
         "    if not line:\n"
         "        break\n"
         "    x, v, th, om = map(float, line.split())\n"
         "    sys.stdout.write(answer(n, x, v, th, om) + '\\n')\n"
         "    sys.stdout.flush()\n"
         "    n += 1\n";
}
const std::string kAccepted = "    return repr(40 * th + 5 * om + x + v)\n";
const std::string kDraft = "    return repr(40 * th + 5 * om - x - v)\n";

std::string OnTick(int tick, const std::string& statement) {
  return "    if n == " + std::to_string(tick) + ":\n        " + statement + "\n" + kAccepted;
}

class TrialTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/plimsoll-trial-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    directory_ = pattern;
    // The trial runs as testing::kUnprivilegedId when the test is root.
    ASSERT_EQ(chmod(pattern, 0777), 0);
  }
  void TearDown() override { std::system(("rm -rf " + directory_).c_str()); }

  std::string Path(const std::string& name) const { return directory_ + "/" + name; }

  // Written as the user the trial runs as (the runner takes a scenario file
  // of its own user only).
  void WriteFile(const std::string& name, const std::string& text) {
    std::ofstream(Path(name)) << text;
    EXPECT_TRUE(testing::GiveToUnprivileged(Path(name))) << name;
  }
  std::string ReadFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }

  TrialRequest Request(const std::string& script, const std::string& parameters = "[]") {
    WriteFile("scenario.json", R"({"plant": "cartpole", "parameters": )" + parameters + "}");
    WriteFile("controller.py", script);
    TrialRequest request;
    request.plant = "cartpole";
    request.scenario_path = Path("scenario.json");
    request.trajectory_path = Path("trajectory.f64");
    request.controller_argv = {"python3", Path("controller.py")};
    request.answer_deadline = 2000ms;
    return request;
  }

  // RunTrial where a sandbox runs the runner: as an unprivileged user (as
  // root it would refuse: a root controller could read it,
  // same_user_probe_test), in a child, the summary or error sent back.
  static Expected<TrialSummary> RunUnprivileged(const TrialRequest& request) {
    const std::string answer = testing::InChild([&request] {
      if (!testing::BecomeUnprivileged()) return std::string("error 0 cannot switch user");
      Expected<TrialSummary> summary = RunTrial(request);
      if (!summary.ok()) {
        return "error " + std::to_string(static_cast<int>(summary.error().code())) + " " +
               summary.error().message();
      }
      return SummaryJson(*summary).dump();
    });
    if (answer.rfind("error ", 0) == 0) {
      const size_t space = answer.find(' ', 6);
      return Failure(static_cast<ErrorCode>(std::stoi(answer.substr(6, space - 6))),
                     answer.substr(space + 1));
    }
    const nlohmann::json json = nlohmann::json::parse(answer, nullptr, false);
    if (!json.is_object())
      return Failure(ErrorCode::kInternal, "the trial's child answered: " + answer);
    TrialSummary summary;
    summary.plant = json["plant"];
    summary.scenario_sha256 = json["scenario_sha256"];
    summary.ticks = json["ticks"];
    for (TrialEnd end : {TrialEnd::kFinished, TrialEnd::kFailed, TrialEnd::kLate,
                         TrialEnd::kNonFinite, TrialEnd::kMalformed, TrialEnd::kControllerExited}) {
      if (json["ended"] == TrialEndName(end)) summary.ended = end;
    }
    summary.ended_at_seconds = json["ended_at_seconds"];
    summary.score = json["score"];
    summary.fingerprint = json["fingerprint"];
    summary.trajectory_bytes = json["trajectory_bytes"];
    summary.row_doubles = json["row_doubles"];
    summary.detail = json["detail"];
    return summary;
  }

  TrialSummary Run(const TrialRequest& request) {
    Expected<TrialSummary> summary = RunUnprivileged(request);
    if (!summary.ok()) {
      ADD_FAILURE() << summary.error().ToString();
      return {};
    }
    struct stat status;
    EXPECT_NE(stat(request.scenario_path.c_str(), &status), 0)
        << "the scenario file is still there";
    const std::string bytes = ReadFile(request.trajectory_path);
    EXPECT_EQ(bytes.size(), summary->trajectory_bytes);
    EXPECT_EQ(bytes.size(), static_cast<size_t>(summary->ticks * summary->row_doubles) * 8);
    EXPECT_EQ(summary->fingerprint, Sha256(bytes)) << "the fingerprint is not the file's SHA-256";
    return *summary;
  }

  static std::string Sha256(const std::string& bytes) {
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), digest);
    std::ostringstream hex;
    for (unsigned char byte : digest) {
      hex << "0123456789abcdef"[byte >> 4] << "0123456789abcdef"[byte & 15];
    }
    return hex.str();
  }

  std::string directory_;
};

// FNV-1a (64-bit), as cartpole_test pins the accepted trajectory's rows.
uint64_t Fnv1a(const std::string& bytes) {
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char byte : bytes) {
    hash ^= byte;
    hash *= 1099511628211ull;
  }
  return hash;
}

TEST_F(TrialTest, TheAcceptedControllerFinishesWithTheSameFingerprintTwice) {
  const TrialSummary first = Run(Request(Controller(kAccepted)));
  EXPECT_EQ(TrialEndName(first.ended), "finished");
  EXPECT_EQ(first.ticks, 2000);
  EXPECT_EQ(first.score, 20.0);
  EXPECT_EQ(first.ended_at_seconds, 20.0);
  EXPECT_EQ(first.row_doubles, 5);
  EXPECT_EQ(first.trajectory_bytes, 2000u * 5 * 8);
  EXPECT_EQ(first.scenario_sha256,
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  // The same rows as the plant's own test computes in-process, to the bit:
  // the decimal line protocol loses nothing.
  EXPECT_EQ(Fnv1a(ReadFile(Path("trajectory.f64"))), 0x0aa86f10486f2c6full);
  const TrialSummary second = Run(Request(Controller(kAccepted)));
  EXPECT_EQ(second.fingerprint, first.fingerprint);
  std::printf("[ report   ] accepted: %s\n", SummaryJson(first).dump().c_str());
}

// SPEC §10: the same controller in JavaScript on our qjs gives the same
// numbers as in Python (both evaluate 40θ + 5ω + x + v left to right in
// doubles, and both spell answers as shortest round-trip decimals).
TEST_F(TrialTest, TheAcceptedControllerInJavascriptGivesThePythonFingerprint) {
  const TrialSummary python = Run(Request(Controller(kAccepted)));
  TrialRequest request = Request("");
  WriteFile("controller.js",
            "function control(x, v, theta, omega) { return 40 * theta + 5 * omega + x + v; }\n");
  request.controller_argv = {PLIMSOLL_QJS_BINARY, "--controller", Path("controller.js")};
  const TrialSummary javascript = Run(request);
  EXPECT_EQ(TrialEndName(javascript.ended), "finished") << javascript.detail;
  EXPECT_EQ(javascript.ticks, 2000);
  EXPECT_EQ(javascript.fingerprint, python.fingerprint);

  request = Request("");
  WriteFile("controller.js",
            "function control(x, v, theta, omega) { return 40 * theta + 5 * omega - x - v; }\n");
  request.controller_argv = {PLIMSOLL_QJS_BINARY, "--controller", Path("controller.js")};
  const TrialSummary draft = Run(request);
  EXPECT_EQ(TrialEndName(draft.ended), "failed");
  EXPECT_EQ(draft.ticks, 799);
  EXPECT_EQ(draft.fingerprint, "baa2dfc23c6401607d77e1ceba0efe8c60ca0ec19f110c91d68b2e61615b1b81");
}

TEST_F(TrialTest, TickTimesAreWrittenWhenAsked) {
  TrialRequest request = Request(Controller(kDraft));
  request.tick_times_path = Path("ticks.f64");
  const TrialSummary draft = Run(request);
  const std::string bytes = ReadFile(Path("ticks.f64"));
  ASSERT_EQ(bytes.size(), static_cast<size_t>(draft.ticks) * 8);
  for (size_t at = 0; at < bytes.size(); at += 8) {
    double seconds;
    std::memcpy(&seconds, bytes.data() + at, 8);
    ASSERT_TRUE(seconds > 0 && seconds < 2.0) << "tick " << at / 8 << ": " << seconds;
  }
}

TEST_F(TrialTest, TheDraftDropsThePoleOnTick799) {
  const TrialSummary accepted = Run(Request(Controller(kAccepted)));
  const TrialSummary draft = Run(Request(Controller(kDraft)));
  EXPECT_EQ(TrialEndName(draft.ended), "failed");
  EXPECT_EQ(draft.ticks, 799);
  EXPECT_EQ(draft.ended_at_seconds, 7.99);
  EXPECT_EQ(draft.score, 7.98);
  EXPECT_NE(draft.fingerprint, accepted.fingerprint);
  std::printf("[ report   ] draft: %s\n", SummaryJson(draft).dump().c_str());
}

// The oracle's scenario (examples/oracle, docs/exams.md "The oracle"): the
// published example's, the pole released from rest at 0.2 rad. The draft
// drops it at 5.96 s, the published figure; the accepted controller
// balances and gives the same fingerprint twice. The fingerprints are the
// ones the oracle's report shows.
TEST_F(TrialTest, TheOraclesScenarioDropsTheDraftAtTheFiguresTime) {
  const std::string scenario = "[0, 0, 0.2, 0]";
  const TrialSummary first = Run(Request(Controller(kAccepted), scenario));
  const TrialSummary second = Run(Request(Controller(kAccepted), scenario));
  const TrialSummary draft = Run(Request(Controller(kDraft), scenario));
  EXPECT_EQ(TrialEndName(first.ended), "finished");
  EXPECT_EQ(first.ticks, 2000);
  EXPECT_EQ(first.score, 20.0);
  EXPECT_EQ(second.fingerprint, first.fingerprint);
  EXPECT_EQ(first.fingerprint, "3cd54e1c5721b38d8e9300c5936fa572cabd0bc14ca81194956afe0c949b3445");
  EXPECT_EQ(TrialEndName(draft.ended), "failed");
  EXPECT_EQ(draft.ticks, 596);
  EXPECT_EQ(draft.ended_at_seconds, 5.96);
  EXPECT_EQ(draft.score, 5.95);
  EXPECT_EQ(draft.fingerprint, "e374be5654b2f1946977440ba76403d6b6efd4e3a5697f302776e0c51deff691");
  EXPECT_EQ(draft.scenario_sha256, first.scenario_sha256);
  EXPECT_EQ(first.scenario_sha256,
            "83701aa673ccc5f792d2d516764d65db7833e0edde10488b9597095fcbd217bf");
  std::printf("[ report   ] oracle scenario: accepted %s; draft %s\n",
              SummaryJson(first).dump().c_str(), SummaryJson(draft).dump().c_str());
}

TEST_F(TrialTest, TheSummaryHasEveryField) {
  const nlohmann::json json = SummaryJson(Run(Request(Controller(OnTick(3, "return 'nan'")))));
  for (const char* field : {"plant", "scenario_sha256", "ticks", "ended", "ended_at_seconds",
                            "score", "fingerprint", "trajectory_bytes", "row_doubles", "detail"}) {
    EXPECT_TRUE(json.contains(field)) << field;
  }
  EXPECT_EQ(json["plant"], "cartpole");
  EXPECT_EQ(json["ended"], "non_finite");
  EXPECT_EQ(json["fingerprint"].get<std::string>().size(), 64u);
}

TEST_F(TrialTest, ALateControllerIsEnded) {
  // The deadline leaves room for python3 to start on a loaded machine (the
  // first answer's wait includes it); the sleeper would hold the runner 30 s.
  TrialRequest request = Request(Controller(OnTick(5, "import time; time.sleep(30)")));
  request.answer_deadline = 1500ms;
  const auto start = std::chrono::steady_clock::now();
  const TrialSummary summary = Run(request);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s) << "the runner waited for the sleeper";
  EXPECT_EQ(TrialEndName(summary.ended), "late");
  EXPECT_EQ(summary.ticks, 5);  // the trajectory so far
  EXPECT_EQ(summary.ended_at_seconds, 0.05);
  EXPECT_EQ(summary.score, 0.05);
}

TEST_F(TrialTest, BadAnswersEndTheTrialWithTheirReason) {
  struct Case {
    std::string statement;
    const char* ended;
  };
  for (const Case& c :
       {Case{"return 'nan'", "non_finite"}, Case{"return 'inf'", "non_finite"},
        Case{"return '1e999'", "non_finite"}, Case{"return 'garbage'", "malformed"},
        Case{"return '1 2'", "malformed"}, Case{"return ''", "malformed"},
        Case{"return '1' + ' ' * 5000", "malformed"}, Case{"sys.exit(0)", "controller_exited"},
        Case{"os.close(1); import time; time.sleep(3)", "controller_exited"}}) {
    SCOPED_TRACE(c.statement);
    const TrialSummary summary = Run(Request(Controller(OnTick(7, c.statement))));
    EXPECT_EQ(TrialEndName(summary.ended), c.ended) << summary.detail;
    EXPECT_EQ(summary.ticks, 7);
    EXPECT_EQ(summary.trajectory_bytes, 7u * 5 * 8);
  }
}

TEST_F(TrialTest, AControllerThatExitsAtOnceEndsTheTrial) {
  const TrialSummary summary = Run(Request("import sys\nsys.exit(3)\n"));
  EXPECT_EQ(TrialEndName(summary.ended), "controller_exited");
  EXPECT_EQ(summary.ticks, 0);
  EXPECT_EQ(summary.trajectory_bytes, 0u);
  EXPECT_EQ(summary.fingerprint,
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

// The controller looks for the scenario on its first tick: the file, its own
// command line, environment and descriptors. It reports to a side file.
TEST_F(TrialTest, TheControllerCannotSeeTheScenario) {
  const std::string marker = "0.123456789";
  const std::string prelude =
      "def look():\n"
      "    found = []\n"
      "    if os.path.exists(" +
      nlohmann::json(Path("scenario.json")).dump() +
      "):\n"
      "        found.append('file')\n"
      "    for name in ('cmdline', 'environ'):\n"
      "        with open('/proc/self/' + name, 'rb') as f:\n"
      "            if b'" +
      marker +
      "' in f.read():\n"
      "                found.append(name)\n"
      "    fds = sorted(int(fd) for fd in os.listdir('/proc/self/fd'))\n"
      "    with open(" +
      nlohmann::json(Path("seen.txt")).dump() +
      ", 'w') as f:\n"
      "        f.write(' '.join(found) + '|' + ' '.join(map(str, fds)))\n";
  TrialRequest request =
      Request(Controller(OnTick(0, "look()"), prelude), "[" + marker + ", 0, 0.05, 0]");
  const TrialSummary summary = Run(request);
  EXPECT_EQ(TrialEndName(summary.ended), "finished");
  EXPECT_NE(summary.scenario_sha256,
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  // Nothing found; descriptors 0, 1, 2 and the one listdir used, nothing else.
  EXPECT_EQ(ReadFile(Path("seen.txt")), "|0 1 2 3");
}

TEST_F(TrialTest, RefusesWhatCannotRun) {
  {
    TrialRequest request = Request(Controller(kAccepted), "[0, 0, 2.0, 0]");  // starts fallen
    Expected<TrialSummary> summary = RunUnprivileged(request);
    ASSERT_FALSE(summary.ok());
    EXPECT_NE(summary.error().message().find("refused the scenario"), std::string::npos)
        << summary.error().message();
    EXPECT_NE(access(request.scenario_path.c_str(), F_OK), 0);
  }
  {
    TrialRequest request = Request(Controller(kAccepted));
    request.controller_argv = {Path("no-such-controller")};
    Expected<TrialSummary> summary = RunUnprivileged(request);
    ASSERT_FALSE(summary.ok());
    EXPECT_EQ(summary.error().code(), ErrorCode::kFailedPrecondition);
    EXPECT_NE(access(request.scenario_path.c_str(), F_OK), 0);
  }
  {
    TrialRequest request = Request(Controller(kAccepted));
    request.scenario_path = Path("absent.json");
    EXPECT_FALSE(RunUnprivileged(request).ok());
  }
  {
    TrialRequest request = Request(Controller(kAccepted));
    request.plant = "no-such-plant";
    EXPECT_FALSE(RunUnprivileged(request).ok());
  }
  {
    TrialRequest request = Request(Controller(kAccepted));
    WriteFile("scenario.json", R"({"plant": "shower", "parameters": []})");
    EXPECT_FALSE(RunUnprivileged(request).ok());
  }
}

}  // namespace
}  // namespace plimsoll::trial
