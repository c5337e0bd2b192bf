// A deterministic RAND_bytes for fuzz targets, linked with
// -Wl,--wrap=RAND_bytes (fuzz/CMakeLists.txt): the project's calls to
// OpenSSL's RAND_bytes (caller tokens, error IDs) land here instead, so a
// target fed the same inputs computes the same values, and libFuzzer's
// fixed-seed check form (fuzz/run) explores the same inputs every run.
// Never linked outside fuzz/: these bytes are not random.
#include <cstdint>

extern "C" int __wrap_RAND_bytes(unsigned char* out, int size);

namespace {

uint64_t state = 0x706c696d736f6c6cULL;  // "plimsoll"

}  // namespace

// A 64-bit linear congruential generator (Knuth's MMIX constants); its top
// byte is plenty for test tokens and IDs.
extern "C" int __wrap_RAND_bytes(unsigned char* out, int size) {
  for (int i = 0; i < size; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    out[i] = static_cast<unsigned char>(state >> 56);
  }
  return 1;
}
