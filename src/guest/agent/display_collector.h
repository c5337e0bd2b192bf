// The displays directory inside the sandbox (guest/displays.h): made for
// the steps before a job, read and emptied after it.
//
// Guest code owns the directory while it runs, so by the time it is read it
// may hold anything: symlinks, FIFOs, directories, hard links, a million
// names, files of any size. The agent reads only regular files with one
// link, owned by the guest user, opened without following a symlink and
// without blocking, up to kMaxDisplays of them and kMaxDisplayBytes
// together, and looks at no more than kMaxDisplayEntries names.
//
// Usage (RunJob does this; a pooled agent makes the directory while it
// waits for its job):
//   auto ready = PrepareDisplaysDirectory(path, owner);          // before the steps
//   ... run the steps with kDisplaysEnvironment=path ...
//   CollectedDisplays shown = CollectDisplays(ready->get(), owner);  // after the sweep
#ifndef PLIMSOLL_GUEST_AGENT_DISPLAY_COLLECTOR_H_
#define PLIMSOLL_GUEST_AGENT_DISPLAY_COLLECTOR_H_

#include <string>
#include <vector>

#include "base/unique_fd.h"
#include "guest/agent/workdir.h"
#include "plimsoll/error.h"
#include "plimsoll/result.h"

namespace plimsoll::guest::agent {

// How many names of the directory the agent looks at, at most.
inline constexpr size_t kMaxDisplayEntries = 4096;

// Makes `path` an empty directory (mode 0700) owned by `owner`: created when
// missing; emptied when it is a directory already (a session's); unlinked
// first when something else (a symlink, a file) took its name. Returns it,
// open (O_CLOEXEC).
Expected<base::UniqueFd> PrepareDisplaysDirectory(const std::string& path, const Owner& owner);

struct CollectedDisplays {
  std::vector<Display> displays;  // in the byte order of their file names
  bool truncated = false;         // more were written than the caps allow
  std::string notes;              // one sentence per line: what was skipped
};

// Reads the displays in the directory open as `directory`
// (PrepareDisplaysDirectory's: the one the agent made, wherever guest code
// may have renamed it since; see the header comment), then empties it.
CollectedDisplays CollectDisplays(int directory, const Owner& owner);

}  // namespace plimsoll::guest::agent

#endif  // PLIMSOLL_GUEST_AGENT_DISPLAY_COLLECTOR_H_
