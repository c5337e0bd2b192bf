// The `data` image variant (image/variants/data, docs/guest-images.md "Variants") on the
// providers that run it: the Python data stack imports at the pinned versions and computes,
// matplotlib draws with Agg (no display), pandas reads and writes Parquet and Excel, pytest runs a
// project's tests, node finds the baked-in npm package, and every result names the data image's
// own identity. PLIMSOLL_IMAGE is the data image, PLIMSOLL_BASE_IMAGE the base image whose
// identity it must differ from (both set by plimsoll_test_uses_data_image; unset is a failure).
//
// Which providers: $PLIMSOLL_CONFORMANCE_PROVIDERS (CMake sets linux and oci:runsc: the
// container tier as the kernel runs it and gVisor's own kernel, where numpy's and OpenBLAS's
// system calls could differ; runc and crun give the guest the same kernel as linux).
#include <cstdlib>
#include <map>
#include <sstream>

#include "conformance/conformance.h"
#include "image/test_tree.h"

namespace plimsoll::conformance {
namespace {

// A generous deadline: importing the whole stack takes ~3 s on linux, more under gVisor.
constexpr int64_t kDataTimeoutMs = 30000;

std::string Trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

// name -> version of every `name==version` line of the variant's requirements.txt.
std::map<std::string, std::string> PinnedWheels() {
  std::map<std::string, std::string> pins;
  std::istringstream lines(image::testing::ReadFile(PLIMSOLL_DATA_REQUIREMENTS));
  for (std::string line; std::getline(lines, line);) {
    size_t equals = line.find("==");
    if (line.empty() || line[0] == '#' || equals == std::string::npos) continue;
    size_t end = line.find(' ', equals);
    pins[line.substr(0, equals)] = line.substr(equals + 2, end - equals - 2);
  }
  return pins;
}

class DataImageTest : public ConformanceTest {
 protected:
  void SetUp() override {
    ConformanceTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    const char* image = std::getenv("PLIMSOLL_IMAGE");
    ASSERT_NE(image, nullptr) << "PLIMSOLL_IMAGE must name the data image";
    identity_ = Trimmed(image::testing::ReadFile(std::string(image) + "/identity"));
  }

  Result Run(Request request) {
    request.timeout_ms = kDataTimeoutMs;
    Result result = RunChecked(request);
    EXPECT_EQ(result.environment, identity_) << "the result names another image";
    return result;
  }

  Result RunPython(const std::string& code) {
    Request request;
    request.python = PythonPayload{code};
    return Run(std::move(request));
  }

  Result RunProject(ProjectPayload project) {
    Request request;
    request.project = std::move(project);
    return Run(std::move(request));
  }

