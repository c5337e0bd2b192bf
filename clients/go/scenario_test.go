package plimsoll_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"plimsoll.dev/client"
)

// The conformance scenarios of testdata/clients/scenarios.json (format: tests/clients/README.md),
// run against the daemons and the adversarial proxy of tests/clients/harness.py.

type scenarioFile struct {
	Format    string            `json:"format"`
	Constants map[string]string `json:"constants"`
	Scenarios []scenario        `json:"scenarios"`
}

type scenario struct {
	Name   string         `json:"name"`
	About  string         `json:"about"`
	Target string         `json:"target"`
	Needs  string         `json:"needs"`
	Client map[string]any `json:"client"`
	Steps  []scenarioStep `json:"steps"`
}

type scenarioStep struct {
	Op     string                     `json:"op"`
	Args   map[string]any             `json:"args"`
	Expect map[string]json.RawMessage `json:"expect"`
	MaxMS  *float64                   `json:"max_ms"`
}

func lookupEnv(name string) (string, bool) {
	v, ok := os.LookupEnv(name)
	return v, ok && v != ""
}

// requireLinux returns the variable (the linux daemon's URL or its proxy's), or skips the test
// when this host cannot run the linux provider (PLIMSOLL_TEST_LINUX_SKIP names what it lacks);
// absent for any other reason, it is requireEnv's failure.
func requireLinux(t *testing.T, name string) string {
	t.Helper()
	if v, ok := lookupEnv(name); ok {
		return v
	}
	if reason := os.Getenv("PLIMSOLL_TEST_LINUX_SKIP"); reason != "" {
		t.Skipf("skipped: %s: %s", t.Name(), reason)
	}
	return plimsoll.HarnessEnv(t, name)
}

func TestScenarios(t *testing.T) {
	path := plimsoll.HarnessEnv(t, "PLIMSOLL_TEST_SCENARIOS")
	plimsoll.HarnessEnv(t, "PLIMSOLL_TEST_EMBEDDED_URL")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var file scenarioFile
	decoder := json.NewDecoder(strings.NewReader(string(data)))
	decoder.UseNumber()
	if err := decoder.Decode(&file); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if file.Format != "plimsoll.client-scenarios.v1" {
		t.Fatalf("%s: format %q", path, file.Format)
	}
	if len(file.Scenarios) == 0 {
		t.Fatal("no scenarios")
	}
	names := map[string]bool{}
	for _, sc := range file.Scenarios {
		sc := sc
		if names[sc.Name] {
			t.Errorf("scenario %q is listed twice", sc.Name)
		}
		names[sc.Name] = true
		t.Run(sc.Name, func(t *testing.T) { runScenario(t, &file, &sc) })
	}
}

