// The self-check's script is a data file (self_check.py) embedded at build
// time: the embedded text is that file byte for byte, and the project a smoke
// test sends carries it with only the /proc lists filled in.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "os/self_check.h"

namespace plimsoll::os {
namespace {

std::string ReadFile(const char* path) {
  std::ifstream file(path, std::ios::binary);
  EXPECT_TRUE(file) << "cannot read " << path;
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

TEST(SelfCheckScriptTest, TheEmbeddedScriptIsTheFileByteForByte) {
  const std::string file = ReadFile(PLIMSOLL_SELF_CHECK_SCRIPT);
  ASSERT_FALSE(file.empty());
  EXPECT_EQ(std::string(kSelfCheckScript), file);
}

TEST(SelfCheckScriptTest, TheProjectSendsTheScriptWithTheProcListsFilledIn) {
  const std::string script = kSelfCheckScript;
  const size_t masked = script.find("__MASKED_PROC_PATHS__");
  ASSERT_NE(masked, std::string::npos);
  ASSERT_NE(script.find("__READ_ONLY_PROC_PATHS__"), std::string::npos);

  ProjectPayload project = SelfCheckProject(Limits{});
  ASSERT_EQ(project.files.size(), 1u);
  EXPECT_EQ(project.files[0].path, "self_check.py");
  const std::string& sent = project.files[0].content;
  EXPECT_EQ(sent.substr(0, masked), script.substr(0, masked)) << "the text before the first list";
  EXPECT_EQ(sent.find("__MASKED_PROC_PATHS__"), std::string::npos);
  EXPECT_EQ(sent.find("__READ_ONLY_PROC_PATHS__"), std::string::npos);
  EXPECT_EQ(sent.compare(masked, 2, "[\""), 0) << "a Python list of names";
}

}  // namespace
}  // namespace plimsoll::os
