// A module run as the project every provider runs (docs/exams.md, "Module
// runs"): the payload written as the spec file plimsoll-model reads, one
// step, the rows brought back as an artifact. Part of resolving a request
// for dispatch, so the core owns it: Sandbox::Run hands providers this
// project for a module request; the request (and its digest) stays the
// module the client sent.
//
//   files      module.json  {"model": ..., "rows": [...], "end_time": ..., "step": ...}
//   steps      ["plimsoll-model", "module.json", "module_rows.jsonl"]
//   artifacts  ["module_rows.jsonl"]
//
// Usage (Sandbox::Run):
//   if (validated->module) {
//     validated->project = ModuleProject(*validated->module);
//     validated->module.reset();
//   }
#ifndef PLIMSOLL_CORE_MODULE_PROJECT_H_
#define PLIMSOLL_CORE_MODULE_PROJECT_H_

#include "plimsoll/request.h"

namespace plimsoll {

ProjectPayload ModuleProject(const ModulePayload& module);

}  // namespace plimsoll

#endif  // PLIMSOLL_CORE_MODULE_PROJECT_H_
