package plimsoll

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Defaults of the options.
const (
	DefaultMaxResponseBytes  = 32 << 20
	DefaultConnectTimeout    = 10 * time.Second
	DefaultCallTimeout       = 30 * time.Second
	DefaultRunTimeoutMargin  = 30 * time.Second
	DefaultUnspecifiedRun    = 300 * time.Second
	DefaultDescribeTTL       = 30 * time.Second
	maxResponseHeaderBytes   = 64 << 10
	maxIdleConnsPerClient    = 4
	idleConnTimeout          = 60 * time.Second
	requestIDHeader          = "Plimsoll-Request-Id"
	notDispatchedHeader      = "Plimsoll-Not-Dispatched"
	userAgent                = "plimsoll-go/0.1"
	tokenAlphabet            = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/="
	prefixAlphabet           = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/-._~"
	unixRequestHost          = "localhost"
	environmentTokenVariable = "PLIMSOLL_TOKEN"
)

// secret holds a credential behind a pointer, so that printing any struct that holds one
// (with %v, %+v or %#v) shows an address, never the bytes; its own methods print a placeholder.
type secret struct{ value string }

func (s *secret) String() string   { return "[redacted]" }
func (s *secret) GoString() string { return "[redacted]" }

// config is what the options set.
type config struct {
	token            *secret
	tokenSet         bool
	allowCleartext   bool
	caFile           string
	maxResponseBytes int64
	connectTimeout   time.Duration
	callTimeout      time.Duration
	runTimeoutMargin time.Duration
	unspecifiedRun   time.Duration
	ownerKey         *secret
	describeTTL      time.Duration
}

// Option configures a Client or a Pool.
type Option func(*config)

// WithToken sends `Authorization: Bearer TOKEN` (else the PLIMSOLL_TOKEN environment variable is
// used; an empty token sends none). It is never printed by any String, error or log.
func WithToken(token string) Option {
	return func(c *config) { c.token, c.tokenSet = &secret{token}, true }
}

// WithAllowCleartext allows http:// to an address that is not loopback.
func WithAllowCleartext() Option { return func(c *config) { c.allowCleartext = true } }

// WithCAFile trusts the CAs of a PEM file for https (instead of the system's).
func WithCAFile(path string) Option { return func(c *config) { c.caFile = path } }

// WithMaxResponseBytes caps an answer's body (default 32 MiB).
func WithMaxResponseBytes(n int64) Option { return func(c *config) { c.maxResponseBytes = n } }

// WithConnectTimeout bounds connecting and the TLS handshake (default 10 s).
func WithConnectTimeout(d time.Duration) Option { return func(c *config) { c.connectTimeout = d } }

// WithCallTimeout bounds every call but runs (default 30 s).
func WithCallTimeout(d time.Duration) Option { return func(c *config) { c.callTimeout = d } }

// WithRunTimeoutMargin lets a run take its timeout plus this (default 30 s; with no timeout a run
// is bounded by 300 s in all).
func WithRunTimeoutMargin(d time.Duration) Option {
	return func(c *config) { c.runTimeoutMargin = d }
}

// WithOwnerKey is the key of the HMAC-SHA256 that SessionOptions.Owner is sent as.
func WithOwnerKey(key []byte) Option {
	return func(c *config) { c.ownerKey = &secret{string(key)} }
}

// WithDescribeTTL is how long a Pool keeps a daemon's describe (default 30 s).
func WithDescribeTTL(d time.Duration) Option { return func(c *config) { c.describeTTL = d } }

func newConfig(opts []Option) *config {
	c := &config{maxResponseBytes: DefaultMaxResponseBytes, connectTimeout: DefaultConnectTimeout,
		callTimeout: DefaultCallTimeout, runTimeoutMargin: DefaultRunTimeoutMargin,
		unspecifiedRun: DefaultUnspecifiedRun, describeTTL: DefaultDescribeTTL}
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
	return c
}

