// Projects (SPEC §2): files, ordered shell-free steps in one fresh sandbox,
// per-step results, outcomes and artifacts, on every provider that accepts
// them (others skip). The decisions the agent documents in
// src/guest/protocol.h: a failing step stops the rest (outcome stays
// completed); a step that cannot start is 127 (not found) or 126 and
// setup_failed; the deadline covers all steps together and a step killed at
// it is 124, timed_out, with later steps not listed; the top-level exit code
// and outputs are the last step's; missing and symlinked artifacts are left
// out; the artifact budget truncates.
#include <chrono>

#include "conformance/conformance.h"

namespace plimsoll::conformance {
namespace {

using Argv = std::vector<std::string>;

std::string Hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (unsigned char c : bytes) {
    hex += kDigits[c >> 4];
    hex += kDigits[c & 15];
  }
  return hex;
}

std::string AllBytes(size_t repeat) {
  std::string bytes;
  for (size_t r = 0; r < repeat; ++r) {
    for (int i = 0; i < 256; ++i) bytes += static_cast<char>(i);
  }
  return bytes;
}

ProjectPayload Project(std::vector<ProjectFile> files, std::vector<Argv> steps,
                       std::vector<std::string> artifacts = {}) {
  return ProjectPayload{std::move(files), std::move(steps), std::move(artifacts)};
}

class ProjectTest : public ConformanceTest {
 protected:
  void SetUp() override {
    ConformanceTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (!Accepts(PayloadKind::kProject)) GTEST_SKIP() << "skipped: no project payloads";
  }

  Result RunProject(ProjectPayload project, int64_t timeout_ms = 0) {
    Request request;
    request.timeout_ms = timeout_ms;
    request.project = std::move(project);
    auto result = sandbox().Run(request);
    if (!result.ok()) {
      ADD_FAILURE() << "the run was refused or failed: " << result.error().ToString();
      return Result{};
    }
    EXPECT_TRUE(CheckExchange(request, *result).ok()) << "the record does not match the exchange";
    EXPECT_EQ(result->kind, PayloadKind::kProject);
    EXPECT_TRUE(result->outcome.has_value()) << "a project result without an outcome";
    return *result;
  }

  static std::string OutcomeOf(const Result& result) {
    return result.outcome ? std::string(ProjectOutcomeName(*result.outcome)) : "(none)";
  }
};

TEST_P(ProjectTest, StepsRunInOrderInOneSandbox) {
  Result result =
      RunProject(Project({{"main.py", "import sys\nprint('main', sys.argv[1:])\n"}},
                         {{"python3", "-c", "open('state.txt', 'w').write('from step 1')"},
                          {"python3", "main.py", "a b", "c"},
                          {"python3", "-c", "print(open('state.txt').read())"},
                          {"/bin/sh", "-c", "echo fourth; echo to-stderr >&2"}}));
  EXPECT_EQ(OutcomeOf(result), "completed");
  ASSERT_EQ(result.steps.size(), 4u);
  EXPECT_EQ(result.steps[0].stdout_bytes, "");
  EXPECT_EQ(result.steps[1].stdout_bytes, "main ['a b', 'c']\n");
  EXPECT_EQ(result.steps[2].stdout_bytes, "from step 1\n");
  EXPECT_EQ(result.steps[3].stdout_bytes, "fourth\n");
  EXPECT_EQ(result.steps[3].stderr_bytes, "to-stderr\n");
  for (const StepResult& step : result.steps) {
    EXPECT_EQ(step.exit_code, 0) << step.stderr_bytes;
    EXPECT_FALSE(step.timed_out);
  }
  // The top level is the last step's.
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.stdout_bytes, "fourth\n");
  EXPECT_EQ(result.stderr_bytes, "to-stderr\n");
  EXPECT_FALSE(result.timed_out);
}

