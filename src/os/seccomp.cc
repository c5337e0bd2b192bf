#include "os/seccomp.h"

#include <fcntl.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>

namespace plimsoll::os {
namespace {

struct Named {
  const char* name;
  uint64_t value;
};

constexpr Named kConstants[] = {
    {"AF_UNIX", AF_UNIX},
    {"AF_INET", AF_INET},
    {"AF_INET6", AF_INET6},
    {"AF_NETLINK", AF_NETLINK},
    {"AF_PACKET", AF_PACKET},
    {"CLONE_NEWNS", CLONE_NEWNS},
    {"CLONE_NEWCGROUP", CLONE_NEWCGROUP},
    {"CLONE_NEWUTS", CLONE_NEWUTS},
    {"CLONE_NEWIPC", CLONE_NEWIPC},
    {"CLONE_NEWUSER", CLONE_NEWUSER},
    {"CLONE_NEWPID", CLONE_NEWPID},
    {"CLONE_NEWNET", CLONE_NEWNET},
    {"CLONE_NEWTIME", 0x00000080},
    {"S_IFMT", S_IFMT},
    {"S_IFIFO", S_IFIFO},
    {"S_IFSOCK", S_IFSOCK},
    {"S_IFCHR", S_IFCHR},
    {"S_IFBLK", S_IFBLK},
    {"S_IFREG", S_IFREG},
    {"AT_EMPTY_PATH", AT_EMPTY_PATH},
};

constexpr Named kErrnos[] = {
    {"EPERM", EPERM},   {"ENOSYS", ENOSYS}, {"EACCES", EACCES}, {"EAFNOSUPPORT", EAFNOSUPPORT},
    {"EINVAL", EINVAL},
};

std::vector<std::string> Tokens(std::string_view line) {
  std::vector<std::string> tokens;
  std::istringstream stream{std::string(line)};
  for (std::string token; stream >> token;) tokens.push_back(token);
  return tokens;
}

std::optional<uint64_t> ParseValue(std::string_view text) {
  uint64_t total = 0;
  size_t start = 0;
  while (start <= text.size()) {
    size_t bar = text.find('|', start);
    std::string_view part =
        text.substr(start, bar == std::string_view::npos ? text.npos : bar - start);
    if (part.empty()) return std::nullopt;
    uint64_t value = 0;
    bool found = false;
    for (const Named& constant : kConstants) {
      if (part == constant.name) {
        value = constant.value;
        found = true;
      }
    }
    if (!found) {
      int base = 10;
      if (part.size() > 2 && part[0] == '0' && (part[1] == 'x' || part[1] == 'X')) {
        base = 16;
        part.remove_prefix(2);
      }
      auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), value, base);
      if (error != std::errc() || end != part.data() + part.size()) return std::nullopt;
    }
    total |= value;
    if (bar == std::string_view::npos) break;
    start = bar + 1;
  }
  return total;
}

std::optional<int> ParseErrno(std::string_view name) {
  for (const Named& known : kErrnos) {
    if (name == known.name) return static_cast<int>(known.value);
  }
  return std::nullopt;
}

bool LooksLikeErrno(std::string_view token) {
  return token.size() > 1 && token[0] == 'E' && token[1] >= 'A' && token[1] <= 'Z';
}

Error LineError(int line, const std::string& message) {
  return Failure(ErrorCode::kFailedPrecondition,
                 "seccomp policy line " + std::to_string(line) + ": " + message);
}

// Parses "argN [& MASK] (==|!=) VALUE" from tokens[begin..].
Expected<SeccompCondition> ParseCondition(const std::vector<std::string>& tokens, size_t begin,
                                          int line) {
  SeccompCondition condition;
  size_t i = begin;
  auto need = [&](const char* what) -> Expected<std::string> {
    if (i >= tokens.size()) return LineError(line, std::string("expected ") + what + ".");
    return tokens[i++];
  };
  auto argument = need("argN");
  if (!argument.ok()) return argument.error();
  if (argument->size() != 4 || argument->rfind("arg", 0) != 0 || (*argument)[3] < '0' ||
      (*argument)[3] > '5') {
    return LineError(line, "expected arg0..arg5, got \"" + *argument + "\".");
  }
  condition.argument = static_cast<unsigned>((*argument)[3] - '0');
  auto op = need("an operator");
  if (!op.ok()) return op.error();
  if (*op == "&") {
    auto mask = need("a mask");
    if (!mask.ok()) return mask.error();
    auto value = ParseValue(*mask);
    if (!value) return LineError(line, "bad mask \"" + *mask + "\".");
    condition.mask = *value;
    op = need("an operator");
    if (!op.ok()) return op.error();
  }
  if (*op != "==" && *op != "!=") return LineError(line, "expected == or !=, got \"" + *op + "\".");
  condition.equal = *op == "==";
  auto value_text = need("a value");
  if (!value_text.ok()) return value_text.error();
  auto value = ParseValue(*value_text);
  if (!value) return LineError(line, "bad value \"" + *value_text + "\".");
  condition.value = *value;
  if (i != tokens.size())
    return LineError(line, "unexpected \"" + tokens[i] + "\" after the condition.");
  return condition;
}

}  // namespace

