package plimsoll

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Session is one sandbox kept for several calls (SPEC §9). Every answer's record must continue
// the session's chain. Calls on one Session are made one at a time (the session runs one call at
// a time anyway). Close it when done: `defer s.Close(ctx)`.
//
// A session is one trust domain: code from an earlier call can change what later calls see.
type Session struct {
	client      *Client
	id          *secret // the session ID is a bearer secret: never printed
	Provider    string
	Isolation   string
	Environment string
	Image       string // the name of the image it runs; "" when the daemon names none
	Created     time.Time
	Expires     time.Time
	IdleTimeout time.Duration
	Limits      map[string]int64

	mu     sync.Mutex
	chain  chainState
	closed *SessionClosed
}

// String names the session's daemon and tier, never its ID.
func (s *Session) String() string {
	return "plimsoll.Session(" + s.client.url + ", " + s.Provider + ", " + s.Isolation + ")"
}

// GoString is String.
func (s *Session) GoString() string { return s.String() }

// ID is the session ID (a bearer secret: whoever holds it, with the caller's token, can use it).
func (s *Session) ID() string { return s.id.value }

// Calls is the number of answered calls the chain holds.
func (s *Session) Calls() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.chain.sequence
}

// Client is the client (the daemon) the session is pinned to.
func (s *Session) Client() *Client { return s.client }

func isLowerHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !(s[i] >= '0' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'f') {
			return false
		}
	}
	return true
}

// OpenSession opens a session on this daemon.
func (c *Client) OpenSession(ctx context.Context, options SessionOptions) (*Session, error) {
	b := []byte(`{"protocol":1`)
	if options.MinimumIsolation != "" {
		b = append(b, `,"minimum_isolation":`...)
		b = appendJSONString(b, options.MinimumIsolation)
	}
	if options.Environment != "" {
		b = append(b, `,"environment":`...)
		b = appendJSONString(b, options.Environment)
	}
	if options.Image != "" {
		b = append(b, `,"image":`...)
		b = appendJSONString(b, options.Image)
	}
	if options.Owner != "" {
		if c.cfg.ownerKey == nil || c.cfg.ownerKey.value == "" {
			return nil, refused(CodeInvalidArgument, ReasonRequest,
				"An owner needs an owner key (WithOwnerKey): only the owner's HMAC is sent.")
		}
		mac := hmac.New(sha256.New, []byte(c.cfg.ownerKey.value))
		mac.Write([]byte(options.Owner))
		b = append(b, `,"owner":"`...)
		b = append(b, hex.EncodeToString(mac.Sum(nil))...)
		b = append(b, '"')
	}
	if options.Lifetime != 0 {
		b = append(b, `,"lifetime_ms":`...)
		b = strconv.AppendInt(b, options.Lifetime.Milliseconds(), 10)
	}
	if options.IdleTimeout != 0 {
		b = append(b, `,"idle_timeout_ms":`...)
		b = strconv.AppendInt(b, options.IdleTimeout.Milliseconds(), 10)
	}
	b = append(b, '}')
	a, err := c.exchange(ctx, http.MethodPost, "/v1/sessions", b, c.cfg.callTimeout, http.StatusCreated)
	if err != nil {
		return nil, err
	}
	r := &reader{}
	v := a.tree
	id := r.str(v, "session_id", "session_id")
	s := &Session{
		client:      c,
		id:          &secret{id},
		Provider:    r.str(v, "provider", "provider"),
		Isolation:   r.str(v, "isolation", "isolation"),
		Environment: r.str(v, "environment", "environment"),
		Image:       r.optStr(v, "image", "image"),
		Created:     time.UnixMilli(r.integer(v, "created_unix_ms", "created_unix_ms")),
		Expires:     time.UnixMilli(r.integer(v, "expires_unix_ms", "expires_unix_ms")),
		IdleTimeout: time.Duration(r.integer(v, "idle_timeout_ms", "idle_timeout_ms")) * time.Millisecond,
		Limits:      map[string]int64{},
	}
	if present(v.get("limits")) {
		limits := r.object(v, "limits", "limits")
		for _, m := range limits.members {
			if m.value.kind == jsonNumber {
				s.Limits[m.key] = r.integer(limits, m.key, "limits."+m.key)
			}
		}
	}
	if r.err != nil {
		return nil, dataLoss(a.requestID, a.status, "The session answer cannot be read: "+r.err.Error())
	}
	if !isLowerHex(id, 32) {
		return nil, dataLoss(a.requestID, a.status, "The session ID is not 32 lowercase hex digits.")
	}
	// The session is open on the daemon from here: a failed check below leaves it to expire.
	if !TierMeets(s.Isolation, options.MinimumIsolation) {
		return nil, dataLoss(a.requestID, a.status, "The session's tier "+strconv.Quote(s.Isolation)+
			" does not meet the floor "+strconv.Quote(options.MinimumIsolation)+".")
	}
	if options.Environment != "" && s.Environment != options.Environment {
		return nil, dataLoss(a.requestID, a.status, "The session's environment is not the one required.")
	}
	s.chain.session = sessionDigest(id)
	// Every later answer of the session is held to the floor it was opened with.
	s.chain.floor = options.MinimumIsolation
	return s, nil
}

func (s *Session) path(suffix string) string { return "/v1/sessions/" + s.id.value + suffix }

// Run sends a request built by hand inside the session; its record must continue the chain.
func (s *Session) Run(ctx context.Context, request Request) (*Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed != nil {
		return nil, refused(CodeFailedPrecondition, ReasonRequest, "The session is closed.")
	}
	return s.client.run(ctx, s.path("/runs"), &request, &s.chain)
}

