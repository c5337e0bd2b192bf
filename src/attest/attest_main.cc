// plimsoll-attest: signs checked run records outside the daemon, and
// verifies the bundles it writes (SPEC §5; docs/attest.md).
//
//   plimsoll-attest keygen --out KEY
//   plimsoll-attest pubkey KEY
//   plimsoll-attest run --daemon URL --key KEY --bundle FILE (REQUEST.json | -e CODE [--lang L])
//   plimsoll-attest session --daemon URL --key KEY --bundle FILE [--lang L] -e CELL [-e CELL ...]
//   plimsoll-attest verify --bundle FILE --pubkey PUB [--expect FILE | --expect-count N]
//   plimsoll-attest replay --daemon URL --bundle FILE --pubkey PUB [--allow-granted]
//
// The daemon's bearer token comes from --token-file or $PLIMSOLL_TOKEN,
// never from a flag's value. `run` and `session` sign only what the client
// checked (the echo, both digests, the tier against the floor, the chain);
// an answer that does not check out is reported and nothing is appended.
//
// `replay` re-sends stored requests under the replaying user's token, so it
// first verifies the bundle with the signer's public key exactly as
// `verify` does, and refuses requests that name a grant profile without
// --allow-granted; a bundle refused either way sends nothing at all.
//
// Exit status: 0 done (verify: the bundle is intact; replay: every entry
// gave the same result again, timing aside); 1 verify found problems, or
// replay refused the bundle or found a difference (one line each on
// stdout), or a run/session failed; 2 usage.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "attest/bundle.h"
#include "attest/dsse.h"
#include "attest/keys.h"
#include "attest/replay.h"
#include "attest/statement.h"
#include "attest/verify.h"
#include "cli/token_source.h"
#include "plimsoll/client.h"
#include "plimsoll/record.h"
#include "plimsoll/wire.h"

