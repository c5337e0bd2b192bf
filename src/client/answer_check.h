// What the client checks on every answer before believing it (SPEC §3, §5,
// §11). Pure functions over an HttpAnswer, so every rule is tested without a
// socket; client.cc calls them after each exchange.
//
// The rules:
//   - Echo: the answer carries exactly one Plimsoll-Request-Id, equal to the
//     ID this call sent; an error body's request_id is that ID too.
//   - A success (200) without the echo is kDataLoss: it may be another call's
//     answer. An error without the echo (or with a mark the
//     Plimsoll-Not-Dispatched header does not repeat exactly) is not believed
//     either: it becomes kDataLoss without a mark, quoting what it said.
//   - A run's result is read (ParseResultJson) and checked (CheckExchange:
//     digests recomputed from `sent` and the result, provider/tier/
//     environment, the tier against the request's floor, the record digest).
//   - Anything unreadable is kDataLoss without a mark.
//
// Usage:
//   Expected<Result> result = CheckRunAnswer(request, sent_id, answer);
#ifndef PLIMSOLL_CLIENT_ANSWER_CHECK_H_
#define PLIMSOLL_CLIENT_ANSWER_CHECK_H_

#include <string_view>

#include "client/http_answer.h"
#include "plimsoll/client.h"

namespace plimsoll::client {

// Whether `answer` carries exactly one Plimsoll-Request-Id equal to `sent_id`.
bool EchoMatches(std::string_view sent_id, const HttpAnswer& answer);

// The error a non-200 answer stands for, as far as it can be believed.
Error ErrorFromAnswer(std::string_view sent_id, const HttpAnswer& answer);

// POST /v1/runs.
Expected<Result> CheckRunAnswer(const Request& sent, std::string_view sent_id,
                                const HttpAnswer& answer);

// POST /v1/sessions (201): the session's tier must meet the floor `sent`
// asked for and its environment be the one it required (kDataLoss if not).
Expected<SessionInfo> CheckSessionOpenAnswer(const SessionOpenRequest& sent,
                                             std::string_view sent_id, const HttpAnswer& answer);

// POST /v1/sessions/{id}/runs: CheckRunAnswer's checks plus the chain
// (CheckExchange with `chain`, which starts with the session's digest and
// advances only when everything passed), and the tier against
// `session_floor`, the floor the session was opened with ("" for none),
// whatever floor the call itself asked: an on-path rewriter can lower one
// call's tier and recompute every digest, and only a floor catches that.
Expected<Result> CheckSessionRunAnswer(const Request& sent, std::string_view sent_id,
                                       const HttpAnswer& answer, ChainState& chain,
                                       std::string_view session_floor);

// DELETE /v1/sessions/{id}: the close must name the chain's last record and
// call count.
Expected<SessionClose> CheckSessionCloseAnswer(std::string_view sent_id, const HttpAnswer& answer,
                                               const ChainState& chain);

// GET /v1/describe.
Expected<DaemonDescription> CheckDescribeAnswer(std::string_view sent_id, const HttpAnswer& answer);

// GET /healthz.
Status CheckHealthAnswer(std::string_view sent_id, const HttpAnswer& answer);

}  // namespace plimsoll::client

#endif  // PLIMSOLL_CLIENT_ANSWER_CHECK_H_
