#include "record/vectors.h"

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "plimsoll/record.h"
#include "plimsoll/request.h"
#include "plimsoll/result.h"
#include "plimsoll/wire.h"
#include "record/digest_builder.h"

namespace plimsoll::record {
namespace {

using Ordered = nlohmann::ordered_json;

constexpr int64_t kStart = 1764400000000;  // 2025-11-29T07:06:40Z
const std::string kEnvironment =
    "sha256:3f2a9c1e5b7d4a608e1f2c3b4a5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f";

// Every Limits field, in declaration order: the policy digest's order.
struct LimitsField {
  const char* name;
  int64_t Limits::*member;
};
constexpr LimitsField kLimitsFields[] = {
    {"memory_bytes", &Limits::memory_bytes},
    {"cpus_millis", &Limits::cpus_millis},
    {"pids", &Limits::pids},
    {"tmp_bytes", &Limits::tmp_bytes},
    {"work_bytes", &Limits::work_bytes},
    {"output_cap_bytes", &Limits::output_cap_bytes},
    {"snippet_timeout_default_ms", &Limits::snippet_timeout_default_ms},
    {"snippet_timeout_max_ms", &Limits::snippet_timeout_max_ms},
    {"project_timeout_default_ms", &Limits::project_timeout_default_ms},
    {"project_timeout_max_ms", &Limits::project_timeout_max_ms},
    {"run_ceiling_ms", &Limits::run_ceiling_ms},
    {"max_code_bytes", &Limits::max_code_bytes},
    {"max_project_files", &Limits::max_project_files},
    {"max_project_bytes", &Limits::max_project_bytes},
    {"max_artifacts", &Limits::max_artifacts},
    {"max_artifact_bytes", &Limits::max_artifact_bytes},
};

struct Exchange {
  std::string name;
  std::string description;
  std::optional<Request> request;
  std::optional<Result> result;  // record filled in by Finish()
};

// A byte string from a literal that may contain NULs.
template <size_t N>
std::string Bin(const char (&literal)[N]) {
  return std::string(literal, N - 1);
}

Result Snippet(PayloadKind kind, std::string provider, Tier tier, std::string stdout_bytes) {
  Result result;
  result.provider = std::move(provider);
  result.isolation = tier;
  result.environment = kEnvironment;
  result.kind = kind;
  result.stdout_bytes = std::move(stdout_bytes);
  result.duration_ms = 11;
  return result;
}

void Seal(const Request& request, Result& result, const std::string& policy, int64_t started,
          int64_t elapsed, std::optional<SessionLink> session = std::nullopt) {
  result.record =
      MakeRecord(request, result, policy, {started, started + elapsed}, std::move(session));
}

std::vector<Exchange> Exchanges() {
  const std::string policy = PolicyDigest(Limits{});
  std::vector<Exchange> out;

  {  // The SPEC §4 example.
    Exchange e{
        "javascript-spec-example",
        "SPEC §4's example request and answer. trace_id is not covered by the request digest.",
        {},
        {}};
    Request r;
    r.minimum_isolation = "container";
    r.timeout_ms = 5000;
    r.trace_id = "t-1";
    r.javascript = JavascriptPayload{"console.log(6*7)"};
    Result res = Snippet(PayloadKind::kJavascript, "linux", Tier::kContainer, "42\n");
    Seal(r, res, policy, kStart, 11);
    e.request = r;
    e.result = res;
    out.push_back(e);
  }
  {  // Minimal request: every optional field absent.
    Exchange e{"javascript-minimal",
               "Only protocol and a payload; no floor, timeout 0 (provider default).",
               {},
               {}};
    Request r;
    r.javascript = JavascriptPayload{"1+1"};
    Result res = Snippet(PayloadKind::kJavascript, "embedded", Tier::kProcess, "");
    res.duration_ms = 0;
    Seal(r, res, policy, kStart + 1000, 0);
    e.request = r;
    e.result = res;
    out.push_back(e);
  }
  {  // A request naming one of the daemon's images.
    Exchange e{"python-named-image",
               "A request selecting the daemon's image \"data\" by name: image is covered by the "
               "request digest as a field present only when named (after grant_profile), so "
               "requests without one keep their digests.",
               {},
               {}};
    Request r;
    r.image = "data";
    r.environment = kEnvironment;
    r.python = PythonPayload{"import numpy; print(numpy.arange(3).sum())"};
    Result res = Snippet(PayloadKind::kPython, "linux", Tier::kContainer, "3\n");
    res.duration_ms = 240;
    Seal(r, res, policy, kStart + 1500, 241);
    e.request = r;
    e.result = res;
    out.push_back(e);
  }
  {  // Rich outputs.
    Exchange e{"python-displays",
               "A Python run on the data image that showed a figure and displayed a DataFrame: "
               "one image/png (binary, travels as base64; width and height from its header), "
               "then text/html and text/plain of the frame; one more was dropped by the caps "
               "(displays_truncated). Both are encoded last and only when present.",
               {},
               {}};
    Request r;
    r.image = "data";
    r.python = PythonPayload{"import pandas as pd\ndisplay(pd.DataFrame({'a': [1]}))\n"};
    Result res = Snippet(PayloadKind::kPython, "linux", Tier::kContainer, "");
    res.duration_ms = 812;
    res.displays = {
        Display{"image/png",
                Bin("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x02\x00\x00\x00"
                    "\x01\x08\x02\x00\x00\x00"),
                2, 1},
        Display{"text/html", "<table><tr><th>a</th></tr><tr><td>1</td></tr></table>", 0, 0},
        Display{"text/plain", "   a\n0  1", 0, 0},
    };
    res.displays_truncated = true;
    Seal(r, res, policy, kStart + 1600, 815);
    e.request = r;
    e.result = res;
    out.push_back(e);
  }
  {  // Empty strings everywhere a string can be empty.
    Exchange e{
        "empty-strings",
        "Empty code, outputs, provider and environment: empty values are encoded (length 0), "
        "never skipped.",
        {},
        {}};
    Request r;
    r.python = PythonPayload{""};
    Result res = Snippet(PayloadKind::kPython, "", Tier::kUnknown, "");
    res.environment = "";
    res.duration_ms = 0;
    Seal(r, res, "", kStart, 0);
    e.request = r;
    e.result = res;
    out.push_back(e);
  }
  {  // Negative integers.
    Exchange e{"negative-integers",
               "Negative timeout (provider default), negative exit code and times before 1970: "
               "'-' then decimal digits.",
               {},
               {}};
    Request r;
    r.timeout_ms = -1;
    r.python = PythonPayload{"import os; os.kill(os.getpid(), 9)"};
    Result res = Snippet(PayloadKind::kPython, "linux", Tier::kContainer, "");
    res.exit_code = -9;
    res.duration_ms = 3;
    res.stderr_bytes = "Killed\n";
    Seal(r, res, policy, -86400000, 3);
    e.request = r;
    e.result = res;
    out.push_back(e);
  }
  {  // Python with a traceback.
    Exchange e{"python-traceback",
               "A Python snippet that fails: a non-zero exit code is a result.",
               {},
               {}};
    Request r;
    r.minimum_isolation = "kernel";
    r.timeout_ms = 30000;
    r.python = PythonPayload{"print('hello')\nraise SystemExit('bye')\n"};
    Result res = Snippet(PayloadKind::kPython, "oci", Tier::kKernel, "hello\n");
    res.exit_code = 1;
    res.stderr_bytes = "bye\n";
    res.duration_ms = 187;
    Seal(r, res, policy, kStart + 2000, 190);
    e.request = r;
    e.result = res;
    out.push_back(e);
  }
  {  // A full project.
    Exchange e{
        "project-full",
        "A project with a binary file (travels as base64), three steps, artifacts (one binary) "
        "and outcome completed.",
        {},
        {}};
    Request r;
    r.minimum_isolation = "vm";
    r.timeout_ms = 60000;
    r.project = ProjectPayload{
        .files = {{"main.py", "import sys\nprint(open('data.bin','rb').read().hex())\n"},
                  {"data.bin", Bin("\x00\x01\xfe\xff")},
                  {"src/util/ünïcode.txt", "naïve café ☕\n"}},
        .steps = {{"python3", "-c", "print(1)"},
                  {"python3", "main.py"},
                  {"cp", "data.bin", "out.bin"}},
        .artifacts = {"out.bin", "report.txt"}};
    Result res = Snippet(PayloadKind::kProject, "microvm", Tier::kVm, "");
    res.outcome = ProjectOutcome::kCompleted;
    res.duration_ms = 412;
    res.steps = {
        StepResult{{"python3", "-c", "print(1)"}, 0, false, "1\n", "", false, false, 20},
        StepResult{{"python3", "main.py"}, 0, false, "0001feff\n", "", false, false, 22},
        StepResult{{"cp", "data.bin", "out.bin"}, 0, false, "", "", false, false, 2},
    };
    res.artifacts = {Artifact{"out.bin", Bin("\x00\x01\xfe\xff"), false},
                     Artifact{"report.txt", "ok\n", true}};
    Seal(r, res, policy, kStart + 3000, 415);
    e.request = r;
    e.result = res;
    out.push_back(e);
  }
  {  // A project whose first step fails.
    Exchange e{
        "project-setup-failed",
        "A failing step stops the rest; no artifacts come back (an empty list is still counted).",
        {},
        {}};
    Request r;
    r.project = ProjectPayload{.files = {{"main.js", "require('missing')"}},
                               .steps = {{"npm", "ci"}, {"node", "main.js"}},
                               .artifacts = {}};
    Result res = Snippet(PayloadKind::kProject, "linux", Tier::kContainer, "");
    res.outcome = ProjectOutcome::kSetupFailed;
    res.exit_code = 1;
    res.duration_ms = 95;
    res.steps = {
        StepResult{{"npm", "ci"}, 1, false, "", "npm ERR! no package.json\n", false, false, 95}};
    Seal(r, res, policy, kStart + 4000, 96);
    e.request = r;
    e.result = res;
    out.push_back(e);
  }
  {  // A project that times out.
    Exchange e{"project-timed-out", "Exit code 124, timed_out true, outcome timed_out.", {}, {}};
    Request r;
    r.timeout_ms = 1000;
    r.project = ProjectPayload{.files = {}, .steps = {{"sleep", "10"}}, .artifacts = {"never.txt"}};
    Result res = Snippet(PayloadKind::kProject, "oci", Tier::kContainer, "");
    res.outcome = ProjectOutcome::kTimedOut;
    res.exit_code = kExitTimedOut;
    res.timed_out = true;
    res.duration_ms = 1001;
    res.steps = {StepResult{{"sleep", "10"}, kExitTimedOut, true, "", "", false, false, 1001}};
    Seal(r, res, policy, kStart + 5000, 1003);
    e.request = r;
    e.result = res;
    out.push_back(e);
  }
  {  // Bytes that are not UTF-8.
    Exchange e{
        "non-utf8-output",
        "Outputs with invalid UTF-8 (a lone 0xff, an overlong '/', a UTF-16 surrogate) and a NUL: "
        "they travel as base64; the digest covers the raw bytes.",
        {},
        {}};
    Request r;
    r.javascript = JavascriptPayload{"print(String.fromCharCode(0))"};
    Result res = Snippet(PayloadKind::kJavascript, "embedded", Tier::kProcess,
                         Bin("\xff\xfe\x00"
                             "abc"));
    res.stderr_bytes = Bin("\xc0\xaf \xed\xa0\x80");
    res.duration_ms = 1;
    Seal(r, res, policy, kStart + 6000, 1);
    e.request = r;
    e.result = res;
    out.push_back(e);
  }
  {  // Valid UTF-8 beyond ASCII, and NUL inside a JSON string.
    Exchange e{
        "unicode-and-nul",
        "Multi-byte UTF-8 and a NUL travel as JSON strings (\\u0000); the digest covers their "
        "UTF-8 bytes.",
        {},
        {}};
    Request r;
    r.javascript = JavascriptPayload{"console.log('héllo 世界 🚀\\u0000')"};
    Result res =
        Snippet(PayloadKind::kJavascript, "embedded", Tier::kProcess, Bin("héllo 世界 🚀\0\n"));
    Seal(r, res, policy, kStart + 7000, 2);
    e.request = r;
    e.result = res;
    out.push_back(e);
  }
  {  // Truncated outputs.
    Exchange e{"truncated-outputs", "Both streams cut at the cap; truncation is reported.", {}, {}};
    Request r;
    r.javascript = JavascriptPayload{"for(;;) console.log('y')"};
    Result res =
        Snippet(PayloadKind::kJavascript, "embedded", Tier::kProcess, std::string(64, 'y'));
    res.stderr_bytes = std::string(8, 'e');
    res.stdout_truncated = true;
    res.stderr_truncated = true;
    res.exit_code = kExitTimedOut;
    res.timed_out = true;
    res.duration_ms = 5000;
    Seal(r, res, policy, kStart + 8000, 5002);
    e.request = r;
    e.result = res;
    out.push_back(e);
  }
  {  // Grant with broker summary and advice floats.
    Exchange e{
        "grant-advice-floats",
        "A granted run: broker summary (three route rows, two dropped) and advice whose "
        "added_latency_ms covers a plain float, "
        "-0.0, +inf, -inf, NaN (normalised to 0x7ff8000000000000) and the smallest subnormal.",
        {},
        {}};
    Request r;
    r.grant_profile = "crm-read";
    r.timeout_ms = 10000;
    r.javascript = JavascriptPayload{"for (const id of ids) await host.get(`/v1/items/${id}`)"};
    Result res = Snippet(PayloadKind::kJavascript, "linux", Tier::kContainer, "done\n");
    res.broker = BrokerSummary{"crm-read", 12, 1};
    res.broker->routes = {
        BrokerRoute{"GET", "/v1/items/*", 200, true, "", 10},
        BrokerRoute{"GET", "/v1/items/*", 404, true, "", 1},
        BrokerRoute{"OTHER", "", 0, false, "not_allowed", 1},
    };
    res.broker->routes_dropped = 2;
    const double inf = std::numeric_limits<double>::infinity();
    res.advice = {
        Advice{"fan_out", "GET /v1/items/*", "Use GET /v1/items?ids=... instead of 10 calls.", 9,
               412.5, 20480},
        Advice{"repeated_read", "GET /v1/config", "The same read twice.", 1, -0.0, 0},
        Advice{"fan_out", "GET /v1/a/*", "unbounded", 3, inf, 1},
        Advice{"fan_out", "GET /v1/b/*", "negative infinity", 3, -inf, 1},
        Advice{"fan_out", "GET /v1/c/*", "not a number", 3,
               std::numeric_limits<double>::quiet_NaN(), 1},
        Advice{"fan_out", "GET /v1/d/*", "subnormal", 3, std::numeric_limits<double>::denorm_min(),
               1},
    };
    res.duration_ms = 640;
    Seal(r, res, policy, kStart + 9000, 641);
    e.request = r;
    e.result = res;
    out.push_back(e);
  }
  {  // A broker summary with zero calls and an empty profile string.
    Exchange e{
        "grant-unused",
        "A broker summary that is present but empty differs from an absent one (presence rule).",
        {},
        {}};
    Request r;
    r.grant_profile = "crm-read";
    r.minimum_isolation = "process";
    r.javascript = JavascriptPayload{"1"};
    Result res = Snippet(PayloadKind::kJavascript, "embedded", Tier::kProcess, "");
    res.broker = BrokerSummary{"", 0, 0};
    Seal(r, res, policy, kStart + 9500, 1);
    e.request = r;
    e.result = res;
    out.push_back(e);
  }
  {  // A custom policy.
    Exchange e{
        "custom-policy", "A record made under non-default limits (see policy-custom).", {}, {}};
    Limits limits;
    limits.memory_bytes = int64_t{512} << 20;
    limits.output_cap_bytes = 1024;
    Request r;
    r.environment = kEnvironment;  // not covered by the request digest
    r.javascript = JavascriptPayload{"console.log(1)"};
    Result res = Snippet(PayloadKind::kJavascript, "linux", Tier::kContainer, "1\n");
    Seal(r, res, PolicyDigest(limits), kStart + 9900, 4);
    e.request = r;
    e.result = res;
    out.push_back(e);
  }
  {  // Several payloads: refused by the daemon, but the encoding is total.
    Exchange e{
        "two-payloads-request-only",
        "A request with two payloads is refused (nothing runs); its digest still exists: "
        "payloads=2, then each payload in the fixed order javascript, python, project, cell.",
        {},
        {}};
    Request r;
    r.javascript = JavascriptPayload{"1"};
    r.cell = CellPayload{"python", "2"};
    e.request = r;
    out.push_back(e);
  }
  {  // A three-call session chain.
    const std::string session = SessionIdDigest("sess_0123456789abcdef0123456789abcdef");
    std::string previous;
    const char* names[] = {"session-call-1", "session-call-2", "session-call-3"};
    const CellPayload cells[] = {{"javascript", "globalThis.n = 41"},
                                 {"python", "open('/work/n','w').write('42')"},
                                 {"javascript", "console.log(++n)"}};
    const char* outputs[] = {"", "", "42\n"};
    for (int i = 0; i < 3; ++i) {
      Exchange e{names[i],
                 "Call " + std::to_string(i + 1) +
                     " of a session chain: session = SHA-256 of the session ID, sequence from 1, "
                     "previous_sha256 = the previous record_sha256 (\"\" for call 1).",
                 {},
                 {}};
      Request r;
      r.timeout_ms = 2000;
      r.cell = cells[i];
      Result res = Snippet(PayloadKind::kCell, "linux", Tier::kContainer, outputs[i]);
      res.duration_ms = 5 + i;
      // Call 1 starts the JavaScript interpreter and call 2 Python's; call 3
      // finds n kept and ends in an expression without a value.
      const char* values[] = {"41", "2", nullptr};
      res.cell = CellResult{values[i] ? std::optional<std::string>(values[i]) : std::nullopt, false,
                            i < 2, true};
      Seal(r, res, policy, kStart + 10000 + 1000 * i, 6, SessionLink{session, i + 1, previous});
      previous = res.record.record_sha256;
      e.request = r;
      e.result = res;
      out.push_back(e);
    }
  }
  return out;
}

Ordered Reparse(const std::string& text) {
  return Ordered::parse(text);
}

Ordered EncodingExample() {
  // The worked example of docs/run-records.md, as a vector of primitives.
  std::string transcript;
  DigestBuilder digest("plimsoll.example.v1", &transcript);
  digest.Integer("exit_code", -9);
  digest.Boolean("timed_out", true);
  digest.Bytes("stdout", "hi\n");
  digest.Count("steps", 0);
  digest.Float("added_latency_ms", std::numeric_limits<double>::quiet_NaN());
  digest.Float("zero", -0.0);
  std::string sha = std::move(digest).Finish();
  Ordered vector = Ordered::object();
  vector["name"] = "encoding-primitives";
  vector["description"] =
      "The encoding's primitives, with the exact bytes hashed (encoding_hex) for debugging a new "
      "implementation.";
  vector["encoding"] = {
      {"domain", "plimsoll.example.v1"},
      {"fields", Ordered::array({
                     {{"name", "exit_code"}, {"type", "integer"}, {"value", -9}},
                     {{"name", "timed_out"}, {"type", "boolean"}, {"value", true}},
                     {{"name", "stdout"}, {"type", "bytes"}, {"value", "hi\n"}},
                     {{"name", "steps"}, {"type", "count"}, {"value", 0}},
                     {{"name", "added_latency_ms"}, {"type", "float"}, {"value", "NaN"}},
                     {{"name", "zero"}, {"type", "float"}, {"value", -0.0}},
                 })}};
  vector["encoding_hex"] = LowerHex(transcript);
  vector["encoding_sha256"] = sha;
  return vector;
}

Ordered PolicyVector(std::string name, std::string description, const Limits& limits) {
  Ordered vector = Ordered::object();
  vector["name"] = std::move(name);
  vector["description"] = std::move(description);
  vector["limits"] = LimitsToJson(limits);
  vector["policy_sha256"] = PolicyDigest(limits);
  return vector;
}

}  // namespace

Ordered LimitsToJson(const Limits& limits) {
  Ordered out = Ordered::object();
  for (const LimitsField& field : kLimitsFields) out[field.name] = limits.*field.member;
  return out;
}

Expected<Limits> LimitsFromJson(const nlohmann::json& object) {
  Limits limits;
  if (!object.is_object() || object.size() != std::size(kLimitsFields)) {
    return Failure(ErrorCode::kInvalidArgument,
                   "limits must be an object with every Limits field.");
  }
  for (const LimitsField& field : kLimitsFields) {
    auto it = object.find(field.name);
    if (it == object.end() || !it->is_number_integer()) {
      return Failure(ErrorCode::kInvalidArgument,
                     std::string("limits.") + field.name + " must be an integer.");
    }
    limits.*field.member = it->get<int64_t>();
  }
  return limits;
}

std::string GenerateVectorsJson() {
  Ordered file = Ordered::object();
  file["format"] = "plimsoll.record-vectors.v1";
  file["about"] =
      "Shared test vectors for the run-record digests (SPEC §5, docs/run-records.md). Inputs are "
      "in "
      "the wire form of SPEC §4: recompute request_sha256 from `request`, result_sha256 from "
      "`result` (without its `record`), record_sha256 from `result.record` (without "
      "record_sha256), "
      "policy_sha256 from `limits`, session_sha256 from `session_id`, encoding_sha256 from "
      "`encoding`. Generated by plimsoll-record-vectors; do not edit by hand.";
  Ordered vectors = Ordered::array();
  vectors.push_back(EncodingExample());
  for (const Exchange& exchange : Exchanges()) {
    Ordered vector = Ordered::object();
    vector["name"] = exchange.name;
    vector["description"] = exchange.description;
    if (exchange.request) {
      vector["request"] = Reparse(RequestToJson(*exchange.request));
      vector["request_sha256"] = RequestDigest(*exchange.request);
    }
    if (exchange.result) {
      vector["result"] = Reparse(ResultToJson(*exchange.result));
      vector["result_sha256"] = ResultDigest(*exchange.result);
      vector["record_sha256"] = RecordDigest(exchange.result->record);
    }
    vectors.push_back(std::move(vector));
  }
  vectors.push_back(PolicyVector("policy-defaults", "The SPEC §6 default envelope.", Limits{}));
  Limits custom;
  custom.memory_bytes = int64_t{512} << 20;
  custom.output_cap_bytes = 1024;
  vectors.push_back(PolicyVector("policy-custom", "512 MiB memory, 1 KiB output cap.", custom));
  {
    Ordered vector = Ordered::object();
    vector["name"] = "session-id";
    vector["description"] =
        "session_sha256 is plain SHA-256 of the session ID's bytes (no framing).";
    vector["session_id"] = "sess_0123456789abcdef0123456789abcdef";
    vector["session_sha256"] = SessionIdDigest("sess_0123456789abcdef0123456789abcdef");
    vectors.push_back(std::move(vector));
  }
  file["vectors"] = std::move(vectors);
  file["chains"] =
      Ordered::array({{{"name", "three-call-session"},
                       {"session_id", "sess_0123456789abcdef0123456789abcdef"},
                       {"vectors", {"session-call-1", "session-call-2", "session-call-3"}}}});
  return file.dump(2, ' ', /*ensure_ascii=*/false) + "\n";
}

}  // namespace plimsoll::record
