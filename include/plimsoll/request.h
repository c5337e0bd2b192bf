// A run request (SPEC §2): exactly one payload plus common fields.
//
// This is the one request schema: the CLI, the HTTP API (wire.h) and the C++
// library all build exactly this type. It holds the request as the client
// sent it; `ValidateRequest` checks it against a provider's limits and
// returns the normalised copy that is dispatched.
//
// Usage:
//
//   plimsoll::Request request;
//   request.minimum_isolation = "container";
//   request.timeout_ms = 5000;
//   request.javascript = plimsoll::JavascriptPayload{"console.log(6*7)"};
//
//   plimsoll::Request project;
//   project.project = plimsoll::ProjectPayload{
//       .files = {{"main.py", "print('hi')"}},
//       .steps = {{"python3", "main.py"}},
//       .artifacts = {"out.txt"}};
#ifndef PLIMSOLL_REQUEST_H_
#define PLIMSOLL_REQUEST_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "plimsoll/error.h"
#include "plimsoll/limits.h"

namespace plimsoll {

// The only protocol number this build speaks.
inline constexpr int64_t kProtocol = 1;

enum class PayloadKind { kJavascript, kPython, kProject, kCell, kModule };

// "javascript", "python", "project", "cell", "module".
std::string_view PayloadKindName(PayloadKind kind);
std::optional<PayloadKind> ParsePayloadKind(std::string_view name);

struct JavascriptPayload {
  std::string code;
  friend bool operator==(const JavascriptPayload&, const JavascriptPayload&) = default;
};

struct PythonPayload {
  std::string code;
  friend bool operator==(const PythonPayload&, const PythonPayload&) = default;
};

struct ProjectFile {
  std::string path;     // relative to /work; see ValidateRequest for the rules
  std::string content;  // raw bytes
  friend bool operator==(const ProjectFile&, const ProjectFile&) = default;
};

struct ProjectPayload {
  std::vector<ProjectFile> files;
  std::vector<std::vector<std::string>> steps;  // shell-free argv lists
  std::vector<std::string> artifacts;           // paths to bring back
  friend bool operator==(const ProjectPayload&, const ProjectPayload&) = default;
};

// A module run (docs/exams.md, "Module runs"): one of the image's models
// evaluated once per row of parameters, every input held at 0; one result
// row each, in the artifact kModuleRowsArtifact (JSON lines). Runs where
// projects run, as the step `plimsoll-model module.json module_rows.jsonl`.
struct ModulePayload {
  std::string model;                      // a model (plant) name: [a-z0-9_-]{1,64}
  std::vector<std::vector<double>> rows;  // each the model's parameters; [] = its default
  double end_time = 0;                    // seconds of model time, > 0
  double step = 0;                        // the model's tick, seconds, > 0
  friend bool operator==(const ModulePayload&, const ModulePayload&) = default;
};

// Limits of a module payload (docs/exams.md): rows and values per row.
inline constexpr size_t kMaxModuleRows = 10000;
inline constexpr size_t kMaxModuleRowValues = 256;
// The artifact a module run's rows come back in, and the spec file its
// step reads (in /work). ModuleProject (src/core/module_project.h) turns a
// module payload into the project every provider runs.
inline constexpr char kModuleRowsArtifact[] = "module_rows.jsonl";
inline constexpr char kModuleSpecFile[] = "module.json";

// Code for a kept interpreter; only valid inside a session (SPEC §9).
struct CellPayload {
  std::string language;  // "javascript" or "python"
  std::string code;
  friend bool operator==(const CellPayload&, const CellPayload&) = default;
};

struct Request {
  int64_t protocol = kProtocol;
  std::string minimum_isolation;  // "" (no floor) or a tier name, as sent
  int64_t timeout_ms = 0;         // <= 0: the provider's default
  std::string trace_id;           // [A-Za-z0-9._:-]{1,64}, else dropped whole
  std::string grant_profile;      // "" or a profile name (SPEC §8)
  std::string environment;        // "" or the exact image identity required
  // "" (the default image) or the name of one of the images the sandbox
  // serves (SPEC §7: a daemon may serve several; IsWellFormedImageName).
  std::string image;

