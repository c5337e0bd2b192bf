// `plimsoll run --save-displays DIR`: a result's rich outputs (SPEC §7) as
// files, DIR/display-N.EXT in the order shown (N from 1; EXT from the mime
// type: png, jpg, svg, html, txt, json, else bin). DIR is created (0755) when
// missing; a file of the same name is replaced. Names come from the index
// alone, never from anything the guest sent.
//
// Usage:
//   Status saved = SaveDisplays(*result, options.save_displays, err);  // one line per file
#ifndef PLIMSOLL_CLI_SAVE_DISPLAYS_H_
#define PLIMSOLL_CLI_SAVE_DISPLAYS_H_

#include <filesystem>
#include <ostream>
#include <string_view>

#include "plimsoll/result.h"

namespace plimsoll::cli {

// The file name extension for `mime` ("png" for image/png, "bin" when unknown).
std::string_view DisplayExtension(std::string_view mime);

// Writes every display of `result` into `directory`, printing "saved: PATH"
// to `log` for each. A failure names the file; files written before it stay.
Status SaveDisplays(const Result& result, const std::filesystem::path& directory,
                    std::ostream& log);

}  // namespace plimsoll::cli

#endif  // PLIMSOLL_CLI_SAVE_DISPLAYS_H_
