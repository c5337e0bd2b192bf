// Bundles and their verification on real exchanges: runs and a session on
// the embedded provider in this process (records made by the sandbox and
// checked with CheckExchange exactly as a client does), signed with a fresh
// key; then every kind of tampering the issue names, each refused with its
// own reason; and two processes appending at once.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "attest/bundle.h"
#include "attest/dsse.h"
#include "attest/keys.h"
#include "attest/replay.h"
#include "attest/statement.h"
#include "attest/verify.h"
#include "plimsoll/granted_calls.h"
#include "plimsoll/record.h"
#include "plimsoll/sandbox.h"
#include "plimsoll/session.h"
#include "plimsoll/wire.h"

namespace plimsoll::attest {
namespace {

namespace fs = std::filesystem;

class AttestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/plimsoll-attest-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    directory_ = pattern;
    ASSERT_TRUE(GenerateKeyFile(directory_ / "key.pem").ok());
    auto key = LoadPrivateKey(directory_ / "key.pem");
    ASSERT_TRUE(key.ok()) << key.error().message();
    key_.emplace(std::move(*key));
    auto sandbox = Sandbox::Open("embedded");
    ASSERT_TRUE(sandbox.ok()) << sandbox.error().message();
    sandbox_.emplace(std::move(*sandbox));
    bundle_ = directory_ / "bundle.jsonl";
  }
  void TearDown() override { fs::remove_all(directory_); }

  void AppendEntry(BundleEntry entry,
                   const std::function<std::string(const BundleLink&)>& statement,
                   const SigningKey& key) {
    ASSERT_TRUE(AppendToBundle(bundle_, [&](const BundleLink& link) {
                  return SignedEntryLine(entry, statement(link), key, link);
                }).ok());
  }

  // One checked run, signed and appended.
  void SignRun(const std::string& code) {
    Request request;
    request.javascript = JavascriptPayload{code};
    auto result = sandbox_->Run(request);
    ASSERT_TRUE(result.ok()) << result.error().message();
    ASSERT_TRUE(CheckExchange(request, *result).ok());
    BundleEntry entry;
    entry.request_json = RequestToJson(request);
    entry.result_json = ResultToJson(*result);
    AppendEntry(
        entry, [&](const BundleLink& link) { return RunStatement(result->record, link); }, *key_);
  }

  // One checked run that names the grant profile "inventory" (served by a
  // stand-in for the broker that answers every call 200), signed and appended.
  void SignGrantedRun(const std::string& code) {
    struct Granted : GrantedCalls {
      HostCallAnswer Call(std::string_view, std::string_view, std::string_view, std::string_view,
                          std::chrono::steady_clock::time_point) override {
        return HostCallAnswer{200, "application/json", "[]"};
      }
      BrokerSummary Summary() const override { return BrokerSummary{"inventory", 1}; }
      std::vector<::plimsoll::Advice> Advice() const override { return {}; }
    } granted;
    Request request;
    request.grant_profile = "inventory";
    request.javascript = JavascriptPayload{code};
    auto result = sandbox_->Run(request, &granted);
    ASSERT_TRUE(result.ok()) << result.error().message();
    ASSERT_TRUE(CheckExchange(request, *result).ok());
    BundleEntry entry;
    entry.request_json = RequestToJson(request);
    entry.result_json = ResultToJson(*result);
    AppendEntry(
        entry, [&](const BundleLink& link) { return RunStatement(result->record, link); }, *key_);
  }

