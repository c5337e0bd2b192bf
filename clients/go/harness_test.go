package plimsoll

import (
	"os"
	"path/filepath"
	"testing"
)

// harnessEnv returns the harness's variable, or skips the test when it is absent (and fails it
// instead when run-tests set PLIMSOLL_CLIENT_REQUIRE_HARNESS=1).
func harnessEnv(t testing.TB, name string) string {
	t.Helper()
	value, ok := os.LookupEnv(name)
	if !ok || value == "" {
		if os.Getenv("PLIMSOLL_CLIENT_REQUIRE_HARNESS") == "1" {
			t.Fatalf("%s is not set (tests/clients/harness.py sets it)", name)
		}
		t.Skipf("skipped: %s is not set (run under tests/clients/harness.py)", name)
	}
	return value
}

// testdataFile finds a repository file: from its variable, else from PLIMSOLL_REPO, else from the
// source tree this package sits in.
func testdataFile(t testing.TB, variable, relative string) string {
	t.Helper()
	if value := os.Getenv(variable); value != "" {
		return value
	}
	candidates := []string{}
	if repo := os.Getenv("PLIMSOLL_REPO"); repo != "" {
		candidates = append(candidates, filepath.Join(repo, relative))
	}
	candidates = append(candidates, filepath.Join("..", "..", relative))
	for _, c := range candidates {
		if _, err := os.Stat(c); err == nil {
			return c
		}
	}
	return harnessEnv(t, variable)
}

// HarnessEnv is harnessEnv for the external test package (plimsoll_test), the way export_test.go
// files hand a package's internals to its external tests.
func HarnessEnv(t testing.TB, name string) string {
	t.Helper()
	return harnessEnv(t, name)
}
