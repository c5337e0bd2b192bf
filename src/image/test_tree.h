// Helpers for the image tests: a temporary directory and small file writers.
#ifndef PLIMSOLL_IMAGE_TEST_TREE_H_
#define PLIMSOLL_IMAGE_TEST_TREE_H_

#include <elf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace plimsoll::image::testing {

// A fresh directory under $TMPDIR (or /tmp), removed with its contents.
class TemporaryDirectory {
 public:
  TemporaryDirectory() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern =
        std::string(base && *base ? base : "/tmp") + "/plimsoll-image-test-XXXXXX";
    path_ = mkdtemp(pattern.data()) ? std::filesystem::path(pattern) : std::filesystem::path();
  }
  ~TemporaryDirectory() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  TemporaryDirectory(const TemporaryDirectory&) = delete;
  TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline void WriteFile(const std::filesystem::path& file, std::string_view content,
                      mode_t mode = 0644) {
  std::filesystem::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary | std::ios::trunc)
      .write(content.data(), static_cast<std::streamsize>(content.size()));
  chmod(file.c_str(), mode);
}

inline std::string ReadFile(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The smallest ELF file IsStaticElf accepts: a header and one program header
// (PT_LOAD, or PT_INTERP for a "dynamic" one), followed by `payload`.
inline std::string FakeElf(bool dynamic, std::string_view payload = "") {
  Elf64_Ehdr header{};
  std::copy(ELFMAG, ELFMAG + SELFMAG, header.e_ident);
  header.e_ident[EI_CLASS] = ELFCLASS64;
  header.e_ident[EI_DATA] = ELFDATA2LSB;
  header.e_ident[EI_VERSION] = EV_CURRENT;
  header.e_type = ET_EXEC;
  header.e_machine = EM_X86_64;
  header.e_version = EV_CURRENT;
  header.e_phoff = sizeof header;
  header.e_ehsize = sizeof header;
  header.e_phentsize = sizeof(Elf64_Phdr);
  header.e_phnum = 1;
  Elf64_Phdr program{};
  program.p_type = dynamic ? PT_INTERP : PT_LOAD;
  std::string bytes(reinterpret_cast<const char*>(&header), sizeof header);
  bytes.append(reinterpret_cast<const char*>(&program), sizeof program);
  bytes += payload;
  return bytes;
}

}  // namespace plimsoll::image::testing

#endif  // PLIMSOLL_IMAGE_TEST_TREE_H_
