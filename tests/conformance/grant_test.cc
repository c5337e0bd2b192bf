// Grants (SPEC §8) from inside every wall: a real upstream on loopback in
// this process that records what it received, a broker with one profile, and
// guest code calling it. On a provider whose describe says it serves grants:
// the credential arrives upstream and is nowhere the guest can look (its
// environment, its files, /proc, the answers), bypasses are refused and
// counted, the trace rides on the result. On every other provider a granted
// run is refused `unsupported` and nothing ran, so no part of this suite
// skips.
#include <gmock/gmock.h>

#include <string>

#include "broker/broker.h"
#include "broker/grants.h"
#include "broker/testing/fake_upstream.h"
#include "common/providers_under_test.h"
#include "conformance/conformance.h"
#include "plimsoll/record.h"
#include "plimsoll/session.h"

namespace plimsoll::conformance {
namespace {

using broker::testing::FakeUpstream;
using broker::testing::ReceivedRequest;
using broker::testing::UpstreamReply;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kToken[] = "sk-conformance-9d2c41f7a3b84e6f8e1d0c5b7a9f3e21";

class GrantTest : public ConformanceTest {
 protected:
  void SetUp() override {
    ConformanceTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    upstream_ = std::make_unique<FakeUpstream>([](const ReceivedRequest& request) {
      return UpstreamReply{.status = 200,
                           .headers = {{"Content-Type", "application/json"}},
                           .body = R"({"target":")" + request.target + R"("})"};
    });
    auto grants = broker::ParseGrants(
        "version: 1\nprofiles:\n  inventory:\n    base_url: " + upstream_->origin().ToString() +
            "\n    allow: [\"GET /items/*\"]\n"
            "    allowed_callers: [conformance]\n"
            "    token: {source: static, env: TOKEN}\n"
            "    max_calls: 50\n"
            "    allow_in_sessions: true\n",
        "conformance-grants.yaml");
    ASSERT_TRUE(grants.ok()) << grants.error().ToString();
    auto made = broker::Broker::Create(
        std::move(*grants), [](std::string_view) { return std::optional<std::string>(kToken); });
    ASSERT_TRUE(made.ok()) << made.error().ToString();
    broker_ = std::make_unique<broker::Broker>(std::move(*made));
  }

  std::unique_ptr<broker::RunGrant> Open() {
    auto grant = broker_->Open("inventory", "conformance", std::chrono::seconds(60), false);
    EXPECT_TRUE(grant.ok()) << grant.error().ToString();
    return grant.ok() ? std::move(*grant) : nullptr;
  }

  bool ServesGrants() const { return description().capabilities.grants; }

