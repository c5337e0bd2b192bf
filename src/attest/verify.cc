#include "attest/verify.h"

#include <map>
#include <nlohmann/json.hpp>

#include "attest/dsse.h"
#include "attest/statement.h"
#include "plimsoll/record.h"
#include "plimsoll/wire.h"

namespace plimsoll::attest {
namespace {

struct SessionState {
  ChainState chain;
  int64_t first_line = 0;
  bool closed = false;
};

// Why the signed statement differs from the one the line's exchange gives:
// the link first (the likeliest tampering: a line dropped, moved or added).
std::string StatementMismatch(const std::string& signed_payload, const std::string& rebuilt) {
  const nlohmann::json got = nlohmann::json::parse(signed_payload, nullptr, false);
  const nlohmann::json want = nlohmann::json::parse(rebuilt, nullptr, false);
  if (!got.is_object()) return "the signed statement is not JSON";
  const nlohmann::json* got_link = nullptr;
  if (got.contains("predicate") && got["predicate"].is_object() &&
      got["predicate"].contains("bundle")) {
    got_link = &got["predicate"]["bundle"];
  }
  const nlohmann::json& want_link = want["predicate"]["bundle"];
  if (got_link == nullptr || *got_link != want_link) {
    return "the signed link (" + (got_link ? got_link->dump() : std::string("none")) +
           ") is not this line's place (" + want_link.dump() +
           "): a line was dropped, reordered or inserted before it";
  }
  return "the signed statement does not match the line's exchange";
}

}  // namespace

Verdict VerifyBundle(const BundleFile& bundle, const VerifyingKey& key,
                     const Expectations& expect) {
  Verdict verdict;
  auto problem = [&](size_t line, const std::string& what) {
    verdict.problems.push_back("line " + std::to_string(line) + ": " + what);
  };
  std::map<std::string, SessionState> sessions;
  for (size_t i = 0; i < bundle.lines.size(); ++i) {
    const std::string& text = bundle.lines[i];
    const BundleLink link{static_cast<int64_t>(i), i == 0 ? "" : LineDigest(bundle.lines[i - 1])};
    Expected<BundleEntry> entry = ParseEntryLine(text);
    if (!entry.ok()) {
      problem(i, entry.error().message());
      continue;
    }
    if (entry->index != link.index) {
      problem(i, "its index says " + std::to_string(entry->index) +
                     ": a line was dropped, reordered or inserted before it");
    }
    Expected<Envelope> envelope = ParseEnvelopeJsonText(entry->envelope_json);
    if (!envelope.ok()) {
      problem(i, envelope.error().message());
      continue;
    }
    if (envelope->payload_type != kPayloadType) {
      problem(i, "the envelope's payloadType is \"" + envelope->payload_type + "\", not " +
                     std::string(kPayloadType));
    }
    if (Status signature = VerifyEnvelope(*envelope, key); !signature.ok()) {
      problem(i, signature.error().message());
      continue;  // nothing in it is the signer's
    }

    if (entry->kind == EntryKind::kSessionClose) {
      Expected<SessionClose> close = ParseSessionCloseJson(entry->close_json);
      if (!close.ok()) {
        problem(i, "its close is unreadable: " + close.error().message());
        continue;
      }
      const std::string rebuilt = CloseStatement(SessionIdDigest(entry->session_id), *close, link);
      if (envelope->payload != rebuilt) problem(i, StatementMismatch(envelope->payload, rebuilt));
      SessionState& session = sessions[entry->session_id];
      if (session.closed) problem(i, "the session was already closed");
      session.closed = true;
      ++verdict.sessions_closed;
      if (close->calls != session.chain.last_sequence ||
          close->last_record_sha256 != session.chain.last_record_sha256) {
        problem(i, "the close names " + std::to_string(close->calls) + " calls ending at " +
                       close->last_record_sha256.substr(0, 12) +
                       ", but the bundle's unbroken chain of calls " + "reaches call " +
                       std::to_string(session.chain.last_sequence) + " (" +
                       session.chain.last_record_sha256.substr(0, 12) +
                       "): a call is missing, extra or changed");
      }
      continue;
    }

    Expected<Request> request = ParseRequestJson(entry->request_json);
    Expected<Result> result = ParseResultJson(entry->result_json);
    if (!request.ok() || !result.ok()) {
      problem(i, "its " + std::string(request.ok() ? "result" : "request") + " is unreadable: " +
                     (request.ok() ? result.error() : request.error()).message());
      continue;
    }
    verdict.request_digests.push_back(RequestDigest(*request));
    const std::string rebuilt = RunStatement(result->record, link);
    if (envelope->payload != rebuilt) problem(i, StatementMismatch(envelope->payload, rebuilt));
    if (entry->kind == EntryKind::kRun) {
      ++verdict.runs;
      if (Status checked = CheckExchange(*request, *result); !checked.ok()) {
        problem(i, "the exchange does not check out: " + checked.error().message());
      }
      continue;
    }
    ++verdict.session_calls;
    auto [it, fresh] = sessions.try_emplace(entry->session_id);
    SessionState& session = it->second;
    if (fresh) {
      session.first_line = static_cast<int64_t>(i);
      session.chain.session_sha256 = SessionIdDigest(entry->session_id);
    }
    if (session.closed) problem(i, "a call after its session's close");
    if (Status checked = CheckExchange(*request, *result, &session.chain); !checked.ok()) {
      problem(i, "the session call does not continue its chain: " + checked.error().message());
    }
  }
  if (bundle.truncated_tail) {
    problem(bundle.lines.size(),
            "torn: bytes without a newline at the end (an append that did "
            "not finish, or a cut file)");
  }
  for (const auto& [id, session] : sessions) {
    if (!session.closed) {
      problem(static_cast<size_t>(session.first_line),
              "its session (" + SessionIdDigest(id).substr(0, 12) + ", " +
                  std::to_string(session.chain.last_sequence) + " calls) has no close");
    }
  }
  if (expect.count && *expect.count != verdict.runs + verdict.session_calls) {
    verdict.problems.push_back(
        "the bundle holds " + std::to_string(verdict.runs + verdict.session_calls) +
        " runs and calls, not the " + std::to_string(*expect.count) + " expected");
  }
  if (expect.request_digests) {
    const std::vector<std::string>& want = *expect.request_digests;
    const std::vector<std::string>& got = verdict.request_digests;
    for (size_t k = 0; k < std::max(want.size(), got.size()); ++k) {
      if (k >= got.size()) {
        verdict.problems.push_back("expected request " + std::to_string(k) + " (" +
                                   want[k].substr(0, 12) + ") is not in the bundle");
      } else if (k >= want.size()) {
        verdict.problems.push_back("the bundle's request " + std::to_string(k) + " (" +
                                   got[k].substr(0, 12) + ") was not expected");
      } else if (want[k] != got[k]) {
        verdict.problems.push_back("request " + std::to_string(k) + " is " + got[k].substr(0, 12) +
                                   ", expected " + want[k].substr(0, 12));
      }
    }
  }
  return verdict;
}

}  // namespace plimsoll::attest
