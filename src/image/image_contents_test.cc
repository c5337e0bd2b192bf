#include "image/image_contents.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "image/test_tree.h"

namespace plimsoll::image {
namespace {

namespace fs = std::filesystem;
using testing::TemporaryDirectory;
using testing::WriteFile;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

ImagePackage Package(std::string name, std::string version, std::string source) {
  return {std::move(name), std::move(version), std::move(source)};
}

TEST(ImageContentsTest, ReadsEachPackageManagersRecordsAndTheLanguages) {
  TemporaryDirectory root;
  const fs::path tree = root.path();
  WriteFile(tree / "var/lib/dpkg/status",
            "Package: python3-numpy\nStatus: install ok installed\nVersion: 1:1.24.2-1\n"
            "Description: numbers\n fast arrays\n\n"
            "Package: removed-one\nStatus: deinstall ok config-files\nVersion: 1.0\n\n"
            "Package: nodejs\nStatus: install ok installed\nVersion: 18.19.0+dfsg-6~deb12u2\n");
  WriteFile(tree / "usr/lib/python3/dist-packages/numpy-1.24.2.egg-info/PKG-INFO",
            "Metadata-Version: 2.1\nName: numpy\nVersion: 1.24.2\n\nName: not-this\n");
  WriteFile(tree / "usr/local/lib/python3.11/dist-packages/scipy-1.13.1.dist-info/METADATA",
            "Metadata-Version: 2.1\nName: scipy\nVersion: 1.13.1\nSummary: science\n");
  WriteFile(tree / "usr/share/nodejs/papaparse/package.json",
            R"({"name": "papaparse", "version": "5.7.1", "main": "papaparse.js"})");
  WriteFile(tree / "usr/share/nodejs/@scope/tool/package.json",
            R"({"name": "@scope/tool", "version": "0.2.0"})");
  WriteFile(tree / "usr/local/bin/qjs", "", 0755);
  WriteFile(tree / "usr/bin/python3.11", "", 0755);
  fs::create_symlink("python3.11", tree / "usr/bin/python3");

  auto contents = ReadImageContents(tree);
  ASSERT_TRUE(contents.ok()) << contents.error().ToString();
  EXPECT_THAT(contents->languages, ElementsAre("javascript", "python"));
  EXPECT_THAT(contents->packages,
              ElementsAre(Package("nodejs", "18.19.0+dfsg-6~deb12u2", "debian"),
                          Package("python3-numpy", "1:1.24.2-1", "debian"),
                          Package("@scope/tool", "0.2.0", "npm"),
                          Package("papaparse", "5.7.1", "npm"),
                          Package("numpy", "1.24.2", "python"),
                          Package("scipy", "1.13.1", "python")));
}

TEST(ImageContentsTest, NoSymbolicLinkIsFollowedOutOfTheTree) {
  TemporaryDirectory root;
  const fs::path tree = root.path() / "rootfs";
  const fs::path outside = root.path() / "outside";
  WriteFile(outside / "var/lib/dpkg/status",
            "Package: host-only\nStatus: install ok installed\nVersion: 9\n");
  WriteFile(outside / "pkg/package.json", R"({"name": "host-secret", "version": "1.0.0"})");
  WriteFile(outside / "meta/METADATA", "Name: host-python\nVersion: 1\n");
  fs::create_directories(tree / "usr/share/nodejs");
  fs::create_directories(tree / "usr/lib/python3/dist-packages");
  // A linked directory at the top of a path, a linked package directory, a
  // linked record file and a linked dist-info directory.
  fs::create_directory_symlink(outside / "var", tree / "var");
  fs::create_directory_symlink(outside / "pkg", tree / "usr/share/nodejs/linked");
  fs::create_directories(tree / "usr/share/nodejs/filelink");
  fs::create_symlink(outside / "pkg/package.json", tree / "usr/share/nodejs/filelink/package.json");
  fs::create_directory_symlink(outside / "meta",
                               tree / "usr/lib/python3/dist-packages/host-1.dist-info");

  auto contents = ReadImageContents(tree);
  ASSERT_TRUE(contents.ok()) << contents.error().ToString();
  EXPECT_THAT(contents->packages, IsEmpty());
  EXPECT_THAT(contents->languages, IsEmpty());
}

TEST(ImageContentsTest, RecordsThatDoNotParseOrAreTooLargeAreSkipped) {
  TemporaryDirectory root;
  const fs::path tree = root.path();
  WriteFile(tree / "usr/share/nodejs/broken/package.json", "{not json");
  WriteFile(tree / "usr/share/nodejs/noversion/package.json", R"({"name": "x"})");
  WriteFile(tree / "usr/share/nodejs/wrongtype/package.json", R"({"name": 7, "version": "1"})");
  WriteFile(tree / "usr/share/nodejs/huge/package.json",
            R"({"name": "huge", "version": "1", "pad": ")" + std::string(2 << 20, 'x') + "\"}");
  WriteFile(tree / "usr/share/nodejs/good/package.json", R"({"name": "good", "version": "2"})");
  WriteFile(tree / "var/lib/dpkg/status", "no colon here\n\nPackage: noversion\n");

  auto contents = ReadImageContents(tree);
  ASSERT_TRUE(contents.ok()) << contents.error().ToString();
  EXPECT_THAT(contents->packages, ElementsAre(Package("good", "2", "npm")));
}

TEST(ImageContentsTest, ARootThatIsNotADirectoryIsAnError) {
  TemporaryDirectory root;
  EXPECT_FALSE(ReadImageContents(root.path() / "missing").ok());
  WriteFile(root.path() / "file", "x");
  EXPECT_FALSE(ReadImageContents(root.path() / "file").ok());
}

}  // namespace
}  // namespace plimsoll::image
