// C controllers end to end on this host: plimsoll-cc's compile step with
// the host's clang-14 (the image carries the same Debian packages), the
// module run by plimsoll-wasm-controller as the runner's controller
// process, and the module checks. The same laws in JavaScript give the same
// bits: the accepted law, and every plant's example controllers
// (sims/NAME/examples/{passing,failing}.c against the .js they copy).
#include "trial/controller/c_controller.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "trial/controller/wasm_controller.h"
#include "trial/controller_process.h"
#include "trial/javascript_controller.h"
#include "trial/plant_registry.h"
#include "trial/trial.h"

namespace plimsoll::trial {
namespace {

namespace fs = std::filesystem;

constexpr char kAccepted[] = "8ba38f43b0a9067f49641258ae2e2555724e3eaad2fba84017746c7e849a5304";
constexpr char kDraft[] = "baa2dfc23c6401607d77e1ceba0efe8c60ca0ec19f110c91d68b2e61615b1b81";
constexpr ControllerShape kCartPole = {4, 1};

class CControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/plimsoll-c-controller-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    directory_ = pattern;
  }
  void TearDown() override { fs::remove_all(directory_); }

  // Compiles `source` for `shape` into NAME.wasm; the compile's status.
  Status Compile(const std::string& name, const std::string& source,
                 ControllerShape shape = kCartPole) {
    std::ofstream(directory_ / (name + ".c")) << source;
    CompileOptions options;
    options.source = directory_ / (name + ".c");
    options.output = directory_ / (name + ".wasm");
    options.shape = shape;
    options.work_directory = directory_ / (name + ".build");
    return CompileCController(options);
  }

  Expected<InProcessTrial> Trial(const std::string& name, const std::string& plant = "cartpole",
                                 std::chrono::milliseconds deadline = kAnswerDeadline) {
    const std::string module = (directory_ / (name + ".wasm")).string();
    return RunTrialInProcess(
        plant, {}, deadline, Deadline::max(), [&]() -> Expected<std::unique_ptr<Controller>> {
          auto started = ControllerProcess::Start({PLIMSOLL_WASM_CONTROLLER_BINARY, module});
          if (!started.ok()) return started.error();
          return std::unique_ptr<Controller>(std::move(*started));
        });
  }

  fs::path directory_;
};

TEST_F(CControllerTest, TheAcceptedLawInCGivesTheFingerprintOfEveryOtherLanguage) {
  ASSERT_TRUE(Compile("accepted",
                      "double control(double x, double v, double theta, double omega, int k) {\n"
                      "  (void)k;\n"
                      "  return 40 * theta + 5 * omega + x + v;\n"
                      "}\n")
                  .ok());
  ASSERT_TRUE(Compile("draft",
                      "double control(double x, double v, double theta, double omega, int k) {\n"
                      "  (void)k;\n"
                      "  return 40 * theta + 5 * omega - x - v;\n"
                      "}\n")
                  .ok());
  Expected<InProcessTrial> accepted = Trial("accepted");
  ASSERT_TRUE(accepted.ok()) << accepted.error().message();
  EXPECT_EQ(TrialEndName(accepted->summary.ended), "finished") << accepted->summary.detail;
  EXPECT_EQ(accepted->summary.ticks, 2000);
  EXPECT_EQ(accepted->summary.fingerprint, kAccepted);
  Expected<InProcessTrial> draft = Trial("draft");
  ASSERT_TRUE(draft.ok()) << draft.error().message();
  EXPECT_EQ(TrialEndName(draft->summary.ended), "failed");
  EXPECT_EQ(draft->summary.ticks, 799);
  EXPECT_EQ(draft->summary.fingerprint, kDraft);
}