// scenarioClient makes the scenario's client; an error making it (a URL refused before any
// connection) is what every step then reports.
func scenarioClient(t *testing.T, file *scenarioFile, sc *scenario) (*plimsoll.Client, error) {
	t.Helper()
	if sc.Needs == "linux" {
		requireLinux(t, "PLIMSOLL_TEST_LINUX_URL")
	}
	if sc.Needs != "" && sc.Needs != "linux" {
		t.Fatalf("unknown needs %q", sc.Needs)
	}
	opts := []plimsoll.Option{}
	target, mode, _ := strings.Cut(sc.Target, ":")
	var url string
	switch target {
	case "embedded":
		url = plimsoll.HarnessEnv(t, "PLIMSOLL_TEST_EMBEDDED_URL")
	case "embedded_unix":
		url = plimsoll.HarnessEnv(t, "PLIMSOLL_TEST_EMBEDDED_UNIX")
	case "linux":
		url = requireLinux(t, "PLIMSOLL_TEST_LINUX_URL")
	case "tls":
		url = plimsoll.HarnessEnv(t, "PLIMSOLL_TEST_TLS_URL")
		opts = append(opts, plimsoll.WithCAFile(plimsoll.HarnessEnv(t, "PLIMSOLL_TEST_TLS_CA")))
	case "unreachable":
		url = plimsoll.HarnessEnv(t, "PLIMSOLL_TEST_UNREACHABLE_URL")
	case "non_loopback":
		url = file.Constants["non_loopback_url"]
		if url == "" {
			t.Fatal("the scenario file has no constants.non_loopback_url")
		}
	case "adversary":
		url = plimsoll.HarnessEnv(t, "PLIMSOLL_TEST_ADVERSARY_URL") + "/" + mode + "/" + sc.Name
	case "adversary_linux":
		url = requireLinux(t, "PLIMSOLL_TEST_ADVERSARY_LINUX_URL") + "/" + mode + "/" + sc.Name
	default:
		t.Fatalf("unknown target %q", sc.Target)
	}
	if (target == "adversary" || target == "adversary_linux") && mode == "" {
		t.Fatalf("target %q names no mode", sc.Target)
	}
	token := ""
	for key, value := range sc.Client {
		switch key {
		case "token":
			switch value {
			case "tls":
				token = plimsoll.HarnessEnv(t, "PLIMSOLL_TEST_TLS_TOKEN")
			case "wrong":
				token = strings.Repeat("0123456789abcdef", 4)
			default:
				t.Fatalf("unknown client token %v", value)
			}
		case "max_response_bytes":
			n, err := value.(json.Number).Int64()
			if err != nil {
				t.Fatalf("client.max_response_bytes: %v", err)
			}
			opts = append(opts, plimsoll.WithMaxResponseBytes(n))
		case "allow_cleartext":
			if value == true {
				opts = append(opts, plimsoll.WithAllowCleartext())
			}
		default:
			t.Fatalf("unknown client option %q", key)
		}
	}
	opts = append(opts, plimsoll.WithToken(token))
	c, err := plimsoll.New(url, opts...)
	if err != nil {
		return nil, err
	}
	t.Cleanup(c.Close)
	return c, nil
}

type runner struct {
	t       *testing.T
	client  *plimsoll.Client
	newErr  error
	session *plimsoll.Session
}

func runScenario(t *testing.T, file *scenarioFile, sc *scenario) {
	r := &runner{t: t}
	r.client, r.newErr = scenarioClient(t, file, sc)
	defer func() {
		if r.session != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, _ = r.session.Close(ctx) // best effort: the scenario may have broken the chain
		}
	}()
	if len(sc.Steps) == 0 {
		t.Fatal("a scenario without steps")
	}
	for i, step := range sc.Steps {
		label := fmt.Sprintf("step %d (%s)", i+1, step.Op)
		ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
		started := time.Now()
		value, err := r.do(ctx, label, &step)
		elapsed := time.Since(started)
		cancel()
		if step.MaxMS != nil && elapsed > time.Duration(*step.MaxMS*float64(time.Millisecond)) {
			t.Errorf("%s took %v, more than max_ms %v", label, elapsed, *step.MaxMS)
		}
		if problems := r.expect(label, &step, value, err); len(problems) > 0 {
			t.Fatalf("%s: %s", label, strings.Join(problems, "; "))
		}
	}
}

// args reads a step's arguments, refusing any it does not know.
type args struct {
	t     *testing.T
	label string
	m     map[string]any
	used  map[string]bool
}

func (a *args) has(key string) bool { a.used[key] = true; _, ok := a.m[key]; return ok }

func (a *args) str(key string) string {
	a.used[key] = true
	v, ok := a.m[key]
	if !ok || v == nil {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		a.t.Fatalf("%s: args.%s must be a string", a.label, key)
	}
	return s
}

func (a *args) integer(key string) int64 {
	a.used[key] = true
	v, ok := a.m[key]
	if !ok || v == nil {
		return 0
	}
	n, ok := v.(json.Number)
	if !ok {
		a.t.Fatalf("%s: args.%s must be a number", a.label, key)
	}
	i, err := n.Int64()
	if err != nil {
		a.t.Fatalf("%s: args.%s: %v", a.label, key, err)
	}
	return i
}

func (a *args) list(key string) []any {
	a.used[key] = true
	v, ok := a.m[key]
	if !ok || v == nil {
		return nil
	}
	l, ok := v.([]any)
	if !ok {
		a.t.Fatalf("%s: args.%s must be a list", a.label, key)
	}
	return l
}

