package plimsoll_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	plimsoll "plimsoll.dev/client"
)

type readmeExample struct {
	line   int
	code   string
	output string
}

// readmeExamples returns each ```go block of README.md with the ```text block that follows it.
func readmeExamples(t *testing.T) []readmeExample {
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	var examples []readmeExample
	for i := 0; i < len(lines); i++ {
		if lines[i] != "```go" {
			continue
		}
		start := i + 1
		block := func(from int) (string, int) {
			var b strings.Builder
			j := from
			for ; j < len(lines) && lines[j] != "```"; j++ {
				b.WriteString(lines[j])
				b.WriteString("\n")
			}
			if j == len(lines) {
				t.Fatalf("README.md:%d: an unterminated block", from)
			}
			return b.String(), j
		}
		code, end := block(start)
		j := end + 1
		for j < len(lines) && lines[j] != "```text" && lines[j] != "```go" {
			j++
		}
		if j == len(lines) || lines[j] != "```text" {
			t.Fatalf("README.md:%d: a go block without the ```text block of what it prints", start)
		}
		output, after := block(j + 1)
		examples = append(examples, readmeExample{line: start, code: code, output: output})
		i = after
	}
	return examples
}

func goTool() string {
	if g := os.Getenv("PLIMSOLL_GO"); g != "" {
		return g
	}
	if g, err := exec.LookPath("go"); err == nil {
		return g
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

// TestReadmeExamples runs every go block of README.md with `go run` against the embedded daemon
// and checks it exits 0 and prints exactly the text block after it.
func TestReadmeExamples(t *testing.T) {
	examples := readmeExamples(t)
	if len(examples) < 4 {
		t.Fatalf("README.md has %d go examples; the first run, a session, a refusal and a pool are expected", len(examples))
	}
	url := plimsoll.HarnessEnv(t, "PLIMSOLL_TEST_EMBEDDED_URL")
	here, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, ex := range examples {
		dir := t.TempDir()
		gomod := "module readme.example\n\ngo 1.22\n\nrequire plimsoll.dev/client v0.0.0\n\nreplace plimsoll.dev/client => " + here + "\n"
		if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(ex.code), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(goTool(), "run", ".")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PLIMSOLL_URL="+url, "GOFLAGS=-mod=mod", "GOPROXY=off",
			"GOWORK=off", "PLIMSOLL_TOKEN=")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		started := time.Now()
		if err := cmd.Run(); err != nil {
			t.Errorf("README.md:%d: go run: %v\n%s", ex.line, err, stderr.String())
			continue
		}
		if stdout.String() != ex.output {
			t.Errorf("README.md:%d prints\n%s\nwhile the README says\n%s", ex.line, stdout.String(), ex.output)
		}
		t.Logf("README.md:%d ran in %v", ex.line, time.Since(started).Round(time.Millisecond))
	}
}
