#include "guest/displays.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "guest/protocol.h"
#include "guest/report_bounds.h"

namespace plimsoll::guest {
namespace {

// A PNG's first 24 bytes: signature, IHDR length 13, "IHDR", width, height.
std::string PngHeader(uint32_t width, uint32_t height) {
  std::string bytes = "\x89PNG\r\n\x1a\n";
  bytes += std::string("\0\0\0\x0d", 4) + "IHDR";
  for (uint32_t side : {width, height}) {
    for (int shift = 24; shift >= 0; shift -= 8) bytes += static_cast<char>((side >> shift) & 0xff);
  }
  return bytes + std::string(5, '\0');  // depth, colour type, ... (not read)
}

TEST(Displays, MimeTypesAreTypeSlashSubtypeInLowercase) {
  for (const char* good : {"image/png", "text/html", "text/plain", "image/svg+xml",
                           "application/vnd.plotly.v1+json"}) {
    EXPECT_TRUE(IsDisplayMime(good)) << good;
  }
  for (const char* bad : {"", "png", "/png", "image/", "Image/PNG", "text/html; charset=utf-8",
                          "text/plain\n", "a/b/c", "text /plain"}) {
    EXPECT_FALSE(IsDisplayMime(bad)) << bad;
  }
  EXPECT_TRUE(IsDisplayMime("a/" + std::string(kMaxDisplayMimeBytes - 2, 'b')));
  EXPECT_FALSE(IsDisplayMime("a/" + std::string(kMaxDisplayMimeBytes - 1, 'b')));
}

TEST(Displays, APngsSizeComesFromItsHeader) {
  auto size = PngSize(PngHeader(640, 480));
  ASSERT_TRUE(size.has_value());
  EXPECT_EQ(size->width, 640);
  EXPECT_EQ(size->height, 480);
  EXPECT_FALSE(PngSize("").has_value());
  EXPECT_FALSE(PngSize(PngHeader(640, 480).substr(0, 23)).has_value());
  EXPECT_FALSE(PngSize(PngHeader(0, 480)).has_value());
  EXPECT_FALSE(PngSize(PngHeader(0x80000000u, 1)).has_value());
  std::string not_ihdr = PngHeader(2, 2);
  not_ihdr[12] = 'X';
  EXPECT_FALSE(PngSize(not_ihdr).has_value());
}

TEST(Displays, MeasuringTrustsTheBytesNotTheGuest) {
  std::vector<Display> displays = {{"image/png", PngHeader(3, 4), 999, 999},
                                   {"text/plain", PngHeader(3, 4), 5, 5},
                                   {"image/png", "not a png", 7, 7}};
  MeasureDisplays(displays);
  EXPECT_EQ(displays[0].width, 3);
  EXPECT_EQ(displays[0].height, 4);
  for (size_t i : {1u, 2u}) {
    EXPECT_EQ(displays[i].width, 0) << i;
    EXPECT_EQ(displays[i].height, 0) << i;
  }
}

TEST(Displays, AReportCarriesThemAndTheHostMeasuresThem) {
  Report report;
  report.displays = {{"image/png", PngHeader(10, 20)}, {"text/html", "<table></table>"}};
  report.displays_truncated = true;
  auto decoded = DecodeReport(EncodeReport(report));
  ASSERT_TRUE(decoded.ok()) << decoded.error().ToString();
  EXPECT_EQ(decoded->displays, report.displays);
  EXPECT_TRUE(decoded->displays_truncated);

  Request request;
  request.python = PythonPayload{"print(1)"};
  decoded->steps.push_back(StepResult{});
  Result result;
  FillResult(request, *decoded, &result);
  ASSERT_EQ(result.displays.size(), 2u);
  EXPECT_EQ(result.displays[0].width, 10);
  EXPECT_EQ(result.displays[0].height, 20);
  EXPECT_EQ(result.displays[1].width, 0);
  EXPECT_TRUE(result.displays_truncated);

  // None: the keys are absent, as in every report before displays.
  std::string plain = EncodeReport(Report{});
  EXPECT_EQ(plain.find("displays"), std::string::npos);
}

TEST(Displays, AReportBeyondTheCapsOrWithBadEntriesIsRefused) {
  auto decode = [](const std::string& displays) {
    return DecodeReport(R"({"version":1,"outcome":"completed","steps":[],"artifacts":[],)"
                        R"("detail":"",)" +
                        displays + "}");
  };
  EXPECT_TRUE(decode(R"("displays":[{"mime":"text/plain","data":"aGk="}])").ok());
  EXPECT_FALSE(decode(R"("displays":[])").ok()) << "present means at least one";
  EXPECT_FALSE(decode(R"("displays":[{"mime":"TEXT","data":"aGk="}])").ok());
  EXPECT_FALSE(decode(R"("displays":[{"mime":"text/plain"}])").ok());
  EXPECT_FALSE(decode(R"("displays":[{"mime":"text/plain","data":"aGk=","width":3}])").ok())
      << "the guest does not say the size";
  EXPECT_FALSE(decode(R"("displays_truncated":"yes")").ok());
  std::string seventeen;
  for (size_t i = 0; i <= kMaxDisplays; ++i) {
    seventeen += std::string(i ? "," : "") + R"({"mime":"text/plain","data":""})";
  }
  EXPECT_FALSE(decode(R"("displays":[)" + seventeen + "]").ok());

  Job job;
  Report big;
  big.displays = {{"image/png", std::string(kMaxDisplayBytes / 2 + 1, 'x')},
                  {"image/png", std::string(kMaxDisplayBytes / 2, 'x')}};
  EXPECT_FALSE(CheckReportAgainstJob(big, job).ok());
  big.displays.pop_back();
  EXPECT_TRUE(CheckReportAgainstJob(big, job).ok());
  // The largest honest report still fits the bounds the host derives.
  Status shape = CheckReportShape(EncodeReport(big), ReportBoundsFor(job));
  EXPECT_TRUE(shape.ok()) << shape.error().ToString();
}

}  // namespace
}  // namespace plimsoll::guest