std::vector<std::string> SeccompPolicy::DeniedSyscalls() const {
  std::vector<std::string> names;
  for (const SeccompRule& rule : rules) {
    if (!rule.allow && !rule.condition) names.push_back(rule.syscall);
  }
  return names;
}

Expected<SeccompPolicy> ParseSeccompPolicy(std::string_view text) {
  SeccompPolicy policy;
  bool saw_version = false, saw_default = false;
  int line_number = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++line_number;
    if (size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    std::vector<std::string> tokens = Tokens(line);
    if (tokens.empty()) continue;
    const std::string& verb = tokens[0];
    if (verb == "version") {
      if (tokens.size() != 2 || tokens[1] != "1")
        return LineError(line_number, "only version 1 is known.");
      saw_version = true;
      continue;
    }
    if (!saw_version) return LineError(line_number, "the policy must start with \"version 1\".");
    if (verb == "default") {
      if (tokens.size() < 2 || tokens[1] != "deny" || tokens.size() > 3) {
        return LineError(line_number, "expected \"default deny [ERRNO]\" (deny by default).");
      }
      if (tokens.size() == 3) {
        auto value = ParseErrno(tokens[2]);
        if (!value) return LineError(line_number, "unknown errno \"" + tokens[2] + "\".");
        policy.default_errno = *value;
      }
      saw_default = true;
      continue;
    }
    if (verb != "allow" && verb != "deny") {
      return LineError(line_number,
                       "unknown rule \"" + verb + "\" (allow, deny, default, version).");
    }
    SeccompRule prototype;
    prototype.allow = verb == "allow";
    prototype.line = line_number;
    size_t i = 1;
    if (!prototype.allow && i < tokens.size() && LooksLikeErrno(tokens[i])) {
      auto value = ParseErrno(tokens[i]);
      if (!value) return LineError(line_number, "unknown errno \"" + tokens[i] + "\".");
      prototype.errno_value = *value;
      ++i;
    }
    std::vector<std::string> names;
    for (; i < tokens.size() && tokens[i] != "if"; ++i) names.push_back(tokens[i]);
    if (names.empty()) return LineError(line_number, "the rule names no system call.");
    if (i < tokens.size()) {
      auto condition = ParseCondition(tokens, i + 1, line_number);
      if (!condition.ok()) return condition.error();
      prototype.condition = *condition;
    }
    for (const std::string& name : names) {
      if (seccomp_syscall_resolve_name(name.c_str()) == __NR_SCMP_ERROR) {
        return LineError(line_number, "unknown system call \"" + name + "\".");
      }
      SeccompRule rule = prototype;
      rule.syscall = name;
      policy.rules.push_back(std::move(rule));
    }
  }
  if (!saw_version) return LineError(line_number, "the policy is empty (no \"version 1\").");
  if (!saw_default) return LineError(line_number, "the policy has no \"default deny\" line.");
  return policy;
}

Expected<std::string> ActiveSeccompPolicyText(std::string* source) {
  const char* path = std::getenv("PLIMSOLL_SECCOMP_POLICY");
  if (path == nullptr || *path == '\0') {
    if (source) *source = "built-in (image/seccomp.policy)";
    return std::string(BuiltInSeccompPolicyText());
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    return Failure(ErrorCode::kFailedPrecondition,
                   std::string("The seccomp policy file ") + path +
                       " (PLIMSOLL_SECCOMP_POLICY) cannot be read.");
  }
  std::ostringstream text;
  text << file.rdbuf();
  if (source) *source = path;
  return text.str();
}