// Client runs requests on one plimsolld and believes an answer only after checking it
// (clients/README.md). It is safe for concurrent use; it keeps up to four idle connections.
//
// Retries: net/http re-sends a request on a fresh connection only when a kept connection was found
// dead before any byte of the request was written. After any byte of a POST (runs, sessions) or a
// DELETE (close) was written it is never re-sent. GET describe and GET session info are read-only;
// net/http may also re-send those once when a kept connection dies before the answer's first byte
// (its rule for idempotent methods), which changes nothing on the daemon.
type Client struct {
	url       string // as given
	base      string // scheme://host[:port][/prefix] the requests go to
	cfg       *config
	transport *http.Transport
	http      *http.Client
	opened    atomic.Int64
}

// String names the daemon, never the token.
func (c *Client) String() string { return "plimsoll.Client(" + c.url + ")" }

// GoString is String.
func (c *Client) GoString() string { return c.String() }

// URL is the daemon's URL as given to New.
func (c *Client) URL() string { return c.url }

// ConnectionsOpened counts the connections made so far (keep-alive reuses them).
func (c *Client) ConnectionsOpened() int64 { return c.opened.Load() }

// Close closes the idle connections. The client stays usable.
func (c *Client) Close() { c.transport.CloseIdleConnections() }

var errCleartext = errors.New("cleartext http:// to an address that is not loopback")

// New makes a client for `http://HOST[:PORT][/PREFIX]`, `https://...` or `unix:/PATH`. Nothing is
// sent yet. A bad URL or option is an *Error marked `request`.
func New(rawURL string, opts ...Option) (*Client, error) {
	cfg := newConfig(opts)
	if !cfg.tokenSet {
		if t := os.Getenv(environmentTokenVariable); t != "" {
			cfg.token = &secret{t}
		}
	}
	if cfg.token != nil && cfg.token.value == "" {
		cfg.token = nil
	}
	if cfg.token != nil {
		for _, ch := range []byte(cfg.token.value) {
			if strings.IndexByte(tokenAlphabet, ch) < 0 {
				return nil, refused(CodeInvalidArgument, ReasonRequest,
					"The token has a character outside A-Za-z0-9-._~+/=.")
			}
		}
	}
	if cfg.maxResponseBytes <= 0 || cfg.connectTimeout <= 0 || cfg.callTimeout <= 0 ||
		cfg.runTimeoutMargin < 0 || cfg.describeTTL < 0 {
		return nil, refused(CodeInvalidArgument, ReasonRequest, "An option is out of range.")
	}
	c := &Client{url: rawURL, cfg: cfg}
	dialer := &net.Dialer{Timeout: cfg.connectTimeout, KeepAlive: 30 * time.Second}
	t := &http.Transport{
		Proxy:                  nil,
		MaxIdleConns:           maxIdleConnsPerClient,
		MaxIdleConnsPerHost:    maxIdleConnsPerClient,
		IdleConnTimeout:        idleConnTimeout,
		TLSHandshakeTimeout:    cfg.connectTimeout,
		DisableCompression:     true,
		MaxResponseHeaderBytes: maxResponseHeaderBytes,
		ForceAttemptHTTP2:      false,
		TLSNextProto:           map[string]func(string, *tls.Conn) http.RoundTripper{},
	}
	count := func(conn net.Conn, err error) (net.Conn, error) {
		if err == nil {
			c.opened.Add(1)
		}
		return conn, err
	}
	switch {
	case strings.HasPrefix(rawURL, "unix:"):
		path := strings.TrimPrefix(rawURL, "unix:")
		if strings.HasPrefix(path, "//") {
			path = strings.TrimPrefix(path, "//")
		}
		if !strings.HasPrefix(path, "/") || len(path) < 2 {
			return nil, refused(CodeInvalidArgument, ReasonRequest,
				"A unix: URL names an absolute socket path (unix:/PATH).")
		}
		c.base = "http://" + unixRequestHost
		t.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
			return count(dialer.DialContext(ctx, "unix", path))
		}
	default:
		u, err := url.Parse(rawURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Opaque != "" || u.Host == "" {
			return nil, refused(CodeInvalidArgument, ReasonRequest,
				"The URL must be http://HOST[:PORT][/PREFIX], https://... or unix:/PATH.")
		}
		if u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(rawURL, "#") {
			return nil, refused(CodeInvalidArgument, ReasonRequest,
				"The URL may not carry user information, a query or a fragment; a token goes in the options.")
		}
		host := u.Hostname()
		if port := u.Port(); port != "" {
			if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
				return nil, refused(CodeInvalidArgument, ReasonRequest, "The URL's port is not 1 to 65535.")
			}
		} else if strings.HasSuffix(u.Host, ":") {
			return nil, refused(CodeInvalidArgument, ReasonRequest, "The URL's port is empty.")
		}
		prefix := strings.TrimRight(u.EscapedPath(), "/")
		for _, ch := range []byte(prefix) {
			if strings.IndexByte(prefixAlphabet, ch) < 0 {
				return nil, refused(CodeInvalidArgument, ReasonRequest,
					"The URL's path prefix may hold only letters, digits and /-._~.")
			}
		}
		c.base = u.Scheme + "://" + u.Host + prefix
		if u.Scheme == "https" {
			tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: host}
			if cfg.caFile != "" {
				pem, err := os.ReadFile(cfg.caFile)
				if err != nil {
					return nil, refused(CodeFailedPrecondition, ReasonRequest,
						"The CA file cannot be read: "+err.Error())
				}
				pool := x509.NewCertPool()
				if !pool.AppendCertsFromPEM(pem) {
					return nil, refused(CodeFailedPrecondition, ReasonRequest,
						"The CA file holds no PEM certificate.")
				}
				tc.RootCAs = pool
			}
			t.TLSClientConfig = tc
			t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
				return count(dialer.DialContext(ctx, network, addr))
			}
		} else if cfg.allowCleartext {
			t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
				return count(dialer.DialContext(ctx, network, addr))
			}
		} else {
			if ip := net.ParseIP(host); ip != nil && !ip.IsLoopback() {
				return nil, refused(CodeFailedPrecondition, ReasonRequest,
					"Refusing cleartext http:// to "+host+", which is not loopback: use https:// or allow cleartext explicitly.")
			}
			// A name is resolved first, and every address must be loopback before connecting.
			t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
				h, port, err := net.SplitHostPort(addr)
				if err != nil {
					return nil, err
				}
				addrs, err := net.DefaultResolver.LookupIPAddr(ctx, h)
				if err != nil {
					return nil, err
				}
				for _, a := range addrs {
					if !a.IP.IsLoopback() {
						return nil, errCleartext
					}
				}
				if len(addrs) == 0 {
					return nil, fmt.Errorf("%s has no address", h)
				}
				return count(dialer.DialContext(ctx, network, net.JoinHostPort(addrs[0].IP.String(), port)))
			}
		}
	}
	c.transport = t
	c.http = &http.Client{
		Transport: t,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	return c, nil
}