  // A session of `cells` calls and its close, each signed and appended.
  void SignSession(int cells) {
    auto session = sandbox_->OpenSession(SessionOptions{});
    ASSERT_TRUE(session.ok()) << session.error().message();
    ChainState chain;
    chain.session_sha256 = SessionIdDigest((*session)->id());
    for (int i = 0; i < cells; ++i) {
      Request request;
      request.cell = CellPayload{
          "javascript", "var n = (typeof n === 'number' ? n : 0) + " + std::to_string(i) + "; n"};
      auto result = (*session)->Run(request);
      ASSERT_TRUE(result.ok()) << result.error().message();
      ASSERT_TRUE(CheckExchange(request, *result, &chain).ok());
      BundleEntry entry;
      entry.kind = EntryKind::kSessionCall;
      entry.session_id = (*session)->id();
      entry.request_json = RequestToJson(request);
      entry.result_json = ResultToJson(*result);
      AppendEntry(
          entry, [&](const BundleLink& link) { return RunStatement(result->record, link); }, *key_);
    }
    const SessionClose close = (*session)->Close();
    BundleEntry entry;
    entry.kind = EntryKind::kSessionClose;
    entry.session_id = (*session)->id();
    entry.close_json = SessionCloseToJson(close);
    AppendEntry(
        entry,
        [&](const BundleLink& link) { return CloseStatement(chain.session_sha256, close, link); },
        *key_);
  }

  std::vector<std::string> Lines() {
    auto bundle = ReadBundle(bundle_);
    EXPECT_TRUE(bundle.ok());
    return bundle.ok() ? bundle->lines : std::vector<std::string>{};
  }

  Verdict VerifyLines(const std::vector<std::string>& lines, bool torn = false,
                      const Expectations& expect = {}) {
    BundleFile file{lines, torn};
    return VerifyBundle(file, key_->verifying_key(), expect);
  }

  static bool Mentions(const Verdict& verdict, const std::string& words) {
    for (const std::string& problem : verdict.problems) {
      if (problem.find(words) != std::string::npos) return true;
    }
    return false;
  }

  fs::path directory_, bundle_;
  std::optional<SigningKey> key_;
  std::optional<Sandbox> sandbox_;
};

TEST_F(AttestTest, AnIntactBundleVerifies) {
  SignRun("console.log(6*7)");
  SignSession(3);
  SignRun("console.log('done')");
  struct stat status;
  ASSERT_EQ(stat(bundle_.c_str(), &status), 0);
  EXPECT_EQ(status.st_mode & 0777, 0600u) << "a bundle is created 0600";
  const std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), 6u);
  const Verdict verdict = VerifyLines(lines);
  EXPECT_TRUE(verdict.problems.empty()) << verdict.problems[0];
  EXPECT_EQ(verdict.runs, 2);
  EXPECT_EQ(verdict.session_calls, 3);
  EXPECT_EQ(verdict.sessions_closed, 1);
  // The caller's own list of request digests, and a count.
  Expectations expect;
  expect.request_digests = verdict.request_digests;
  expect.count = 5;
  EXPECT_TRUE(VerifyLines(lines, false, expect).problems.empty());
  expect.request_digests->pop_back();
  EXPECT_TRUE(Mentions(VerifyLines(lines, false, expect), "was not expected"));
  expect.request_digests.reset();
  expect.count = 4;
  EXPECT_TRUE(Mentions(VerifyLines(lines, false, expect), "not the 4 expected"));
}