sock_fprog SeccompProgram::Fprog() const {
  sock_fprog program{};
  program.len = static_cast<unsigned short>(instructions.size());
  program.filter = const_cast<sock_filter*>(instructions.data());
  return program;
}

Expected<SeccompProgram> CompileSeccompPolicy(const SeccompPolicy& policy) {
  std::unique_ptr<void, void (*)(scmp_filter_ctx)> context(
      seccomp_init(SCMP_ACT_ERRNO(static_cast<uint32_t>(policy.default_errno))), seccomp_release);
  if (!context) return Failure(ErrorCode::kInternal, "seccomp_init failed.");
  if (int rc = seccomp_attr_set(context.get(), SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
      rc != 0) {
    return SystemError("seccomp_attr_set(BADARCH)", -rc);
  }
  // A binary tree over the system call numbers instead of a linear chain:
  // the same decisions, but a call is found in O(log n) instructions, both
  // when the kernel precomputes its per-syscall cache at install time (once
  // per sandbox, with interrupts off) and for every checked call after.
  if (int rc = seccomp_attr_set(context.get(), SCMP_FLTATR_CTL_OPTIMIZE, 2); rc != 0) {
    return SystemError("seccomp_attr_set(OPTIMIZE)", -rc);
  }
  for (const SeccompRule& rule : policy.rules) {
    // An explicit denial with the default's errno is the default already
    // (libseccomp refuses such a rule); it stays in the policy as a contract.
    if (!rule.allow && rule.errno_value == policy.default_errno && !rule.condition) continue;
    int number = seccomp_syscall_resolve_name(rule.syscall.c_str());
    uint32_t action =
        rule.allow ? SCMP_ACT_ALLOW : SCMP_ACT_ERRNO(static_cast<uint32_t>(rule.errno_value));
    int rc = 0;
    if (rule.condition) {
      const SeccompCondition& c = *rule.condition;
      scmp_arg_cmp compare{};
      compare.arg = c.argument;
      if (c.mask == ~uint64_t{0}) {
        compare.op = c.equal ? SCMP_CMP_EQ : SCMP_CMP_NE;
        compare.datum_a = c.value;
      } else if (c.equal) {
        compare.op = SCMP_CMP_MASKED_EQ;
        compare.datum_a = c.mask;
        compare.datum_b = c.value;
      } else {
        return Failure(ErrorCode::kFailedPrecondition,
                       "seccomp policy line " + std::to_string(rule.line) +
                           ": a masked condition must use == (libseccomp has no masked !=); "
                           "write the allowed case instead.");
      }
      rc = seccomp_rule_add_exact_array(context.get(), action, number, 1, &compare);
    } else {
      rc = seccomp_rule_add_exact(context.get(), action, number, 0);
    }
    if (rc != 0) {
      return Failure(ErrorCode::kFailedPrecondition,
                     "seccomp policy line " + std::to_string(rule.line) +
                         ": libseccomp refused the rule for " + rule.syscall + ": " +
                         std::strerror(-rc) + ".");
    }
  }
  int fd = memfd_create("plimsoll-seccomp", MFD_CLOEXEC);
  if (fd < 0) return SystemError("memfd_create", errno);
  int rc = seccomp_export_bpf(context.get(), fd);
  if (rc != 0) {
    close(fd);
    return SystemError("seccomp_export_bpf", -rc);
  }
  off_t size = lseek(fd, 0, SEEK_END);
  SeccompProgram program;
  if (size <= 0 || size % static_cast<off_t>(sizeof(sock_filter)) != 0 ||
      size / static_cast<off_t>(sizeof(sock_filter)) > BPF_MAXINSNS) {
    close(fd);
    return Failure(ErrorCode::kInternal, "The compiled seccomp filter has an impossible size.");
  }
  program.instructions.resize(static_cast<size_t>(size) / sizeof(sock_filter));
  ssize_t got = pread(fd, program.instructions.data(), static_cast<size_t>(size), 0);
  close(fd);
  if (got != size)
    return Failure(ErrorCode::kInternal, "Reading the compiled seccomp filter failed.");
  return program;
}

int InstallSeccompProgram(const sock_fprog& program, const char** what) {
  *what = "seccomp(SECCOMP_SET_MODE_FILTER)";
  if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &program) != 0) return errno;
  return 0;
}

}  // namespace plimsoll::os
