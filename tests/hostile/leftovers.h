// What a sandbox may leave behind on the host, as a snapshot to compare
// before and after the suite: processes, mounts, cgroups, temporary
// directories, and the state of this (the host) process itself.
//
// Usage:
//
//   HostSnapshot before = SnapshotHost();
//   ... run things, destroy the sandboxes ...
//   for (const std::string& leftover : Leftovers(before, SnapshotHost())) ADD_FAILURE() <<
//   leftover;
//
// Shared by the hostile suite and the reliability suite's crash tests
// (tests/reliability/crash_test.cc).
#ifndef PLIMSOLL_TESTS_HOSTILE_LEFTOVERS_H_
#define PLIMSOLL_TESTS_HOSTILE_LEFTOVERS_H_

#include <map>
#include <set>
#include <string>
#include <vector>

namespace plimsoll::hostile {

struct HostSnapshot {
  // "pid starttime" -> a description of every process on the host.
  std::map<std::string, std::string> processes;
  // Processes that count as ours when new: descendants of this process,
  // orphans in a nested PID namespace, carriers of the suite's token.
  std::set<std::string> suspect_processes;
  std::multiset<std::string> mounts;  // this process's mountinfo, without mount IDs
  std::set<std::string> cgroups;      // directories under /sys/fs/cgroup
  std::set<std::string>
      temporary;  // plimsoll-named entries in /tmp, /var/tmp, /dev/shm, /run, $TMPDIR
  // This process: limits, identity, namespaces, signal state, descriptors,
  // threads, working directory, and a few host-wide kernel settings.
  std::map<std::string, std::string> self;
};

// `token` marks guest processes (see HostFixtures::token); "" for none.
HostSnapshot SnapshotHost(const std::string& token = "");

// Sentences naming what `after` has that `before` had not (and what the host
// lost), empty when nothing was left behind.
std::vector<std::string> Leftovers(const HostSnapshot& before, const HostSnapshot& after);

// Leftovers() without the cgroups, temporary entries and mounts whose name
// carries the owner tag of a live process (os/owner.h): on a
// shared host other tests and daemons have sandboxes of their own at any
// moment. What a dead owner (e.g. a daemon killed with -9) left still counts.
std::vector<std::string> LeftoversOfDeadOwners(const HostSnapshot& before,
                                               const HostSnapshot& after);

// Whether `text` (a path, a mount line) names something whose owner tag
// belongs to a live process.
bool NamesALiveOwner(const std::string& text);

}  // namespace plimsoll::hostile

#endif  // PLIMSOLL_TESTS_HOSTILE_LEFTOVERS_H_