func newRequestID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("plimsoll: the system's random source failed: " + err.Error())
	}
	return hex.EncodeToString(b[:])
}

// answer is an HTTP answer that passed the size and echo checks and parsed as JSON.
type answer struct {
	status    int
	requestID string
	body      []byte
	tree      *jsonValue
}

// exchange sends one HTTP request and checks the answer's size, echo, mark and JSON. A success
// status other than want, or an error answer, is returned as an *Error.
func (c *Client) exchange(ctx context.Context, method, path string, body []byte, bound time.Duration,
	want int) (*answer, error) {
	id := newRequestID()
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	var reader io.Reader
	if body != nil {
		reader = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, reader)
	if err != nil {
		return nil, &Error{Code: CodeInvalidArgument, NotDispatched: ReasonRequest,
			Message: "The request cannot be made: " + err.Error()}
	}
	req.Header["Plimsoll-Request-Id"] = []string{id}
	req.Header["Accept"] = []string{"application/json"}
	req.Header["User-Agent"] = []string{userAgent}
	if body != nil {
		req.Header["Content-Type"] = []string{"application/json"}
	}
	if c.cfg.token != nil {
		req.Header["Authorization"] = []string{"Bearer " + c.cfg.token.value}
	}
	// sent: some of the request may have reached the daemon. Before WroteHeaders nothing has left
	// (the headers fit in the write buffer); every new connection attempt starts from nothing.
	var sent atomic.Bool
	trace := &httptrace.ClientTrace{
		GetConn:      func(string) { sent.Store(false) },
		ConnectStart: func(string, string) { sent.Store(false) },
		WroteHeaders: func() { sent.Store(true) },
	}
	req = req.WithContext(httptrace.WithClientTrace(ctx, trace))
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, c.transportError(ctx, id, err, sent.Load())
	}
	defer resp.Body.Close()
	max := c.cfg.maxResponseBytes
	if resp.ContentLength > max {
		return nil, dataLoss(id, resp.StatusCode, fmt.Sprintf(
			"The answer is %d bytes, above the cap of %d (max_response_bytes); it was not read.",
			resp.ContentLength, max))
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		e := c.transportError(ctx, id, err, true)
		e.HTTPStatus = resp.StatusCode
		return nil, e
	}
	if int64(len(data)) > max {
		return nil, dataLoss(id, resp.StatusCode, fmt.Sprintf(
			"The answer is longer than the cap of %d bytes (max_response_bytes); it was not read.", max))
	}
	echoOK := len(resp.Header.Values(requestIDHeader)) == 1 && resp.Header.Get(requestIDHeader) == id
	if resp.StatusCode >= 400 {
		return nil, errorAnswer(id, resp, data, echoOK)
	}
	if !echoOK {
		return nil, dataLoss(id, resp.StatusCode,
			"The answer does not carry this request's Plimsoll-Request-Id: it may be another call's, so it is not believed.")
	}
	if resp.StatusCode != want {
		return nil, dataLoss(id, resp.StatusCode, fmt.Sprintf("The answer's status is %d, not %d.",
			resp.StatusCode, want))
	}
	tree, err := parseJSON(data)
	if err != nil {
		return nil, dataLoss(id, resp.StatusCode, "The answer cannot be read: "+err.Error())
	}
	if tree.kind != jsonObject {
		return nil, dataLoss(id, resp.StatusCode, "The answer is not a JSON object.")
	}
	return &answer{status: resp.StatusCode, requestID: id, body: data, tree: tree}, nil
}

