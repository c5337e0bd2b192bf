#include "image/image.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>

#include "image/held_image.h"
#include "image/manifest.h"
#include "image/test_tree.h"

namespace plimsoll::image {
namespace {

using testing::TemporaryDirectory;
using testing::WriteFile;
using testing::ReadFile;

// Writes a complete image directory the way the builder does.
void MakeImage(const std::filesystem::path& directory) {
  WriteFile(directory / "rootfs" / "etc" / "hostname", "sandbox\n");
  WriteFile(directory / "rootfs" / "usr" / "local" / "bin" / "qjs", "binary", 0755);
  auto manifest = BuildManifest(directory / "rootfs");
  ASSERT_TRUE(manifest.ok());
  WriteFile(directory / "manifest", *manifest);
  WriteFile(directory / "identity", IdentityOfManifest(*manifest) + "\n");
}

bool IsEnvironmentRefusal(const Error& error) {
  return NotDispatchedReason(error) == NotDispatched::kEnvironment;
}

class ImageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = temporary_.path() / "image";
    MakeImage(directory_);
  }
  void TearDown() override { unsetenv("PLIMSOLL_IMAGE"); }

  TemporaryDirectory temporary_;
  std::filesystem::path directory_;
};

TEST_F(ImageTest, OpensACompleteImageWithoutHashingIt) {
  auto image = OpenImage(directory_);
  ASSERT_TRUE(image.ok()) << image.error().ToString();
  EXPECT_EQ(image->rootfs, directory_ / "rootfs");
  EXPECT_TRUE(IsWellFormedIdentity(image->identity));
  auto computed = ComputeIdentity(image->rootfs);
  ASSERT_TRUE(computed.ok());
  EXPECT_EQ(*computed, image->identity);
}

TEST_F(ImageTest, RefusesAMissingDirectory) {
  auto image = OpenImage(temporary_.path() / "nowhere");
  ASSERT_FALSE(image.ok());
  EXPECT_TRUE(IsEnvironmentRefusal(image.error()));
  EXPECT_NE(image.error().message().find("does not exist"), std::string::npos);
}

TEST_F(ImageTest, RefusesAnImageWithoutIdentity) {
  std::filesystem::remove(directory_ / "identity");
  auto image = OpenImage(directory_);
  ASSERT_FALSE(image.ok());
  EXPECT_TRUE(IsEnvironmentRefusal(image.error()));
  EXPECT_NE(image.error().message().find("incomplete"), std::string::npos);
}

TEST_F(ImageTest, RefusesAMalformedIdentity) {
  WriteFile(directory_ / "identity", "sha256:1234\n");
  auto image = OpenImage(directory_);
  ASSERT_FALSE(image.ok());
  EXPECT_NE(image.error().message().find("does not hold"), std::string::npos);
}

TEST_F(ImageTest, RefusesAnIdentityWithoutTree) {
  std::filesystem::remove_all(directory_ / "rootfs");
  auto image = OpenImage(directory_);
  ASSERT_FALSE(image.ok());
  EXPECT_NE(image.error().message().find("no rootfs"), std::string::npos);
}

TEST_F(ImageTest, VerifyAcceptsTheRecordedAndTheExpectedIdentity) {
  auto image = OpenImage(directory_);
  ASSERT_TRUE(image.ok());
  EXPECT_TRUE(Verify(*image).ok());
  EXPECT_TRUE(Verify(*image, image->identity).ok());
}

TEST_F(ImageTest, VerifyDetectsTamperingAndNamesTheEntry) {
  auto image = OpenImage(directory_);
  ASSERT_TRUE(image.ok());
  WriteFile(directory_ / "rootfs" / "usr" / "local" / "bin" / "qjs", "binarY", 0755);
  Status verified = Verify(*image);
  ASSERT_FALSE(verified.ok());
  EXPECT_TRUE(IsEnvironmentRefusal(verified.error()));
  EXPECT_NE(verified.error().message().find("/usr/local/bin/qjs: recorded"), std::string::npos)
      << verified.error().message();
}

TEST_F(ImageTest, VerifyDetectsAnAddedFile) {
  auto image = OpenImage(directory_);
  ASSERT_TRUE(image.ok());
  WriteFile(directory_ / "rootfs" / "etc" / "extra", "");
  Status verified = Verify(*image);
  ASSERT_FALSE(verified.ok());
  EXPECT_NE(verified.error().message().find("/etc/extra: not recorded"), std::string::npos);
}

TEST_F(ImageTest, VerifyRefusesAnotherExpectedIdentity) {
  auto image = OpenImage(directory_);
  ASSERT_TRUE(image.ok());
  Status verified = Verify(*image, "sha256:" + std::string(64, '0'));
  ASSERT_FALSE(verified.ok());
  EXPECT_NE(verified.error().message().find("not the expected"), std::string::npos);
  EXPECT_FALSE(Verify(*image, "sha256:zz").ok());
}

