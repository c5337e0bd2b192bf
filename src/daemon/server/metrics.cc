#include "daemon/server/metrics.h"

#include <sstream>

namespace plimsoll::daemon {
namespace {

void RenderFamily(std::ostringstream& out, std::string_view name, std::string_view type,
                  std::string_view help, const std::map<std::string, uint64_t>& samples) {
  out << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n';
  for (const auto& [labels, value] : samples) out << name << '{' << labels << "} " << value << '\n';
}

}  // namespace

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

void Metrics::CountAnswer(unsigned http_status, std::optional<NotDispatched> refusal) {
  std::lock_guard lock(mutex_);
  ++answers_["status=\"" + std::to_string(http_status) + "\""];
  if (refusal) ++refusals_["reason=\"" + std::string(NotDispatchedName(*refusal)) + "\""];
}

void Metrics::CountRun(std::string_view provider, Tier tier, std::string_view outcome) {
  std::string labels = "provider=\"" + EscapeLabelValue(provider) + "\",isolation=\"" +
                       std::string(TierName(tier)) + "\",outcome=\"" + EscapeLabelValue(outcome) +
                       "\"";
  std::lock_guard lock(mutex_);
  ++runs_[labels];
}

void Metrics::CountShed(std::string_view reason) {
  std::lock_guard lock(mutex_);
  ++shed_["reason=\"" + EscapeLabelValue(reason) + "\""];
}

std::string Metrics::Render() const {
  std::ostringstream out;
  std::lock_guard lock(mutex_);
  RenderFamily(out, "plimsoll_http_answers_total", "counter",
               "HTTP answers of the API listener by status.", answers_);
  RenderFamily(out, "plimsoll_refusals_total", "counter",
               "Answers that ran nothing, by not-dispatched reason.", refusals_);
  RenderFamily(out, "plimsoll_runs_total", "counter",
               "Dispatched runs by provider, tier and outcome.", runs_);
  RenderFamily(out, "plimsoll_admission_shed_total", "counter",
               "Runs shed by admission (capacity), by limit.", shed_);
  out << "# HELP plimsoll_runs_in_flight Runs dispatched and not yet answered.\n"
      << "# TYPE plimsoll_runs_in_flight gauge\n"
      << "plimsoll_runs_in_flight " << in_flight_.load() << '\n';
  return out.str();
}

}  // namespace plimsoll::daemon