// A law with math library calls: C's cos and sin are wasi-libc's, compiled
// into the controller's module; JavaScript's Math.cos and Math.sin are
// QuickJS's own, compiled into the engine's module. Where they differ in
// the last bit, the trajectories part from that tick on.
TEST_F(CControllerTest, ComparesACAndAJavascriptLawWithMathCallsTickByTick) {
  ASSERT_TRUE(Compile("trig",
                      "#include <math.h>\n"
                      "double control(double x, double v, double theta, double omega, int k) {\n"
                      "  (void)k;\n"
                      "  return 40 * sin(theta) + 5 * omega * cos(theta) + x + v;\n"
                      "}\n")
                  .ok());
  Expected<InProcessTrial> c = Trial("trig");
  ASSERT_TRUE(c.ok()) << c.error().message();
  std::string printed;
  Expected<InProcessTrial> js =
      RunTrialInProcess("cartpole", {}, kAnswerDeadline, Deadline::max(), [&] {
        return InProcessJavascriptController::Start(
            "function control(x, v, theta, omega) {\n"
            "  return 40 * Math.sin(theta) + 5 * omega * Math.cos(theta) + x + v;\n"
            "}\n",
            &printed);
      });
  ASSERT_TRUE(js.ok()) << js.error().message();
  EXPECT_EQ(TrialEndName(c->summary.ended), "finished") << c->summary.detail;
  EXPECT_EQ(TrialEndName(js->summary.ended), "finished") << js->summary.detail;
  ASSERT_EQ(c->trajectory.size(), js->trajectory.size());
  const size_t row_bytes = 5 * sizeof(double);
  size_t first_difference = c->trajectory.size();
  for (size_t at = 0; at < c->trajectory.size(); ++at) {
    if (c->trajectory[at] != js->trajectory[at]) {
      first_difference = at;
      break;
    }
  }
  std::printf("[ report   ] sin/cos law: C %s, JavaScript %s; first differing tick: %s\n",
              c->summary.fingerprint.c_str(), js->summary.fingerprint.c_str(),
              first_difference == c->trajectory.size()
                  ? "none"
                  : std::to_string(first_difference / row_bytes).c_str());
}

TEST_F(CControllerTest, SeveralInputsUseTheVectorForm) {
  ASSERT_TRUE(Compile("vector",
                      "void control(const double *state, double *inputs, int k) {\n"
                      "  inputs[0] = state[0] + state[1];\n"
                      "  inputs[1] = state[2] * state[3] + k;\n"
                      "}\n",
                      {4, 2})
                  .ok());
  auto controller = ControllerProcess::Start(
      {PLIMSOLL_WASM_CONTROLLER_BINARY, (directory_ / "vector.wasm").string()});
  ASSERT_TRUE(controller.ok()) << controller.error().message();
  std::string answer;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  const std::array<double, 4> first = {1, 2, 3, 4}, second = {0.1, 0.2, -1, 1e300};
  ASSERT_EQ((*controller)->Converse(first, deadline, &answer), Exchange::kAnswered);
  EXPECT_EQ(answer, "3 12");
  ASSERT_EQ((*controller)->Converse(second, deadline, &answer), Exchange::kAnswered);
  EXPECT_EQ(answer, "0.30000000000000004 -1e+300");
}

// The plants' example controllers, in C and in JavaScript. What passing
// means is src/trial/plant_examples_test.cc's table: the trial finishes
// and the score reaches `passing_score`. A law is `exact` when it uses only
// + - * / sqrt fmin fmax fabs (Math.min/max/abs/sqrt): WebAssembly and
// JavaScript both round each of those as IEEE 754 says, so the C and the
// JavaScript trajectories must be the same bits. That is every example but
// three: swingup's passing (cos), twin's passing (acosh) and twin's failing
// (tanh, atanh). Those call the math library: in C wasi-libc's, compiled
// into the controller's module; in JavaScript QuickJS's Math functions,
// which call the same wasi-libc libm compiled into the engine's module. They
// are expected to agree too, but that is a fact about two builds of one
// library, so it is reported, not asserted.
struct ExampleRule {
  std::string_view plant;
  double passing_score;
  bool passing_exact;
  bool failing_exact;
};
constexpr ExampleRule kExampleRules[] = {
    {"cartpole", 20.0, true, true}, {"shower", 0.9, true, true},    {"ship", 0.9, true, true},
    {"buck", 0.9, true, true},      {"swingup", 0.85, false, true}, {"blackhole", 0.9, true, true},
    {"twin", 0.25, false, false},   {"satclock", 0.9, true, true},  {"doubleslit", 0.7, true, true},
};