TEST_F(ImageTest, PinningRefusesAnotherIdentity) {
  auto image = OpenImage(directory_);
  ASSERT_TRUE(image.ok());
  EXPECT_TRUE(CheckPinned(*image, "").ok());
  EXPECT_TRUE(CheckPinned(*image, image->identity).ok());
  Status other = CheckPinned(*image, "sha256:" + std::string(64, '0'));
  ASSERT_FALSE(other.ok());
  EXPECT_TRUE(IsEnvironmentRefusal(other.error()));
  EXPECT_NE(other.error().message().find("pinned"), std::string::npos);
  Status malformed = CheckPinned(*image, "latest");
  ASSERT_FALSE(malformed.ok());
  EXPECT_EQ(NotDispatchedReason(malformed.error()), NotDispatched::kRequest);
}

TEST_F(ImageTest, TheEnvironmentVariableChoosesTheImageWithoutFallback) {
  setenv("PLIMSOLL_IMAGE", directory_.c_str(), 1);
  auto image = LocateDefaultImage();
  ASSERT_TRUE(image.ok()) << image.error().ToString();
  EXPECT_EQ(image->directory, directory_);
  setenv("PLIMSOLL_IMAGE", (temporary_.path() / "missing").c_str(), 1);
  image = LocateDefaultImage();
  ASSERT_FALSE(image.ok());
  EXPECT_NE(image.error().message().find("PLIMSOLL_IMAGE"), std::string::npos);
}

TEST_F(ImageTest, AnOsLevelProviderGetsTheImageOnlyWithItsExecutables) {
  setenv("PLIMSOLL_IMAGE", directory_.c_str(), 1);
  WriteFile(directory_ / "rootfs" / "agent", "#!/bin/sh\n");
  auto missing = LocateDefaultImageWith({"/agent"});
  ASSERT_FALSE(missing.ok());  // not executable yet
  EXPECT_TRUE(IsEnvironmentRefusal(missing.error()));
  EXPECT_NE(missing.error().message().find("no executable /agent"), std::string::npos);
  std::filesystem::permissions(directory_ / "rootfs" / "agent",
                               std::filesystem::perms::owner_exec,
                               std::filesystem::perm_options::add);
  auto found = LocateDefaultImageWith({"/agent"});
  ASSERT_TRUE(found.ok()) << found.error().ToString();
  EXPECT_EQ(found->directory, directory_);
  EXPECT_FALSE(LocateDefaultImageWith({"/agent", "/etc"}).ok());  // a directory is not one
}

// Issue 13: the tree a provider mounts is the one whose identity it read.
TEST_F(ImageTest, AHeldImageKeepsItsTreeWhenAnotherIsRenamedIn) {
  auto image = OpenImage(directory_);
  ASSERT_TRUE(image.ok());
  auto held = HoldImage(*image);
  ASSERT_TRUE(held.ok()) << held.error().ToString();
  std::string key = (*held)->Key();

  // Another tree under the same name, the way a rebuild swaps one in.
  std::filesystem::rename(directory_ / "rootfs", temporary_.path() / "old-rootfs");
  WriteFile(directory_ / "rootfs" / "etc" / "hostname", "another\n");
  int file = openat((*held)->tree_fd(), "etc/hostname", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(file, 0);
  char buffer[64] = {};
  ASSERT_GT(read(file, buffer, sizeof buffer - 1), 0);
  close(file);
  EXPECT_STREQ(buffer, "sandbox\n");
  // Its path in this process names the held tree too.
  EXPECT_EQ(ReadFile(std::filesystem::path((*held)->TreePath()) / "etc" / "hostname"),
            "sandbox\n");

  // Held again (the identity file unchanged), the key tells the trees apart.
  auto again = HoldImage(*OpenImage(directory_));
  ASSERT_TRUE(again.ok());
  EXPECT_NE((*again)->Key(), key);
}

TEST_F(ImageTest, AHeldTreeCannotBeLockedForRemoval) {
  auto held = HoldImage(*OpenImage(directory_));
  ASSERT_TRUE(held.ok());
  EXPECT_FALSE(LockTreeForRemoval(directory_ / "rootfs").valid());
  held->reset();
  EXPECT_TRUE(LockTreeForRemoval(directory_ / "rootfs").valid());
}

TEST_F(ImageTest, AManifestThatIsNotTheIdentityIsRefused) {
  auto image = OpenImage(directory_);
  ASSERT_TRUE(image.ok());
  WriteFile(directory_ / "manifest", "something else\n");
  auto held = HoldImage(*image);
  ASSERT_FALSE(held.ok());
  EXPECT_TRUE(IsEnvironmentRefusal(held.error())) << held.error().ToString();
  EXPECT_NE(held.error().message().find("inconsistent"), std::string::npos);
}

TEST_F(ImageTest, AnImageWhoseIdentityChangedSinceItWasOpenedIsRefused) {
  auto image = OpenImage(directory_);
  ASSERT_TRUE(image.ok());
  std::filesystem::remove(directory_ / "identity");  // a build under way
  auto held = HoldImage(*image);
  ASSERT_FALSE(held.ok());
  EXPECT_TRUE(IsEnvironmentRefusal(held.error()));
}

}  // namespace
}  // namespace plimsoll::image
