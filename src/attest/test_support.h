// What the attest tests (keys_test.cc, dsse_test.cc) share: a scratch
// directory, small file helpers, and the shell for the openssl
// interoperability checks. For tests only.
//
// The openssl command line is a build dependency (scripts/bootstrap
// installs it), so RequireCommand makes its absence a test failure, never a
// skip: the interoperability claims of docs/attest.md rest on it.
#ifndef PLIMSOLL_ATTEST_TEST_SUPPORT_H_
#define PLIMSOLL_ATTEST_TEST_SUPPORT_H_

#include <gtest/gtest.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

namespace plimsoll::attest::testing {

// A fresh directory under the temporary directory, removed with its
// contents at the end of the scope.
class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "plimsoll-attest-XXXXXX").string();
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline void WriteFile(const std::filesystem::path& path, std::string_view bytes,
                      mode_t mode = 0600) {
  std::ofstream(path, std::ios::binary) << bytes;
  EXPECT_EQ(chmod(path.c_str(), mode), 0) << path;
}

inline std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs `command` with sh.
inline CommandResult RunShell(const std::string& command) {
  CommandResult result;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return result;
  std::array<char, 4096> buffer{};
  std::size_t got = 0;
  while ((got = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) {
    result.output.append(buffer.data(), got);
  }
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

// Whether `name` is on PATH; a test failure naming it when it is not.
inline bool RequireCommand(const std::string& name) {
  const bool found = RunShell("command -v " + name + " >/dev/null").exit_code == 0;
  EXPECT_TRUE(found) << name << " is not installed (scripts/bootstrap installs it)";
  return found;
}

inline std::string Quote(const std::filesystem::path& path) {
  return "'" + path.string() + "'";
}

}  // namespace plimsoll::attest::testing

#endif  // PLIMSOLL_ATTEST_TEST_SUPPORT_H_