std::string ReadExample(std::string_view plant, const std::string& file) {
  std::ifstream in(std::string(PLIMSOLL_SIMS_DIR) + "/" + std::string(plant) + "/examples/" + file);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

double RowValue(const std::string& trajectory, size_t at) {
  double value;
  std::memcpy(&value, trajectory.data() + at, sizeof value);
  return value;
}

// "identical (N ticks)", or where the two trajectories part: the first
// tick and column whose bytes differ, with both values (%a: every bit), or
// the tick where the shorter one ends.
std::string CompareTrajectories(const std::string& c, const std::string& js, int row_doubles) {
  const size_t row_bytes = static_cast<size_t>(row_doubles) * sizeof(double);
  const size_t common = std::min(c.size(), js.size());
  char line[256];
  for (size_t at = 0; at < common; at += sizeof(double)) {
    if (std::memcmp(c.data() + at, js.data() + at, sizeof(double)) != 0) {
      std::snprintf(line, sizeof line, "first differs at tick %zu, column %zu: C %a, JavaScript %a",
                    at / row_bytes, at % row_bytes / sizeof(double), RowValue(c, at),
                    RowValue(js, at));
      return line;
    }
  }
  if (c.size() != js.size()) {
    std::snprintf(line, sizeof line, "the same up to tick %zu, where %s ends", common / row_bytes,
                  c.size() < js.size() ? "C" : "JavaScript");
    return line;
  }
  return "identical (" + std::to_string(c.size() / row_bytes) + " ticks)";
}

TEST_F(CControllerTest, EveryPlantsExamplesInCMatchTheirJavascriptTickByTick) {
  for (const PlantEntry& entry : Plants()) {
    const ExampleRule* rule = nullptr;
    for (const ExampleRule& candidate : kExampleRules) {
      if (candidate.plant == entry.name) rule = &candidate;
    }
    ASSERT_NE(rule, nullptr) << entry.name << " has no rule here";
    Expected<std::unique_ptr<Plant>> plant = entry.create();
    ASSERT_TRUE(plant.ok()) << entry.name << ": " << plant.error().message();
    const ControllerShape shape = {static_cast<uint32_t>((*plant)->shape().state_width),
                                   static_cast<uint32_t>((*plant)->shape().input_count)};
    const std::string name(entry.name);
    for (const bool passing : {true, false}) {
      const std::string example = passing ? "passing" : "failing";
      const std::string c_source = ReadExample(entry.name, example + ".c");
      const std::string js_source = ReadExample(entry.name, example + ".js");
      ASSERT_FALSE(c_source.empty()) << name << ": no examples/" << example << ".c";
      ASSERT_FALSE(js_source.empty()) << name << ": no examples/" << example << ".js";
      const std::string module = name + "_" + example;
      const Status compiled = Compile(module, c_source, shape);
      ASSERT_TRUE(compiled.ok()) << module << ": " << compiled.error().message();
      Expected<InProcessTrial> c = Trial(module, name);
      ASSERT_TRUE(c.ok()) << module << ": " << c.error().message();
      std::string printed;
      Expected<InProcessTrial> js = RunTrialInProcess(
          name, {}, kAnswerDeadline, Deadline::max(),
          [&] { return InProcessJavascriptController::Start(js_source, &printed); });
      ASSERT_TRUE(js.ok()) << module << ": " << js.error().message();
      EXPECT_EQ(printed, "") << module;

      const TrialSummary &in_c = c->summary, &in_js = js->summary;
      const bool exact = passing ? rule->passing_exact : rule->failing_exact;
      const std::string comparison =
          CompareTrajectories(c->trajectory, js->trajectory, in_c.row_doubles);
      std::printf("[ report   ] %s %s (%s): C %s %s, JavaScript %s %s: %s\n", name.c_str(),
                  example.c_str(), exact ? "exact arithmetic" : "math library calls",
                  in_c.fingerprint.c_str(), std::string(TrialEndName(in_c.ended)).c_str(),
                  in_js.fingerprint.c_str(), std::string(TrialEndName(in_js.ended)).c_str(),
                  comparison.c_str());

      // The outcome is the same in both languages, and it is the example's.
      const auto passes = [&](const TrialSummary& s) {
        return s.ended == TrialEnd::kFinished && s.score >= rule->passing_score;
      };
      EXPECT_EQ(TrialEndName(in_c.ended), TrialEndName(in_js.ended))
          << module << ": " << in_c.detail;
      EXPECT_EQ(passes(in_c), passes(in_js)) << module;
      EXPECT_EQ(passes(in_c), passing)
          << module << ": ended " << TrialEndName(in_c.ended) << ", score " << in_c.score;
      if (exact) {
        EXPECT_EQ(in_c.fingerprint, in_js.fingerprint) << module << ": " << comparison;
        EXPECT_EQ(in_c.score, in_js.score) << module;
        EXPECT_EQ(in_c.ticks, in_js.ticks) << module;
      }
    }
  }
}

void ExpectAuthorError(const Status& status, const std::string& words) {
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(status.error().message().find(words), std::string::npos) << status.error().message();
}

TEST_F(CControllerTest, RefusesAControllerThatImportsAnything) {
  ExpectAuthorError(Compile("printing",
                            "#include <stdio.h>\n"
                            "double control(double x, double v, double t, double w, int k) {\n"
                            "  printf(\"%d\\n\", k);\n"
                            "  return x + v + t + w;\n"
                            "}\n"),
                    "imports wasi_snapshot_preview1.");
  ExpectAuthorError(Compile("declared",
                            "__attribute__((import_module(\"env\"), import_name(\"peek\")))\n"
                            "double peek(int what);\n"
                            "double control(double x, double v, double t, double w, int k) {\n"
                            "  return peek(k) + x + v + t + w;\n"
                            "}\n"),
                    "imports env.peek (and 0 more): a controller may import nothing");
  ExpectAuthorError(Compile("clock",
                            "#include <time.h>\n"
                            "double control(double x, double v, double t, double w, int k) {\n"
                            "  (void)k;\n"
                            "  return (double)time(0) + x + v + t + w;\n"
                            "}\n"),
                    "imports wasi_snapshot_preview1.clock_time_get");
  EXPECT_FALSE(fs::exists(directory_ / "printing.wasm")) << "a refused module is removed";
}

TEST_F(CControllerTest, AWrongSignatureOrNoControlIsTheAuthorsToFix) {
  ExpectAuthorError(Compile("narrow", "double control(double x, int k) { return x + k; }\n"),
                    "did not compile");
  ExpectAuthorError(Compile("vector_for_one",
                            "void control(const double *s, double *u, int k) { u[0] = s[0]; }\n"),
                    "did not compile");
  ExpectAuthorError(Compile("none", "double helper(double x) { return x; }\n"), "did not compile");
  ExpectAuthorError(Compile("syntax", "double control(double x, { return }\n"), "did not compile");
  CompileOptions missing;
  missing.source = directory_ / "absent.c";
  missing.output = directory_ / "absent.wasm";
  missing.shape = kCartPole;
  missing.work_directory = directory_ / "absent.build";
  ExpectAuthorError(CompileCController(missing), "not a readable regular file");
}

TEST_F(CControllerTest, OnlyPlimsollCcsModulesLoad) {
  // A module without the glue's exports: the wasm_module_test module
  // shapes are refused the same way; here a real one from clang.
  std::ofstream(directory_ / "bare.c") << "double twice(double x) { return 2 * x; }\n";
  ASSERT_EQ(
      std::system(("clang-14 --target=wasm32-wasi -O2 -mexec-model=reactor "
                   "-Wl,--export=twice -o " +
                   (directory_ / "bare.wasm").string() + " " + (directory_ / "bare.c").string())
                      .c_str()),
      0);
  std::ifstream in(directory_ / "bare.wasm", std::ios::binary);
  const std::vector<uint8_t> bare((std::istreambuf_iterator<char>(in)),
                                  std::istreambuf_iterator<char>());
  Expected<std::unique_ptr<WasmController>> loaded = WasmController::Load(bare);
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.error().message().find("does not export plimsoll_buffer"), std::string::npos)
      << loaded.error().message();
}

