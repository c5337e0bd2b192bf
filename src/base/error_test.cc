#include "plimsoll/error.h"

#include <gtest/gtest.h>

namespace plimsoll {
namespace {

TEST(ErrorTest, NamesRoundTrip) {
  for (ErrorCode code :
       {ErrorCode::kInvalidArgument, ErrorCode::kUnauthenticated, ErrorCode::kPermissionDenied,
        ErrorCode::kFailedPrecondition, ErrorCode::kResourceExhausted, ErrorCode::kUnimplemented,
        ErrorCode::kNotFound, ErrorCode::kDeadlineExceeded, ErrorCode::kInternal,
        ErrorCode::kDataLoss}) {
    EXPECT_EQ(ParseErrorCode(ErrorCodeName(code)), code);
  }
  for (NotDispatched reason :
       {NotDispatched::kRequest, NotDispatched::kPermission, NotDispatched::kProtocol,
        NotDispatched::kUnsupported, NotDispatched::kIsolation, NotDispatched::kCapacity,
        NotDispatched::kEnvironment}) {
    EXPECT_EQ(ParseNotDispatched(NotDispatchedName(reason)), reason);
  }
  EXPECT_FALSE(ParseErrorCode("Internal").has_value());
  EXPECT_FALSE(ParseNotDispatched("").has_value());
}

TEST(ErrorTest, RefusalCarriesTheMark) {
  Error refusal = Refusal(NotDispatched::kIsolation, "Too weak.");
  EXPECT_EQ(NotDispatchedReason(refusal), NotDispatched::kIsolation);
  EXPECT_EQ(refusal.code(), ErrorCode::kFailedPrecondition);
  EXPECT_EQ(refusal.ToString(), "failed_precondition: Too weak. (nothing ran: isolation)");

  Error failure = Failure(ErrorCode::kInternal, "Broke after start.");
  EXPECT_FALSE(NotDispatchedReason(failure).has_value());
  EXPECT_EQ(failure.ToString(), "internal: Broke after start.");
}

TEST(ErrorTest, WithContextKeepsCodeAndMark) {
  Error error = Refusal(NotDispatched::kCapacity, "Full.").WithContext("admission");
  EXPECT_EQ(error.message(), "admission: Full.");
  EXPECT_EQ(error.code(), ErrorCode::kResourceExhausted);
  EXPECT_EQ(NotDispatchedReason(error), NotDispatched::kCapacity);
}

TEST(ErrorTest, OnlyFourReasonsAreRetryableElsewhere) {
  EXPECT_TRUE(IsRetryableElsewhere(NotDispatched::kUnsupported));
  EXPECT_TRUE(IsRetryableElsewhere(NotDispatched::kIsolation));
  EXPECT_TRUE(IsRetryableElsewhere(NotDispatched::kEnvironment));
  EXPECT_TRUE(IsRetryableElsewhere(NotDispatched::kCapacity));
  EXPECT_FALSE(IsRetryableElsewhere(NotDispatched::kRequest));
  EXPECT_FALSE(IsRetryableElsewhere(NotDispatched::kPermission));
  EXPECT_FALSE(IsRetryableElsewhere(NotDispatched::kProtocol));
}

Expected<int> Half(int value) {
  if (value % 2 != 0) return Refusal(NotDispatched::kRequest, "Odd.");
  return value / 2;
}

Status HalfTwice(int value, int* out) {
  auto half = Half(value);
  PLIMSOLL_RETURN_IF_ERROR(half);
  auto quarter = Half(*half);
  PLIMSOLL_RETURN_IF_ERROR(quarter);
  *out = *quarter;
  return Status::Ok();
}

TEST(ErrorTest, ExpectedAndStatusPropagate) {
  int out = 0;
  EXPECT_TRUE(HalfTwice(8, &out).ok());
  EXPECT_EQ(out, 2);
  Status odd = HalfTwice(6, &out);
  ASSERT_FALSE(odd.ok());
  EXPECT_EQ(odd.error().message(), "Odd.");
}

TEST(ErrorTest, SystemErrorNamesTheCall) {
  Error error = SystemError("open(/nope)", ENOENT);
  EXPECT_EQ(error.code(), ErrorCode::kInternal);
  EXPECT_EQ(error.message(), "open(/nope): No such file or directory");
}

}  // namespace
}  // namespace plimsoll
