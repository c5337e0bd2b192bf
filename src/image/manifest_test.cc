#include "image/manifest.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "image/test_tree.h"

namespace plimsoll::image {
namespace {

using testing::TemporaryDirectory;
using testing::WriteFile;

// sha256("hi\n") and sha256("").
constexpr const char* kHiDigest =
    "98ea6e4f216f2fb4b69fff9b3a44842c38686ca685f3f55dc48c5d3fb1107be4";
constexpr const char* kEmptyDigest =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

class ManifestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(temporary_.path().empty());
    root_ = temporary_.path() / "root";
    std::filesystem::create_directory(root_);
    chmod(root_.c_str(), 0755);
    WriteFile(root_ / "a.txt", "hi\n", 0640);
    std::filesystem::create_directory(root_ / "sub");
    chmod((root_ / "sub").c_str(), 0750);
    WriteFile(root_ / "sub" / "x", "", 0600);
    std::filesystem::create_symlink("a.txt", root_ / "link");
  }

  std::string Identity() {
    auto manifest = BuildManifest(root_);
    EXPECT_TRUE(manifest.ok()) << manifest.error().ToString();
    return manifest.ok() ? IdentityOfManifest(*manifest) : "";
  }

  TemporaryDirectory temporary_;
  std::filesystem::path root_;
};

TEST_F(ManifestTest, ListsEveryEntrySortedWithTypeModeOwnerAndContent) {
  auto manifest = BuildManifest(root_);
  ASSERT_TRUE(manifest.ok()) << manifest.error().ToString();
  std::string owner = std::to_string(getuid()) + " " + std::to_string(getgid());
  EXPECT_EQ(*manifest,
            "plimsoll-manifest-v1\n"
            "/ d 0755 " +
                owner +
                "\n"
                "/a.txt f 0640 " +
                owner + " 3 " + kHiDigest +
                "\n"
                "/link l 0777 " +
                owner +
                " a.txt\n"
                "/sub d 0750 " +
                owner +
                "\n"
                "/sub/x f 0600 " +
                owner + " 0 " + kEmptyDigest + "\n");
  EXPECT_EQ(IdentityOfManifest(*manifest), "sha256:" + Sha256Hex(*manifest));
  EXPECT_TRUE(IsWellFormedIdentity(IdentityOfManifest(*manifest)));
}

TEST_F(ManifestTest, SortsByRawBytesAndEscapesOddNames) {
  WriteFile(root_ / "a b", "", 0644);
  WriteFile(root_ / "a\nc", "", 0644);
  WriteFile(root_ / "\xc3\xa9", "", 0644);
  auto manifest = BuildManifest(root_);
  ASSERT_TRUE(manifest.ok());
  size_t newline_name = manifest->find("/a\\x0ac f");
  size_t space_name = manifest->find("/a\\x20b f");
  size_t plain = manifest->find("/a.txt f");
  size_t accented = manifest->find("/\\xc3\\xa9 f");
  ASSERT_NE(newline_name, std::string::npos) << *manifest;
  ASSERT_NE(space_name, std::string::npos);
  ASSERT_NE(accented, std::string::npos);
  // '\n' (0x0a) < ' ' (0x20) < '.' (0x2e); 0xc3 sorts after every ASCII name.
  EXPECT_LT(newline_name, space_name);
  EXPECT_LT(space_name, plain);
  EXPECT_GT(accented, manifest->find("/sub/x"));
  EXPECT_EQ(EscapeManifestField("a\\b"), "a\\x5cb");
}

TEST_F(ManifestTest, IsStableWhenNothingChanges) {
  EXPECT_EQ(Identity(), Identity());
}

TEST_F(ManifestTest, ChangesWithOneByteOfContent) {
  std::string before = Identity();
  WriteFile(root_ / "a.txt", "hI\n", 0640);
  EXPECT_NE(Identity(), before);
}

TEST_F(ManifestTest, ChangesWithAMode) {
  std::string before = Identity();
  chmod((root_ / "a.txt").c_str(), 0644);
  EXPECT_NE(Identity(), before);
  chmod((root_ / "a.txt").c_str(), 0640);
  EXPECT_EQ(Identity(), before);
  chmod((root_ / "sub").c_str(), 0755);
  EXPECT_NE(Identity(), before);
}

TEST_F(ManifestTest, ChangesWithASymlinkTarget) {
  std::string before = Identity();
  std::filesystem::remove(root_ / "link");
  std::filesystem::create_symlink("sub/x", root_ / "link");
  EXPECT_NE(Identity(), before);
}

TEST_F(ManifestTest, ChangesWithAnEmptyFileOrDirectoryAddedOrARename) {
  std::string before = Identity();
  WriteFile(root_ / "sub" / "y", "", 0600);
  std::string with_file = Identity();
  EXPECT_NE(with_file, before);
  std::filesystem::remove(root_ / "sub" / "y");
  std::filesystem::create_directory(root_ / "empty");
  EXPECT_NE(Identity(), before);
  std::filesystem::remove(root_ / "empty");
  std::filesystem::rename(root_ / "sub" / "x", root_ / "sub" / "z");
  EXPECT_NE(Identity(), before);
}

TEST_F(ManifestTest, DoesNotFollowSymlinksOutOfTheTree) {
  std::filesystem::create_symlink("/etc", root_ / "outside");
  auto manifest = BuildManifest(root_);
  ASSERT_TRUE(manifest.ok());
  EXPECT_NE(manifest->find("/outside l 0777"), std::string::npos);
  EXPECT_EQ(manifest->find("/outside/"), std::string::npos);
}

TEST_F(ManifestTest, FailsOnAMissingRoot) {
  auto manifest = BuildManifest(root_ / "nope");
  ASSERT_FALSE(manifest.ok());
  EXPECT_NE(manifest.error().message().find("nope"), std::string::npos);
}

TEST(IdentityTest, WellFormedMeansPrefixAnd64LowercaseHexDigits) {
  std::string hex(64, 'a');
  EXPECT_TRUE(IsWellFormedIdentity("sha256:" + hex));
  EXPECT_FALSE(IsWellFormedIdentity("sha256:" + hex.substr(1)));
  EXPECT_FALSE(IsWellFormedIdentity("sha256:" + std::string(64, 'A')));
  EXPECT_FALSE(IsWellFormedIdentity("sha512:" + hex));
  EXPECT_FALSE(IsWellFormedIdentity(hex));
}

TEST(DifferencesTest, NamesChangedMissingAndExtraEntries) {
  std::string before = "plimsoll-manifest-v1\n/ d 0755 0 0\n/a f 0644 0 0 1 aa\n/b l 0777 0 0 a\n";
  std::string after = "plimsoll-manifest-v1\n/ d 0755 0 0\n/a f 0644 0 0 1 bb\n/c d 0755 0 0\n";
  auto differences = DescribeManifestDifferences(before, after, 10);
  ASSERT_EQ(differences.size(), 3u);
  EXPECT_EQ(differences[0].rfind("/a: recorded", 0), 0u) << differences[0];
  EXPECT_EQ(differences[1].rfind("/b: missing", 0), 0u) << differences[1];
  EXPECT_EQ(differences[2].rfind("/c: not recorded", 0), 0u) << differences[2];
  EXPECT_EQ(DescribeManifestDifferences(before, after, 1).size(), 1u);
}

}  // namespace
}  // namespace plimsoll::image
