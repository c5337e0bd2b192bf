#include "guest/displays.h"

#include <string>

namespace plimsoll::guest {

Status CheckDisplays(const std::vector<Display>& displays) {
  auto refused = [](const std::string& why) {
    return Failure(ErrorCode::kDataLoss, "The agent's report is not one for this job: " + why);
  };
  if (displays.size() > kMaxDisplays) {
    return refused("it carries " + std::to_string(displays.size()) + " displays; at most " +
                   std::to_string(kMaxDisplays) + ".");
  }
  size_t total = 0;
  for (size_t i = 0; i < displays.size(); ++i) {
    if (!IsDisplayMime(displays[i].mime)) {
      return refused("display " + std::to_string(i + 1) + " names a malformed MIME type.");
    }
    total += displays[i].data.size();
  }
  if (total > kMaxDisplayBytes) {
    return refused("its displays have " + std::to_string(total) + " bytes; at most " +
                   std::to_string(kMaxDisplayBytes) + ".");
  }
  return Status::Ok();
}

}  // namespace plimsoll::guest
