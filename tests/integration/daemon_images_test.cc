// Several images per daemon (SPEC §7; issue 18 item 2): the real plimsolld
// with --image base=... --image data=... on the linux provider. describe
// lists each image (name, identity, languages, packages); a request selects
// one by name and may pin its identity; an unknown name is a `request`
// refusal and a wrong identity an `environment` refusal (nothing ran);
// sessions keep the image they were opened on; bad --image flags stop the
// start.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "child_daemon.h"
#include "client/description_json.h"
#include "common/host_preconditions.h"
#include "daemon_test_client.h"
#include "plimsoll/record.h"
#include "plimsoll/wire.h"

namespace plimsoll::daemon::testing {
namespace {

using nlohmann::json;

std::string Identity(const std::string& image_directory) {
  std::ifstream in(image_directory + "/identity");
  std::string identity;
  std::getline(in, identity);
  return identity;
}

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

bool HasPackage(const json& image, const std::string& source, const std::string& name) {
  for (const json& package : image["packages"]) {
    if (package["source"] == source && package["name"] == name) return true;
  }
  return false;
}

// One plimsolld serving base and data on the linux provider, shared by the
// tests (starting it runs two smoke tests).
class DaemonImagesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    base_ = Env("PLIMSOLL_BASE_IMAGE");
    data_ = Env("PLIMSOLL_IMAGE");
    if (::plimsoll::testing::HostVerdict host = ::plimsoll::testing::JudgeHost("linux");
        !host.message.empty()) {
      (host.fail ? failure_ : skip_) = host.message;
      return;
    }
    if (base_.empty() || data_.empty()) {
      failure_ =
          "PLIMSOLL_BASE_IMAGE and PLIMSOLL_IMAGE must name the base and data images "
          "(CMake sets both: plimsoll_test_uses_data_image)";
      return;
    }
    daemon_ = std::make_unique<ChildDaemon>(
        PLIMSOLLD_BINARY,
        std::vector<std::string>{"--provider", "linux", "--dev", "--listen", "127.0.0.1:0",
                                 "--metrics-listen", "off", "--evidence-interval-ms", "0",
                                 "--image", "base=" + base_, "--image", "data=" + data_},
        std::vector<std::string>{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "TMPDIR=" + Env("TMPDIR")});
    port_ = ApiPortFrom(daemon_->ReadLine(std::chrono::milliseconds(120'000)));
    if (port_ == 0) {
      daemon_->Signal(SIGKILL);
      daemon_->Wait();
      failure_ = "plimsolld did not serve: " + daemon_->ReadStderr();
    }
  }
  static void TearDownTestSuite() {
    if (daemon_ && port_ != 0) {
      daemon_->Signal(SIGTERM);
      daemon_->Wait();
    }
    daemon_.reset();
  }
  void SetUp() override {
    ASSERT_TRUE(failure_.empty()) << failure_;
    if (!skip_.empty()) GTEST_SKIP() << skip_;
  }

  static HttpReply Post(const std::string& target, const json& body) {
    return SendOnce(port_, {.method = "POST", .target = target, .body = body.dump()});
  }
  static json Python(const std::string& code) {
    return {{"protocol", 1}, {"timeout_ms", 30000}, {"python", {{"code", code}}}};
  }

  static inline std::string base_, data_, skip_, failure_;
  static inline std::unique_ptr<ChildDaemon> daemon_;
  static inline uint16_t port_ = 0;
};

TEST_F(DaemonImagesTest, DescribeListsEachImageWithItsIdentityLanguagesAndPackages) {
  HttpReply described = SendOnce(port_, {.method = "GET", .target = "/v1/describe"});
  ASSERT_EQ(described.status, 200u) << described.body;
  json body = json::parse(described.body);
  ASSERT_EQ(body["images"].size(), 2u) << described.body.substr(0, 2000);
  const json& base = body["images"][0];
  const json& data = body["images"][1];
  EXPECT_EQ(base["name"], "base");
  EXPECT_EQ(base["default"], true);
  EXPECT_EQ(data["name"], "data");
  EXPECT_EQ(data["default"], false);
  EXPECT_EQ(base["environment"], Identity(base_));
  EXPECT_EQ(data["environment"], Identity(data_));
  EXPECT_EQ(body["environment"], Identity(base_)) << "the top level is the default image's";
  EXPECT_EQ(base["tier"], "container");
  EXPECT_EQ(data["tier"], "container");
  EXPECT_EQ(base["confirmed"], true);
  EXPECT_EQ(data["confirmed"], true);
  EXPECT_EQ(data["languages"], json::array({"javascript", "python", "node"}));
  EXPECT_TRUE(HasPackage(base, "debian", "python3-minimal"));
  EXPECT_FALSE(HasPackage(base, "python", "numpy"));
  EXPECT_TRUE(HasPackage(data, "debian", "python3-pandas"));
  EXPECT_TRUE(HasPackage(data, "python", "numpy"));
  EXPECT_TRUE(HasPackage(data, "python", "scikit-learn"));
  EXPECT_TRUE(HasPackage(data, "npm", "papaparse"));

  // The C++ client reads the same list.
  auto parsed = client::ParseDescriptionJson(described.body);
  ASSERT_TRUE(parsed.ok()) << parsed.error().ToString();
  ASSERT_EQ(parsed->images.size(), 2u);
  EXPECT_EQ(parsed->images[1].name, "data");
  EXPECT_EQ(parsed->images[1].environment, Identity(data_));
}

TEST_F(DaemonImagesTest, ARequestRunsOnTheImageItNamesAndTheRecordBindsTheName) {
  json request = Python("import numpy; print(numpy.arange(3).sum())");
  request["image"] = "data";
  HttpReply on_data = Post("/v1/runs", request);
  ASSERT_EQ(on_data.status, 200u) << on_data.body;
  json result = json::parse(on_data.body);
  EXPECT_EQ(result["exit_code"], 0) << result["stderr"];
  EXPECT_EQ(result["stdout"], "3\n");
  EXPECT_EQ(result["environment"], Identity(data_));
  auto sent = ParseRequestJson(request.dump());
  ASSERT_TRUE(sent.ok());
  EXPECT_EQ(result["record"]["request_sha256"], RequestDigest(*sent));

  request["image"] = "base";
  HttpReply on_base = Post("/v1/runs", request);
  ASSERT_EQ(on_base.status, 200u) << on_base.body;
  json base_result = json::parse(on_base.body);
  EXPECT_NE(base_result["exit_code"], 0);
  EXPECT_NE(base_result["stderr"].get<std::string>().find("ModuleNotFoundError"),
            std::string::npos);
  EXPECT_EQ(base_result["environment"], Identity(base_));

  HttpReply unnamed = Post("/v1/runs", Python("print('default')"));
  ASSERT_EQ(unnamed.status, 200u) << unnamed.body;
  EXPECT_EQ(json::parse(unnamed.body)["environment"], Identity(base_));
}

TEST_F(DaemonImagesTest, AnUnknownNameIsARequestRefusalAndAWrongIdentityAnEnvironmentOne) {
  json unknown = Python("print(1)");
  unknown["image"] = "gpu";
  HttpReply refused = Post("/v1/runs", unknown);
  EXPECT_EQ(refused.status, 400u) << refused.body;
  EXPECT_EQ(refused.Header("plimsoll-not-dispatched"), "request");
  EXPECT_NE(json::parse(refused.body)["error"]["message"].get<std::string>().find(
                "it serves \"base\", \"data\""),
            std::string::npos)
      << refused.body;

  json malformed = Python("print(1)");
  malformed["image"] = "Data!";
  HttpReply bad = Post("/v1/runs", malformed);
  EXPECT_EQ(bad.status, 400u) << bad.body;
  EXPECT_EQ(bad.Header("plimsoll-not-dispatched"), "request");

  json wrong = Python("print(1)");
  wrong["image"] = "data";
  wrong["environment"] = Identity(base_);
  HttpReply mismatched = Post("/v1/runs", wrong);
  EXPECT_NE(mismatched.status, 200u) << mismatched.body;
  EXPECT_EQ(mismatched.Header("plimsoll-not-dispatched"), "environment") << mismatched.body;

  json pinned = Python("print('pinned')");
  pinned["image"] = "data";
  pinned["environment"] = Identity(data_);
  HttpReply matched = Post("/v1/runs", pinned);
  EXPECT_EQ(matched.status, 200u) << matched.body;
}

TEST_F(DaemonImagesTest, ASessionRunsOnTheImageItWasOpenedOn) {
  HttpReply opened = Post(
      "/v1/sessions",
      {{"protocol", 1}, {"image", "data"}, {"lifetime_ms", 120000}, {"idle_timeout_ms", 60000}});
  ASSERT_EQ(opened.status, 201u) << opened.body;
  json session = json::parse(opened.body);
  EXPECT_EQ(session["image"], "data");
  EXPECT_EQ(session["environment"], Identity(data_));
  const std::string calls = "/v1/sessions/" + session["session_id"].get<std::string>() + "/runs";

  json cell = {{"protocol", 1},
               {"timeout_ms", 30000},
               {"cell", {{"language", "python"}, {"code", "import pandas\npandas.__name__"}}}};
  HttpReply ran = Post(calls, cell);
  ASSERT_EQ(ran.status, 200u) << ran.body;
  EXPECT_EQ(json::parse(ran.body)["exit_code"], 0) << ran.body;

  cell["image"] = "base";
  HttpReply elsewhere = Post(calls, cell);
  EXPECT_EQ(elsewhere.status, 400u) << elsewhere.body;
  EXPECT_EQ(elsewhere.Header("plimsoll-not-dispatched"), "request");

  HttpReply unknown = Post("/v1/sessions", {{"protocol", 1}, {"image", "gpu"}});
  EXPECT_EQ(unknown.status, 400u) << unknown.body;
  EXPECT_EQ(unknown.Header("plimsoll-not-dispatched"), "request");
  SendOnce(port_, {.method = "DELETE",
                   .target = "/v1/sessions/" + session["session_id"].get<std::string>()});
}

// Flag errors need no image and no root: the embedded provider.
struct BadImageFlags {
  std::vector<std::string> flags;
  std::string says;
};

TEST(DaemonImageFlags, BadImageFlagsStopTheStartWithExitTwoAndSayWhy) {
  const std::vector<BadImageFlags> cases = {
      {{"--image", "data"}, "is not NAME=PATH"},
      {{"--image", "Data=/tmp"}, "is not NAME=PATH"},
      {{"--image", "data="}, "is not NAME=PATH"},
      {{"--image", "a=/x", "--image", "a=/y"}, "names the image \"a\" twice"},
      // The embedded provider runs no guest image.
      {{"--image", "data=/nonexistent"}, "--image data=/nonexistent"},
  };
  for (const BadImageFlags& bad : cases) {
    std::vector<std::string> args = {"--provider",  "embedded",         "--dev", "--listen",
                                     "127.0.0.1:0", "--metrics-listen", "off"};
    args.insert(args.end(), bad.flags.begin(), bad.flags.end());
    ChildDaemon daemon(PLIMSOLLD_BINARY, args, {});
    EXPECT_EQ(daemon.Wait(), 2) << bad.flags.back();
    std::string log = daemon.ReadStderr();
    EXPECT_NE(log.find(bad.says), std::string::npos) << log;
  }
  std::vector<std::string> too_many = {"--provider", "embedded", "--dev"};
  for (int i = 0; i < 17; ++i) {
    too_many.push_back("--image");
    too_many.push_back("i" + std::to_string(i) + "=/x");
  }
  ChildDaemon daemon(PLIMSOLLD_BINARY, too_many, {});
  EXPECT_EQ(daemon.Wait(), 2);
  EXPECT_NE(daemon.ReadStderr().find("at most 16"), std::string::npos);
}

}  // namespace
}  // namespace plimsoll::daemon::testing
