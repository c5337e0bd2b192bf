package plimsoll

import (
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"
)

// Protocol is the wire protocol this client speaks; every request carries it.
const Protocol = 1

// Tier names, weakest first. None runs nothing; Unknown meets no floor.
const (
	TierNone      = "none"
	TierUnknown   = "unknown"
	TierProcess   = "process"
	TierContainer = "container"
	TierKernel    = "kernel"
	TierVM        = "vm"
)

// tierRank orders the four tiers; none, unknown and any other name rank 0 (they meet no floor).
func tierRank(tier string) int {
	switch tier {
	case TierProcess:
		return 1
	case TierContainer:
		return 2
	case TierKernel:
		return 3
	case TierVM:
		return 4
	}
	return 0
}

// TierMeets reports whether tier meets the floor (an empty floor is met by any tier; an unknown
// floor name by none).
func TierMeets(tier, floor string) bool {
	if floor == "" {
		return true
	}
	return tierRank(floor) > 0 && tierRank(tier) >= tierRank(floor)
}

// Request is one run request as it travels (docs/wire-format.md): exactly one payload.
// Code and file contents are bytes; a Go string may hold any bytes.
type Request struct {
	Protocol         int    // 0 sends Protocol (1)
	MinimumIsolation string // "", process, container, kernel, vm
	TimeoutMS        int64  // 0: the provider's default
	TraceID          string
	GrantProfile     string
	Environment      string // the exact environment identity required ("sha256:...")
	Image            string // the name of one of the daemon's images (SPEC §7); "": its default
	Javascript       *Code
	Python           *Code
	Project          *Project
	Cell             *Cell
}

// Code is a javascript or python payload.
type Code struct{ Code []byte }

// Cell is code for a session's kept interpreter of Language ("javascript" or "python").
type Cell struct {
	Language string
	Code     []byte
}

// Project is files, shell-free steps (argv lists) run in order, and artifact paths to bring back.
type Project struct {
	Files     []File
	Steps     [][]string
	Artifacts []string
}

// File is a file of a project (or a session's /work), its path relative to /work.
type File struct {
	Path    string
	Content []byte
}

// TextFile is a File holding text.
func TextFile(path, text string) File { return File{Path: path, Content: []byte(text)} }

// ContentText is the content as text.
func (f File) ContentText() string { return string(f.Content) }

func (r *Request) payloadKind() string {
	switch {
	case r.Javascript != nil:
		return "javascript"
	case r.Python != nil:
		return "python"
	case r.Project != nil:
		return "project"
	case r.Cell != nil:
		return "cell"
	}
	return ""
}