namespace plimsoll::attest {
namespace {

constexpr int kFailed = 1;

int Fail(const std::string& message) {
  std::fprintf(stderr, "plimsoll-attest: %s\n", message.c_str());
  return kFailed;
}

struct DaemonFlags {
  std::string url;
  std::string token_file;
  std::string key;
  std::string bundle;
};

Expected<Client> OpenClient(const DaemonFlags& flags) {
  Expected<std::string> token =
      cli::ReadBearerToken(flags.token_file, std::getenv("PLIMSOLL_TOKEN"));
  if (!token.ok()) return token.error();
  ClientOptions options;
  options.bearer_token = *token;
  return Client::Open(flags.url, options);
}

// Signs `statement` (built for the link the append hands over) and appends
// the entry as one line.
Status AppendSigned(const DaemonFlags& flags, const SigningKey& key, BundleEntry entry,
                    const std::function<std::string(const BundleLink&)>& statement) {
  return AppendToBundle(flags.bundle, [&](const BundleLink& link) {
    return SignedEntryLine(entry, statement(link), key, link);
  });
}

Expected<Request> RequestFrom(const std::string& request_file, const std::string& code,
                              const std::string& lang) {
  if (!request_file.empty() && !code.empty()) {
    return Refusal(NotDispatched::kRequest, "Give REQUEST.json or -e CODE, not both.");
  }
  if (!request_file.empty()) {
    std::ifstream in(request_file, std::ios::binary);
    if (!in) return Refusal(NotDispatched::kRequest, "Cannot open " + request_file + ".");
    const std::string body((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return ParseRequestJson(body);
  }
  if (code.empty())
    return Refusal(NotDispatched::kRequest, "Nothing to run: REQUEST.json or -e CODE.");
  Request request;
  if (lang == "javascript") {
    request.javascript = JavascriptPayload{code};
  } else if (lang == "python") {
    request.python = PythonPayload{code};
  } else {
    return Refusal(NotDispatched::kRequest, "--lang must be javascript or python.");
  }
  return request;
}

int Run(const DaemonFlags& flags, const std::string& request_file, const std::string& code,
        const std::string& lang) {
  Expected<SigningKey> key = LoadPrivateKey(flags.key);
  if (!key.ok()) return Fail(key.error().message());
  Expected<Request> request = RequestFrom(request_file, code, lang);
  if (!request.ok()) return Fail(request.error().message());
  Expected<Client> client = OpenClient(flags);
  if (!client.ok()) return Fail(client.error().message());
  Expected<Result> result = client->Run(*request);  // checked: echo, digests, tier, record
  if (!result.ok()) return Fail("nothing signed: " + result.error().ToString());
  BundleEntry entry;
  entry.kind = EntryKind::kRun;
  entry.request_json = RequestToJson(*request);
  entry.result_json = ResultToJson(*result);
  const Status appended = AppendSigned(flags, *key, entry, [&](const BundleLink& link) {
    return RunStatement(result->record, link);
  });
  if (!appended.ok()) return Fail(appended.error().message());
  std::printf("signed %s (exit %lld, %s)\n", result->record.record_sha256.c_str(),
              static_cast<long long>(result->exit_code),
              std::string(TierName(result->isolation)).c_str());
  return 0;
}

int RunSession(const DaemonFlags& flags, const std::vector<std::string>& cells,
               const std::string& lang) {
  Expected<SigningKey> key = LoadPrivateKey(flags.key);
  if (!key.ok()) return Fail(key.error().message());
  if (cells.empty()) return Fail("a session needs at least one -e CELL");
  Expected<Client> client = OpenClient(flags);
  if (!client.ok()) return Fail(client.error().message());
  Expected<SessionInfo> session = client->OpenSession(SessionOpenRequest{});
  if (!session.ok()) return Fail("nothing signed: " + session.error().ToString());
  ChainState chain;
  for (const std::string& cell : cells) {
    Request request;
    request.cell = CellPayload{lang, cell};
    Expected<Result> result = client->RunInSession(session->id, request, chain);
    if (!result.ok()) return Fail("the session stopped: " + result.error().ToString());
    BundleEntry entry;
    entry.kind = EntryKind::kSessionCall;
    entry.session_id = session->id;
    entry.request_json = RequestToJson(request);
    entry.result_json = ResultToJson(*result);
    const Status appended = AppendSigned(flags, *key, entry, [&](const BundleLink& link) {
      return RunStatement(result->record, link);
    });
    if (!appended.ok()) return Fail(appended.error().message());
  }
  Expected<SessionClose> close = client->CloseSession(session->id, chain);
  if (!close.ok()) return Fail("the close did not check out: " + close.error().ToString());
  BundleEntry entry;
  entry.kind = EntryKind::kSessionClose;
  entry.session_id = session->id;
  entry.close_json = SessionCloseToJson(*close);
  const Status appended = AppendSigned(flags, *key, entry, [&](const BundleLink& link) {
    return CloseStatement(chain.session_sha256, *close, link);
  });
  if (!appended.ok()) return Fail(appended.error().message());
  std::printf("signed a session of %lld calls (ended: %s)\n", static_cast<long long>(close->calls),
              std::string(SessionEndReasonName(close->ended)).c_str());
  return 0;
}

int Verify(const std::string& bundle_path, const std::string& pubkey,
           const std::string& expect_file, int64_t expect_count) {
  Expected<VerifyingKey> key = LoadPublicKey(pubkey);
  if (!key.ok()) return Fail(key.error().message());
  Expected<BundleFile> bundle = ReadBundle(bundle_path);
  if (!bundle.ok()) return Fail(bundle.error().message());
  Expectations expect;
  if (!expect_file.empty()) {
    std::ifstream in(expect_file);
    if (!in) return Fail("cannot open " + expect_file);
    std::vector<std::string> digests;
    for (std::string line; std::getline(in, line);) {
      if (!line.empty()) digests.push_back(line);
    }
    expect.request_digests = std::move(digests);
  }
  if (expect_count >= 0) expect.count = expect_count;
  const Verdict verdict = VerifyBundle(*bundle, *key, expect);
  for (const std::string& problem : verdict.problems) std::printf("%s\n", problem.c_str());
  if (!verdict.problems.empty()) {
    std::printf("bundle NOT intact: %zu problem(s)\n", verdict.problems.size());
    return kFailed;
  }
  std::printf("bundle intact: %zu lines, %lld runs, %lld session calls, %lld sessions closed\n",
              bundle->lines.size(), static_cast<long long>(verdict.runs),
              static_cast<long long>(verdict.session_calls),
              static_cast<long long>(verdict.sessions_closed));
  return 0;
}

// Sends the bundle's runs again, and its sessions again whole and in order
// (one new session per recorded one), comparing each result. Nothing is
// sent, not even a connection opened, unless CheckBeforeReplay passes on
// the lines read here; those same lines are what is sent.
int Replay(const DaemonFlags& flags, const std::string& pubkey, const ReplayPolicy& policy) {
  Expected<VerifyingKey> key = LoadPublicKey(pubkey);
  if (!key.ok()) return Fail(key.error().message());
  Expected<BundleFile> bundle = ReadBundle(flags.bundle);
  if (!bundle.ok()) return Fail(bundle.error().message());
  const std::vector<std::string> refusals = CheckBeforeReplay(*bundle, *key, policy);
  if (!refusals.empty()) {
    for (const std::string& refusal : refusals) std::printf("%s\n", refusal.c_str());
    std::printf("nothing replayed: %zu problem(s) (the bundle was not sent)\n", refusals.size());
    return kFailed;
  }
  Expected<Client> client = OpenClient(flags);
  if (!client.ok()) return Fail(client.error().message());
  struct Replayed {
    std::string id;
    ChainState chain;
  };
  std::map<std::string, Replayed> sessions;  // recorded session ID -> the replay's
  int differing = 0;
  auto report = [&](size_t line, const std::string& what, bool bad) {
    std::printf("line %zu: %s\n", line, what.c_str());
    if (bad) ++differing;
  };
  for (size_t i = 0; i < bundle->lines.size(); ++i) {
    Expected<BundleEntry> entry = ParseEntryLine(bundle->lines[i]);
    if (!entry.ok()) {
      report(i, "not replayed: " + entry.error().message(), true);
      continue;
    }
    if (entry->kind == EntryKind::kSessionClose) {
      auto it = sessions.find(entry->session_id);
      if (it == sessions.end()) continue;
      Expected<SessionClose> close = client->CloseSession(it->second.id, it->second.chain);
      report(i,
             close.ok() ? "session closed again" : "the close failed: " + close.error().ToString(),
             !close.ok());
      sessions.erase(it);
      continue;
    }
    Expected<Request> request = ParseRequestJson(entry->request_json);
    Expected<Result> then = ParseResultJson(entry->result_json);
    if (!request.ok() || !then.ok()) {
      report(i, "not replayed: its exchange is unreadable", true);
      continue;
    }
    Expected<Result> now = Result{};
    if (entry->kind == EntryKind::kRun) {
      now = client->Run(*request);
    } else {
      auto [it, fresh] = sessions.try_emplace(entry->session_id);
      if (fresh) {
        Expected<SessionInfo> opened = client->OpenSession(SessionOpenRequest{});
        if (!opened.ok()) {
          report(i, "not replayed: no session: " + opened.error().ToString(), true);
          sessions.erase(it);
          continue;
        }
        it->second.id = opened->id;
      }
      now = client->RunInSession(it->second.id, *request, it->second.chain);
    }
    if (!now.ok()) {
      report(i, "not replayed: " + now.error().ToString(), true);
      continue;
    }
    if (now->record.result_sha256 == then->record.result_sha256) {
      report(i, "the same result (" + now->record.result_sha256.substr(0, 12) + ")", false);
      continue;
    }
    const ResultDifference difference = DifferingFields(*then, *now);
    std::string fields;
    for (const std::string& field : difference.fields)
      fields += (fields.empty() ? "" : ", ") + field;
    report(i,
           std::string(difference.timing_only ? "the same result but for timing: "
                                              : "a different result: ") +
               fields,
           !difference.timing_only);
  }
  for (auto& [recorded, replayed] : sessions) {
    (void)client->CloseSession(replayed.id, replayed.chain);  // its recorded close was missing
  }
  std::printf("replayed %zu lines: %d differing or failed\n", bundle->lines.size(), differing);
  return differing == 0 ? 0 : kFailed;
}

int Main(int argc, char** argv) {
  CLI::App app{"plimsoll-attest: sign checked run records, verify bundles (docs/attest.md)"};
  app.require_subcommand(1);
  std::string out, key_path, lang = "javascript", request_file, expect_file, bundle, pubkey;
  std::vector<std::string> codes;
  int64_t expect_count = -1;
  DaemonFlags daemon;
  ReplayPolicy replay_policy;

  CLI::App* keygen = app.add_subcommand("keygen", "A new Ed25519 key (PKCS#8 PEM, mode 0600).");
  keygen->add_option("--out", out, "Where to write it (never overwritten).")->required();
  CLI::App* pub = app.add_subcommand("pubkey", "Print a key's public key (PEM).");
  pub->add_option("key", key_path, "The private key.")->required();
  CLI::App* run = app.add_subcommand("run", "Run one request on a daemon, check it, sign it.");
  CLI::App* session =
      app.add_subcommand("session", "Open a session, run cells, close it, signing each.");
  for (CLI::App* command : {run, session}) {
    command->add_option("--daemon", daemon.url, "The plimsolld URL.")->required();
    command->add_option("--token-file", daemon.token_file, "The bearer token's file.");
    command->add_option("--key", daemon.key, "The signing key.")->required();
    command->add_option("--bundle", daemon.bundle, "The bundle to append to.")->required();
    command->add_option("--lang", lang, "javascript (default) or python.");
    command->add_option("-e,--eval", codes, "Code (run: one; session: one per cell).");
  }
  run->add_option("request", request_file, "A request as JSON (the API's body).");
  CLI::App* verify = app.add_subcommand("verify", "Verify a bundle.");
  verify->add_option("--bundle", bundle, "The bundle.")->required();
  verify->add_option("--pubkey", pubkey, "The signer's public key (PEM).")->required();
  auto* expect_option = verify->add_option("--expect", expect_file,
                                           "Request digests expected, one per line, in order.");
  verify->add_option("--expect-count", expect_count, "The number of runs and calls expected.")
      ->excludes(expect_option);
  CLI::App* replay = app.add_subcommand(
      "replay",
      "Verify a bundle, then send its runs again and compare. A replay repeats the runs' "
      "side effects.");
  replay->add_option("--daemon", daemon.url, "The plimsolld URL.")->required();
  replay->add_option("--token-file", daemon.token_file, "The bearer token's file.");
  replay->add_option("--bundle", daemon.bundle, "The bundle.")->required();
  replay
      ->add_option("--pubkey", pubkey,
                   "The signer's public key (PEM): the bundle must verify with it, or nothing "
                   "is sent.")
      ->required();
  replay->add_flag("--allow-granted", replay_policy.allow_granted,
                   "Also send requests that name a grant profile (their calls to the operator's "
                   "APIs happen again).");
  CLI11_PARSE(app, argc, argv);

  if (keygen->parsed()) {
    Expected<SigningKey> made = GenerateKeyFile(out);
    if (!made.ok()) return Fail(made.error().message());
    std::printf("wrote %s (keyid %s)\n", out.c_str(), KeyId(made->verifying_key()).c_str());
    return 0;
  }
  if (pub->parsed()) {
    Expected<SigningKey> key = LoadPrivateKey(key_path);
    if (!key.ok()) return Fail(key.error().message());
    std::fputs(PublicKeyPem(*key).c_str(), stdout);
    return 0;
  }
  if (run->parsed()) {
    if (codes.size() > 1) return Fail("run takes one -e CODE (a session takes several)");
    return Run(daemon, request_file, codes.empty() ? "" : codes[0], lang);
  }
  if (session->parsed()) return RunSession(daemon, codes, lang);
  if (replay->parsed()) return Replay(daemon, pubkey, replay_policy);
  return Verify(bundle, pubkey, expect_file, expect_count);
}

}  // namespace
}  // namespace plimsoll::attest

int main(int argc, char** argv) {
  return plimsoll::attest::Main(argc, argv);
}