func (a *args) strings(key string) []string {
	out := []string{}
	for _, v := range a.list(key) {
		s, ok := v.(string)
		if !ok {
			a.t.Fatalf("%s: args.%s holds a non-string", a.label, key)
		}
		out = append(out, s)
	}
	return out
}

func (a *args) files(key string) []plimsoll.File {
	files := []plimsoll.File{}
	for _, v := range a.list(key) {
		m, ok := v.(map[string]any)
		if !ok {
			a.t.Fatalf("%s: args.%s holds a non-object", a.label, key)
		}
		f := plimsoll.File{}
		for k, x := range m {
			s, _ := x.(string)
			switch k {
			case "path":
				f.Path = s
			case "content":
				f.Content = []byte(s)
			case "content_base64":
				b, err := base64.StdEncoding.DecodeString(s)
				if err != nil {
					a.t.Fatalf("%s: content_base64: %v", a.label, err)
				}
				f.Content = b
			default:
				a.t.Fatalf("%s: unknown file field %q", a.label, k)
			}
		}
		files = append(files, f)
	}
	return files
}

func (a *args) done() {
	for k := range a.m {
		if !a.used[k] {
			a.t.Fatalf("%s: unknown argument %q", a.label, k)
		}
	}
}

func (a *args) runOptions() []plimsoll.RunOption {
	opts := []plimsoll.RunOption{}
	if s := a.str("minimum_isolation"); s != "" {
		opts = append(opts, plimsoll.MinimumIsolation(s))
	}
	if n := a.integer("timeout_ms"); n != 0 {
		opts = append(opts, plimsoll.Timeout(time.Duration(n)*time.Millisecond))
	}
	if s := a.str("environment"); s != "" {
		opts = append(opts, plimsoll.Environment(s))
	}
	if s := a.str("grant_profile"); s != "" {
		opts = append(opts, plimsoll.GrantProfile(s))
	}
	if s := a.str("trace_id"); s != "" {
		opts = append(opts, plimsoll.TraceID(s))
	}
	return opts
}

func (r *runner) needSession(label string) *plimsoll.Session {
	if r.session == nil {
		r.t.Fatalf("%s: no open session (an open_session step must come first)", label)
	}
	return r.session
}

func (r *runner) do(ctx context.Context, label string, step *scenarioStep) (any, error) {
	a := &args{t: r.t, label: label, m: step.Args, used: map[string]bool{}}
	if a.m == nil {
		a.m = map[string]any{}
	}
	var value any
	var err error
	if r.newErr != nil {
		return nil, r.newErr
	}
	switch step.Op {
	case "describe":
		a.done()
		value, err = r.client.Describe(ctx)
	case "run_javascript", "run_python":
		code := a.str("code")
		opts := a.runOptions()
		a.done()
		if step.Op == "run_javascript" {
			value, err = r.client.RunJavascript(ctx, code, opts...)
		} else {
			value, err = r.client.RunPython(ctx, code, opts...)
		}
	case "run_project":
		project := plimsoll.Project{Files: a.files("files"), Artifacts: a.strings("artifacts")}
		for _, s := range a.list("steps") {
			argv := []string{}
			l, _ := s.([]any)
			for _, x := range l {
				str, _ := x.(string)
				argv = append(argv, str)
			}
			project.Steps = append(project.Steps, argv)
		}
		opts := a.runOptions()
		a.done()
		value, err = r.client.RunProject(ctx, project, opts...)
	case "open_session":
		options := plimsoll.SessionOptions{MinimumIsolation: a.str("minimum_isolation"),
			Lifetime:    time.Duration(a.integer("lifetime_ms")) * time.Millisecond,
			IdleTimeout: time.Duration(a.integer("idle_timeout_ms")) * time.Millisecond}
		a.done()
		var s *plimsoll.Session
		s, err = r.client.OpenSession(ctx, options)
		if err == nil {
			r.session = s
		}
		value = s
	case "run_cell":
		language, code := a.str("language"), a.str("code")
		opts := a.runOptions()
		a.done()
		value, err = r.needSession(label).RunCell(ctx, language, code, opts...)
	case "session_run_javascript":
		code := a.str("code")
		opts := a.runOptions()
		a.done()
		value, err = r.needSession(label).RunJavascript(ctx, code, opts...)
	case "session_upload":
		files := a.files("files")
		a.done()
		value, err = r.needSession(label).Upload(ctx, files)
	case "session_download":
		paths := a.strings("paths")
		a.done()
		value, err = r.needSession(label).Download(ctx, paths)
	case "session_info":
		a.done()
		value, err = r.needSession(label).Info(ctx)
	case "close_session":
		a.done()
		value, err = r.needSession(label).Close(ctx)
		if err == nil {
			r.session = nil
		}
	default:
		r.t.Fatalf("%s: unknown op %q", label, step.Op)
	}
	return value, err
}