// transportError classifies a failure without a (complete) answer.
func (c *Client) transportError(ctx context.Context, id string, err error, sent bool) *Error {
	e := &Error{RequestID: id, cause: err}
	var netErr net.Error
	timedOut := ctx.Err() != nil || (errors.As(err, &netErr) && netErr.Timeout())
	switch {
	case errors.Is(err, errCleartext):
		e.Code, e.NotDispatched = CodeFailedPrecondition, ReasonRequest
		e.Message = "Refusing cleartext http:// to an address that is not loopback: use https:// or allow cleartext explicitly."
	case !sent && timedOut:
		e.Code, e.NotDispatched = CodeDeadlineExceeded, ReasonCapacity
		e.Message = "Could not connect in time; nothing was sent: " + err.Error()
	case !sent:
		e.Code, e.NotDispatched = CodeFailedPrecondition, ReasonCapacity
		e.Message = "Could not connect to the daemon; nothing was sent: " + err.Error()
	case timedOut:
		e.Code = CodeDeadlineExceeded
		if errors.Is(ctx.Err(), context.Canceled) {
			e.Message = "The call was cancelled before a complete answer arrived; it may have run."
			e.cause = ctx.Err()
		} else {
			e.Message = "No complete answer in time; the call may have run."
		}
	default:
		e.Code = CodeDataLoss
		e.Message = "The connection failed after the request left; the call may have run: " + err.Error()
	}
	return e
}

