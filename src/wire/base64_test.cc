#include "wire/base64.h"

#include <gtest/gtest.h>

#include <string>

namespace plimsoll::wire {
namespace {

TEST(Base64Test, Rfc4648Vectors) {
  EXPECT_EQ(EncodeBase64(""), "");
  EXPECT_EQ(EncodeBase64("f"), "Zg==");
  EXPECT_EQ(EncodeBase64("fo"), "Zm8=");
  EXPECT_EQ(EncodeBase64("foo"), "Zm9v");
  EXPECT_EQ(EncodeBase64("foob"), "Zm9vYg==");
  EXPECT_EQ(EncodeBase64("fooba"), "Zm9vYmE=");
  EXPECT_EQ(EncodeBase64("foobar"), "Zm9vYmFy");
  EXPECT_EQ(EncodeBase64(std::string("\xff\xfe\x00", 3)), "//4A");
  EXPECT_EQ(DecodeBase64("Zm9vYmE="), "fooba");
  EXPECT_EQ(DecodeBase64(""), "");
}

TEST(Base64Test, RoundTripsEveryByteAndLength) {
  std::string bytes;
  for (int i = 0; i < 600; ++i) {
    bytes.push_back(static_cast<char>((i * 37 + 11) & 0xff));
    auto decoded = DecodeBase64(EncodeBase64(bytes));
    ASSERT_TRUE(decoded.has_value()) << i;
    ASSERT_EQ(*decoded, bytes) << i;
  }
}

TEST(Base64Test, RejectsAnythingNotCanonical) {
  for (const char* bad : {"Zg=", "Zg", "Z", "Zh==", "Zm9=", "Zg==Zg==", "=Zg=", "Zg=a", "Zm9v\n",
                          " Zm9v", "Zm-v", "Zm_v", "====", "Zm9v====", "Z===", "Zm\0v"}) {
    EXPECT_FALSE(DecodeBase64(bad).has_value()) << bad;
  }
  EXPECT_FALSE(DecodeBase64(std::string("Zm\0v", 4)).has_value());
}

}  // namespace
}  // namespace plimsoll::wire