TEST_P(ProjectTest, EachStepReportsItsCommandExitCodeOutputsAndDuration) {
  const Argv sleeper = {"python3", "-c",
                        "import sys, time; time.sleep(0.3); print('slept'); "
                        "print('note', file=sys.stderr); sys.exit(0)"};
  const Argv quick = {"python3", "-c", "print('quick')"};
  Result result = RunProject(Project({}, {sleeper, quick}));
  ASSERT_EQ(result.steps.size(), 2u);
  EXPECT_EQ(result.steps[0].command, sleeper);
  EXPECT_EQ(result.steps[1].command, quick);
  EXPECT_EQ(result.steps[0].stdout_bytes, "slept\n");
  EXPECT_EQ(result.steps[0].stderr_bytes, "note\n");
  EXPECT_GE(result.steps[0].duration_ms, 250);
  EXPECT_LT(result.steps[1].duration_ms, result.steps[0].duration_ms);
  EXPECT_GE(result.duration_ms, result.steps[0].duration_ms);
  EXPECT_FALSE(result.steps[0].stdout_truncated);
  EXPECT_FALSE(result.steps[0].stderr_truncated);
}

TEST_P(ProjectTest, AFailingStepStopsTheRest) {
  Result result =
      RunProject(Project({}, {{"python3", "-c", "print('one')"},
                              {"python3", "-c", "import sys; print('two'); sys.exit(5)"},
                              {"python3", "-c", "print('never')"}}));
  EXPECT_EQ(OutcomeOf(result), "completed");
  ASSERT_EQ(result.steps.size(), 2u);
  EXPECT_EQ(result.steps[1].exit_code, 5);
  EXPECT_EQ(result.exit_code, 5);
  EXPECT_EQ(result.stdout_bytes, "two\n");
}

TEST_P(ProjectTest, AStepKilledByASignalIs128PlusTheSignal) {
  Result result = RunProject(
      Project({}, {{"python3", "-c", "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"},
                   {"python3", "-c", "print('never')"}}));
  EXPECT_EQ(OutcomeOf(result), "completed");
  ASSERT_EQ(result.steps.size(), 1u);
  EXPECT_EQ(result.exit_code, 128 + 15);
}

TEST_P(ProjectTest, AMissingProgramIsSetupFailedWith127) {
  Result result = RunProject(Project({}, {{"python3", "-c", "print('first')"},
                                          {"no-such-program-anywhere", "x"},
                                          {"python3", "-c", "print('never')"}}));
  EXPECT_EQ(OutcomeOf(result), "setup_failed");
  ASSERT_EQ(result.steps.size(), 2u);
  EXPECT_EQ(result.steps[0].stdout_bytes, "first\n");
  EXPECT_EQ(result.steps[1].exit_code, 127);
  EXPECT_NE(result.steps[1].stderr_bytes.find("no-such-program-anywhere"), std::string::npos)
      << result.steps[1].stderr_bytes;
  EXPECT_EQ(result.exit_code, 127);
}

TEST_P(ProjectTest, ANonExecutableProgramIsSetupFailedWith126) {
  Result result = RunProject(Project({{"tool.sh", "#!/bin/sh\necho ran\n"}}, {{"./tool.sh"}}));
  EXPECT_EQ(OutcomeOf(result), "setup_failed");
  ASSERT_EQ(result.steps.size(), 1u);
  EXPECT_EQ(result.exit_code, 126);
  EXPECT_EQ(result.stdout_bytes, "");
}

