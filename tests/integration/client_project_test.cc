// plimsoll::Client end to end with a project result from the real plimsolld
// binary on the linux provider: two steps, a non-UTF-8 input file, a
// non-UTF-8 artifact and step output (which can travel only as base64), and
// the run record, which the client verifies (CheckExchange) before it hands
// the result back; then a module run (its rows an artifact the record binds). The other client
// suites use the embedded provider in-process (snippets only) or a fake daemon.
//
// Needs root and the guest image (PLIMSOLL_IMAGE, set by CTest): skipped
// without them, and failed instead when PLIMSOLL_REQUIRE_PROVIDERS lists
// linux (tests/common/host_preconditions.h).
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "child_daemon.h"
#include "common/host_preconditions.h"
#include "daemon_test_client.h"
#include "plimsoll/client.h"
#include "plimsoll/record.h"
#include "plimsoll/wire.h"

namespace plimsoll::daemon::testing {
namespace {

using std::chrono::milliseconds;

// Bytes that are not UTF-8 (a lone 0xff, a truncated sequence, NUL).
const std::string kInputBytes("\xff\xfe\x00\x01\xc3", 5);
// What the first step writes to out.bin: the input reversed, then 0x80.
const std::string kArtifactBytes("\xc3\x01\x00\xfe\xff\x80", 6);

ProjectPayload TwoStepProject() {
  ProjectPayload project;
  project.files = {
      {"data.bin", kInputBytes},
      {"make.py",
       "data = open('data.bin', 'rb').read()\n"
       "open('out.bin', 'wb').write(data[::-1] + b'\\x80')\n"
       "print('made', len(data))\n"},
  };
  project.steps = {
      {"python3", "make.py"},
      // Non-UTF-8 stdout: the artifact's first two bytes, raw.
      {"python3", "-c", "import sys; sys.stdout.buffer.write(open('out.bin', 'rb').read()[:2])"},
  };
  project.artifacts = {"out.bin"};
  return project;
}

std::string ImageIdentity(const std::string& image) {
  std::string identity;
  std::ifstream(image + "/identity") >> identity;
  return identity;
}

TEST(ClientProjectTest, AProjectResultFromTheRealDaemonIsDecodedAndVerified) {
  const std::string missing = plimsoll::testing::MissingHostPrecondition("linux");
  if (!missing.empty()) {
    if (plimsoll::testing::IsRequired("linux")) {
      GTEST_FAIL() << "PLIMSOLL_REQUIRE_PROVIDERS lists linux but: " << missing;
    }
    GTEST_SKIP() << "skipped: " << missing;
  }
  const char* image = std::getenv("PLIMSOLL_IMAGE");
  ASSERT_NE(image, nullptr) << "CTest sets PLIMSOLL_IMAGE (plimsoll_test_uses_image)";

  ChildDaemon daemon(
      PLIMSOLLD_BINARY,
      {"--provider", "linux", "--dev", "--listen", "127.0.0.1:0", "--metrics-listen", "off"},
      {"PLIMSOLL_IMAGE=" + std::string(image), "PATH=/usr/sbin:/usr/bin:/sbin:/bin"});
  const uint16_t port = ApiPortFrom(daemon.ReadLine(milliseconds(120'000)));
  ASSERT_NE(port, 0) << daemon.ReadStderr();

  auto client = Client::Open("http://127.0.0.1:" + std::to_string(port));
  ASSERT_TRUE(client.ok()) << client.error().ToString();
  Request request;
  request.timeout_ms = 30'000;
  request.project = TwoStepProject();
  // Client::Run has already checked the exchange (digests from what it sent
  // and what it decoded, the record's own digest) when it returns a result.
  auto result = client->Run(request);
  ASSERT_TRUE(result.ok()) << result.error().ToString();

  EXPECT_EQ(result->provider, "linux");
  EXPECT_EQ(result->isolation, Tier::kContainer);
  EXPECT_EQ(result->kind, PayloadKind::kProject);
  EXPECT_EQ(result->environment, ImageIdentity(image));
  ASSERT_TRUE(result->outcome.has_value());
  EXPECT_EQ(*result->outcome, ProjectOutcome::kCompleted);
  EXPECT_EQ(result->exit_code, 0);
  ASSERT_EQ(result->steps.size(), 2u);
  EXPECT_EQ(result->steps[0].command, request.project->steps[0]);
  EXPECT_EQ(result->steps[0].exit_code, 0) << result->steps[0].stderr_bytes;
  EXPECT_EQ(result->steps[0].stdout_bytes, "made 5\n");
  EXPECT_EQ(result->steps[1].command, request.project->steps[1]);
  EXPECT_EQ(result->steps[1].exit_code, 0) << result->steps[1].stderr_bytes;
  EXPECT_EQ(result->steps[1].stdout_bytes, kArtifactBytes.substr(0, 2));
  ASSERT_EQ(result->artifacts.size(), 1u);
  EXPECT_EQ(result->artifacts[0].path, "out.bin");
  EXPECT_EQ(result->artifacts[0].content, kArtifactBytes);
  EXPECT_FALSE(result->artifacts[0].truncated);

  // The record binds those decoded bytes: the client's check passes on them
  // and fails on a single changed byte of the artifact or of a step's output.
  EXPECT_TRUE(CheckExchange(request, *result).ok());
  EXPECT_EQ(result->record.isolation, result->isolation);
  EXPECT_EQ(result->record.request_sha256, RequestDigest(request));
  Result changed = *result;
  changed.artifacts[0].content.back() = '\x81';
  EXPECT_FALSE(CheckExchange(request, changed).ok()) << "a changed artifact byte went unseen";
  changed = *result;
  changed.steps[1].stdout_bytes[0] = '\xc2';
  EXPECT_FALSE(CheckExchange(request, changed).ok()) << "a changed step byte went unseen";

  // The same exchange on the wire: the non-UTF-8 bytes travel as base64
  // (what the client decoded above), in the request and in the answer.
  const std::string body = RequestToJson(request);
  ASSERT_TRUE(nlohmann::json::parse(body)["project"]["files"][0]["content"].is_object()) << body;
  HttpReply raw = SendOnce(port, {.method = "POST", .target = "/v1/runs", .body = body});
  ASSERT_EQ(raw.status, 200u) << raw.body;
  nlohmann::json answer = nlohmann::json::parse(raw.body);
  EXPECT_TRUE(answer["artifacts"][0]["content"].contains("base64")) << raw.body;
  EXPECT_TRUE(answer["steps"][1]["stdout"].contains("base64")) << raw.body;

  // A module run through the same client: the rows come back as the
  // artifact, bound by the record like any artifact (docs/exams.md).
  Request module;
  module.timeout_ms = 30'000;
  module.module = ModulePayload{"cartpole", {{0, 0, 0.05, 0}, {0, 0, 9, 0}}, 1, 0.01};
  auto rows = client->Run(module);
  ASSERT_TRUE(rows.ok()) << rows.error().ToString();
  EXPECT_EQ(rows->kind, PayloadKind::kModule);
  EXPECT_EQ(rows->exit_code, 0) << rows->stderr_bytes;
  ASSERT_EQ(rows->artifacts.size(), 1u);
  EXPECT_EQ(rows->artifacts[0].path, kModuleRowsArtifact);
  const std::string& lines = rows->artifacts[0].content;
  EXPECT_EQ(lines.rfind("{\"row\":0,\"ended\":\"end_time\",\"ticks\":100,", 0), 0u) << lines;
  EXPECT_NE(lines.find("\n{\"row\":1,\"error\":"), std::string::npos) << lines;
  EXPECT_EQ(rows->record.request_sha256, RequestDigest(module));
  Result altered = *rows;
  altered.artifacts[0].content[10] ^= 1;
  EXPECT_FALSE(CheckExchange(module, altered).ok()) << "a changed row went unseen";

  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.Wait(milliseconds(60'000)), 0) << daemon.ReadStderr();
}

}  // namespace
}  // namespace plimsoll::daemon::testing
