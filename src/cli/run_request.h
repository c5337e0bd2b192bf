// What the flags of `plimsoll run` become: one plimsoll::Request, the same
// for the in-process path and `--daemon` (DESIGN.md: one request schema).
//
// Usage:
//   RunOptions options;  // filled by CLI11
//   Expected<Request> request = BuildRequest(options, limits);
#ifndef PLIMSOLL_CLI_RUN_REQUEST_H_
#define PLIMSOLL_CLI_RUN_REQUEST_H_

#include <cstdint>
#include <string>
#include <vector>

#include "plimsoll/limits.h"
#include "plimsoll/request.h"

namespace plimsoll::cli {

struct RunOptions {
  std::string provider;
  std::string floor;
  int64_t timeout_ms = 0;
  std::string lang = "javascript";
  std::string code;
  std::string file;
  std::string project_dir;
  std::vector<std::string> steps;
  std::vector<std::string> artifacts;
  // --module MODEL --rows FILE --end-time T --tick S: a module run
  // (docs/exams.md, "Module runs"). FILE is CSV: one row of the model's
  // parameters per line, numbers separated by commas; an empty line is the
  // model's default scenario; lines starting with '#' are comments.
  std::string module;
  std::string rows_path;
  double end_time = 0;
  double step = 0;
  std::string trace_id;
  std::string grant_profile;
  // --grants PATH (else $PLIMSOLL_GRANTS): the grants file --grant names a
  // profile of; the run's caller is "local" (docs/cli.md).
  std::string grants_path;
  std::string environment;
  // --image NAME: with --daemon, the daemon's image of that name; locally,
  // the variant's image (image::VariantImageDirectory; base: the default).
  std::string image;
  // --save-displays DIR: the result's displays written there (save_displays.h).
  std::string save_displays;
  bool json = false;
};

// Builds the request; reads FILE, the project directory (stopping at
// `limits`) or the module's rows. Problems are Refusal(kRequest): nothing
// ran.
Expected<Request> BuildRequest(const RunOptions& options, const Limits& limits);

// The module rows CSV above, parsed. Errors (Refusal(kRequest)) name the
// line: a value that is not a whole decimal number, or over
// kMaxModuleRows rows.
Expected<std::vector<std::vector<double>>> ParseModuleRows(std::string_view csv);

}  // namespace plimsoll::cli

#endif  // PLIMSOLL_CLI_RUN_REQUEST_H_