// expect compares what a step returned with its expectation; it returns the differences.
func (r *runner) expect(label string, step *scenarioStep, value any, err error) []string {
	if len(step.Expect) != 1 {
		r.t.Fatalf("%s: expect must have exactly one key, has %d", label, len(step.Expect))
	}
	var problems []string
	differ := func(field string, got, want any) {
		problems = append(problems, fmt.Sprintf("%s = %#v, want %#v", field, got, want))
	}
	for key, raw := range step.Expect {
		if key != "error" && err != nil {
			return []string{fmt.Sprintf("expected %s, got the error %v", key, err)}
		}
		want := decodeExpect(r.t, label, raw)
		switch key {
		case "result":
			res, ok := value.(*plimsoll.Result)
			if !ok {
				r.t.Fatalf("%s: expect.result on an op that returns no result", label)
			}
			fields, _ := want.(map[string]any)
			for _, f := range sortedKeys(fields) {
				if got, ok := resultField(res, f); !ok {
					r.t.Fatalf("%s: unknown result field %q", label, f)
				} else if f == "stdout_startswith" {
					if !strings.HasPrefix(res.StdoutText(), fields[f].(string)) {
						differ("stdout", res.StdoutText(), fields[f])
					}
				} else if !equalJSON(got, fields[f]) {
					differ(f, got, fields[f])
				}
			}
		case "describe":
			d, ok := value.(*plimsoll.Description)
			if !ok {
				r.t.Fatalf("%s: expect.describe on an op other than describe", label)
			}
			fields, _ := want.(map[string]any)
			for _, f := range sortedKeys(fields) {
				var got any
				switch f {
				case "provider":
					got = d.Provider
				case "tier":
					got = d.Tier
				case "protocol":
					got = d.Protocol
				default:
					r.t.Fatalf("%s: unknown describe field %q", label, f)
				}
				if !equalJSON(got, fields[f]) {
					differ(f, got, fields[f])
				}
			}
		case "session":
			// open_session answers the session, session_info its state.
			var provider, isolation string
			switch s := value.(type) {
			case *plimsoll.Session:
				provider, isolation = s.Provider, s.Isolation
			case *plimsoll.SessionInfo:
				provider, isolation = s.Provider, s.Isolation
			default:
				r.t.Fatalf("%s: expect.session on an op other than open_session or session_info", label)
			}
			fields, _ := want.(map[string]any)
			for _, f := range sortedKeys(fields) {
				var got any
				switch f {
				case "provider":
					got = provider
				case "isolation":
					got = isolation
				default:
					r.t.Fatalf("%s: unknown session field %q", label, f)
				}
				if !equalJSON(got, fields[f]) {
					differ(f, got, fields[f])
				}
			}
		case "closed":
			c, ok := value.(*plimsoll.SessionClosed)
			if !ok {
				r.t.Fatalf("%s: expect.closed on an op other than close_session", label)
			}
			fields, _ := want.(map[string]any)
			for _, f := range sortedKeys(fields) {
				var got any
				switch f {
				case "ended":
					got = c.Ended
				case "calls":
					got = c.Calls
				default:
					r.t.Fatalf("%s: unknown closed field %q", label, f)
				}
				if !equalJSON(got, fields[f]) {
					differ(f, got, fields[f])
				}
			}
		case "downloaded":
			files, ok := value.([]plimsoll.Artifact)
			if !ok {
				r.t.Fatalf("%s: expect.downloaded on an op other than session_download", label)
			}
			got := []any{}
			for _, f := range files {
				got = append(got, map[string]any{"path": f.Path, "content": f.ContentText()})
			}
			if !equalJSON(got, want) {
				differ("downloaded", got, want)
			}
		case "error":
			if err == nil {
				return []string{fmt.Sprintf("expected an error, got %v", describeValue(value))}
			}
			var pe *plimsoll.Error
			if !errors.As(err, &pe) {
				return []string{fmt.Sprintf("the error is not a *plimsoll.Error: %v", err)}
			}
			fields, _ := want.(map[string]any)
			for _, f := range sortedKeys(fields) {
				var got any
				switch f {
				case "class":
					switch {
					case errors.Is(err, plimsoll.ErrRefused):
						got = "refused"
					case errors.Is(err, plimsoll.ErrDataLoss):
						got = "data_loss"
					default:
						got = "error"
					}
				case "code":
					got = pe.Code
				case "not_dispatched":
					if pe.NotDispatched == "" {
						got = nil
					} else {
						got = string(pe.NotDispatched)
					}
				case "retryable":
					got = pe.IsRetryable()
				case "ran":
					if pe.Ran() == plimsoll.RanNo {
						got = false
					} else {
						got = pe.Ran().String()
					}
				default:
					r.t.Fatalf("%s: unknown error field %q", label, f)
				}
				if !equalJSON(got, fields[f]) {
					differ("error."+f, got, fields[f])
				}
			}
			if len(problems) > 0 {
				problems = append(problems, "the error: "+err.Error())
			}
		default:
			r.t.Fatalf("%s: unknown expect key %q", label, key)
		}
	}
	return problems
}