TEST_F(CControllerTest, ATrapOrAnEndlessLoopEndsTheTrialNotTheRunner) {
  ASSERT_TRUE(Compile("wild",
                      "double control(double x, double v, double t, double w, int k) {\n"
                      "  if (k == 3) *(volatile double *)0xfffffff0u = x;\n"
                      "  return v + t + w;\n"
                      "}\n")
                  .ok());
  Expected<InProcessTrial> wild = Trial("wild");
  ASSERT_TRUE(wild.ok()) << wild.error().message();
  EXPECT_EQ(TrialEndName(wild->summary.ended), "controller_exited");
  EXPECT_EQ(wild->summary.ticks, 3);

  ASSERT_TRUE(
      Compile("deep",
              "static double down(double x, int n) { return n == 0 ? x : down(x, n - 1) + 1; }\n"
              "double control(double x, double v, double t, double w, int k) {\n"
              "  return down(x + v + t + w, k == 1 ? 100000000 : 1);\n"
              "}\n")
          .ok());
  Expected<InProcessTrial> deep = Trial("deep");
  ASSERT_TRUE(deep.ok()) << deep.error().message();
  EXPECT_EQ(TrialEndName(deep->summary.ended), "controller_exited");
  EXPECT_EQ(deep->summary.ticks, 1);

  ASSERT_TRUE(Compile("endless",
                      "double control(double x, double v, double t, double w, int k) {\n"
                      "  volatile int spin = 1;\n"
                      "  while (k == 2 && spin) {}\n"
                      "  return x + v + t + w;\n"
                      "}\n")
                  .ok());
  Expected<InProcessTrial> endless = Trial("endless", "cartpole", std::chrono::milliseconds(300));
  ASSERT_TRUE(endless.ok()) << endless.error().message();
  EXPECT_EQ(TrialEndName(endless->summary.ended), "late");
  EXPECT_EQ(endless->summary.ticks, 2);
}

