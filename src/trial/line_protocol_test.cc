#include "trial/line_protocol.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace plimsoll::trial {
namespace {

TEST(LineProtocol, StateLinesAreShortestRoundTripDecimals) {
  EXPECT_EQ(FormatStateLine(std::vector<double>{0, 0, 0.05, 0}), "0 0 0.05 0\n");
  EXPECT_EQ(FormatStateLine(std::vector<double>{-1.25, 1e-05, 0.1 + 0.2}),
            "-1.25 1e-05 0.30000000000000004\n");
  EXPECT_EQ(FormatStateLine(std::vector<double>{-0.0}), "-0\n");
  // Every double reads back to the same bits.
  const std::vector<double> values = {std::nextafter(1.0, 2.0), 5e-324, 1.7976931348623157e308,
                                      -2.2250738585072014e-308, 1.0 / 3};
  const std::string line = FormatStateLine(values);
  std::vector<double> back(values.size());
  ASSERT_EQ(ParseAnswerLine(line.substr(0, line.size() - 1), values.size(), back).verdict,
            AnswerVerdict::kOk);
  EXPECT_EQ(std::memcmp(back.data(), values.data(), values.size() * sizeof(double)), 0);
}

AnswerVerdict Verdict(const std::string& line, size_t count = 1) {
  std::vector<double> inputs(count);
  return ParseAnswerLine(line, count, inputs).verdict;
}

TEST(LineProtocol, AcceptsExactlyTheInputCountOfNumbers) {
  std::vector<double> inputs(2);
  EXPECT_EQ(ParseAnswerLine(" 1.5\t-2e3 \r", 2, inputs).verdict, AnswerVerdict::kOk);
  EXPECT_EQ(inputs, (std::vector<double>{1.5, -2000}));
  EXPECT_EQ(Verdict("40"), AnswerVerdict::kOk);
  EXPECT_EQ(Verdict("-0.0"), AnswerVerdict::kOk);
  EXPECT_EQ(Verdict("1e300"), AnswerVerdict::kOk);
}

TEST(LineProtocol, RefusesMalformedAnswers) {
  for (const char* line : {"", " ", "1 2", "hello", "1x", "+1", "0x10", "1,5", "1e-400", "--1",
                           "1\v", "nan nan", "1\n"}) {
    EXPECT_EQ(Verdict(line), AnswerVerdict::kMalformed) << "\"" << line << "\"";
  }
  EXPECT_EQ(Verdict("1", 2), AnswerVerdict::kMalformed);
}

TEST(LineProtocol, RefusesNonFiniteAnswers) {
  for (const char* line : {"nan", "NaN", "-nan", "inf", "-inf", "Infinity", "1e999", "-1e400"}) {
    EXPECT_EQ(Verdict(line), AnswerVerdict::kNonFinite) << "\"" << line << "\"";
  }
  EXPECT_EQ(Verdict("1 nan", 2), AnswerVerdict::kNonFinite);
}

}  // namespace
}  // namespace plimsoll::trial
