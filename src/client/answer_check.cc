#include "client/answer_check.h"

#include <optional>
#include <string>
#include <vector>

#include "client/description_json.h"
#include "client/request_id.h"
#include "plimsoll/record.h"
#include "plimsoll/wire.h"

namespace plimsoll::client {
namespace {

constexpr std::string_view kIdHeader = "plimsoll-request-id";
constexpr std::string_view kMarkHeader = "plimsoll-not-dispatched";

// A header value from the network, made safe to print in a message.
std::string Printable(std::string_view value) {
  constexpr size_t kMax = 64;
  std::string out;
  for (char c : value.substr(0, kMax)) {
    out += (c >= 0x20 && c < 0x7f) ? c : '?';
  }
  if (value.size() > kMax) out += "...";
  return out;
}

std::string DescribeEcho(const HttpAnswer& answer) {
  std::vector<std::string> ids = answer.Values(kIdHeader);
  if (ids.empty()) return "none";
  std::string text;
  for (const std::string& id : ids) {
    if (!text.empty()) text += ", ";
    text += "\"" + Printable(id) + "\"";
  }
  return text;
}

// Why the answer is not this call's, or nullopt when it is.
std::optional<std::string> EchoProblem(std::string_view sent_id, const HttpAnswer& answer) {
  if (EchoMatches(sent_id, answer)) return std::nullopt;
  return "it carries request ID " + DescribeEcho(answer) + " where this call sent \"" +
         std::string(sent_id) + "\"";
}

// The floor `tier` does not meet, or nullopt when it meets it ("" is no
// floor; a name that is not a tier is met by nothing).
std::optional<std::string> BelowFloor(Tier tier, std::string_view floor) {
  if (floor.empty()) return std::nullopt;
  std::optional<Tier> parsed = ParseTier(floor);
  if (parsed && MeetsFloor(tier, *parsed)) return std::nullopt;
  return Printable(floor);
}

Error NotThisCallsAnswer(const std::string& problem, std::string_view said) {
  std::string message =
      "The daemon's answer is not believed: " + problem +
      ". A proxy may have swapped answers between calls, so the code may have run.";
  if (!said.empty()) message += " The answer said: " + std::string(said);
  return Failure(ErrorCode::kDataLoss, std::move(message));
}

}  // namespace

bool EchoMatches(std::string_view sent_id, const HttpAnswer& answer) {
  std::vector<std::string> ids = answer.Values(kIdHeader);
  return IsWellFormedRequestId(sent_id) && ids.size() == 1 && ids.front() == sent_id;
}

Error ErrorFromAnswer(std::string_view sent_id, const HttpAnswer& answer) {
  Expected<ErrorAnswer> parsed = ParseErrorJson(answer.body);
  if (!parsed.ok()) {
    return Failure(ErrorCode::kDataLoss,
                   "The daemon answered HTTP " + std::to_string(answer.status) +
                       " with a body that is not a plimsoll error (" + parsed.error().message() +
                       "), so the outcome of the call is unknown and the code may have run.");
  }
  const Error& error = parsed->error;
  // What the answer said, without its mark: quoted, not believed.
  const std::string said = std::string(ErrorCodeName(error.code())) + ": " + error.message();
  if (auto problem = EchoProblem(sent_id, answer)) return NotThisCallsAnswer(*problem, said);
  if (parsed->request_id != sent_id) {
    return NotThisCallsAnswer("its body names request ID \"" + Printable(parsed->request_id) +
                                  "\" where this call sent \"" + std::string(sent_id) + "\"",
                              said);
  }
  if (std::optional<NotDispatched> mark = error.not_dispatched()) {
    std::vector<std::string> marks = answer.Values(kMarkHeader);
    if (marks.size() != 1 || marks.front() != NotDispatchedName(*mark)) {
      return NotThisCallsAnswer(
          "its body says nothing ran (" + std::string(NotDispatchedName(*mark)) +
              ") but its Plimsoll-Not-Dispatched header does not say the same",
          said);
    }
  }
  return error;
}

Expected<Result> CheckRunAnswer(const Request& sent, std::string_view sent_id,
                                const HttpAnswer& answer) {
  if (answer.status != 200) return ErrorFromAnswer(sent_id, answer);
  if (auto problem = EchoProblem(sent_id, answer)) return NotThisCallsAnswer(*problem, "");
  Expected<Result> result = ParseResultJson(answer.body);
  if (!result.ok()) return result.error();
  // CheckExchange recomputes both digests from what was sent and received,
  // compares the record's provider, tier and environment with the answer's,
  // checks the tier against the request's floor and the record digest.
  Status checked = CheckExchange(sent, *result);
  if (!checked.ok()) return checked.error();
  return result;
}

Expected<SessionInfo> CheckSessionOpenAnswer(const SessionOpenRequest& sent,
                                             std::string_view sent_id, const HttpAnswer& answer) {
  if (answer.status != 201) return ErrorFromAnswer(sent_id, answer);
  if (auto problem = EchoProblem(sent_id, answer)) return NotThisCallsAnswer(*problem, "");
  Expected<SessionInfo> info = ParseSessionOpenedJson(answer.body);
  if (!info.ok()) return info.error();
  // The session is open on the daemon from here: a failed check leaves it
  // to expire.
  if (auto floor = BelowFloor(info->isolation, sent.options.minimum_isolation)) {
    return Failure(ErrorCode::kDataLoss,
                   "The session answer has tier " + std::string(TierName(info->isolation)) +
                       ", below the floor \"" + *floor + "\" it was opened with: not believed.");
  }
  if (!sent.options.environment.empty() && info->environment != sent.options.environment) {
    return Failure(ErrorCode::kDataLoss,
                   "The session answer names another environment than the one required: not "
                   "believed.");
  }
  return info;
}

Expected<Result> CheckSessionRunAnswer(const Request& sent, std::string_view sent_id,
                                       const HttpAnswer& answer, ChainState& chain,
                                       std::string_view session_floor) {
  if (answer.status != 200) return ErrorFromAnswer(sent_id, answer);
  if (auto problem = EchoProblem(sent_id, answer)) return NotThisCallsAnswer(*problem, "");
  Expected<Result> result = ParseResultJson(answer.body);
  if (!result.ok()) return result.error();
  ChainState advanced = chain;
  Status checked = CheckExchange(sent, *result, &advanced);
  if (!checked.ok()) return checked.error();
  if (auto floor = BelowFloor(result->isolation, session_floor)) {
    return Failure(ErrorCode::kDataLoss,
                   "The answer's tier " + std::string(TierName(result->isolation)) +
                       " is below the floor \"" + *floor +
                       "\" the session was opened with: not believed (the call may have run).");
  }
  chain = std::move(advanced);
  return result;
}

Expected<SessionClose> CheckSessionCloseAnswer(std::string_view sent_id, const HttpAnswer& answer,
                                               const ChainState& chain) {
  if (answer.status != 200) return ErrorFromAnswer(sent_id, answer);
  if (auto problem = EchoProblem(sent_id, answer)) return NotThisCallsAnswer(*problem, "");
  Expected<SessionClose> close = ParseSessionCloseJson(answer.body);
  if (!close.ok()) return close.error();
  if (close->calls != chain.last_sequence ||
      close->last_record_sha256 != chain.last_record_sha256) {
    return Failure(ErrorCode::kDataLoss,
                   "The session's close names " + std::to_string(close->calls) +
                       " calls ending in record \"" + close->last_record_sha256 +
                       "\", but this client saw " + std::to_string(chain.last_sequence) +
                       " ending in \"" + chain.last_record_sha256 +
                       "\": a call's answer was lost or is not this session's.");
  }
  return close;
}

Expected<DaemonDescription> CheckDescribeAnswer(std::string_view sent_id,
                                                const HttpAnswer& answer) {
  if (answer.status != 200) return ErrorFromAnswer(sent_id, answer);
  if (auto problem = EchoProblem(sent_id, answer)) return NotThisCallsAnswer(*problem, "");
  return ParseDescriptionJson(answer.body);
}

Status CheckHealthAnswer(std::string_view sent_id, const HttpAnswer& answer) {
  if (answer.status != 200) return ErrorFromAnswer(sent_id, answer);
  if (auto problem = EchoProblem(sent_id, answer)) return NotThisCallsAnswer(*problem, "");
  return Status::Ok();
}

}  // namespace plimsoll::client