func describeValue(v any) string {
	if res, ok := v.(*plimsoll.Result); ok {
		return fmt.Sprintf("a result (exit %d, stdout %q, %s)", res.ExitCode, res.StdoutText(), res.Isolation)
	}
	return fmt.Sprintf("%v", v)
}

func resultField(res *plimsoll.Result, field string) (any, bool) {
	switch field {
	case "exit_code":
		return res.ExitCode, true
	case "timed_out":
		return res.TimedOut, true
	case "killed_for_memory":
		return res.KilledForMemory(), true
	case "stdout":
		return res.StdoutText(), true
	case "stderr":
		return res.StderrText(), true
	case "stdout_truncated":
		return res.StdoutTruncated, true
	case "stderr_truncated":
		return res.StderrTruncated, true
	case "isolation":
		return res.Isolation, true
	case "provider":
		return res.Provider, true
	case "kind":
		return res.Kind, true
	case "outcome":
		return res.Outcome, true
	case "value":
		if !res.HasValue {
			return nil, true
		}
		return res.ValueText(), true
	case "value_truncated":
		return res.ValueTruncated, true
	case "interpreter_started":
		return res.InterpreterStarted, true
	case "state_kept":
		return res.StateKept, true
	case "ran":
		return res.Ran() == plimsoll.RanYes, true
	case "stdout_startswith":
		return res.StdoutText(), true
	case "stdout_length":
		return len(res.Stdout), true
	case "steps":
		steps := []any{}
		for _, s := range res.Steps {
			steps = append(steps, map[string]any{"exit_code": s.ExitCode, "stdout": s.StdoutText()})
		}
		return steps, true
	case "artifacts":
		artifacts := []any{}
		for _, a := range res.Artifacts {
			artifacts = append(artifacts, map[string]any{"path": a.Path, "content": a.ContentText()})
		}
		return artifacts, true
	}
	return nil, false
}

func decodeExpect(t *testing.T, label string, raw json.RawMessage) any {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s: expect: %v", label, err)
	}
	return v
}

// equalJSON compares a Go value with a JSON-decoded one (numbers as float64): both are written
// as JSON and read back.
func equalJSON(got, want any) bool {
	g, err := json.Marshal(got)
	if err != nil {
		return false
	}
	var gv any
	if err := json.Unmarshal(g, &gv); err != nil {
		return false
	}
	w, _ := json.Marshal(want)
	var wv any
	_ = json.Unmarshal(w, &wv)
	return reflect.DeepEqual(gv, wv)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
