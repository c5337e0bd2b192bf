#include "record/digest_builder.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <limits>
#include <string>

namespace plimsoll::record {
namespace {

std::string Hex(std::string_view bytes) {
  return LowerHex(bytes);
}

TEST(DigestBuilderTest, WorkedExampleBytes) {
  // docs/run-records.md: the field exit_code = -9 in the domain "d".
  std::string transcript;
  DigestBuilder digest("d", &transcript);
  digest.Integer("exit_code", -9);
  std::string sha = std::move(digest).Finish();
  EXPECT_EQ(Hex(transcript),
            "0000000000000001"
            "64"  // value("d")
            "0000000000000009"
            "657869745f636f6465"  // value("exit_code")
            "0000000000000002"
            "2d39");  // value("-9")
  EXPECT_EQ(sha, Sha256Hex(transcript));
}

TEST(DigestBuilderTest, EmptyDomainIsEightZeroBytes) {
  EXPECT_EQ(std::move(DigestBuilder("")).Finish(),
            "af5570f5a1810b7af78caf4bc70a660f0df51e42baf91d4de5b2328de0e83dfc");
}

TEST(DigestBuilderTest, EncodesEachType) {
  std::string transcript;
  DigestBuilder digest("", &transcript);
  digest.Boolean("b", true);
  digest.Boolean("b", false);
  digest.Count("n", 0);
  digest.Integer("i", std::numeric_limits<int64_t>::min());
  digest.Bytes("s", std::string("\x00\xff", 2));
  std::string expected = std::string(8, '\0') +  // domain ""
                         std::string(
                             "\0\0\0\0\0\0\0\x01"
                             "b",
                             9) +  // name
                         std::string(
                             "\0\0\0\0\0\0\0\x04"
                             "true",
                             12) +
                         std::string(
                             "\0\0\0\0\0\0\0\x01"
                             "b",
                             9) +
                         std::string(
                             "\0\0\0\0\0\0\0\x05"
                             "false",
                             13) +
                         std::string(
                             "\0\0\0\0\0\0\0\x01"
                             "n",
                             9) +
                         std::string(
                             "\0\0\0\0\0\0\0\x01"
                             "0",
                             9) +
                         std::string(
                             "\0\0\0\0\0\0\0\x01"
                             "i",
                             9) +
                         std::string(
                             "\0\0\0\0\0\0\0\x14"
                             "-9223372036854775808",
                             28) +
                         std::string(
                             "\0\0\0\0\0\0\0\x01"
                             "s",
                             9) +
                         std::string(
                             "\0\0\0\0\0\0\0\x02"
                             "\x00\xff",
                             10);
  EXPECT_EQ(Hex(transcript), Hex(expected));
}

TEST(DigestBuilderTest, FloatsAreBigEndianWithOneNaN) {
  EXPECT_EQ(Hex(EncodeFloat(1.5)), "3ff8000000000000");
  EXPECT_EQ(Hex(EncodeFloat(0.0)), "0000000000000000");
  EXPECT_EQ(Hex(EncodeFloat(-0.0)), "8000000000000000");
  EXPECT_EQ(Hex(EncodeFloat(std::numeric_limits<double>::infinity())), "7ff0000000000000");
  EXPECT_EQ(Hex(EncodeFloat(-std::numeric_limits<double>::infinity())), "fff0000000000000");
  EXPECT_EQ(Hex(EncodeFloat(std::numeric_limits<double>::denorm_min())), "0000000000000001");
  for (uint64_t nan_bits :
       {uint64_t{0x7ff8000000000000}, uint64_t{0xfff8000000000000}, uint64_t{0x7ff0000000000001},
        uint64_t{0x7fffffffffffffff}, uint64_t{0xffffffffffffffff}}) {
    EXPECT_EQ(Hex(EncodeFloat(std::bit_cast<double>(nan_bits))), "7ff8000000000000") << nan_bits;
  }
}

TEST(DigestBuilderTest, SessionIdDigestIsPlainSha256) {
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

}  // namespace
}  // namespace plimsoll::record
