// The work directory: writing the job's files into it and bringing
// artifacts back out, without ever following a symlink or leaving it.
//
// Paths were checked by the host (CheckRelativePath) and again by
// DecodeJob; these functions defend a third time, because by the time
// artifacts are collected guest code has had the run to plant symlinks,
// FIFOs and directories where files were expected.
#ifndef PLIMSOLL_GUEST_AGENT_WORKDIR_H_
#define PLIMSOLL_GUEST_AGENT_WORKDIR_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "base/unique_fd.h"
#include "plimsoll/error.h"
#include "plimsoll/request.h"
#include "plimsoll/result.h"

namespace plimsoll::guest::agent {

// Who owns what the agent creates (the steps' identity), when it may chown.
struct Owner {
  bool change = false;
  uid_t uid = 0;
  gid_t gid = 0;
};

// Opens `path` (which must be a directory, not a symlink) and hands it to
// `owner`.
Expected<base::UniqueFd> OpenWorkDirectory(const std::string& path, const Owner& owner);

// Writes every file beneath `work_fd`, creating parent directories (mode
// 0755) and files (mode 0644, O_CREAT|O_EXCL|O_NOFOLLOW), owned by `owner`.
// Fails on the first file that cannot be written, saying which and why.
// With `replace` (a session's kept /work) a file already there, or a
// symlink in its place, is unlinked first; a directory there still fails.
Status WriteFiles(int work_fd, const std::vector<ProjectFile>& files, const Owner& owner,
                  bool replace = false);

struct Collected {
  std::vector<Artifact> artifacts;  // found regular files, in request order
  std::string notes;                // one sentence per line: missing ones
};

// Reads each artifact that is a regular file reached without symlinks
// beneath `work_fd`, up to `budget` bytes in total: the artifact that
// crosses the budget is cut and flagged truncated; later ones come back
// empty and truncated. Missing, symlinked or non-regular paths are left out
// and named in `notes`.
Collected CollectArtifacts(int work_fd, const std::vector<std::string>& paths, int64_t budget);

}  // namespace plimsoll::guest::agent

#endif  // PLIMSOLL_GUEST_AGENT_WORKDIR_H_