  // A granted run of `request`; the result, or a failure of the test.
  Result RunGranted(Request request, broker::RunGrant& grant) {
    request.grant_profile = "inventory";
    request.timeout_ms = EmulationScaledMs(7'000);  // at most 28 s: the providers' cap is 30 s
    auto result = sandbox().Run(request, &grant);
    if (!result.ok()) {
      ADD_FAILURE() << "the granted run was refused or failed: " << result.error().ToString();
      return Result{};
    }
    EXPECT_TRUE(CheckExchange(request, *result).ok()) << "the record does not match the exchange";
    return *result;
  }

  std::unique_ptr<FakeUpstream> upstream_;
  std::unique_ptr<broker::Broker> broker_;
};

// A provider without grants refuses a granted run `unsupported`; one with
// them refuses a run naming a profile it was given no grant for
// `permission`. Nothing runs either way.
TEST_P(GrantTest, ARunWithoutItsGrantIsRefusedAndNothingRuns) {
  auto grant = Open();
  ASSERT_NE(grant, nullptr);
  Request request;
  request.grant_profile = "inventory";
  request.javascript = JavascriptPayload{"host.get('/items/1')"};
  auto result = sandbox().Run(request, ServesGrants() ? nullptr : grant.get());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(NotDispatchedReason(result.error()),
            ServesGrants() ? NotDispatched::kPermission : NotDispatched::kUnsupported);
  EXPECT_TRUE(upstream_->requests().empty());
}

TEST_P(GrantTest, JavascriptReachesTheUpstreamWithTheCredentialItNeverSees) {
  ASSERT_TRUE(ServesGrants()) << "every provider serves grants (docs/grants.md)";
  auto grant = Open();
  ASSERT_NE(grant, nullptr);
  Request request;
  request.javascript = JavascriptPayload{R"(
    const a = host.get('/items/42');
    let refused = 0;
    for (const p of ['/items/%2e%2e/admin', '/admin', '/items/1?x=1', '/items//1'])
      try { host.get(p); } catch (e) { if (e.code === 'refused') refused++; }
    console.log(a.status, JSON.parse(a.body).target, refused);
  )"};
  Result result = RunGranted(request, *grant);
  EXPECT_EQ(result.exit_code, 0) << result.stderr_bytes;
  EXPECT_EQ(result.stdout_bytes, "200 /items/42 4\n") << result.stderr_bytes;
  ASSERT_EQ(upstream_->requests().size(), 1u);
  EXPECT_EQ(upstream_->requests()[0].Header("Authorization"), std::string("Bearer ") + kToken);
  ASSERT_TRUE(result.broker.has_value());
  EXPECT_EQ(result.broker->calls, 5);
  EXPECT_EQ(result.broker->denied, 4);
}

// What an agent's code could look at inside an OS-level sandbox: every
// process's environment and command line it may read, every file it may
// read outside /proc and /sys, the memory of every process it may read
// (itself at least; the agent is not dumpable), and every answer it got.
TEST_P(GrantTest, TheCredentialIsNowhereTheGuestCanLook) {
  ASSERT_TRUE(ServesGrants()) << "every provider serves grants (docs/grants.md)";
  if (!Accepts(PayloadKind::kPython)) GTEST_SKIP() << "skipped: no python payloads (embedded)";
  auto grant = Open();
  ASSERT_NE(grant, nullptr);
  Request request;
  request.python = PythonPayload{R"(
import os, re, plimsoll_host
# The token's shape, never whole in this script's file or memory: a prefix
# followed by 32 hex digits (the pattern's own text is not followed by them).
token = re.compile(rb"sk-" rb"conformance-[0-9a-f]{32}")
answers = plimsoll_host.get("/items/7").body
found, read = [], 0
for pid in os.listdir("/proc"):
    if not pid.isdigit():
        continue
    for part in ("environ", "cmdline"):
        try:
            with open(f"/proc/{pid}/{part}", "rb") as f:
                data = f.read()
            read += 1
            if token.search(data):
                found.append(f"/proc/{pid}/{part}")
        except OSError:
            pass
for top in ("/etc", "/tmp", "/work", "/run", "/usr/local", "/root", "/home", "/var"):
    for root, dirs, files in os.walk(top):
        for name in files:
            path = os.path.join(root, name)
            try:
                with open(path, "rb") as f:
                    if token.search(f.read(1 << 20)):
                        found.append(path)
                read += 1
            except OSError:
                pass
# A memory dump of every process the guest may read (itself, at least).
dumped = 0
for pid in os.listdir("/proc"):
    if not pid.isdigit():
        continue
    try:
        with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb") as mem:
            for line in maps:
                span, perms = line.split()[:2]
                if not perms.startswith("r"):
                    continue
                start, end = (int(x, 16) for x in span.split("-"))
                try:
                    mem.seek(start)
                    if token.search(mem.read(min(end - start, 64 << 20))):
                        found.append(f"memory of {pid}")
                except (OSError, OverflowError, ValueError):
                    pass
        dumped += 1
    except OSError:
        pass
print("found:", found, "read>0:", read > 0, "dumped>0:", dumped > 0,
      "answer has it:", bool(token.search(answers)))
)"};
  Result result = RunGranted(request, *grant);
  EXPECT_EQ(result.exit_code, 0) << result.stderr_bytes;
  EXPECT_EQ(result.stdout_bytes, "found: [] read>0: True dumped>0: True answer has it: False\n")
      << result.stderr_bytes;
  EXPECT_THAT(result.stdout_bytes + result.stderr_bytes, Not(HasSubstr(kToken)));
  ASSERT_EQ(upstream_->requests().size(), 1u);
  EXPECT_EQ(upstream_->requests()[0].Header("Authorization"), std::string("Bearer ") + kToken);
}

TEST_P(GrantTest, ARawSocketClientIsRefusedAndCountedAndMaxCallsHolds) {
  ASSERT_TRUE(ServesGrants()) << "every provider serves grants (docs/grants.md)";
  if (!Accepts(PayloadKind::kPython)) GTEST_SKIP() << "skipped: no python payloads (embedded)";
  auto grant = Open();
  ASSERT_NE(grant, nullptr);
  Request request;
  request.python = PythonPayload{R"(
import socket
def raw(data):
    s = socket.socket(socket.AF_UNIX)
    s.connect("/run/plimsoll/api.sock")
    s.sendall(data)
    out = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        out += chunk
    return out.split(b"\r\n")[0].decode()
lines = [
    raw(b"GET /items/%2e%2e/admin HTTP/1.1\r\nHost: x\r\n\r\n"),
    raw(b"GET /items/1\r\nX-Evil: 1 HTTP/1.1\r\n\r\n"),
    raw(b"POST /items/1 HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"),
    raw(b"GET /items/1 HTTP/1.1\r\nHost: x\r\n\r\n"),
]
ok = sum(raw(b"GET /items/%d HTTP/1.1\r\n\r\n" % i).endswith("200 OK") for i in range(100))
try:
    socket.create_connection(("127.0.0.1", 80), timeout=2)
    lines.append("network reached")
except OSError:
    lines.append("no network")
print(lines, ok)
)"};
  Result result = RunGranted(request, *grant);
  EXPECT_EQ(result.exit_code, 0) << result.stderr_bytes;
  // max_calls 50: the one good call above plus 49 of the loop's 100.
  EXPECT_EQ(result.stdout_bytes,
            "['HTTP/1.1 403 Forbidden', 'HTTP/1.1 400 Bad Request', 'HTTP/1.1 411 Length "
            "Required', 'HTTP/1.1 200 OK', 'no network'] 49\n")
      << result.stderr_bytes;
  ASSERT_TRUE(result.broker.has_value());
  EXPECT_EQ(result.broker->calls, 104);
  EXPECT_EQ(result.broker->denied, 54);
  EXPECT_EQ(upstream_->requests().size(), 50u);
}

// A session call (SPEC §9) naming the profile is served its grant for that
// call only: a kept interpreter that keeps a reference to host.* (or the
// plimsoll_host module) reaches nothing in the next call, which has none.
TEST_P(GrantTest, ASessionCallIsServedItsGrantForThatCallOnly) {
  ASSERT_TRUE(ServesGrants()) << "every provider serves grants (docs/grants.md)";
  ASSERT_TRUE(description().capabilities.sessions) << "every provider keeps sessions";
  auto session = sandbox().OpenSession(SessionOptions{});
  ASSERT_TRUE(session.ok()) << session.error().ToString();
  std::vector<std::string> languages = {"javascript"};
  if (Accepts(PayloadKind::kPython)) languages.push_back("python");
  for (const std::string& language : languages) {
    SCOPED_TRACE(language);
    const bool python = language == "python";
    const size_t upstream_before = upstream_->requests().size();
    auto grant = broker_->Open("inventory", "conformance", std::chrono::seconds(60),
                               /*in_session=*/true);
    ASSERT_TRUE(grant.ok()) << grant.error().ToString();
    Request granted;
    granted.grant_profile = "inventory";
    granted.timeout_ms = EmulationScaledMs(7'000);
    granted.cell = CellPayload{
        language, python ? "import plimsoll_host\nkept = plimsoll_host\nkept.get('/items/5').status"
                         : "var kept = host; kept.get('/items/5').status"};
    auto served = (*session)->Run(granted, grant->get());
    ASSERT_TRUE(served.ok()) << served.error().ToString();
    EXPECT_EQ(served->exit_code, 0) << served->stderr_bytes;
    ASSERT_TRUE(served->cell.has_value());
    EXPECT_EQ(served->cell->value, "200") << served->stderr_bytes;
    ASSERT_TRUE(served->broker.has_value());
    EXPECT_EQ(served->broker->calls, 1);
    // The record covers the trace, and the chain holds.
    ASSERT_TRUE(served->record.session.has_value());
    ChainState chain{served->record.session->session_sha256,
                     served->record.session->sequence - 1,
                     served->record.session->previous_sha256};
    EXPECT_TRUE(CheckExchange(granted, *served, &chain).ok())
        << "the record does not match the exchange";

    Request plain;
    plain.timeout_ms = EmulationScaledMs(7'000);
    plain.cell = CellPayload{
        language, python ? "try:\n    kept.get('/items/6')\n    reached = 1\nexcept Exception:\n"
                           "    reached = 0\nreached"
                         : "var reached = 0; try { kept.get('/items/6'); reached = 1 } catch (e) "
                           "{} reached"};
    auto unserved = (*session)->Run(plain);
    ASSERT_TRUE(unserved.ok()) << unserved.error().ToString();
    ASSERT_TRUE(unserved->cell.has_value());
    EXPECT_EQ(unserved->cell->value, "0") << unserved->stderr_bytes;
    EXPECT_FALSE(unserved->broker.has_value());
    EXPECT_EQ(upstream_->requests().size(), upstream_before + 1);

    // Naming the profile without a grant handed over: refused, nothing ran.
    auto refused = (*session)->Run(granted);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(NotDispatchedReason(refused.error()), NotDispatched::kPermission);
  }
}

INSTANTIATE_TEST_SUITE_P(Providers, GrantTest, ::testing::ValuesIn(ProvidersUnderTest()));
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GrantTest);

}  // namespace
}  // namespace plimsoll::conformance
