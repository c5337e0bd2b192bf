// For tests: an environment variable set for a scope, restored (or unset)
// when the scope ends. Not thread-safe, as setenv(3) is not: set it before
// the code under test starts threads that read the environment.
//
// Usage: { testing::ScopedEnv pool("SANDBOX_OCI_POOL_SIZE", "2"); MakeProvider(...); }
#ifndef PLIMSOLL_BASE_SCOPED_ENV_FOR_TESTS_H_
#define PLIMSOLL_BASE_SCOPED_ENV_FOR_TESTS_H_

#include <cstdlib>
#include <optional>
#include <string>

namespace plimsoll::testing {

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace plimsoll::testing

#endif  // PLIMSOLL_BASE_SCOPED_ENV_FOR_TESTS_H_