// marshal writes the request as the wire JSON. Text fields must be UTF-8 (they are JSON strings).
func (r *Request) marshal() ([]byte, error) {
	protocol := r.Protocol
	if protocol == 0 {
		protocol = Protocol
	}
	for name, s := range map[string]string{"minimum_isolation": r.MinimumIsolation,
		"trace_id": r.TraceID, "grant_profile": r.GrantProfile, "environment": r.Environment,
		"image": r.Image} {
		if !utf8.ValidString(s) {
			return nil, fmt.Errorf("%s is not valid UTF-8", name)
		}
	}
	b := make([]byte, 0, 128)
	b = append(b, `{"protocol":`...)
	b = strconv.AppendInt(b, int64(protocol), 10)
	if r.MinimumIsolation != "" {
		b = append(b, `,"minimum_isolation":`...)
		b = appendJSONString(b, r.MinimumIsolation)
	}
	if r.TimeoutMS != 0 {
		b = append(b, `,"timeout_ms":`...)
		b = strconv.AppendInt(b, r.TimeoutMS, 10)
	}
	if r.TraceID != "" {
		b = append(b, `,"trace_id":`...)
		b = appendJSONString(b, r.TraceID)
	}
	if r.GrantProfile != "" {
		b = append(b, `,"grant_profile":`...)
		b = appendJSONString(b, r.GrantProfile)
	}
	if r.Environment != "" {
		b = append(b, `,"environment":`...)
		b = appendJSONString(b, r.Environment)
	}
	if r.Image != "" {
		b = append(b, `,"image":`...)
		b = appendJSONString(b, r.Image)
	}
	if r.Javascript != nil {
		b = append(b, `,"javascript":{"code":`...)
		b = appendJSONBytes(b, r.Javascript.Code)
		b = append(b, '}')
	}
	if r.Python != nil {
		b = append(b, `,"python":{"code":`...)
		b = appendJSONBytes(b, r.Python.Code)
		b = append(b, '}')
	}
	if p := r.Project; p != nil {
		b = append(b, `,"project":{"files":[`...)
		for i, f := range p.Files {
			if !utf8.ValidString(f.Path) {
				return nil, fmt.Errorf("project.files[%d].path is not valid UTF-8", i)
			}
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"path":`...)
			b = appendJSONString(b, f.Path)
			b = append(b, `,"content":`...)
			b = appendJSONBytes(b, f.Content)
			b = append(b, '}')
		}
		b = append(b, `],"steps":[`...)
		for i, step := range p.Steps {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '[')
			for j, arg := range step {
				if !utf8.ValidString(arg) {
					return nil, fmt.Errorf("project.steps[%d][%d] is not valid UTF-8", i, j)
				}
				if j > 0 {
					b = append(b, ',')
				}
				b = appendJSONString(b, arg)
			}
			b = append(b, ']')
		}
		b = append(b, `],"artifacts":[`...)
		for i, a := range p.Artifacts {
			if !utf8.ValidString(a) {
				return nil, fmt.Errorf("project.artifacts[%d] is not valid UTF-8", i)
			}
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, a)
		}
		b = append(b, "]}"...)
	}
	if c := r.Cell; c != nil {
		if !utf8.ValidString(c.Language) {
			return nil, fmt.Errorf("cell.language is not valid UTF-8")
		}
		b = append(b, `,"cell":{"language":`...)
		b = appendJSONString(b, c.Language)
		b = append(b, `,"code":`...)
		b = appendJSONBytes(b, c.Code)
		b = append(b, '}')
	}
	return append(b, '}'), nil
}

// Result is a checked answer: the run happened. A non-zero exit code is a result, never an error.
type Result struct {
	Provider        string
	Isolation       string // the tier the run actually got
	Environment     string
	Kind            string // javascript, python, project, cell
	ExitCode        int    // 124: timed out; 137: killed for memory
	TimedOut        bool
	Stdout          []byte
	Stderr          []byte
	StdoutTruncated bool
	StderrTruncated bool
	DurationMS      int64

	// Projects.
	Outcome   string // completed, setup_failed, timed_out, protocol_error; "" for other kinds
	Steps     []StepResult
	Artifacts []Artifact

	// Cells (Kind "cell").
	HasValue           bool   // the cell ended in an expression with a value
	Value              []byte // its printed form, as a REPL shows it
	ValueTruncated     bool
	InterpreterStarted bool // a fresh interpreter ran this cell: nothing was kept
	StateKept          bool // the interpreter lives on for the next cell

	Broker *Broker  // a granted run's broker summary
	Advice []Advice // advisor findings

	// Rich outputs (SPEC §7), in the order shown; nil when there are none.
	Displays          []Display
	DisplaysTruncated bool // the daemon's caps dropped some displays

	Record    Record
	RequestID string // the Plimsoll-Request-Id this answer echoed
	URL       string // the URL of the daemon that answered (which one, in a Pool)
}

// KilledForMemory reports exit code 137.
func (r *Result) KilledForMemory() bool { return r.ExitCode == 137 }

// StdoutText is stdout as text.
func (r *Result) StdoutText() string { return string(r.Stdout) }

// StderrText is stderr as text.
func (r *Result) StderrText() string { return string(r.Stderr) }

// ValueText is a cell's value as text ("" when it has none).
func (r *Result) ValueText() string { return string(r.Value) }

// Ran is always RanYes for a result.
func (r *Result) Ran() Ran { return RanYes }

// StepResult is one project step.
type StepResult struct {
	Command         []string
	ExitCode        int
	TimedOut        bool
	Stdout          []byte
	Stderr          []byte
	StdoutTruncated bool
	StderrTruncated bool
	DurationMS      int64
}

// StdoutText is the step's stdout as text.
func (s *StepResult) StdoutText() string { return string(s.Stdout) }

// StderrText is the step's stderr as text.
func (s *StepResult) StderrText() string { return string(s.Stderr) }

// Artifact is a file brought back from a project.
type Artifact struct {
	Path      string
	Content   []byte
	Truncated bool
}

// ContentText is the artifact's content as text.
func (a *Artifact) ContentText() string { return string(a.Content) }

// Broker is a granted run's broker summary (SPEC §8), covered by the result digest with every row.
type Broker struct {
	Profile string
	Calls   int64 // every call, allowed and denied
	Denied  int64
	// Routes holds at most 256 rows (MaxBrokerRoutes), sorted by (method, route, status, allowed,
	// reason); nil when there are none.
	Routes        []BrokerRoute
	RoutesDropped int64 // distinct rows left out of Routes (the least frequent)
}

// MaxBrokerRoutes is the most rows a broker summary carries; an answer with more is malformed.
const MaxBrokerRoutes = 256

// BrokerRoute is one row of a granted run's call trace: how many calls had this method, route
// template, status and verdict. Never a concrete path.
type BrokerRoute struct {
	Method  string // GET, HEAD, POST, PUT, PATCH, DELETE, or OTHER
	Route   string // the matching template ("/items/*"); "" when none matched
	Status  int64  // the upstream's HTTP status; 0 when it gave none
	Allowed bool   // whether the broker let the calls go upstream
	// Reason is "" or why not: not_allowed, bad_path, max_calls, route_max_calls, circuit_open,
	// body_too_large, upstream_timeout, upstream_error.
	Reason string
	Count  int64
}

// Advice is one advisor finding.
type Advice struct {
	Pattern        string
	Route          string
	Message        string
	ExtraCalls     int64
	AddedLatencyMS float64
	Bytes          int64
}

// Display is a rich output of a run or a cell (SPEC §7): a figure as image/png, a displayed table
// as text/html and then text/plain. Data is the bytes as they go in a file (a PNG's bytes; they
// travel as base64); Width and Height are pixels, for images only (0 when the daemon sent none).
type Display struct {
	Mime   string
	Data   []byte
	Width  int
	Height int
}

// DataText is the display's data as text (for the text types).
func (d *Display) DataText() string { return string(d.Data) }

// Record binds what was sent to what came back and where it ran (SPEC §5).
type Record struct {
	Version        int64
	RequestSHA256  string
	ResultSHA256   string
	Provider       string
	Isolation      string
	Environment    string
	Policy         string
	StartedUnixMS  int64
	EndedUnixMS    int64
	Session        string // session calls: SHA-256 of the session ID
	Sequence       int64  // session calls: from 1
	PreviousSHA256 string // session calls: "" for sequence 1
	RecordSHA256   string
}

// Description is a daemon's describe answer: what it runs and how strong its wall is.
type Description struct {
	Protocol    int64
	Provider    string
	Tier        string
	ClaimedTier string
	Environment string
	Payloads    []string // capabilities.payloads
	Languages   []string // capabilities.languages
	Projects    bool
	Sessions    bool // capabilities.sessions and sessions.enabled
	Grants      bool
	Limits      map[string]int64
	Details     map[string]string
	Images      []ImageInfo // the daemon's images (SPEC §7), the default first; nil when not listed
	Raw         []byte      // the whole answer body, for fields this client does not read
	RequestID   string
}

// Package sources of ImagePackage.Source.
const (
	PackageDebian = "debian"
	PackagePython = "python"
	PackageNPM    = "npm"
)

// ImageInfo is one of the images a daemon serves (describe's images): a request selects it by
// Name (Request.Image, the Image run option, SessionOptions.Image).
type ImageInfo struct {
	Name        string
	Default     bool     // the image a request naming none runs on
	Environment string   // its environment identity ("sha256:...")
	Tier        string   // the tier its evidence proves now
	Confirmed   bool     // its evidence monitor's verdict
	Languages   []string // of javascript, python, node
	Packages    []ImagePackage
}

// ImagePackage is a package installed in an image, by the package manager whose records listed it.
type ImagePackage struct {
	Name    string
	Version string
	Source  string // PackageDebian, PackagePython or PackageNPM
}

// SessionOptions opens a session. Lifetime and IdleTimeout bound the session itself; a run's
// timeout (the Timeout option, Request.TimeoutMS) bounds one call.
type SessionOptions struct {
	MinimumIsolation string
	Environment      string
	Image            string        // the name of one of the daemon's images; "": its default
	Owner            string        // the end user's name; only its HMAC-SHA256 under WithOwnerKey is sent
	Lifetime         time.Duration // 0: 30 min; at most 12 h
	IdleTimeout      time.Duration // 0: 5 min; at most the lifetime
}

// SessionInfo is a session's state (GET /v1/sessions/{id}).
type SessionInfo struct {
	Provider         string
	Isolation        string
	Environment      string
	Image            string // the name of the image it runs; "" when the daemon names none
	CreatedUnixMS    int64
	ExpiresUnixMS    int64
	IdleTimeoutMS    int64
	Calls            int64
	Busy             bool
	Queued           bool
	LastUsedUnixMS   int64
	DiskUsedBytes    int64
	DiskBytes        int64
	Interpreters     []string
	LastRecordSHA256 string
}

// SessionClosed is a close's answer: why the session ended and how many calls it answered.
type SessionClosed struct {
	Ended            string // closed, expired, disk_exceeded, boundary_failed, shutdown, replaced, ...
	Calls            int64
	LastRecordSHA256 string
}
