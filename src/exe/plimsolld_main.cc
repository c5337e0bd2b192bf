// plimsolld: the plimsoll daemon. Everything lives in src/daemon/.
#include <iostream>
#include <string>
#include <vector>

#include "daemon/server/daemon_main.h"

int main(int argc, char** argv) {
  plimsoll::daemon::BlockStopSignals();  // before any thread starts
  std::vector<std::string> args(argv, argv + argc);
  return plimsoll::daemon::DaemonMain(args, plimsoll::daemon::CurrentEnvironment(), std::cout,
                                      std::cerr);
}
