#include "plimsoll/request.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/module_project.h"

namespace plimsoll {
namespace {

using ::testing::TestWithParam;
using ::testing::Values;

Request Javascript(std::string code = "console.log(1)") {
  Request request;
  request.javascript = JavascriptPayload{std::move(code)};
  return request;
}

Request Project(std::vector<ProjectFile> files,
                std::vector<std::vector<std::string>> steps = {{"python3", "main.py"}}) {
  Request request;
  request.project = ProjectPayload{std::move(files), std::move(steps), {}};
  return request;
}

void ExpectRefused(const Expected<Request>& validated, NotDispatched reason,
                   const std::string& fragment) {
  ASSERT_FALSE(validated.ok()) << "expected a refusal mentioning: " << fragment;
  EXPECT_EQ(NotDispatchedReason(validated.error()), reason) << validated.error().ToString();
  EXPECT_NE(validated.error().message().find(fragment), std::string::npos)
      << validated.error().message();
}

TEST(RequestTest, KindNeedsExactlyOnePayload) {
  Request request;
  EXPECT_EQ(request.PayloadCount(), 0);
  EXPECT_FALSE(request.kind().has_value());
  request.python = PythonPayload{"print(1)"};
  EXPECT_EQ(request.kind(), PayloadKind::kPython);
  request.javascript = JavascriptPayload{"1"};
  EXPECT_EQ(request.PayloadCount(), 2);
  EXPECT_FALSE(request.kind().has_value());
}

TEST(RequestTest, PayloadKindNames) {
  EXPECT_EQ(PayloadKindName(PayloadKind::kModule), "module");
  EXPECT_EQ(ParsePayloadKind("module"), PayloadKind::kModule);
  for (PayloadKind kind : {PayloadKind::kJavascript, PayloadKind::kPython, PayloadKind::kProject,
                           PayloadKind::kCell}) {
    EXPECT_EQ(ParsePayloadKind(PayloadKindName(kind)), kind);
  }
  EXPECT_FALSE(ParsePayloadKind("ruby").has_value());
}

TEST(ValidateRequestTest, AcceptsASnippetAndResolvesTheTimeout) {
  Limits limits;
  auto validated = ValidateRequest(Javascript(), limits);
  ASSERT_TRUE(validated.ok()) << validated.error().ToString();
  EXPECT_EQ(validated->timeout_ms, limits.snippet_timeout_default_ms);

  Request project = Project({{"main.py", "print(1)"}});
  validated = ValidateRequest(project, limits);
  ASSERT_TRUE(validated.ok()) << validated.error().ToString();
  EXPECT_EQ(validated->timeout_ms, limits.project_timeout_default_ms);
}

TEST(ValidateRequestTest, RefusesOtherProtocols) {
  Request request = Javascript();
  request.protocol = 2;
  ExpectRefused(ValidateRequest(request, Limits{}), NotDispatched::kProtocol, "protocol 1");
}

TEST(ValidateRequestTest, RefusesNoPayloadAndTwoPayloads) {
  ExpectRefused(ValidateRequest(Request{}, Limits{}), NotDispatched::kRequest, "no payload");
  Request two = Javascript();
  two.python = PythonPayload{"print(1)"};
  ExpectRefused(ValidateRequest(two, Limits{}), NotDispatched::kRequest, "2 payloads");
}

TEST(ValidateRequestTest, RefusesUnknownTierNamesAndNonFloors) {
  Request request = Javascript();
  request.minimum_isolation = "hypervisor";
  ExpectRefused(ValidateRequest(request, Limits{}), NotDispatched::kRequest, "is not a tier");
  request.minimum_isolation = "none";
  ExpectRefused(ValidateRequest(request, Limits{}), NotDispatched::kRequest, "is not a floor");
  request.minimum_isolation = "kernel";
  EXPECT_TRUE(ValidateRequest(request, Limits{}).ok());
}

TEST(ValidateRequestTest, RefusesTimeoutsAboveTheProviderMaximum) {
  Limits limits;
  Request request = Javascript();
  request.timeout_ms = limits.snippet_timeout_max_ms;
  EXPECT_TRUE(ValidateRequest(request, limits).ok());
  request.timeout_ms = limits.snippet_timeout_max_ms + 1;
  ExpectRefused(ValidateRequest(request, limits), NotDispatched::kRequest, "maximum");
  // The run ceiling caps any provider maximum.
  limits.snippet_timeout_max_ms = 10'000'000;
  request.timeout_ms = limits.run_ceiling_ms + 1;
  ExpectRefused(ValidateRequest(request, limits), NotDispatched::kRequest, "maximum");
}

TEST(ResolvedTimeoutMsTest, TheRequestsOwnElseTheKindsDefaultNeverAboveTheMaximumOrCeiling) {
  Limits limits;
  Request snippet = Javascript();
  EXPECT_EQ(ResolvedTimeoutMs(snippet, limits), limits.snippet_timeout_default_ms);
  snippet.timeout_ms = 1234;
  EXPECT_EQ(ResolvedTimeoutMs(snippet, limits), 1234);
  // Above the maximum (validation's refusal): the maximum, e.g. for a grant
  // opened before validation.
  snippet.timeout_ms = limits.snippet_timeout_max_ms + 1;
  EXPECT_EQ(ResolvedTimeoutMs(snippet, limits), limits.snippet_timeout_max_ms);
  Request module;
  module.module = ModulePayload{"cartpole", {{}}, 5, 0.01};
  EXPECT_EQ(ResolvedTimeoutMs(module, limits), limits.project_timeout_default_ms);
  // The run ceiling (a daemon's --run-ceiling-ms) caps defaults and maximums.
  limits.run_ceiling_ms = 300;
  EXPECT_EQ(ResolvedTimeoutMs(module, limits), 300);
  snippet.timeout_ms = 1234;
  EXPECT_EQ(ResolvedTimeoutMs(snippet, limits), 300);
  snippet.timeout_ms = 0;
  EXPECT_EQ(ResolvedTimeoutMs(snippet, limits), 300);
}

TEST(ModuleProjectTest, AModuleIsTheSpecFileOneModelStepAndTheRowsArtifact) {
  ProjectPayload project = ModuleProject(ModulePayload{"cartpole", {{0, 0.5}, {}}, 5, 0.01});
  ASSERT_EQ(project.files.size(), 1u);
  EXPECT_EQ(project.files[0].path, kModuleSpecFile);
  EXPECT_EQ(project.files[0].content,
            R"({"model":"cartpole","rows":[[0.0,0.5],[]],"end_time":5.0,"step":0.01})");
  EXPECT_EQ(project.steps, (std::vector<std::vector<std::string>>{
                               {"plimsoll-model", "module.json", "module_rows.jsonl"}}));
  EXPECT_EQ(project.artifacts, std::vector<std::string>{kModuleRowsArtifact});
  Request as_project;
  as_project.project = project;
  EXPECT_TRUE(ValidateRequest(as_project, Limits{}).ok());
}

TEST(ValidateRequestTest, DropsAMalformedTraceIdWholeWithoutRefusing) {
  Request request = Javascript();
  request.trace_id = "t-1.a:b_C";
  EXPECT_EQ(ValidateRequest(request, Limits{})->trace_id, "t-1.a:b_C");
  for (std::string bad :
       {std::string(65, 'a'), std::string("has space"), std::string("é"), std::string("a\nb")}) {
    request.trace_id = bad;
    auto validated = ValidateRequest(request, Limits{});
    ASSERT_TRUE(validated.ok());
    EXPECT_EQ(validated->trace_id, "") << bad;
  }
  request.trace_id = std::string(64, 'z');
  EXPECT_EQ(ValidateRequest(request, Limits{})->trace_id, std::string(64, 'z'));
}

TEST(ValidateRequestTest, RefusesTooManyFilesAndTooManyBytes) {
  Limits limits;
  std::vector<ProjectFile> files;
  for (int i = 0; i <= limits.max_project_files; ++i) {
    files.push_back({"f" + std::to_string(i), ""});
  }
  ExpectRefused(ValidateRequest(Project(files), limits), NotDispatched::kRequest, "201 files");
  files.resize(200);
  EXPECT_TRUE(ValidateRequest(Project(files), limits).ok());

  std::string big(static_cast<size_t>(limits.max_project_bytes), 'x');
  ExpectRefused(ValidateRequest(Project({{"big", big}}), limits), NotDispatched::kRequest,
                "bytes in total");
}

class BadPathTest : public TestWithParam<std::pair<std::string, std::string>> {};

TEST_P(BadPathTest, IsRefused) {
  const auto& [path, fragment] = GetParam();
  ExpectRefused(ValidateRequest(Project({{path, "x"}}), Limits{}), NotDispatched::kRequest,
                fragment);
}

INSTANTIATE_TEST_SUITE_P(Paths, BadPathTest,
                         Values(std::pair{std::string("/etc/passwd"), std::string("absolute")},
                                std::pair{std::string("../escape"), std::string("\"..\"")},
                                std::pair{std::string("a/../../b"), std::string("\"..\"")},
                                std::pair{std::string("a/./b"), std::string("\".\"")},
                                std::pair{std::string("a//b"), std::string("empty segment")},
                                std::pair{std::string("dir/"), std::string("empty segment")},
                                std::pair{std::string(""), std::string("is empty")},
                                std::pair{std::string("a\\b"), std::string("backslash")},
                                std::pair{std::string("a\x01"), std::string("control character")},
                                std::pair{std::string("tab\there"),
                                          std::string("control character")},
                                std::pair{std::string("a\0b", 3), std::string("NUL")},
                                std::pair{std::string("bad\xC0\xAF"), std::string("UTF-8")}));

TEST(ValidateRequestTest, RefusesRepeatedPaths) {
  ExpectRefused(ValidateRequest(Project({{"a.py", "1"}, {"b.py", "2"}, {"a.py", "3"}}), Limits{}),
                NotDispatched::kRequest, "repeats");
}

TEST(ValidateRequestTest, RefusesEmptyStepsAndNoSteps) {
  ExpectRefused(ValidateRequest(Project({{"a", "1"}}, {}), Limits{}), NotDispatched::kRequest,
                "no steps");
  ExpectRefused(ValidateRequest(Project({{"a", "1"}}, {{"ls"}, {}}), Limits{}),
                NotDispatched::kRequest, "steps[1] is empty");
  ExpectRefused(ValidateRequest(Project({{"a", "1"}}, {{""}}), Limits{}), NotDispatched::kRequest,
                "program");
  ExpectRefused(ValidateRequest(Project({{"a", "1"}}, {{"echo", "\xFF"}}), Limits{}),
                NotDispatched::kRequest, "steps[0][1] is not valid UTF-8");
}

TEST(ValidateRequestTest, ChecksArtifactPaths) {
  Request request = Project({{"a", "1"}});
  request.project->artifacts = {"out/result.txt"};
  EXPECT_TRUE(ValidateRequest(request, Limits{}).ok());
  request.project->artifacts = {"/etc/shadow"};
  ExpectRefused(ValidateRequest(request, Limits{}), NotDispatched::kRequest, "artifacts[0]");
}

TEST(ValidateRequestTest, ChecksModulePayloads) {
  Request request;
  request.module = ModulePayload{"cartpole", {{0, 0, 0.05, 0}, {}}, 5, 0.01};
  auto valid = ValidateRequest(request, Limits{});
  ASSERT_TRUE(valid.ok()) << valid.error().ToString();
  EXPECT_EQ(valid->timeout_ms, Limits{}.project_timeout_default_ms) << "a project's timeouts";
  auto refused = [&](void (*change)(Request&), const std::string& words) {
    Request bad = request;
    change(bad);
    auto result = ValidateRequest(bad, Limits{});
    ASSERT_FALSE(result.ok()) << words;
    EXPECT_EQ(result.error().not_dispatched(), NotDispatched::kRequest);
    EXPECT_NE(result.error().message().find(words), std::string::npos) << result.error().message();
  };
  refused([](Request& r) { r.module->model = ""; }, "module.model");
  refused([](Request& r) { r.module->model = "Cart"; }, "module.model");
  refused([](Request& r) { r.module->model = std::string(65, 'a'); }, "module.model");
  refused([](Request& r) { r.module->rows.resize(kMaxModuleRows + 1); }, "at most 10000");
  refused([](Request& r) { r.module->rows[1].resize(kMaxModuleRowValues + 1); }, "more than 256");
  refused([](Request& r) { r.module->rows[0][2] = std::nan(""); }, "not finite");
  refused([](Request& r) { r.module->rows[0][2] = -HUGE_VAL; }, "not finite");
  refused([](Request& r) { r.module->end_time = 0; }, "module.end_time");
  refused([](Request& r) { r.module->step = -0.01; }, "module.step");
  refused([](Request& r) { r.module->step = HUGE_VAL; }, "module.step");
  refused([](Request& r) { r.grant_profile = "crm"; }, "no grant profile");
  auto in_session = ValidateRequest(request, Limits{}, /*in_session=*/true);
  ASSERT_FALSE(in_session.ok());
  EXPECT_NE(in_session.error().message().find("outside sessions"), std::string::npos);
}

TEST(ValidateRequestTest, CellsOnlyInSessions) {
  Request request;
  request.cell = CellPayload{"python", "x = 1"};
  ExpectRefused(ValidateRequest(request, Limits{}), NotDispatched::kRequest, "session");
  EXPECT_TRUE(ValidateRequest(request, Limits{}, /*in_session=*/true).ok());
  request.cell->language = "ruby";
  ExpectRefused(ValidateRequest(request, Limits{}, true), NotDispatched::kRequest, "language");
}

TEST(ValidateRequestTest, RefusesOversizedCode) {
  Limits limits;
  limits.max_code_bytes = 10;
  ExpectRefused(ValidateRequest(Javascript(std::string(11, ' ')), limits), NotDispatched::kRequest,
                "limit is 10 bytes");
}

TEST(ValidateRequestTest, ChecksEnvironmentAndGrantProfileShapes) {
  Request request = Javascript();
  request.environment = "sha256:" + std::string(64, 'a');
  EXPECT_TRUE(ValidateRequest(request, Limits{}).ok());
  request.environment = "latest";
  ExpectRefused(ValidateRequest(request, Limits{}), NotDispatched::kRequest, "environment");
  request.environment.clear();
  request.grant_profile = "github-read";
  EXPECT_TRUE(ValidateRequest(request, Limits{}).ok());
  request.grant_profile = "../x";
  ExpectRefused(ValidateRequest(request, Limits{}), NotDispatched::kRequest, "grant_profile");
}

}  // namespace
}  // namespace plimsoll
