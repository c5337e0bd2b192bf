// plimsoll-model: a module run (docs/exams.md, "Module runs";
// module_run.h says what it computes).
//
//   plimsoll-model SPEC.json OUT.jsonl
//
// Reads the spec ({"model", "rows", "end_time", "step"}), evaluates the
// model once per row, writes one JSON line per row to OUT.jsonl (created or
// truncated) and prints one summary line on stdout:
//   {"model": "cartpole", "rows": 1000, "row_errors": 0, "rows_sha256": "..."}
// rows_sha256 is the SHA-256 of OUT.jsonl's bytes. Exit status: 0 when every
// row was evaluated (a row's own error is in its line); 2 usage; 3 the spec
// was refused (one line on stderr says why); 70 the model failed to start
// or OUT.jsonl could not be written.
#include <cstdio>
#include <fstream>
#include <string>

#include "trial/module_run.h"

namespace {

constexpr int kUsageError = 2;
constexpr int kSpecError = 3;
constexpr int kInternalError = 70;  // EX_SOFTWARE

int Fail(int status, const std::string& message) {
  std::fprintf(stderr, "plimsoll-model: %s\n", message.c_str());
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  namespace trial = plimsoll::trial;
  if (argc != 3 || argv[1][0] == '-') {
    std::fputs("usage: plimsoll-model SPEC.json OUT.jsonl\n", stderr);
    return kUsageError;
  }
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) return Fail(kSpecError, std::string("cannot read ") + argv[1]);
  std::string text;
  char chunk[65536];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    text.append(chunk, static_cast<size_t>(in.gcount()));
    if (text.size() > trial::kModuleSpecFileCap) break;  // ParseModuleSpec refuses it
  }
  plimsoll::Expected<trial::ModuleSpec> spec = trial::ParseModuleSpec(text);
  if (!spec.ok()) return Fail(kSpecError, spec.error().message());
  plimsoll::Expected<std::vector<trial::ModuleRowResult>> rows = trial::EvaluateModule(*spec);
  if (!rows.ok()) {
    const bool refused = rows.error().code() == plimsoll::ErrorCode::kInvalidArgument;
    return Fail(refused ? kSpecError : kInternalError, rows.error().message());
  }
  const trial::ModuleOutput output = trial::FormatModuleOutput(*spec, *rows);
  std::ofstream file(argv[2], std::ios::binary | std::ios::trunc);
  file.write(output.rows_jsonl.data(), static_cast<std::streamsize>(output.rows_jsonl.size()));
  file.close();
  if (!file) return Fail(kInternalError, std::string("cannot write ") + argv[2]);
  std::fputs(output.summary_line.c_str(), stdout);
  return std::fflush(stdout) == 0 ? 0 : kInternalError;
}