int RunCommand(const std::string& command) {
  const int status = std::system((command + " >/dev/null 2>&1").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST_F(CControllerTest, ThePlimsollCcCommandExitsAsDocumented) {
  const std::string cc = PLIMSOLL_CC_BINARY;
  const std::string source = (directory_ / "law.c").string();
  std::ofstream(source) << "double control(double x, double v, double t, double w, int k) {\n"
                           "  (void)k;\n  return 40 * t + 5 * w + x + v;\n}\n";
  std::ofstream(directory_ / "bad.c") << "double control(void) { return 0; }\n";
  const std::string out = (directory_ / "law.wasm").string();
  EXPECT_EQ(RunCommand(cc + " --plant cartpole " + source + " -o " + out), 0);
  EXPECT_TRUE(fs::exists(out));
  EXPECT_TRUE(fs::exists(out + ".build/controller_glue.c"));
  EXPECT_EQ(RunCommand(std::string(PLIMSOLL_WASM_CONTROLLER_BINARY) + " " + out + " </dev/null"),
            0);
  EXPECT_EQ(RunCommand(std::string(PLIMSOLL_WASM_CONTROLLER_BINARY)), 2);
  EXPECT_EQ(RunCommand(std::string(PLIMSOLL_WASM_CONTROLLER_BINARY) + " " + source), 1)
      << "C source is not a module";
  EXPECT_EQ(RunCommand("echo 1 2 3 | " + std::string(PLIMSOLL_WASM_CONTROLLER_BINARY) + " " + out),
            1)
      << "a state line of the wrong width";
  EXPECT_EQ(RunCommand(cc + " --plant cartpole " + (directory_ / "bad.c").string() + " -o " + out),
            1);
  EXPECT_EQ(RunCommand(cc + " " + source + " -o " + out), 2);
  EXPECT_EQ(RunCommand(cc + " --plant cartpole --bogus " + source + " -o " + out), 2);
  EXPECT_EQ(RunCommand(cc + " --plant no-such-plant " + source + " -o " + out), 3);
}

// What a command printed on stdout and stderr, and its exit status.
struct Printed {
  int exit_code = -1;
  std::string output;
};
Printed RunCapturing(const std::string& command) {
  Printed printed;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return printed;
  char buffer[4096];
  for (size_t got; (got = fread(buffer, 1, sizeof buffer, pipe)) > 0;) {
    printed.output.append(buffer, got);
  }
  const int status = pclose(pipe);
  printed.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return printed;
}

// A C controller's compile is the agent's code. Run as a step before the
// runner, with the hidden scenario beside it (how exams were built before),
// `#include "scenario.json"` prints the file in clang's error and `.incbin`
// embeds it in the module, silently. Run by the runner (--build), after it
// read and deleted the file, both find nothing: the build fails (exit 5)
// and no trial starts. The file spells a parameter as no runner output
// would (a trailing zero), so those bytes anywhere mean the file leaked.
TEST_F(CControllerTest, TheCompileCannotReadTheScenarioWhenTheRunnerBuildsIt) {
  const std::string marker = "0.01234567890123450";
  const std::string scenario =
      R"({"plant": "cartpole", "parameters": [)" + marker + R"(, 0.0, 0.050, 0.0]})";
  const std::string law =
      "double control(double x, double v, double theta, double omega, int k) {\n"
      "  (void)x; (void)v; (void)theta; (void)omega;\n"
      "  int n = 0;\n"
      "  while (leaked[n] != 0) ++n;\n"
      "  return k < n ? leaked[k] / 65536.0 : 0.0;\n"  // the file's bytes as forces
      "}\n";
  std::ofstream(directory_ / "include.c")
      << "static const unsigned char leaked[] = {0};\n#include \"scenario.json\"\n"
      << law;
  std::ofstream(directory_ / "incbin.c")
      << "__asm__(\".section .rodata.leaked,\\\"\\\",@\\n.globl leaked\\n"
         ".type leaked,@object\\nleaked:\\n.incbin \\\"scenario.json\\\"\\n.byte 0\\n"
         ".size leaked, . - leaked\\n\");\n"
         "extern const unsigned char leaked[];\n"
      << law;
  ASSERT_EQ(chmod(directory_.c_str(), 0777), 0);  // the runner runs as kUnprivilegedId
  const std::string in_directory = "cd " + directory_.string() + " && ";
  const std::string cc = std::string(PLIMSOLL_CC_BINARY) + " --plant cartpole ";
  auto write_scenario = [&] {
    std::ofstream(directory_ / "scenario.json") << scenario;
    ASSERT_EQ(chown((directory_ / "scenario.json").c_str(), geteuid() == 0 ? 65534 : geteuid(),
                    geteuid() == 0 ? 65534 : getegid()),
              0);
  };

  // Before: the compile as a step of its own, the scenario beside it.
  write_scenario();
  const Printed included = RunCapturing(in_directory + cc + "include.c -o include.wasm");
  EXPECT_EQ(included.exit_code, 1);
  EXPECT_NE(included.output.find(marker), std::string::npos)
      << "the attack this test guards against no longer works as written:\n"
      << included.output;
  const Printed embedded = RunCapturing(in_directory + cc + "incbin.c -o incbin.wasm");
  EXPECT_EQ(embedded.exit_code, 0) << embedded.output;
  std::ifstream module(directory_ / "incbin.wasm", std::ios::binary);
  const std::string bytes{std::istreambuf_iterator<char>(module), std::istreambuf_iterator<char>()};
  EXPECT_NE(bytes.find(marker), std::string::npos) << "the module did not embed the scenario";

  // Now: the runner runs the compile once the file is gone.
  const std::string as =
      geteuid() == 0 ? "setpriv --reuid 65534 --regid 65534 --clear-groups " : "";
  for (const char* name : {"include", "incbin"}) {
    SCOPED_TRACE(name);
    write_scenario();
    fs::remove(directory_ / "controller.wasm");
    const Printed trial = RunCapturing(
        in_directory + as + PLIMSOLL_TRIAL_BINARY +
        " --plant cartpole --scenario scenario.json --trajectory t.f64 --build " + cc + name +
        ".c -o controller.wasm -- " + PLIMSOLL_WASM_CONTROLLER_BINARY + " controller.wasm");
    EXPECT_EQ(trial.exit_code, 5) << trial.output;
    EXPECT_EQ(trial.output.find(marker), std::string::npos) << trial.output;
    EXPECT_NE(trial.output.find(std::string(name) == "include"
                                    ? "'scenario.json' file not found"
                                    : "Could not find incbin file 'scenario.json'"),
              std::string::npos)
        << trial.output;
    EXPECT_NE(trial.output.find("plimsoll-trial: The build command"), std::string::npos)
        << trial.output;
    EXPECT_FALSE(fs::exists(directory_ / "scenario.json"));
    EXPECT_FALSE(fs::exists(directory_ / "controller.wasm"));
    EXPECT_FALSE(fs::exists(directory_ / "t.f64")) << "a trial started";
  }
}

}  // namespace
}  // namespace plimsoll::trial