TEST_F(AttestTest, EveryTamperingIsFoundWithItsOwnReason) {
  SignRun("console.log(1)");
  SignSession(3);
  SignRun("console.log(2)");
  const std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), 6u);

  // One changed byte anywhere in a line: every byte of a run's line (alone,
  // as a one-line bundle, so each check is quick), and every 11th byte of a
  // session call's line within the whole bundle.
  for (size_t at = 0; at < lines[0].size(); ++at) {
    std::string changed = lines[0];
    changed[at] = changed[at] == 'a' ? 'b' : 'a';
    ASSERT_FALSE(VerifyLines({changed}).problems.empty()) << "byte " << at << " of a run unseen";
  }
  ASSERT_TRUE(VerifyLines({lines[0]}).problems.empty());
  for (size_t at = 0; at < lines[2].size(); at += 11) {
    std::vector<std::string> changed = lines;
    changed[2][at] = changed[2][at] == 'a' ? 'b' : 'a';
    ASSERT_FALSE(VerifyLines(changed).problems.empty()) << "byte " << at << " of a call unseen";
  }
  // Dropped, reordered, inserted lines.
  std::vector<std::string> dropped = lines;
  dropped.erase(dropped.begin() + 1);
  EXPECT_TRUE(Mentions(VerifyLines(dropped), "a line was dropped, reordered or inserted"));
  std::vector<std::string> reordered = lines;
  std::swap(reordered[0], reordered[5]);
  EXPECT_TRUE(Mentions(VerifyLines(reordered), "a line was dropped, reordered or inserted"));
  std::vector<std::string> inserted = lines;
  inserted.insert(inserted.begin() + 3, lines[0]);
  EXPECT_TRUE(Mentions(VerifyLines(inserted), "a line was dropped, reordered or inserted"));
  // A session with a missing call: dropping it breaks the link and the chain.
  std::vector<std::string> missing_call = lines;
  missing_call.erase(missing_call.begin() + 2);
  const Verdict gap = VerifyLines(missing_call);
  EXPECT_TRUE(Mentions(gap, "does not continue its chain")) << gap.problems[0];
  // A session without its close.
  std::vector<std::string> unclosed = lines;
  unclosed.erase(unclosed.begin() + 4);
  EXPECT_TRUE(Mentions(VerifyLines(unclosed), "has no close"));
  // A truncated last line.
  EXPECT_TRUE(Mentions(VerifyLines(lines, /*torn=*/true), "torn"));
  // A wrong key.
  ASSERT_TRUE(GenerateKeyFile(directory_ / "other.pem").ok());
  auto other = LoadPrivateKey(directory_ / "other.pem");
  ASSERT_TRUE(other.ok());
  BundleFile file{lines, false};
  const Verdict wrong_key = VerifyBundle(file, other->verifying_key());
  EXPECT_EQ(wrong_key.problems.size(), lines.size()) << "every line is someone else's";
}

TEST_F(AttestTest, AppendingRefusesATornBundleAndKeepsItAsItWas) {
  SignRun("console.log(1)");
  {
    std::ofstream torn(bundle_, std::ios::app | std::ios::binary);
    torn << "{\"index\":1,\"ki";
  }
  const auto before = fs::file_size(bundle_);
  const Status appended = AppendToBundle(
      bundle_, [](const BundleLink&) -> Expected<std::string> { return std::string("{}"); });
  ASSERT_FALSE(appended.ok());
  EXPECT_NE(appended.error().message().find("torn"), std::string::npos);
  EXPECT_EQ(fs::file_size(bundle_), before);
  // A line that cannot be made leaves the bundle untouched too.
  fs::resize_file(bundle_, before - 14);
  const auto intact = fs::file_size(bundle_);
  EXPECT_FALSE(AppendToBundle(bundle_, [](const BundleLink&) -> Expected<std::string> {
                 return Error(ErrorCode::kInternal, "no");
               }).ok());
  EXPECT_EQ(fs::file_size(bundle_), intact);
}

// Two writers at once, each with its own open file description (so the
// flock excludes them exactly as it excludes two processes): every line
// lands, and every link holds.
TEST_F(AttestTest, TwoWritersAppendingAtOnceLoseNothing) {
  constexpr int kEach = 25;
  Request request;
  request.javascript = JavascriptPayload{"console.log(1)"};
  auto result = sandbox_->Run(request);
  ASSERT_TRUE(result.ok()) << result.error().message();
  BundleEntry entry;
  entry.request_json = RequestToJson(request);
  entry.result_json = ResultToJson(*result);
  auto writer = [&] {
    for (int i = 0; i < kEach; ++i) {
      const Status appended = AppendToBundle(bundle_, [&](const BundleLink& link) {
        return SignedEntryLine(entry, RunStatement(result->record, link), *key_, link);
      });
      EXPECT_TRUE(appended.ok()) << appended.error().message();
    }
  };
  std::thread first(writer), second(writer);
  first.join();
  second.join();
  const std::vector<std::string> lines = Lines();
  EXPECT_EQ(lines.size(), 2u * kEach);
  const Verdict verdict = VerifyLines(lines);
  EXPECT_TRUE(verdict.problems.empty()) << verdict.problems[0];
  EXPECT_EQ(verdict.runs, 2 * kEach);
}

