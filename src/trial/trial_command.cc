#include "trial/trial_command.h"

#include <charconv>
#include <cstdint>

namespace plimsoll::trial {

namespace {

Error Bad(const std::string& problem) {
  return Failure(ErrorCode::kInvalidArgument, problem);
}

}  // namespace

Expected<TrialRequest> ParseTrialCommand(const std::vector<std::string>& arguments) {
  TrialRequest request;
  size_t at = 0;
  for (; at < arguments.size(); ++at) {
    const std::string& flag = arguments[at];
    if (flag == "--") {
      ++at;
      break;
    }
    if (flag == "--build") {
      // The build command runs to the next "--", which also ends the options.
      for (++at; at < arguments.size() && arguments[at] != "--"; ++at) {
        request.build_argv.push_back(arguments[at]);
      }
      if (request.build_argv.empty()) return Bad("--build needs a command before the --.");
      if (at == arguments.size()) return Bad("the controller's command goes after --.");
      ++at;
      break;
    }
    if (at + 1 >= arguments.size()) return Bad("the option " + flag + " needs a value.");
    const std::string& value = arguments[++at];
    if (flag == "--plant") {
      request.plant = value;
    } else if (flag == "--scenario") {
      request.scenario_path = value;
    } else if (flag == "--trajectory") {
      request.trajectory_path = value;
    } else if (flag == "--tick-times") {
      request.tick_times_path = value;
    } else if (flag == "--answer-timeout-ms") {
      int64_t milliseconds = 0;
      const auto [end, error] =
          std::from_chars(value.data(), value.data() + value.size(), milliseconds);
      if (error != std::errc() || end != value.data() + value.size() || milliseconds < 1 ||
          milliseconds > 600000) {
        return Bad("--answer-timeout-ms takes a whole number of milliseconds from 1 to 600000.");
      }
      request.answer_deadline = std::chrono::milliseconds(milliseconds);
    } else {
      return Bad("unknown option " + flag + ".");
    }
  }
  for (; at < arguments.size(); ++at) request.controller_argv.push_back(arguments[at]);
  if (request.plant.empty()) return Bad("--plant is required.");
  if (request.trajectory_path.empty()) return Bad("--trajectory is required.");
  if (request.controller_argv.empty()) return Bad("the controller's command goes after --.");
  return request;
}

}  // namespace plimsoll::trial
