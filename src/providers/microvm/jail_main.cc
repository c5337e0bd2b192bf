// plimsoll-vmm-jail: see providers/microvm/jail.h.
#include <cstdio>
#include <string>
#include <vector>

#include "providers/microvm/jail.h"
#include "providers/microvm/jail_spec.h"

int main(int argc, char** argv) {
  using plimsoll::microvm::kJailFailureExit;
  std::vector<std::string> args(argv, argv + argc);
  auto spec = plimsoll::microvm::ParseJailCommandLine(args);
  if (!spec.ok()) {
    std::fprintf(stderr, "plimsoll-vmm-jail: bad command line: %s\n",
                 spec.error().message().c_str());
    return kJailFailureExit;
  }
  plimsoll::Error error = plimsoll::microvm::RunJail(*spec);
  std::fprintf(stderr, "plimsoll-vmm-jail: %s\n", error.message().c_str());
  return kJailFailureExit;
}
