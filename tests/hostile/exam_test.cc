// Exams (SPEC §10, docs/exams.md): a controller is hostile code too. It
// runs as the same user as the trial runner, started by it after the runner
// made itself undumpable, proved a same-user process cannot read it
// (src/trial/same_user_probe.h), read the scenario and deleted its file.
// This controller searches everywhere it can for the scenario before it
// answers: the runner's /proc entries, memory and descriptors, every file it
// can read in the writable trees, every other process, its own descriptors.
// The scenario file spells one parameter as no runner output ever would
// ("0.01234567890123450": the shortest spelling has no trailing zero), so
// seeing those bytes anywhere means the file's contents leaked.
//
// C controllers (the second half): the compile of controller.c is the
// agent's code too. The runner runs it (plimsoll-trial --build plimsoll-cc
// ...) only after it has read and deleted the scenario file, so an
// `#include "scenario.json"` (which would print the file in clang's error on
// stderr) and an `.incbin "scenario.json"` (which would embed it in the
// module, and the module could answer its bytes as forces) find nothing and
// the build fails (exit 5). A second name for the file made by an earlier
// step (a hard link) or a symlink in its place makes the runner refuse the
// scenario (exit 3) before it builds or starts anything. Each verdict: the
// file's bytes appear in no output, no artifact and no force the plant
// applied.
#include <cmath>
#include <cstring>

#include "hostile/hostile.h"