  // Exactly one of these is set on a valid request. They are separate fields
  // (not a variant) because the wire format can carry several, and "two
  // payloads" must be refusable.
  std::optional<JavascriptPayload> javascript;
  std::optional<PythonPayload> python;
  std::optional<ProjectPayload> project;
  std::optional<CellPayload> cell;
  std::optional<ModulePayload> module;

  // How many payload fields are set (0..5).
  int PayloadCount() const;
  // The kind when exactly one payload is set.
  std::optional<PayloadKind> kind() const;

  friend bool operator==(const Request&, const Request&) = default;
};

// Whether `trace_id` matches [A-Za-z0-9._:-]{1,64}.
bool IsWellFormedTraceId(std::string_view trace_id);

// Whether `name` is an image name: 1-64 of [a-z0-9-], not starting with '-'
// (the names of image variants, `plimsoll image build --variant`).
bool IsWellFormedImageName(std::string_view name);

// Checks a request against `limits` and returns the copy to dispatch: the
// trace ID dropped when malformed (never truncated) and `timeout_ms` resolved
// to the provider default when <= 0. Refusals (nothing ran):
//   protocol  - protocol != kProtocol;
//   request   - no payload or several; an unknown tier name; a floor of
//               `none`/`unknown`; a timeout above the provider maximum;
//               code above limits.max_code_bytes; a project with no steps,
//               an empty step or argv element with NUL, more than
//               limits.max_project_files files or limits.max_project_bytes
//               bytes, a bad or repeated path (absolute, `..`, `.`, empty
//               segment, NUL, backslash, control characters); a cell outside
//               a session (`in_session` false) or with an unknown language;
//               a module with a malformed model name, more than
//               kMaxModuleRows rows or kMaxModuleRowValues values in a row,
//               a non-finite value, or an end_time or step that is not a
//               positive finite number;
//               a malformed grant profile, environment string or image
//               name. (Whether the named image is served is the Sandbox's
//               or the daemon's check: an unknown name is `request` too.)
Expected<Request> ValidateRequest(const Request& request, const Limits& limits,
                                  bool in_session = false);

// The timeout, in ms, a run of `request` gets: its own `timeout_ms` when
// positive, else the provider's default for its kind (a module run is a
// project underneath, core/module_project.h), never above the kind's maximum
// nor `limits.run_ceiling_ms`. The one place this is decided, also before
// validation: ValidateRequest fills `timeout_ms` with it (after refusing a
// positive `timeout_ms` above the maximum, so no run is ever held to less
// than it asked for), the daemon bounds its wait for the provider (plus a
// grace) and a grant's lifetime with it (its limits carry the daemon's run
// ceiling), and the CLI a grant's lifetime, so all always agree. For a
// request validation will refuse, it answers the maximum.
int64_t ResolvedTimeoutMs(const Request& request, const Limits& limits);

// No grant profile is served yet (the broker, SPEC §8, is issue 19): a request
// naming one is refused `permission` (nothing ran), the answer an unknown
// profile will get, so no code ever runs without the grant it asked for.
// Sandbox::Run and Session::Run make this check, so the daemon, the CLI and
// the library refuse alike. Ok for a request naming none.
Status RefuseUnservedGrant(const Request& request);

// Whether a request (or session) naming the image `requested` may run on a
// sandbox serving the image named `served`: ok when `requested` is "" or
// `served`; else Refusal(kRequest) naming both (nothing ran). Sandbox::Run,
// Sandbox::OpenSession and Session::Run make this check.
Status CheckImageServed(std::string_view requested, std::string_view served);

// Checks one relative path the way project files and artifacts are checked.
// Returns an error message (nullopt when the path is acceptable).
std::optional<std::string> CheckRelativePath(std::string_view path);

}  // namespace plimsoll

#endif  // PLIMSOLL_REQUEST_H_