  std::string identity_;
};

TEST_P(DataImageTest, ResultsNameTheDataImageNotTheBase) {
  Result result = RunPython("print('ok')");
  EXPECT_EQ(result.stdout_bytes, "ok\n") << result.stderr_bytes;
  const char* base = std::getenv("PLIMSOLL_BASE_IMAGE");
  ASSERT_NE(base, nullptr) << "PLIMSOLL_BASE_IMAGE must name the base image";
  std::string base_identity = Trimmed(image::testing::ReadFile(std::string(base) + "/identity"));
  ASSERT_FALSE(base_identity.empty()) << base << " has no identity";
  EXPECT_NE(result.environment, base_identity);
}

TEST_P(DataImageTest, TheStackImportsAtThePinnedVersions) {
  Result result = RunPython(
      "import numpy, pandas, scipy, sklearn, matplotlib, openpyxl, pyarrow, pytest, fontTools\n"
      "for name, module in [('numpy', numpy), ('pandas', pandas), ('openpyxl', openpyxl),\n"
      "                     ('pytest', pytest), ('scipy', scipy), ('scikit-learn', sklearn),\n"
      "                     ('matplotlib', matplotlib), ('pyarrow', pyarrow),\n"
      "                     ('fonttools', fontTools)]:\n"
      "    print(name, module.__version__)\n");
  ASSERT_EQ(result.exit_code, 0) << result.stderr_bytes;
  EXPECT_EQ(result.stderr_bytes, "");
  std::map<std::string, std::string> versions;
  std::istringstream lines(result.stdout_bytes);
  for (std::string name, version; lines >> name >> version;) versions[name] = version;
  // Debian's packages: present, at whatever version bookworm has.
  for (const char* debian : {"numpy", "pandas", "openpyxl", "pytest"}) {
    EXPECT_FALSE(versions[debian].empty()) << debian << ": " << result.stdout_bytes;
  }
  // The wheels: exactly what requirements.txt pins.
  std::map<std::string, std::string> pins = PinnedWheels();
  ASSERT_EQ(pins.size(), 5u) << PLIMSOLL_DATA_REQUIREMENTS;
  for (const auto& [name, version] : pins) EXPECT_EQ(versions[name], version) << name;
}

TEST_P(DataImageTest, TheNumbersAreRight) {
  Result result = RunPython(
      "import numpy as np\n"
      "from scipy import integrate, optimize\n"
      "from sklearn.linear_model import LinearRegression\n"
      "a = np.array([[3.0, 1.0], [1.0, 2.0]])\n"
      "print(np.round(np.linalg.solve(a, [9.0, 8.0]), 6).tolist())\n"  // OpenBLAS/LAPACK
      "print(round(integrate.quad(np.sin, 0, np.pi)[0], 9))\n"
      "print(round(optimize.brentq(lambda x: x * x - 2, 0, 2), 9))\n"
      "x = np.arange(10.0).reshape(-1, 1)\n"
      "model = LinearRegression().fit(x, 3 * x.ravel() + 1)\n"
      "print(round(model.coef_[0], 9), round(model.intercept_, 9))\n");
  ASSERT_EQ(result.exit_code, 0) << result.stderr_bytes;
  EXPECT_EQ(result.stdout_bytes, "[2.0, 3.0]\n2.0\n1.414213562\n3.0 1.0\n");
}

// Big-endian u32 at `at` of `bytes` (a PNG's IHDR width is at 16, its height at 20).
uint32_t BigEndian32(const std::string& bytes, size_t at) {
  return (uint32_t(uint8_t(bytes[at])) << 24) | (uint32_t(uint8_t(bytes[at + 1])) << 16) |
         (uint32_t(uint8_t(bytes[at + 2])) << 8) | uint32_t(uint8_t(bytes[at + 3]));
}

// A PNG of `width` x `height` pixels, by its own header.
void ExpectPng(const std::string& png, uint32_t width, uint32_t height) {
  ASSERT_GE(png.size(), 24u);
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_EQ(BigEndian32(png, 16), width);
  EXPECT_EQ(BigEndian32(png, 20), height);
}

TEST_P(DataImageTest, MatplotlibDrawsAPngWithAggWithoutADisplay) {
  Result result =
      RunProject(ProjectPayload{{{"chart.py",
                                  "import matplotlib, matplotlib.pyplot as plt\n"
                                  "fig, ax = plt.subplots(figsize=(4, 3), dpi=50)\n"
                                  "print(matplotlib.get_backend(), type(fig.canvas).__name__)\n"
                                  "ax.plot([0, 1, 2], [0, 1, 4]); ax.set_title('chart')\n"
                                  "fig.savefig('chart.png'); plt.close(fig)\n"}},
                                {{"python3", "chart.py"}},
                                {"chart.png"}});
  ASSERT_EQ(result.exit_code, 0) << result.stderr_bytes;
  // The displays hook's backend (image/variants/data/python), which draws with Agg.
  EXPECT_EQ(result.stdout_bytes, "module://plimsoll_display_backend FigureCanvasAgg\n");
  EXPECT_EQ(result.stderr_bytes, "") << "warnings (a font cache or a display?)";
  ASSERT_EQ(result.artifacts.size(), 1u);
  ExpectPng(result.artifacts[0].content, 200, 150);  // 4 x 3 inches at 50 dpi
  EXPECT_TRUE(result.displays.empty()) << "a closed figure is not a display";
}

// Issue 18's test: pandas plots through matplotlib, the code shows the figure, and it comes back
// as a display whose header and size check out; the host, not the guest, measured it.
TEST_P(DataImageTest, AShownFigureComesBackAsAPngDisplay) {
  Result result = RunPython(
      "import pandas as pd, matplotlib.pyplot as plt\n"
      "frame = pd.DataFrame({'x': [0, 1, 2, 3], 'y': [0, 1, 4, 9]})\n"
      "figure, axes = plt.subplots(figsize=(4, 3), dpi=50)\n"
      "frame.plot(x='x', y='y', ax=axes)\n"
      "plt.show()\n"
      "print('shown')\n");
  ASSERT_EQ(result.exit_code, 0) << result.stderr_bytes;
  EXPECT_EQ(result.stdout_bytes, "shown\n");
  EXPECT_EQ(result.stderr_bytes, "");
  ASSERT_EQ(result.displays.size(), 1u) << "shown once, closed by show(): not saved again at exit";
  const Display& display = result.displays[0];
  EXPECT_EQ(display.mime, "image/png");
  ExpectPng(display.data, 200, 150);
  EXPECT_EQ(display.width, 200);
  EXPECT_EQ(display.height, 150);
  EXPECT_FALSE(result.displays_truncated);
}

TEST_P(DataImageTest, FiguresLeftOpenComeBackInOrderAndAreCapped) {
  Result result = RunPython(
      "import matplotlib.pyplot as plt\n"
      "for n in range(1, 21):\n"
      "    plt.figure(figsize=(n, 1), dpi=10)\n");
  ASSERT_EQ(result.exit_code, 0) << result.stderr_bytes;
  ASSERT_EQ(result.displays.size(), kMaxDisplays);
  for (size_t i = 0; i < result.displays.size(); ++i) {
    EXPECT_EQ(result.displays[i].mime, "image/png");
    EXPECT_EQ(result.displays[i].width, static_cast<int64_t>(10 * (i + 1))) << i;
    EXPECT_EQ(result.displays[i].height, 10);
  }
  EXPECT_TRUE(result.displays_truncated) << "20 figures were left open";
}

TEST_P(DataImageTest, ADisplayedDataFrameIsHtmlAndPlainText) {
  Result result = RunPython(
      "import pandas as pd\n"
      "frame = pd.DataFrame({'city': ['Oslo', 'Lima'], 'rain_mm': [763, 16]})\n"
      "display(frame)\n"
      "print(repr(frame))\n");
  ASSERT_EQ(result.exit_code, 0) << result.stderr_bytes;
  ASSERT_EQ(result.displays.size(), 2u);
  EXPECT_EQ(result.displays[0].mime, "text/html");
  EXPECT_NE(result.displays[0].data.find("<table"), std::string::npos);
  EXPECT_NE(result.displays[0].data.find("<td>Oslo</td>"), std::string::npos);
  EXPECT_EQ(result.displays[1].mime, "text/plain");
  EXPECT_EQ(result.displays[1].data + "\n", result.stdout_bytes);
  EXPECT_EQ(result.displays[0].width, 0);
}

TEST_P(DataImageTest, ASessionCellsFiguresAreThatCellsDisplays) {
  if (!description().capabilities.sessions) GTEST_SKIP() << "skipped: no sessions here";
  auto session = sandbox().OpenSession(SessionOptions{});
  ASSERT_TRUE(session.ok()) << session.error().ToString();
  auto cell = [&](const std::string& code) {
    Request request;
    request.timeout_ms = kDataTimeoutMs;
    request.cell = CellPayload{"python", code};
    auto result = (*session)->Run(request);
    EXPECT_TRUE(result.ok()) << result.error().ToString();
    return result.ok() ? *result : Result{};
  };
  Result drew = cell("import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nNone");
  EXPECT_EQ(drew.exit_code, 0) << drew.stderr_bytes;
  ASSERT_EQ(drew.displays.size(), 1u) << "a figure left open at the end of a cell";
  EXPECT_EQ(drew.displays[0].mime, "image/png");
  EXPECT_GT(drew.displays[0].width, 0);
  Result next = cell("len(plt.get_fignums())");
  EXPECT_EQ(next.exit_code, 0) << next.stderr_bytes;
  ASSERT_TRUE(next.cell.has_value());
  EXPECT_EQ(next.cell->value, "0") << "the cell's figure was closed when it was shown";
  EXPECT_TRUE(next.displays.empty()) << "the previous cell's displays came back again";
}

TEST_P(DataImageTest, PandasRoundTripsParquetAndExcel) {
  Result result = RunPython(
      "import pandas as pd\n"
      "df = pd.DataFrame({'n': [1, 2, 3], 'name': ['a', 'b', 'c'], 'x': [0.5, 1.5, 2.5]})\n"
      "df.to_parquet('/tmp/t.parquet')\n"
      "print(pd.read_parquet('/tmp/t.parquet').equals(df))\n"
      "df.to_excel('/tmp/t.xlsx', index=False)\n"
      "print(pd.read_excel('/tmp/t.xlsx').equals(df))\n"
      "print(df.x.sum())\n");
  ASSERT_EQ(result.exit_code, 0) << result.stderr_bytes;
  EXPECT_EQ(result.stdout_bytes, "True\nTrue\n4.5\n");
}

TEST_P(DataImageTest, PytestRunsAProjectsTests) {
  ProjectPayload project{
      {{"calc.py", "def add(a, b):\n    return a + b\n"},
       {"test_calc.py",
        "from calc import add\n"
        "def test_add():\n    assert add(2, 3) == 5\n"
        "def test_wrong():\n    assert add(2, 2) == 5\n"}},
      {{"python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_calc.py"}},
      {}};
  Result result = RunProject(project);
  EXPECT_EQ(result.exit_code, 1) << "pytest's exit code for failed tests";
  EXPECT_NE(result.stdout_bytes.find("1 failed, 1 passed"), std::string::npos)
      << result.stdout_bytes << result.stderr_bytes;
}

TEST_P(DataImageTest, NodeRequiresTheBakedInNpmPackageFromAnyDirectory) {
  Result result = RunProject(ProjectPayload{
      {{"deep/dir/parse.js",
        "const Papa = require('papaparse');\n"
        "console.log(JSON.stringify(Papa.parse('a,b\\n1,2', {header: true}).data));\n"}},
      {{"node", "deep/dir/parse.js"}},
      {}});
  ASSERT_EQ(result.exit_code, 0) << result.stderr_bytes;
  EXPECT_EQ(result.stdout_bytes, "[{\"a\":\"1\",\"b\":\"2\"}]\n");
}

TEST_P(DataImageTest, TheGuestCannotInstallPackages) {
  // Everything was installed at image-build time; at run time the tree is read-only and there
  // is no network, so pip fails and the stack is unchanged.
  Result result = RunPython(
      "import subprocess, sys\n"
      "r = subprocess.run([sys.executable, '-c', 'import pathlib; "
      "pathlib.Path(\"/usr/local/lib/python3.11/dist-packages/x.pth\").write_text(\"\")'],\n"
      "                   capture_output=True, text=True)\n"
      "print(r.returncode != 0, 'Read-only file system' in r.stderr or 'Permission' in "
      "r.stderr)\n");
  ASSERT_EQ(result.exit_code, 0) << result.stderr_bytes;
  EXPECT_EQ(result.stdout_bytes, "True True\n");
}

INSTANTIATE_TEST_SUITE_P(Providers, DataImageTest, ::testing::ValuesIn(ProvidersUnderTest()));
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(DataImageTest);

}  // namespace
}  // namespace plimsoll::conformance