// errorAnswer reads an error answer; one that fails the echo or mark check, or cannot be read,
// becomes data_loss without a mark.
func errorAnswer(id string, resp *http.Response, data []byte, echoOK bool) *Error {
	status := resp.StatusCode
	tree, err := parseJSON(data)
	var code, message, mark, bodyID string
	var readErr error
	if err != nil {
		readErr = err
	} else if e := tree.get("error"); e == nil || e.kind != jsonObject {
		readErr = errors.New("no error object")
	} else {
		r := &reader{}
		code = r.str(e, "code", "error.code")
		message = r.str(e, "message", "error.message")
		mark = r.optStr(e, "not_dispatched", "error.not_dispatched")
		bodyID = r.optStr(e, "request_id", "error.request_id")
		readErr = r.err
		if readErr == nil && !knownCode(code) {
			readErr = fmt.Errorf("unknown error code %q", code)
		}
		if readErr == nil && mark != "" && !Reason(mark).known() {
			readErr = fmt.Errorf("unknown not_dispatched reason %q", mark)
		}
	}
	if readErr != nil {
		return dataLoss(id, status, fmt.Sprintf("An error answer (HTTP %d) cannot be read (%v); the call may have run.",
			status, readErr))
	}
	quoted := fmt.Sprintf("%s: %s", code, message)
	if !echoOK || bodyID != id {
		return dataLoss(id, status, "An error answer without this request's Plimsoll-Request-Id is not believed ("+
			quoted+"); the call may have run.")
	}
	headers := resp.Header.Values(notDispatchedHeader)
	if (mark == "" && len(headers) != 0) || (mark != "" && (len(headers) != 1 || headers[0] != mark)) {
		return dataLoss(id, status, "An error answer whose mark is not repeated by Plimsoll-Not-Dispatched is not believed ("+
			quoted+"); the call may have run.")
	}
	return &Error{Code: code, Message: message, NotDispatched: Reason(mark), RequestID: id, HTTPStatus: status}
}

func (c *Client) runBound(timeoutMS int64) time.Duration {
	if timeoutMS <= 0 {
		return c.cfg.unspecifiedRun
	}
	return time.Duration(timeoutMS)*time.Millisecond + c.cfg.runTimeoutMargin
}

// RunOption sets a field of the request a Run* call makes.
type RunOption func(*Request)

// MinimumIsolation is the floor: process, container, kernel or vm.
func MinimumIsolation(tier string) RunOption { return func(r *Request) { r.MinimumIsolation = tier } }

// Timeout bounds the run (the daemon enforces it: exit code 124, TimedOut).
func Timeout(d time.Duration) RunOption {
	return func(r *Request) {
		r.TimeoutMS = int64((d + time.Millisecond - 1) / time.Millisecond)
	}
}

// Environment requires the exact environment identity ("sha256:...").
func Environment(id string) RunOption { return func(r *Request) { r.Environment = id } }

// Image selects one of the daemon's images by name (SPEC §7; describe lists them in
// Description.Images): 1 to 64 of [a-z0-9-], not starting with '-'. A daemon that serves no
// image of that name refuses the request (marked request: nothing ran). "" runs on the default.
func Image(name string) RunOption { return func(r *Request) { r.Image = name } }

// GrantProfile names a grant profile (SPEC §8).
func GrantProfile(name string) RunOption { return func(r *Request) { r.GrantProfile = name } }

// TraceID is carried for observability only ([A-Za-z0-9._:-]{1,64}).
func TraceID(id string) RunOption { return func(r *Request) { r.TraceID = id } }

func applyRunOptions(r *Request, opts []RunOption) Request {
	for _, o := range opts {
		if o != nil {
			o(r)
		}
	}
	return *r
}

// Describe asks what the daemon runs and how strong its wall is.
func (c *Client) Describe(ctx context.Context) (*Description, error) {
	a, err := c.exchange(ctx, http.MethodGet, "/v1/describe", nil, c.cfg.callTimeout, http.StatusOK)
	if err != nil {
		return nil, err
	}
	d, err := decodeDescription(a.tree)
	if err != nil {
		return nil, dataLoss(a.requestID, a.status, "The describe answer cannot be read: "+err.Error())
	}
	d.Raw = a.body
	d.RequestID = a.requestID
	return d, nil
}

