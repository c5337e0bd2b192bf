#include "cli/repl_input.h"

#include <string>

namespace plimsoll::cli {
namespace {

// The depth of (, [ and { left open, skipping strings and comments. Good
// enough for a prompt: a wrong guess costs one more "..." line or a syntax
// error the interpreter reports, never a wrong run.
int OpenBrackets(std::string_view cell, bool python) {
  int depth = 0;
  char quote = 0;
  bool triple = false;
  for (size_t i = 0; i < cell.size(); ++i) {
    const char c = cell[i];
    if (quote != 0) {
      if (c == '\\') {
        ++i;
      } else if (triple && cell.substr(i, 3) == std::string(3, quote)) {
        quote = 0;
        i += 2;
      } else if (!triple && c == quote) {
        quote = 0;
      } else if (!triple && c == '\n' && quote != '`') {
        quote = 0;  // an unterminated one-line string: the interpreter will say so
      }
      continue;
    }
    if (python && c == '#') {
      while (i < cell.size() && cell[i] != '\n') ++i;
    } else if (!python && cell.substr(i, 2) == "//") {
      while (i < cell.size() && cell[i] != '\n') ++i;
    } else if (!python && cell.substr(i, 2) == "/*") {
      size_t end = cell.find("*/", i + 2);
      if (end == std::string_view::npos) return depth + 1;  // a comment still open
      i = end + 1;
    } else if (c == '"' || c == '\'' || (!python && c == '`')) {
      quote = c;
      triple = python && cell.substr(i, 3) == std::string(3, c);
      if (triple) i += 2;
    } else if (c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if (c == ')' || c == ']' || c == '}') {
      --depth;
    }
  }
  if (quote != 0 && (triple || quote == '`')) return depth + 1;  // a multi-line string open
  return depth;
}

std::string_view LastLine(std::string_view cell) {
  size_t newline = cell.rfind('\n');
  return newline == std::string_view::npos ? cell : cell.substr(newline + 1);
}

std::string_view TrimRight(std::string_view text) {
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) {
    text.remove_suffix(1);
  }
  return text;
}

}  // namespace

bool CellNeedsMoreInput(std::string_view cell, std::string_view language) {
  const bool python = language == "python";
  if (OpenBrackets(cell, python) > 0) return true;
  std::string_view last = TrimRight(LastLine(cell));
  if (!last.empty() && last.back() == '\\') return true;
  if (!python) return false;
  // A block (a line ending in ':') stays open until an empty line, as in
  // python3's own prompt.
  if (last.empty()) return false;
  size_t start = 0;
  while (start <= cell.size()) {
    size_t end = cell.find('\n', start);
    std::string_view line = TrimRight(cell.substr(start, end == std::string_view::npos
                                                             ? std::string_view::npos
                                                             : end - start));
    if (!line.empty() && line.back() == ':') return true;
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return false;
}

}  // namespace plimsoll::cli