// RunCell runs code in the session's kept interpreter of language ("javascript" or "python").
func (s *Session) RunCell(ctx context.Context, language, code string, opts ...RunOption) (*Result, error) {
	return s.Run(ctx, applyRunOptions(&Request{Cell: &Cell{Language: language, Code: []byte(code)}}, opts))
}

// RunJavascript runs a JavaScript snippet in the session's sandbox.
func (s *Session) RunJavascript(ctx context.Context, code string, opts ...RunOption) (*Result, error) {
	return s.Run(ctx, applyRunOptions(&Request{Javascript: &Code{Code: []byte(code)}}, opts))
}

// RunPython runs a Python snippet in the session's sandbox.
func (s *Session) RunPython(ctx context.Context, code string, opts ...RunOption) (*Result, error) {
	return s.Run(ctx, applyRunOptions(&Request{Python: &Code{Code: []byte(code)}}, opts))
}

// RunProject runs a project in the session's sandbox (its files land in /work).
func (s *Session) RunProject(ctx context.Context, project Project, opts ...RunOption) (*Result, error) {
	return s.Run(ctx, applyRunOptions(&Request{Project: &project}, opts))
}

// Upload writes files into the session's /work (a project call whose one step is `true`).
func (s *Session) Upload(ctx context.Context, files []File, opts ...RunOption) (*Result, error) {
	return s.RunProject(ctx, Project{Files: files, Steps: [][]string{{"true"}}}, opts...)
}

// Download reads files from the session's /work (a project call bringing them back as
// artifacts). A path that does not exist is absent from the answer; a truncated file says so.
func (s *Session) Download(ctx context.Context, paths []string, opts ...RunOption) ([]Artifact, error) {
	result, err := s.RunProject(ctx, Project{Steps: [][]string{{"true"}}, Artifacts: paths}, opts...)
	if err != nil {
		return nil, err
	}
	return result.Artifacts, nil
}

// Info asks for the session's state.
func (s *Session) Info(ctx context.Context) (*SessionInfo, error) {
	c := s.client
	a, err := c.exchange(ctx, http.MethodGet, s.path(""), nil, c.cfg.callTimeout, http.StatusOK)
	if err != nil {
		return nil, err
	}
	r := &reader{}
	v := a.tree
	info := &SessionInfo{
		Provider:         r.str(v, "provider", "provider"),
		Isolation:        r.str(v, "isolation", "isolation"),
		Environment:      r.str(v, "environment", "environment"),
		Image:            r.optStr(v, "image", "image"),
		CreatedUnixMS:    r.integer(v, "created_unix_ms", "created_unix_ms"),
		ExpiresUnixMS:    r.integer(v, "expires_unix_ms", "expires_unix_ms"),
		IdleTimeoutMS:    r.integer(v, "idle_timeout_ms", "idle_timeout_ms"),
		Calls:            r.integer(v, "calls", "calls"),
		Busy:             r.boolean(v, "busy", "busy"),
		Queued:           r.boolean(v, "queued", "queued"),
		LastUsedUnixMS:   r.integer(v, "last_used_unix_ms", "last_used_unix_ms"),
		DiskUsedBytes:    r.integer(v, "disk_used_bytes", "disk_used_bytes"),
		DiskBytes:        r.integer(v, "disk_bytes", "disk_bytes"),
		Interpreters:     r.strings(v, "interpreters", "interpreters"),
		LastRecordSHA256: r.str(v, "last_record_sha256", "last_record_sha256"),
	}
	if r.err != nil {
		return nil, dataLoss(a.requestID, a.status, "The session state cannot be read: "+r.err.Error())
	}
	if sid := r.str(v, "session_id", "session_id"); sid != s.id.value {
		return nil, dataLoss(a.requestID, a.status, "The session state names another session.")
	}
	if !TierMeets(info.Isolation, s.chain.floor) {
		return nil, dataLoss(a.requestID, a.status, "The session state's tier "+strconv.Quote(info.Isolation)+
			" does not meet the floor "+strconv.Quote(s.chain.floor)+" the session was opened with.")
	}
	return info, nil
}

// Close ends the session. The close must name the chain's last record and its call count.
// Closing again returns the first close's answer without a request.
func (s *Session) Close(ctx context.Context) (*SessionClosed, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed != nil {
		return s.closed, nil
	}
	c := s.client
	a, err := c.exchange(ctx, http.MethodDelete, s.path(""), nil, c.cfg.callTimeout, http.StatusOK)
	if err != nil {
		return nil, err
	}
	r := &reader{}
	closed := &SessionClosed{
		Ended:            r.str(a.tree, "ended", "ended"),
		Calls:            r.integer(a.tree, "calls", "calls"),
		LastRecordSHA256: r.str(a.tree, "last_record_sha256", "last_record_sha256"),
	}
	if r.err != nil {
		return nil, dataLoss(a.requestID, a.status, "The close answer cannot be read: "+r.err.Error())
	}
	if closed.Calls != s.chain.sequence || closed.LastRecordSHA256 != s.chain.previous {
		return nil, dataLoss(a.requestID, a.status, "The close does not name the chain's last record and call count ("+
			strconv.FormatInt(closed.Calls, 10)+" calls, the chain holds "+strconv.FormatInt(s.chain.sequence, 10)+").")
	}
	s.closed = closed
	return closed, nil
}
