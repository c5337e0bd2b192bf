#include "cli/session_command.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli/exit_status.h"
#include "cli/run_report.h"
#include "plimsoll/client.h"
#include "plimsoll/record.h"
#include "plimsoll/session.h"
#include "plimsoll/tier.h"

namespace plimsoll::cli {
namespace {

// What the CLI keeps of a session between commands (session_command.h).
struct ChainFile {
  std::string daemon;
  ChainState chain;
  // The floor the session was opened with ("" for none): each command opens
  // a new Client, which knows it only from here (Client::SetSessionFloor).
  std::string floor;
};

std::string StateDirectory(const SessionCommandOptions& options) {
  if (!options.state_dir.empty()) return options.state_dir;
  if (const char* dir = std::getenv("PLIMSOLL_STATE_DIR"); dir != nullptr && *dir != '\0') {
    return dir;
  }
  if (const char* xdg = std::getenv("XDG_STATE_HOME"); xdg != nullptr && *xdg != '\0') {
    return std::string(xdg) + "/plimsoll";
  }
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr && *home != '\0' ? home : "/tmp") + "/.local/state/plimsoll";
}

std::string SessionsDirectory(const SessionCommandOptions& options) {
  return StateDirectory(options) + "/sessions";
}

std::string ChainPath(const SessionCommandOptions& options, const std::string& session_sha256) {
  return SessionsDirectory(options) + "/" + session_sha256;
}

Error StateError(const std::string& what, int error) {
  return Failure(ErrorCode::kInternal, what + ": " + std::strerror(error));
}

// mkdir -p with mode 0700 for what it creates.
Status MakePrivateDirectories(const std::string& path) {
  for (size_t slash = 1; slash != std::string::npos;) {
    slash = path.find('/', slash + 1);
    std::string prefix = path.substr(0, slash);
    if (mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) {
      return StateError("Cannot create " + prefix, errno);
    }
  }
  return Status::Ok();
}

Status WriteChain(const SessionCommandOptions& options, const ChainFile& file) {
  PLIMSOLL_RETURN_IF_ERROR(MakePrivateDirectories(SessionsDirectory(options)));
  std::string path = ChainPath(options, file.chain.session_sha256);
  std::string partial = path + ".partial";
  std::string text = "daemon " + file.daemon + "\nsession_sha256 " + file.chain.session_sha256 +
                     "\nlast_sequence " + std::to_string(file.chain.last_sequence) +
                     "\nlast_record_sha256 " +
                     (file.chain.last_record_sha256.empty() ? "-" : file.chain.last_record_sha256) +
                     "\nfloor " + (file.floor.empty() ? "-" : file.floor) + "\n";
  int fd = open(partial.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return StateError("Cannot write " + partial, errno);
  bool written =
      write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && fsync(fd) == 0;
  int saved = errno;
  close(fd);
  if (!written) return StateError("Cannot write " + partial, saved);
  if (rename(partial.c_str(), path.c_str()) != 0)
    return StateError("Cannot rename " + partial, errno);
  return Status::Ok();
}

Expected<ChainFile> ReadChain(const SessionCommandOptions& options,
                              const std::string& session_sha256) {
  std::string path = ChainPath(options, session_sha256);
  std::ifstream in(path);
  if (!in) {
    return Refusal(NotDispatched::kRequest,
                   "This CLI has no record of that session (" + path +
                       "): open it with `plimsoll session open`, or it was closed.");
  }
  ChainFile file;
  std::string key, value;
  while (in >> key >> value) {
    if (key == "daemon") file.daemon = value;
    if (key == "session_sha256") file.chain.session_sha256 = value;
    if (key == "last_sequence") file.chain.last_sequence = std::strtoll(value.c_str(), nullptr, 10);
    if (key == "last_record_sha256") file.chain.last_record_sha256 = value == "-" ? "" : value;
    if (key == "floor") file.floor = value == "-" ? "" : value;
  }
  // A floor that is not one a session can be opened with is an edited file,
  // not a looser check. (A file from before the floor was kept has none.)
  std::optional<Tier> floor = ParseTier(file.floor);
  bool floor_ok = file.floor.empty() || (floor && IsRunnableTier(*floor));
  if (file.chain.session_sha256 != session_sha256 || file.chain.last_sequence < 0 || !floor_ok) {
    return Failure(ErrorCode::kDataLoss, "The session's chain file " + path + " is damaged.");
  }
  return file;
}

int Open(const SessionCommandOptions& options, Client& client, std::ostream& out,
         std::ostream& err) {
  SessionOpenRequest request;
  request.options.minimum_isolation = options.floor;
  request.options.image = options.image;
  request.options.lifetime_ms = options.lifetime_ms;
  request.options.idle_timeout_ms = options.idle_timeout_ms;
  auto info = client.OpenSession(request);
  if (!info.ok()) return ReportError(info.error(), false, out, err);
  // The floor is the one asked, as the Client that opened the session holds
  // it: every later command's Client is told it (RunCell).
  ChainFile file{options.daemon.url, ChainState{SessionIdDigest(info->id), 0, ""}, options.floor};
  if (Status saved = WriteChain(options, file); !saved.ok()) {
    err << "plimsoll session: " << saved.error().ToString()
        << " (the session is open; close it with `plimsoll session close`)\n";
  }
  out << info->id << "\n";
  err << "plimsoll session: opened on " << info->provider << ", tier " << TierName(info->isolation)
      << "; it ends after " << info->idle_timeout_ms / 1000 << " s idle.\n";
  return kExitRanOk;
}

Expected<std::string> CellCode(const SessionCommandOptions& options) {
  if (!options.code.empty() && !options.file.empty()) {
    return Refusal(NotDispatched::kRequest, "Give the cell with -e or as a file, not both.");
  }
  if (!options.code.empty()) return options.code;
  if (options.file.empty())
    return Refusal(NotDispatched::kRequest, "No cell: give -e CODE or FILE.");
  std::ifstream in(options.file, std::ios::binary);
  if (!in) return Refusal(NotDispatched::kRequest, "Cannot read " + options.file + ".");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

int RunCell(const SessionCommandOptions& options, Client& client, std::ostream& out,
            std::ostream& err) {
  if (options.lang != "javascript" && options.lang != "python") {
    err << "plimsoll: --lang must be javascript or python.\n";
    return kExitUsage;
  }
  auto code = CellCode(options);
  if (!code.ok()) return ReportError(code.error(), options.json, out, err);
  auto file = ReadChain(options, SessionIdDigest(options.id));
  if (!file.ok()) return ReportError(file.error(), options.json, out, err);
  // This Client did not open the session: without the floor it was opened
  // with, a cell's tier lowered on the path (every digest recomputed) would
  // be believed.
  if (!file->floor.empty()) {
    if (Status held = client.SetSessionFloor(options.id, file->floor); !held.ok()) {
      return ReportError(held.error(), options.json, out, err);
    }
  }
  Request request;
  request.timeout_ms = options.timeout_ms;
  request.cell = CellPayload{options.lang, *code};
  auto result = client.RunInSession(options.id, request, file->chain);
  if (!result.ok()) return ReportError(result.error(), options.json, out, err);
  if (Status saved = WriteChain(options, *file); !saved.ok()) {
    err << "plimsoll session: " << saved.error().ToString() << "\n";
  }
  int status = ReportResult(*result, options.json, out, err);
  if (!options.json && result->cell && result->cell->value) {
    out << *result->cell->value << (result->cell->value_truncated ? " [cut]" : "") << "\n";
  }
  return status;
}

int Close(const SessionCommandOptions& options, Client& client, std::ostream& out,
          std::ostream& err) {
  std::string digest = SessionIdDigest(options.id);
  auto file = ReadChain(options, digest);
  if (!file.ok()) return ReportError(file.error(), false, out, err);
  auto closed = client.CloseSession(options.id, file->chain);
  if (!closed.ok()) return ReportError(closed.error(), false, out, err);
  unlink(ChainPath(options, digest).c_str());
  out << "session " << SessionEndReasonName(closed->ended) << " after " << closed->calls
      << " call(s)"
      << (closed->last_record_sha256.empty() ? "" : "; last record " + closed->last_record_sha256)
      << "\n";
  return kExitRanOk;
}

int List(const SessionCommandOptions& options, std::ostream& out, std::ostream& err) {
  std::string directory = SessionsDirectory(options);
  DIR* dir = opendir(directory.c_str());
  if (dir == nullptr) {
    if (errno != ENOENT) {
      err << "plimsoll session: cannot read " << directory << ": " << std::strerror(errno) << "\n";
      return kExitMayHaveRun;
    }
    return kExitRanOk;  // none opened yet
  }
  std::vector<std::string> names;
  while (dirent* entry = readdir(dir)) {
    std::string name = entry->d_name;
    if (name.size() == 64 && name.find_first_not_of("0123456789abcdef") == std::string::npos) {
      names.push_back(name);
    }
  }
  closedir(dir);
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    auto file = ReadChain(options, name);
    if (!file.ok()) continue;
    out << name << "  " << file->daemon << "  " << file->chain.last_sequence << " call(s)\n";
  }
  return kExitRanOk;
}

}  // namespace

int RunSessionCommand(const SessionCommandOptions& options, std::ostream& out, std::ostream& err) {
  if (options.action == "list") return List(options, out, err);
  if (options.daemon.url.empty()) {
    err << "plimsoll: session " << options.action << " needs --daemon URL.\n";
    return kExitUsage;
  }
  if (options.action != "open" && options.id.empty()) {
    err << "plimsoll: session " << options.action << " needs the session ID.\n";
    return kExitUsage;
  }
  Expected<Client> client = OpenDaemonClient(options.daemon);
  if (!client.ok()) return ReportError(client.error(), options.json, out, err);
  if (options.action == "open") return Open(options, *client, out, err);
  if (options.action == "run") return RunCell(options, *client, out, err);
  return Close(options, *client, out, err);
}

}  // namespace plimsoll::cli
