// The oci provider on a newer gVisor than the host's: Debian trixie's runsc
// (gVisor 2024-07-29, scripts/fetch-gvisor keeps it in the cache; `make
// test`'s bootstrap fetches it), given by path as SANDBOX_OCI_RUNTIME_BINARY
// would give it. That gVisor implements clone3 itself (the policy's ENOSYS
// then comes from the step's own filter, which the agent installs under
// runsc) and runs on its systrap platform by default. Its smoke test must
// pass with every check, and cold and pooled runs must answer as on the
// host's runsc, threads included (glibc's pthread_create tries clone3 and
// falls back to clone only on ENOSYS). A host without runsc skips it (as
// every runsc suite); a missing cached binary is a failure (scripts/bootstrap
// fetches it, as it installs every other tool `make test` needs).
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "common/host_preconditions.h"
#include "image/image.h"
#include "os/spawn.h"
#include "plimsoll/provider.h"
#include "plimsoll/request.h"
#include "providers/oci/oci_provider.h"
#include "providers/oci/oci_test_support.h"

namespace plimsoll {
namespace {

using namespace std::chrono_literals;
using namespace oci::testing;

// The cached binary's path, or "" with `why` set.
std::string CachedNewerRunsc(std::string* why) {
  auto cache = image::DefaultCacheDirectory();
  if (!cache.ok()) {
    *why = cache.error().message();
    return "";
  }
  os::SpawnOptions options;
  options.argv = {PLIMSOLL_FETCH_GVISOR, "--cached"};
  options.environment.push_back("PLIMSOLL_CACHE=" + cache->string());
  auto said = os::RunCommand(options, TestClock::now() + 10s);
  if (!said.ok()) {
    *why = said.error().message();
    return "";
  }
  std::string path = said->output.substr(0, said->output.find('\n'));
  if (!WIFEXITED(said->status) || WEXITSTATUS(said->status) != 0 || path.empty() ||
      path[0] != '/') {
    *why = said->output;
    return "";
  }
  return path;
}

class NewerGvisorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    PLIMSOLL_REQUIRE_HOST("oci:runsc");
    std::string why;
    binary_ = CachedNewerRunsc(&why);
    // Part of what `make test` installs (scripts/bootstrap), not a host
    // precondition: missing, it is a failure.
    ASSERT_FALSE(binary_.empty())
        << "no newer runsc in the cache: run scripts/bootstrap (scripts/fetch-gvisor): " << why;
    state_dir_ = "/run/plimsoll-test-oci-newer-gvisor-" + std::to_string(getpid());
    oci::RuntimeOptions options;
    options.binary = binary_;
    options.state_dir = state_dir_;
    auto runtime = oci::ProbeRuntime(oci::RuntimeKind::kRunsc, options, TestClock::now() + 20s);
    ASSERT_TRUE(runtime.ok()) << runtime.error().ToString();
    runtime_.emplace(std::move(*runtime));
    watch_ = std::make_unique<BundleWatch>(runtime_->bundles_dir());
  }

  void TearDown() override {
    if (runtime_) EXPECT_EQ(WaitUntilNothingLeft(*runtime_, state_dir_, *watch_, 15s), "");
    std::error_code ignored;
    if (!state_dir_.empty()) std::filesystem::remove_all(state_dir_, ignored);
  }

  std::unique_ptr<Provider> Make(size_t pool) {
    OciSettings settings;
    settings.runtime = oci::RuntimeKind::kRunsc;
    settings.runtime_options.binary = binary_;
    settings.runtime_options.state_dir = state_dir_;
    settings.pool_size = pool;
    return MakeOciProvider(limits_, settings);
  }

  Result MustRun(Provider& provider, const Request& request) {
    auto result = RunRequest(provider, limits_, request);
    if (!result.ok()) {
      ADD_FAILURE() << result.error().ToString();
      return Result{};
    }
    return *result;
  }

  std::string binary_;
  std::string state_dir_;
  Limits limits_;
  std::optional<oci::Runtime> runtime_;
  std::unique_ptr<BundleWatch> watch_;
};

TEST_F(NewerGvisorTest, ItsSmokeTestPassesAndColdAndPooledRunsAnswer) {
  auto provider = Make(1);
  ASSERT_TRUE(provider->Preflight().ok());
  auto evidence = provider->SmokeTest(TestClock::now() + 180s);
  ASSERT_TRUE(evidence.ok()) << evidence.error().ToString();
  for (const EvidenceCheck& check : evidence->checks) {
    std::cout << (check.passed ? "PASS " : "FAIL ") << check.name << ": " << check.detail << "\n";
    EXPECT_TRUE(check.passed) << check.name << ": " << check.detail;
  }
  EXPECT_EQ(evidence->tier, Tier::kKernel) << evidence->summary;
  EXPECT_NE(Fact(*evidence, "runtime").find("0.0~20240729"), std::string::npos)
      << Fact(*evidence, "runtime");
  EXPECT_NE(Fact(*evidence, "runtime").find(binary_), std::string::npos);
  EXPECT_EQ(Fact(*evidence, "platform"), "systrap");

  // Threads: pthread_create's clone3 gets the policy's ENOSYS, and glibc
  // falls back to clone(2), whose flags the policy checks.
  Request python;
  python.python = PythonPayload{
      "import threading\n"
      "out = []\n"
      "t = threading.Thread(target=lambda: out.append(6 * 7)); t.start(); t.join()\n"
      "print(out[0])\n"};
  python.timeout_ms = 20'000;
  Result threads = MustRun(*provider, python);
  EXPECT_EQ(threads.stdout_bytes, "42\n") << threads.stderr_bytes;
  EXPECT_EQ(threads.isolation, Tier::kKernel);

  // A pooled run: the prestarted qjs was started under the step's filter.
  std::string detail;
  ASSERT_TRUE(WaitForPool(
      *provider, 60s, [](const PoolCounts& c) { return c.ready == 1; }, &detail))
      << detail;
  Request javascript;
  javascript.javascript = JavascriptPayload{"console.log(6*7)"};
  Result pooled = MustRun(*provider, javascript);
  EXPECT_EQ(pooled.stdout_bytes, "42\n") << pooled.stderr_bytes;
  EXPECT_EQ(pooled.exit_code, 0);
  EXPECT_EQ(pooled.isolation, Tier::kKernel);
  EXPECT_GE(ParsePool(PoolDetail(*provider)).handed_out, 1) << PoolDetail(*provider);
  provider.reset();
}

}  // namespace
}  // namespace plimsoll
