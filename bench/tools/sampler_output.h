// The sampler protocol of bench/run.py (bench/README.md), for the tools in
// bench/tools: one JSON object per line on stdout,
//   {"scenario": NAME, "unit": "ms", "samples": [...]}
//   {"scenario": NAME, "unit": "ms", "samples": [...], "facts": {"k": "v"}}
//   {"scenario": NAME, "unit": "ms", "summary": {"n": N, "p50": X}}
//   {"scenario": NAME, "error": "why"}
// Header-only; every function flushes stdout so a crash later loses nothing.
#ifndef PLIMSOLL_BENCH_TOOLS_SAMPLER_OUTPUT_H_
#define PLIMSOLL_BENCH_TOOLS_SAMPLER_OUTPUT_H_

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace plimsoll::bench {

// `text` as a JSON string (quotes, backslashes and control characters escaped).
inline std::string JsonString(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// `facts` (optional): what the row ran on, e.g. {"accelerator", "tcg"}; the
// runner keeps them with the row (JSON "facts", and the Markdown notes).
inline void PrintSamples(std::string_view scenario, std::string_view unit,
                         const std::vector<double>& samples,
                         const std::vector<std::pair<std::string, std::string>>& facts = {}) {
  std::string line = "{\"scenario\": " + JsonString(scenario) + ", \"unit\": " + JsonString(unit) +
                     ", \"samples\": [";
  char number[32];
  for (size_t i = 0; i < samples.size(); ++i) {
    std::snprintf(number, sizeof number, "%s%.5f", i ? ", " : "", samples[i]);
    line += number;
  }
  line += "]";
  if (!facts.empty()) {
    line += ", \"facts\": {";
    for (size_t i = 0; i < facts.size(); ++i) {
      line += (i ? ", " : "") + JsonString(facts[i].first) + ": " + JsonString(facts[i].second);
    }
    line += "}";
  }
  std::printf("%s}\n", line.c_str());
  std::fflush(stdout);
}

// A row with statistics but no samples (e.g. a difference of two medians).
inline void PrintSummary(std::string_view scenario, std::string_view unit, size_t n, double p50) {
  std::printf("{\"scenario\": %s, \"unit\": %s, \"summary\": {\"n\": %zu, \"p50\": %.5f}}\n",
              JsonString(scenario).c_str(), JsonString(unit).c_str(), n, p50);
  std::fflush(stdout);
}

inline void PrintError(std::string_view scenario, std::string_view reason) {
  std::printf("{\"scenario\": %s, \"error\": %s}\n", JsonString(scenario).c_str(),
              JsonString(reason).c_str());
  std::fflush(stdout);
}

// A non-negative count from the environment (bench/run.py sets
// PLIMSOLL_BENCH_RUNS / PLIMSOLL_BENCH_WARMUP), else `fallback`.
inline long EnvCount(const char* name, long fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  long value = std::strtol(text, &end, 10);
  return (*end == '\0' && value >= 0) ? value : fallback;
}

}  // namespace plimsoll::bench

#endif  // PLIMSOLL_BENCH_TOOLS_SAMPLER_OUTPUT_H_