// Nothing of a bundle is sent again unless it verifies with the signer's
// key (VerifyBundle's own checks), and a request naming a grant profile
// only with --allow-granted.
TEST_F(AttestTest, ReplayRefusesAnEditedBundleAndGrantedRequestsWithoutLeave) {
  SignRun("console.log(6*7)");
  SignRun("console.log('two')");
  SignSession(2);
  const std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), 5u);
  const VerifyingKey& key = key_->verifying_key();
  auto check = [&](const std::vector<std::string>& bundle, bool allow_granted = false) {
    return CheckBeforeReplay(BundleFile{bundle, false}, key, ReplayPolicy{allow_granted});
  };
  EXPECT_TRUE(check(lines).empty()) << check(lines)[0];

  // One byte of a stored request changed: the signed record no longer
  // matches it.
  std::vector<std::string> edited = lines;
  const size_t at = edited[0].find("6*7");
  ASSERT_NE(at, std::string::npos);
  edited[0][at + 2] = '8';
  const std::vector<std::string> edited_problems = check(edited);
  ASSERT_FALSE(edited_problems.empty());
  EXPECT_NE(edited_problems[0].find("line 0: "), std::string::npos) << edited_problems[0];
  // Two runs' requests swapped (each signature is intact on its own line).
  auto request_of = [](const std::string& line) {
    const size_t begin = line.find("\"request\":"), end = line.find(",\"result\":");
    return line.substr(begin, end - begin);
  };
  std::vector<std::string> swapped = lines;
  const std::string first = request_of(lines[0]), second = request_of(lines[1]);
  swapped[0].replace(swapped[0].find(first), first.size(), second);
  swapped[1].replace(swapped[1].find(second), second.size(), first);
  ASSERT_NE(swapped[0], lines[0]);
  EXPECT_FALSE(check(swapped).empty()) << "swapped requests replayable";
  // Signed by another key.
  ASSERT_TRUE(GenerateKeyFile(directory_ / "other.pem").ok());
  auto other = LoadPrivateKey(directory_ / "other.pem");
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(CheckBeforeReplay(BundleFile{lines, false}, other->verifying_key(), {}).empty());

  // A granted run, intact and signed: refused without leave, sent with it.
  SignGrantedRun("console.log(JSON.stringify(host.get('/items')))");
  const std::vector<std::string> granted = Lines();
  ASSERT_EQ(granted.size(), 6u);
  ASSERT_TRUE(VerifyLines(granted).problems.empty());
  const std::vector<std::string> refused = check(granted);
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_NE(refused[0].find("line 5: names the grant profile \"inventory\""), std::string::npos)
      << refused[0];
  EXPECT_NE(refused[0].find("--allow-granted"), std::string::npos) << refused[0];
  EXPECT_TRUE(check(granted, /*allow_granted=*/true).empty());
}

TEST(ReplayTest, NamesTheFieldsThatDifferAndSeesTimingApart) {
  Result then;
  then.kind = PayloadKind::kProject;
  then.stdout_bytes = "42\n";
  then.duration_ms = 5;
  then.steps = {StepResult{{"node", "main.js"}, 0, false, "42\n", "", false, false, 4}};
  Result now = then;
  EXPECT_TRUE(DifferingFields(then, now).fields.empty());
  now.duration_ms = 7;
  now.steps[0].duration_ms = 6;
  ResultDifference timing = DifferingFields(then, now);
  EXPECT_EQ(timing.fields, (std::vector<std::string>{"duration_ms", "steps[0].duration_ms"}));
  EXPECT_TRUE(timing.timing_only);
  now.steps[0].stdout_bytes = "43\n";
  now.exit_code = 1;
  ResultDifference real = DifferingFields(then, now);
  EXPECT_EQ(real.fields, (std::vector<std::string>{"exit_code", "duration_ms",
                                                   "steps[0].duration_ms", "steps[0]"}));
  EXPECT_FALSE(real.timing_only);
}

}  // namespace
}  // namespace plimsoll::attest
