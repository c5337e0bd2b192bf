#include "providers/disabled/disabled_provider.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace plimsoll {
namespace {

TEST(DisabledProviderTest, IsTierNoneAndRefusesEveryRunAsUnsupported) {
  auto provider = MakeDisabledProvider(Limits{});
  EXPECT_EQ(provider->name(), "disabled");
  EXPECT_EQ(provider->Describe().tier, Tier::kNone);
  auto evidence = provider->SmokeTest(Deadline::clock::now());
  ASSERT_TRUE(evidence.ok());
  EXPECT_EQ(evidence->tier, Tier::kNone);

  for (PayloadKind kind : {PayloadKind::kJavascript, PayloadKind::kPython, PayloadKind::kProject,
                           PayloadKind::kCell}) {
    Request request;
    switch (kind) {
      case PayloadKind::kJavascript:
        request.javascript = JavascriptPayload{"1"};
        break;
      case PayloadKind::kPython:
        request.python = PythonPayload{"1"};
        break;
      case PayloadKind::kProject:
        request.project = ProjectPayload{{}, {{"true"}}, {}};
        break;
      case PayloadKind::kCell:
        request.cell = CellPayload{"python", "1"};
        break;
    }
    auto result = provider->Run(request, Deadline::clock::now());
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(NotDispatchedReason(result.error()), NotDispatched::kUnsupported);
  }
  auto session = provider->OpenSession(SessionSpec{}, Deadline::clock::now());
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(NotDispatchedReason(session.error()), NotDispatched::kUnsupported);
}

TEST(ProviderFactoryTest, UnsetEnvironmentMeansDisabled) {
  unsetenv("SANDBOX_PROVIDER");
  EXPECT_EQ(ProviderNameFromEnvironment(), "disabled");
  setenv("SANDBOX_PROVIDER", "", 1);
  EXPECT_EQ(ProviderNameFromEnvironment(), "disabled");
  setenv("SANDBOX_PROVIDER", "embedded", 1);
  EXPECT_EQ(ProviderNameFromEnvironment(), "embedded");
  unsetenv("SANDBOX_PROVIDER");
}

TEST(ProviderFactoryTest, UnknownNameListsTheValidNames) {
  auto provider = MakeProvider("nope", Limits{});
  ASSERT_FALSE(provider.ok());
  for (std::string_view name : ProviderNames()) {
    EXPECT_NE(provider.error().message().find(name), std::string::npos) << name;
  }
  EXPECT_TRUE(MakeProvider("disabled", Limits{}).ok());
}

TEST(ProviderFactoryTest, OnlyProvidersThatRunAGuestImageTakeAnImageDirectory) {
  const ProviderOptions image{"/some/image"};
  for (const char* name : {"disabled", "embedded", "microvm"}) {
    auto provider = MakeProvider(name, Limits{}, image);
    ASSERT_FALSE(provider.ok()) << name;
    EXPECT_EQ(provider.error().code(), ErrorCode::kInvalidArgument) << name;
    EXPECT_NE(provider.error().message().find("/some/image"), std::string::npos) << name;
    EXPECT_TRUE(MakeProvider(name, Limits{}).ok()) << name;
  }
  // Construction is cheap for the others: the image is read when it is needed.
  for (const char* name : {"linux", "oci:runc", "oci:runsc"}) {
    EXPECT_TRUE(MakeProvider(name, Limits{}, image).ok()) << name;
  }
}

}  // namespace
}  // namespace plimsoll