func decodeDescription(v *jsonValue) (*Description, error) {
	r := &reader{}
	d := &Description{
		Protocol:    r.integer(v, "protocol", "protocol"),
		Provider:    r.str(v, "provider", "provider"),
		Tier:        r.str(v, "tier", "tier"),
		ClaimedTier: r.str(v, "claimed_tier", "claimed_tier"),
		Environment: r.str(v, "environment", "environment"),
		Limits:      map[string]int64{},
		Details:     map[string]string{},
	}
	caps := r.object(v, "capabilities", "capabilities")
	d.Payloads = r.strings(caps, "payloads", "capabilities.payloads")
	d.Languages = r.strings(caps, "languages", "capabilities.languages")
	d.Projects = r.boolean(caps, "projects", "capabilities.projects")
	d.Grants = r.boolean(caps, "grants", "capabilities.grants")
	sessions := r.boolean(caps, "sessions", "capabilities.sessions")
	enabled := r.boolean(r.object(v, "sessions", "sessions"), "enabled", "sessions.enabled")
	d.Sessions = sessions && enabled
	limits := r.object(v, "limits", "limits")
	for _, m := range limits.members {
		if m.value.kind == jsonNumber {
			d.Limits[m.key] = r.integer(limits, m.key, "limits."+m.key)
		}
	}
	for i, item := range r.array(v, "details", "details") {
		obj, err := asObject(item, indexed("details", i))
		if err != nil {
			r.fail(err)
			continue
		}
		d.Details[r.str(obj, "name", "details.name")] = r.str(obj, "value", "details.value")
	}
	// images came with several images per daemon (SPEC §7): absent from older daemons.
	for i, item := range r.array(v, "images", "images") {
		path := indexed("images", i)
		obj, err := asObject(item, path)
		if err != nil {
			r.fail(err)
			continue
		}
		image := ImageInfo{
			Name:        r.str(obj, "name", path+".name"),
			Default:     r.boolean(obj, "default", path+".default"),
			Environment: r.str(obj, "environment", path+".environment"),
			Tier:        r.str(obj, "tier", path+".tier"),
			Confirmed:   r.boolean(obj, "confirmed", path+".confirmed"),
			Languages:   r.strings(obj, "languages", path+".languages"),
		}
		for j, p := range r.array(obj, "packages", path+".packages") {
			ppath := indexed(path+".packages", j)
			pkg, err := asObject(p, ppath)
			if err != nil {
				r.fail(err)
				continue
			}
			image.Packages = append(image.Packages, ImagePackage{
				Name:    r.str(pkg, "name", ppath+".name"),
				Version: r.str(pkg, "version", ppath+".version"),
				Source:  r.str(pkg, "source", ppath+".source"),
			})
		}
		d.Images = append(d.Images, image)
	}
	if r.err != nil {
		return nil, r.err
	}
	return d, nil
}

// Run sends a request built by hand (outside a session). A non-zero exit code is a result.
func (c *Client) Run(ctx context.Context, request Request) (*Result, error) {
	return c.run(ctx, "/v1/runs", &request, nil)
}

// RunJavascript runs a JavaScript snippet; code may be any bytes.
func (c *Client) RunJavascript(ctx context.Context, code string, opts ...RunOption) (*Result, error) {
	r := applyRunOptions(&Request{Javascript: &Code{Code: []byte(code)}}, opts)
	return c.run(ctx, "/v1/runs", &r, nil)
}

// RunPython runs a Python snippet (not available at the process tier: refused unsupported).
func (c *Client) RunPython(ctx context.Context, code string, opts ...RunOption) (*Result, error) {
	r := applyRunOptions(&Request{Python: &Code{Code: []byte(code)}}, opts)
	return c.run(ctx, "/v1/runs", &r, nil)
}

// RunProject runs a project's steps in order in one fresh sandbox.
func (c *Client) RunProject(ctx context.Context, project Project, opts ...RunOption) (*Result, error) {
	r := applyRunOptions(&Request{Project: &project}, opts)
	return c.run(ctx, "/v1/runs", &r, nil)
}

// run sends a run request and checks its answer (CheckExchange, and the chain for sessions).
func (c *Client) run(ctx context.Context, path string, request *Request, chain *chainState) (*Result, error) {
	body, err := request.marshal()
	if err != nil {
		return nil, refused(CodeInvalidArgument, ReasonRequest, "The request cannot be sent: "+err.Error())
	}
	sent, err := parseJSON(body)
	if err != nil {
		return nil, refused(CodeInvalidArgument, ReasonRequest, "The request cannot be sent: "+err.Error())
	}
	a, err := c.exchange(ctx, http.MethodPost, path, body, c.runBound(request.TimeoutMS), http.StatusOK)
	if err != nil {
		return nil, err
	}
	result, err := checkAnswer(sent, a.tree, chain)
	if err != nil {
		return nil, dataLoss(a.requestID, a.status, "The answer fails the record check: "+err.Error()+
			"; the call may have run.")
	}
	result.RequestID = a.requestID
	result.URL = c.url
	return result, nil
}
