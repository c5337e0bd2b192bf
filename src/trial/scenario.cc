#include "trial/scenario.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/unique_fd.h"
#include "plant_abi.h"
#include "trial/same_user_probe.h"
#include "trial/sha256.h"

namespace plimsoll::trial {

namespace {

Error Refused(const std::string& message) {
  return Refusal(NotDispatched::kRequest, ErrorCode::kInvalidArgument, message);
}

Error RefusedCall(const std::string& what, int error) {
  return Refused(what + ": " + std::strerror(error) + ".");
}

// Opens the scenario file without following a symlink and checks, before a
// byte is read, that it is a regular file of the runner's own user with no
// other name.
Expected<base::UniqueFd> OpenScenarioFile(const std::string& path) {
  base::UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  if (!fd.valid()) return RefusedCall("The scenario file " + path + " cannot be opened", errno);
  struct stat status = {};
  if (fstat(fd.get(), &status) != 0)
    return RefusedCall("The scenario file cannot be examined", errno);
  if (!S_ISREG(status.st_mode))
    return Refused("The scenario file " + path + " is not a regular file.");
  if (status.st_uid != geteuid()) {
    return Refused("The scenario file " + path + " belongs to uid " +
                   std::to_string(status.st_uid) + ", not to the runner's user (uid " +
                   std::to_string(geteuid()) +
                   "): another user could hold it open or give it another name.");
  }
  if (status.st_nlink != 1) {
    return Refused("The scenario file " + path + " has " + std::to_string(status.st_nlink) +
                   " links: another name for it would outlive its deletion.");
  }
  return fd;
}

Expected<std::string> ReadScenarioFile(int fd) {
  std::string text;
  char chunk[4096];
  for (;;) {
    const ssize_t got = read(fd, chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return RefusedCall("The scenario file cannot be read", errno);
    if (got == 0) break;
    text.append(chunk, static_cast<size_t>(got));
    if (text.size() > kScenarioFileCap) {
      return Refused("The scenario file is larger than " + std::to_string(kScenarioFileCap) +
                     " bytes.");
    }
  }
  return text;
}

}  // namespace

Expected<Scenario> ParseScenario(std::string_view text) {
  if (text.size() > kScenarioFileCap) {
    return Refused("The scenario is larger than " + std::to_string(kScenarioFileCap) + " bytes.");
  }
  const nlohmann::json document = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded() || !document.is_object()) {
    return Refused("The scenario file is not a JSON object.");
  }
  Scenario scenario;
  bool has_parameters = false;
  for (const auto& [key, value] : document.items()) {
    if (key == "plant") {
      if (!value.is_string()) return Refused("The scenario's \"plant\" is not a string.");
      scenario.plant = value.get<std::string>();
    } else if (key == "parameters") {
      if (!value.is_array()) return Refused("The scenario's \"parameters\" is not a list.");
      if (value.size() > PLANT_BUFFER_DOUBLES) {
        return Refused("The scenario has more than " + std::to_string(PLANT_BUFFER_DOUBLES) +
                       " parameters.");
      }
      for (const nlohmann::json& number : value) {
        if (!number.is_number()) return Refused("A scenario parameter is not a number.");
        scenario.parameters.push_back(number.get<double>());
      }
      has_parameters = true;
    } else {
      return Refused("The scenario has an unknown key \"" + key + "\".");
    }
  }
  if (!has_parameters) return Refused("The scenario has no \"parameters\" list.");
  return scenario;
}

Status PrepareToHoldScenario() {
  if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
    return Failure(
        ErrorCode::kFailedPrecondition,
        std::string("The runner cannot make itself undumpable (prctl PR_SET_DUMPABLE): ") +
            std::strerror(errno) + ".");
  }
  if (prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != 0) {
    return Failure(ErrorCode::kFailedPrecondition,
                   "The runner is still dumpable after PR_SET_DUMPABLE 0.");
  }
  Expected<std::vector<std::string>> leaks = ProbeFromSameUser();
  if (!leaks.ok()) return leaks.error();
  if (!leaks->empty()) {
    std::string names;
    for (const std::string& leak : *leaks) names += (names.empty() ? "" : ", ") + leak;
    return Failure(
        ErrorCode::kFailedPrecondition,
        "A process of the runner's own user can read it (" + names +
            "), so neither a scenario nor the trial would be out of the controller's reach; "
            "refusing "
            "to start. (Root or CAP_SYS_PTRACE reads any process; gVisor does not hide a "
            "non-dumpable process's /proc entries from its own user.)");
  }
  return Status::Ok();
}

Expected<Scenario> TakeScenario(const std::string& path) {
  Expected<base::UniqueFd> fd = OpenScenarioFile(path);
  // Deleted whatever it is: a refused scenario stays hidden too, as far as
  // this name goes. (A path that could not be opened or was refused is
  // unlinked if it exists; its own error wins.)
  if (unlink(path.c_str()) != 0 && fd.ok()) {
    return RefusedCall("The scenario file " + path + " cannot be deleted", errno);
  }
  if (!fd.ok()) return fd.error();
  // Now no name may reach it: a link made between the check and the
  // delete would show here.
  struct stat status = {};
  if (fstat(fd->get(), &status) != 0)
    return RefusedCall("The scenario file cannot be examined", errno);
  if (status.st_nlink != 0) {
    return Refused("The scenario file " + path + " still has " + std::to_string(status.st_nlink) +
                   " link(s) after its deletion: another name for it outlives it.");
  }
  Expected<std::string> text = ReadScenarioFile(fd->get());
  if (!text.ok()) return text.error();
  Expected<Scenario> scenario = ParseScenario(*text);
  explicit_bzero(text->data(), text->size());
  return scenario;
}

std::string ScenarioDigestHex(std::span<const double> parameters) {
  return Sha256Hex(DoubleBytes(parameters));
}

}  // namespace plimsoll::trial