TEST_P(ProjectTest, TheDeadlineStopsTheRunWithTimedOut) {
  AwaitWarmSandbox();
  // Under software emulation two python3 starts take most of 1 s.
  const int64_t timeout_ms = EmulationScaledMs(1'000);
  auto start = std::chrono::steady_clock::now();
  Result result = RunProject(
      Project({}, {{"python3", "-c", "print('started')"},
                   {"python3", "-c", "import time; print('sleeping', flush=True); time.sleep(60)"},
                   {"python3", "-c", "print('never')"}}),
      timeout_ms);
  EXPECT_LT(std::chrono::steady_clock::now() - start,
            std::chrono::milliseconds(timeout_ms + 5'000));
  EXPECT_EQ(OutcomeOf(result), "timed_out");
  ASSERT_EQ(result.steps.size(), 2u) << "later steps are not listed";
  EXPECT_FALSE(result.steps[0].timed_out);
  EXPECT_TRUE(result.steps[1].timed_out);
  EXPECT_EQ(result.steps[1].exit_code, kExitTimedOut);
  EXPECT_EQ(result.steps[1].stdout_bytes, "sleeping\n");
  EXPECT_TRUE(result.timed_out);
  EXPECT_EQ(result.exit_code, kExitTimedOut);
}

TEST_P(ProjectTest, TheDeadlineCoversAllStepsTogether) {
  // Each nap is well under the deadline, three together are over it: the
  // first two finish, the third is cut. What a loaded machine changes is
  // only the start of each step (python3 under gVisor takes 0.2-0.5 s when
  // the other core is busy), so the naps are /bin/sleep, which starts in
  // milliseconds, and the two that must fit leave 0.6 s (1 s under software
  // emulation) for their two starts. A slower start only makes the third
  // nap end later, which is the side the test does not depend on.
  const bool emulated = UnderSoftwareEmulation();
  const Argv nap = {"/bin/sleep", emulated ? "1.5" : "1"};
  Result result = RunProject(Project({}, {nap, nap, nap, nap}),
                             /*timeout_ms=*/emulated ? 4'000 : 2'600);
  EXPECT_EQ(OutcomeOf(result), "timed_out");
  ASSERT_EQ(result.steps.size(), 3u);
  EXPECT_EQ(result.steps[0].exit_code, 0);
  EXPECT_EQ(result.steps[1].exit_code, 0);
  EXPECT_TRUE(result.steps[2].timed_out);
}

TEST_P(ProjectTest, OutputCapsApplyToEachStep) {
  const int64_t cap = description().limits.output_cap_bytes;
  Result result = RunProject(Project(
      {}, {{"python3", "-c", "import sys; sys.stdout.write('z' * " + std::to_string(cap * 2) + ")"},
           {"python3", "-c", "print('small')"}}));
  ASSERT_EQ(result.steps.size(), 2u);
  EXPECT_TRUE(result.steps[0].stdout_truncated);
  EXPECT_EQ(static_cast<int64_t>(result.steps[0].stdout_bytes.size()), cap);
  EXPECT_FALSE(result.steps[1].stdout_truncated);
  EXPECT_EQ(result.steps[1].stdout_bytes, "small\n");
}

TEST_P(ProjectTest, FilesArriveWithNestedDirectoriesAndExactBytes) {
  const std::string binary = AllBytes(3);
  Result result = RunProject(Project({{"main.py", R"py(import os
for directory, _, names in sorted(os.walk(".")):
    for name in sorted(names):
        path = os.path.join(directory, name)[2:]
        if path == "main.py":
            continue
        data = open(path, "rb").read()
        print(path, len(data), data.hex() if path.endswith(".bin") else data.decode())
)py"},
                                      {"a/b/c/deep.txt", "deep"},
                                      {"a/shallow.txt", "shallow"},
                                      {"data/blob.bin", binary},
                                      {"empty.txt", ""}},
                                     {{"python3", "main.py"}}));
  EXPECT_EQ(result.exit_code, 0) << result.stderr_bytes;
  EXPECT_EQ(result.stdout_bytes,
            "empty.txt 0 \n"
            "a/shallow.txt 7 shallow\n"
            "a/b/c/deep.txt 4 deep\n"
            "data/blob.bin 768 " +
                Hex(binary) + "\n");
}

TEST_P(ProjectTest, ArtifactsComeBackByteForByte) {
  const std::string binary = AllBytes(4);
  Result result =
      RunProject(Project({{"payload.bin", binary}},
                         {{"python3", "-c",
                           "import os, shutil\n"
                           "os.makedirs('out/deep/er')\n"
                           "shutil.copyfile('payload.bin', 'out/deep/er/result.bin')\n"
                           "open('report.txt', 'w').write('done\\n')\n"
                           "open('empty.out', 'w').close()\n"}},
                         {"report.txt", "out/deep/er/result.bin", "missing.txt", "empty.out"}));
  EXPECT_EQ(result.exit_code, 0) << result.stderr_bytes;
  ASSERT_EQ(result.artifacts.size(), 3u) << "the missing artifact is left out, the rest come back";
  EXPECT_EQ(result.artifacts[0].path, "report.txt");
  EXPECT_EQ(result.artifacts[0].content, "done\n");
  EXPECT_EQ(result.artifacts[1].path, "out/deep/er/result.bin");
  EXPECT_EQ(Hex(result.artifacts[1].content), Hex(binary));
  EXPECT_EQ(result.artifacts[2].path, "empty.out");
  EXPECT_EQ(result.artifacts[2].content, "");
  for (const Artifact& artifact : result.artifacts) EXPECT_FALSE(artifact.truncated);
}

TEST_P(ProjectTest, ArtifactsAreCollectedEvenWhenAStepFails) {
  Result result = RunProject(Project(
      {}, {{"python3", "-c", "open('partial.txt', 'w').write('half'); raise SystemExit(2)"}},
      {"partial.txt"}));
  EXPECT_EQ(result.exit_code, 2);
  ASSERT_EQ(result.artifacts.size(), 1u);
  EXPECT_EQ(result.artifacts[0].content, "half");
}

TEST_P(ProjectTest, ArtifactsShareOneCappedBudget) {
  const int64_t cap = description().limits.max_artifact_bytes;
  const int64_t each = cap * 3 / 4;
  Result result =
      RunProject(Project({},
                         {{"python3", "-c",
                           "open('first.bin', 'wb').write(b'1' * " + std::to_string(each) +
                               ")\n"
                               "open('second.bin', 'wb').write(b'2' * " +
                               std::to_string(each) +
                               ")\n"
                               "open('third.bin', 'wb').write(b'3' * 10)\n"}},
                         {"first.bin", "second.bin", "third.bin"}));
  EXPECT_EQ(result.exit_code, 0) << result.stderr_bytes;
  ASSERT_EQ(result.artifacts.size(), 3u);
  int64_t total = 0;
  for (const Artifact& artifact : result.artifacts)
    total += static_cast<int64_t>(artifact.content.size());
  EXPECT_LE(total, cap);
  EXPECT_EQ(result.artifacts[0].content, std::string(static_cast<size_t>(each), '1'));
  EXPECT_FALSE(result.artifacts[0].truncated);
  EXPECT_TRUE(result.artifacts[1].truncated);
  EXPECT_EQ(result.artifacts[1].content, std::string(static_cast<size_t>(cap - each), '2'));
  EXPECT_TRUE(result.artifacts[2].truncated) << "the budget was spent";
  EXPECT_EQ(result.artifacts[2].content, "");
}

TEST_P(ProjectTest, EachRunStartsFromAFreshWorkAndTmp) {
  Result first = RunProject(Project(
      {{"only-in-first.txt", "1"}},
      {{"python3", "-c",
        "open('/work/left-behind', 'w').write('x'); open('/tmp/left-behind', 'w').write('x')"}}));
  ASSERT_EQ(first.exit_code, 0) << first.stderr_bytes;
  Result second = RunProject(Project(
      {{"only-in-second.txt", "2"}},
      {{"python3", "-c",
        "import os; print(sorted(os.listdir('/work')), os.path.exists('/tmp/left-behind'))"}}));
  EXPECT_EQ(second.stdout_bytes, "['only-in-second.txt'] False\n") << second.stderr_bytes;
}

TEST_P(ProjectTest, StepsRunInWorkAsAnUnprivilegedUser) {
  Result result = RunProject(Project({}, {{"python3", "-c",
                                           "import os; print(os.getcwd(), os.getuid() != 0, "
                                           "os.geteuid() != 0)"}}));
  EXPECT_EQ(result.stdout_bytes, "/work True True\n") << result.stderr_bytes;
}

TEST_P(ProjectTest, NodeRunsAProject) {
  Result result = RunProject(Project(
      {{"main.js", "console.log([1, 2, 3].map(x => x * 2).join(','))"}}, {{"node", "main.js"}}));
  // SPEC §7 puts node in the guest image (image/variants/base/recipe installs it): an image
  // without it is a broken image, not a host precondition.
  ASSERT_NE(result.exit_code, 127)
      << "the guest image has no node (SPEC §7 says it has): " << result.stderr_bytes;
  EXPECT_EQ(result.exit_code, 0) << result.stderr_bytes;
  EXPECT_EQ(result.stdout_bytes, "2,4,6\n");
}

INSTANTIATE_TEST_SUITE_P(Providers, ProjectTest, ::testing::ValuesIn(ProvidersUnderTest()));
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ProjectTest);

}  // namespace
}  // namespace plimsoll::conformance