namespace plimsoll::hostile {
namespace {

constexpr char kScenario[] =
    R"({"plant": "cartpole", "parameters": [0.01234567890123450, 0.0, 0.050, 0.0]})";

constexpr char kSearchingController[] = R"py(import ctypes, errno, os, sys
MARKER = ("0.0123456789" + "0123450").encode()  # split: this file holds no marker
libc = ctypes.CDLL(None, use_errno=True)
ppid = os.getppid()
lines = []

def code(e):
    return errno.errorcode.get(e, str(e))

def verdict(data):
    return "FOUND" if MARKER in data else "read, marker absent"

def read(path, cap=1 << 20):
    with open(path, "rb") as f:
        return f.read(cap)

lines.append("scenario file: " + ("present" if os.path.lexists("scenario.json") else "absent"))

# The runner's own /proc entries.
for name in ("mem", "environ", "maps", "fdinfo/0", "cmdline"):
    try:
        lines.append(f"runner {name}: " + verdict(read(f"/proc/{ppid}/{name}")))
    except OSError as e:
        lines.append(f"runner {name}: denied {code(e.errno)}")
for name in ("fd", "cwd", "root"):
    try:
        target = os.listdir(f"/proc/{ppid}/{name}") if name == "fd" else os.readlink(f"/proc/{ppid}/{name}")
        lines.append(f"runner {name}: readable")
    except OSError as e:
        lines.append(f"runner {name}: denied {code(e.errno)}")
opened, errnos = 0, set()
for n in range(64):
    try:
        data = read(f"/proc/{ppid}/fd/{n}", 1 << 16)
        opened += 1
        if MARKER in data:
            lines.append(f"runner fd/{n}: FOUND")
    except OSError as e:
        errnos.add(code(e.errno))
lines.append(f"runner fd/0..63: opened {opened}, denied " + "|".join(sorted(errnos)))

# Its memory through the syscalls (the address does not matter: access is
# checked first, so a wrong one would answer EFAULT, not EPERM).
buf = ctypes.create_string_buffer(64)
class iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
local = iovec(ctypes.cast(buf, ctypes.c_void_p), 64)
remote = iovec(0x400000, 64)
got = libc.process_vm_readv(ppid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
lines.append("runner process_vm_readv: " + ("read" if got >= 0 else "denied " + code(ctypes.get_errno())))
got = libc.ptrace(16, ppid, 0, 0)  # PTRACE_ATTACH
lines.append("runner ptrace attach: " + ("attached" if got == 0 else "denied " + code(ctypes.get_errno())))

# Every file it can read in the trees a process can write, and where the
# image keeps things.
searched, found = 0, []
for top in ("/work", "/tmp", "/run", "/var/tmp", "/dev/shm", "/home", "/root", "/etc", "/usr/local"):
    for directory, _, files in os.walk(top):
        for name in files:
            path = os.path.join(directory, name)
            try:
                if os.path.islink(path) or not os.path.isfile(path):
                    continue
                searched += 1
                if MARKER in read(path):
                    found.append(path)
            except OSError:
                pass
lines.append(f"files searched: {searched}, " + (f"FOUND in {found}" if found else "marker absent"))

# Every other process it can see.
processes, found = 0, []
for pid in os.listdir("/proc"):
    if not pid.isdigit() or int(pid) == os.getpid():
        continue
    processes += 1
    for name in ("cmdline", "environ"):
        try:
            if MARKER in read(f"/proc/{pid}/{name}"):
                found.append(f"{pid}/{name}")
        except OSError:
            pass
lines.append(f"processes searched: {processes}, " + (f"FOUND in {found}" if found else "marker absent"))

# Its own descriptors: only what the runner gave it.
own = []
for n in range(1024):
    try:
        os.fstat(n)
        own.append(str(n))
    except OSError:
        pass
lines.append("own descriptors: " + " ".join(own))

with open("findings.txt", "w") as f:
    f.write("\n".join(lines) + "\n")

# Then a controller: no force, so the pole falls.
for line in sys.stdin:
    print("0", flush=True)
)py";

// ENOENT: the linux provider mounts /proc with hidepid=invisible, where a
// process the caller may not ptrace-read (the undumpable runner) is not
// listed at all.
const std::string kDenied = "denied (EACCES|EPERM|ENOENT)";

const Program kExamPrograms[] = {{
    .name = "AControllerFindsNoHiddenScenario",
    .verdict =
        "a controller started by plimsoll-trial finds the scenario nowhere: its file is gone, the "
        "runner's memory, environment, maps and descriptors are denied to it (EACCES/EPERM, or the "
        "runner is not listed: ENOENT), and "
        "no file it can read and no process it can see holds the file's bytes; it has only "
        "descriptors 0, 1 and 2; the trial still runs to its end (the pole falls)",
    .script = kSearchingController,
    .steps = {{"plimsoll-trial", "--plant", "cartpole", "--scenario", "scenario.json",
               "--trajectory", "trajectory.f64", "--answer-timeout-ms", "60000", "--", "python3",
               "probe.py", "{TOKEN}"},
              {"python3", "-c", "import sys; sys.stdout.write(open('findings.txt').read())"}},
    .files = {{"scenario.json", kScenario}},
    .timeout_ms = 120'000,
    .step_count = 2,
    .stdout_lines =
        {R"(\{.*"ended":"failed".*"scenario_sha256":"[0-9a-f]{64}".*\})", "scenario file: absent",
         "runner mem: " + kDenied, "runner environ: " + kDenied, "runner maps: " + kDenied,
         "runner fdinfo/0: " + kDenied, "runner cmdline: (read, marker absent|denied ENOENT)",
         "runner fd: " + kDenied, "runner cwd: " + kDenied, "runner root: " + kDenied,
         "runner fd/0\\.\\.63: opened 0, denied (EACCES|EPERM|ENOENT)(\\|(EACCES|EPERM|ENOENT))*",
         "runner process_vm_readv: " + kDenied, "runner ptrace attach: " + kDenied,
         "files searched: [1-9][0-9]*, marker absent", "processes searched: [0-9]+, marker absent",
         "own descriptors: 0 1 2"},
    .under_gvisor =
        GvisorVerdict{
            .difference =
                "gVisor does not make a non-dumpable process's /proc entries root-owned "
                "(google/gvisor#160): a same-user process could open the runner's descriptors, "
                "so the runner's proof fails and it refuses to start; no controller runs",
            .outcome = ProjectOutcome::kCompleted,
            .exit_code = 4,
            .step_count = 1,
            .stdout_lines = {},
            .check =
                [](const Result& result, const Description&) {
                  ASSERT_EQ(result.steps.size(), 1u);
                  EXPECT_NE(result.steps[0].stderr_bytes.find(
                                "can read it (/proc/PID/environ, /proc/PID/fd/N"),
                            std::string::npos)
                      << result.steps[0].stderr_bytes;
                }},
}};
PLIMSOLL_HOSTILE_PROGRAMS(Exam, kExamPrograms);

// The scenario file's marker (kScenario spells it so; no runner output would).
const std::string kMarker = "0.01234567890123450";

// A C law that answers the bytes of `leaked` (NUL-terminated), one per tick,
// as forces of byte/65536 N: were the scenario compiled in, the trajectory's
// applied forces would carry it back.
const std::string kLeakingLaw =
    "double control(double x, double v, double theta, double omega, int k) {\n"
    "  (void)x; (void)v; (void)theta; (void)omega;\n"
    "  int n = 0;\n"
    "  while (leaked[n] != 0) ++n;\n"
    "  return k < n ? leaked[k] / 65536.0 : 0.0;\n"
    "}\n";

// controller.c embedding FILE with the assembler's .incbin.
std::string IncbinController(const std::string& file) {
  return "__asm__(\".section .rodata.leaked,\\\"\\\",@\\n.globl leaked\\n"
         ".type leaked,@object\\nleaked:\\n.incbin \\\"" +
         file +
         "\\\"\\n.byte 0\\n.size leaked, . - leaked\\n\");\n"
         "extern const unsigned char leaked[];\n" +
         kLeakingLaw;
}

// The project's trial step: the scenario hidden, controller.c compiled by the
// runner once it is gone, the module as the controller.
const std::vector<std::string> kCTrialStep = {"plimsoll-trial",
                                              "--plant",
                                              "cartpole",
                                              "--scenario",
                                              "scenario.json",
                                              "--trajectory",
                                              "trajectory.f64",
                                              "--build",
                                              "plimsoll-cc",
                                              "--plant",
                                              "cartpole",
                                              "controller.c",
                                              "-o",
                                              "controller.wasm",
                                              "--",
                                              "plimsoll-wasm-controller",
                                              "controller.wasm"};

// Every byte the run gave back: each step's output, the run's, every
// artifact, and the forces the plant applied decoded as kLeakingLaw encodes.
void ExpectTheScenarioNowhere(const Result& result) {
  std::vector<std::pair<std::string, std::string>> outputs = {{"stdout", result.stdout_bytes},
                                                              {"stderr", result.stderr_bytes}};
  for (size_t i = 0; i < result.steps.size(); ++i) {
    outputs.push_back({"step " + std::to_string(i) + " stdout", result.steps[i].stdout_bytes});
    outputs.push_back({"step " + std::to_string(i) + " stderr", result.steps[i].stderr_bytes});
  }
  for (const Artifact& artifact : result.artifacts) {
    outputs.push_back({artifact.path, artifact.content});
    std::string forces;  // column 4 of each 5-double row: F as applied
    for (size_t at = 4 * 8; at + 8 <= artifact.content.size(); at += 5 * 8) {
      double force;
      std::memcpy(&force, artifact.content.data() + at, sizeof force);
      const double byte = std::round(force * 65536.0);
      if (byte > 0 && byte < 256) forces.push_back(static_cast<char>(byte));
    }
    outputs.push_back({artifact.path + " (forces as bytes)", forces});
  }
  for (const auto& [where, bytes] : outputs) {
    EXPECT_EQ(bytes.find(kMarker), std::string::npos) << "the scenario leaked into " << where;
  }
}

// The runner's own line in the trial step's stderr.
void ExpectRunnerSaid(const Result& result, const std::string& words) {
  ASSERT_FALSE(result.steps.empty());
  EXPECT_NE(result.steps.back().stderr_bytes.find(words), std::string::npos)
      << "the trial step's stderr does not say \"" << words
      << "\": " << result.steps.back().stderr_bytes;
}

// gVisor: the runner refuses at its proof, before it reads the scenario or
// builds anything (as AControllerFindsNoHiddenScenario says).
GvisorVerdict RefusedUnderGvisor(size_t steps) {
  return GvisorVerdict{
      .difference =
          "the runner's proof fails under gVisor (google/gvisor#160), so it refuses "
          "before it reads the scenario or runs the build",
      .outcome = ProjectOutcome::kCompleted,
      .exit_code = 4,
      .step_count = steps,
      .stdout_lines = {},
      .check =
          [](const Result& result, const Description&) {
            ExpectTheScenarioNowhere(result);
            ExpectRunnerSaid(result, "can read it (/proc/PID/environ, /proc/PID/fd/N");
          },
  };
}

const Program kCExamPrograms[] = {
    {
        .name = "ACControllersIncludeOfTheScenarioFindsNothing",
        .verdict = "controller.c does #include \"scenario.json\"; the runner compiles it only "
                   "after deleting the file, so clang says the file is not found, the build fails "
                   "(exit 5) with the compiler's message on stderr, and the scenario's bytes are "
                   "in no output",
        .steps = {kCTrialStep},
        .files = {{"scenario.json", kScenario},
                  {"controller.c",
                   "static const unsigned char leaked[] = {\n"
                   "#include \"scenario.json\"\n"
                   "};\n" +
                       kLeakingLaw}},
        .artifacts = {"trajectory.f64"},
        .timeout_ms = 120'000,
        .exit_code = 5,
        .step_count = 1,
        .check =
            [](const Result& result, const Description&) {
              ExpectTheScenarioNowhere(result);
              ExpectRunnerSaid(result, "'scenario.json' file not found");
              ExpectRunnerSaid(result, "plimsoll-trial: The build command plimsoll-cc exited 1");
            },
        .under_gvisor = RefusedUnderGvisor(1),
    },
    {
        .name = "ACControllersIncbinOfTheScenarioFindsNothing",
        .verdict = "controller.c embeds scenario.json with .incbin and answers its bytes as "
                   "forces; the runner compiles it only after deleting the file, so the assembler "
                   "finds no file, the build fails (exit 5), and the scenario's bytes are in no "
                   "output and no force",
        .steps = {kCTrialStep},
        .files = {{"scenario.json", kScenario},
                  {"controller.c", IncbinController("scenario.json")}},
        .artifacts = {"trajectory.f64"},
        .timeout_ms = 120'000,
        .exit_code = 5,
        .step_count = 1,
        .check =
            [](const Result& result, const Description&) {
              ExpectTheScenarioNowhere(result);
              ExpectRunnerSaid(result, "Could not find incbin file 'scenario.json'");
              ExpectRunnerSaid(result, "plimsoll-trial: The build command plimsoll-cc exited 1");
            },
        .under_gvisor = RefusedUnderGvisor(1),
    },
    {
        .name = "AHardLinkToTheScenarioFromAnEarlierStepIsRefused",
        .verdict = "an earlier step links scenario.json as kept.json (which would outlive the "
                   "runner's delete) and controller.c embeds kept.json; the runner sees two links "
                   "and refuses the scenario before reading it (exit 3): nothing is built, no "
                   "controller starts, the scenario's bytes are in no output",
        .steps = {{"python3", "-c", "import os; os.link('scenario.json', 'kept.json')"},
                  kCTrialStep},
        .files = {{"scenario.json", kScenario}, {"controller.c", IncbinController("kept.json")}},
        .artifacts = {"trajectory.f64"},
        .timeout_ms = 120'000,
        .exit_code = 3,
        .step_count = 2,
        .check =
            [](const Result& result, const Description&) {
              ExpectTheScenarioNowhere(result);
              ExpectRunnerSaid(result, "The scenario file scenario.json has 2 links");
              EXPECT_TRUE(result.artifacts.empty() || result.artifacts[0].content.empty())
                  << "a trial ran";
            },
        .under_gvisor = RefusedUnderGvisor(2),
    },
    {
        .name = "ASymlinkInPlaceOfTheScenarioIsRefused",
        .verdict = "an earlier step moves scenario.json to real.json and puts a symlink to it in "
                   "its place, and controller.c embeds real.json; the runner does not follow the "
                   "link and refuses the scenario (exit 3): nothing is built, no controller "
                   "starts, the scenario's bytes are in no output",
        .steps = {{"python3", "-c",
                   "import os; os.rename('scenario.json', 'real.json'); "
                   "os.symlink('real.json', 'scenario.json')"},
                  kCTrialStep},
        .files = {{"scenario.json", kScenario}, {"controller.c", IncbinController("real.json")}},
        .artifacts = {"trajectory.f64"},
        .timeout_ms = 120'000,
        .exit_code = 3,
        .step_count = 2,
        .check =
            [](const Result& result, const Description&) {
              ExpectTheScenarioNowhere(result);
              ExpectRunnerSaid(result, "The scenario file scenario.json cannot be opened");
              EXPECT_TRUE(result.artifacts.empty() || result.artifacts[0].content.empty())
                  << "a trial ran";
            },
        .under_gvisor = RefusedUnderGvisor(2),
    },
};
PLIMSOLL_HOSTILE_PROGRAMS(CExam, kCExamPrograms);

}  // namespace
}  // namespace plimsoll::hostile
