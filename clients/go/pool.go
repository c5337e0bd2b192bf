package plimsoll

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"
)

// Pool places each call on one of several daemons (SPEC §12). For each call it reads each
// daemon's describe (cached for the describe TTL) and keeps the daemons that can take the
// request: tier at or above the floor, the payload among the daemon's payloads, the required
// environment, sessions when opening one. It tries them in the order given and moves to the next
// daemon only on a refusal marked unsupported, isolation, environment or capacity (a daemon that
// cannot be reached is a capacity refusal: nothing was sent); anything else is returned at once.
// Marks are believed only with the echo checked (an answer without it is data_loss, never a
// refusal). A session stays on the daemon that opened it.
type Pool struct {
	members []*poolMember
	ttl     time.Duration
}

type poolMember struct {
	client  *Client
	mu      sync.Mutex
	desc    *Description
	fetched time.Time
}

// NewPool makes a client per URL with the same options (WithDescribeTTL sets the cache's TTL).
func NewPool(urls []string, opts ...Option) (*Pool, error) {
	if len(urls) == 0 {
		return nil, refused(CodeInvalidArgument, ReasonRequest, "A pool needs at least one daemon URL.")
	}
	p := &Pool{ttl: newConfig(opts).describeTTL}
	for _, u := range urls {
		c, err := New(u, opts...)
		if err != nil {
			return nil, err
		}
		p.members = append(p.members, &poolMember{client: c})
	}
	return p, nil
}

// Clients are the pool's clients, in the order given.
func (p *Pool) Clients() []*Client {
	out := make([]*Client, len(p.members))
	for i, m := range p.members {
		out[i] = m.client
	}
	return out
}

// String names the daemons, never the token.
func (p *Pool) String() string {
	urls := make([]string, len(p.members))
	for i, m := range p.members {
		urls[i] = m.client.url
	}
	return "plimsoll.Pool(" + strings.Join(urls, ", ") + ")"
}

// GoString is String.
func (p *Pool) GoString() string { return p.String() }

// Close closes every client's idle connections.
func (p *Pool) Close() {
	for _, m := range p.members {
		m.client.Close()
	}
}

func (m *poolMember) describe(ctx context.Context, ttl time.Duration) (*Description, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.desc != nil && ttl > 0 && time.Since(m.fetched) < ttl {
		return m.desc, nil
	}
	d, err := m.client.Describe(ctx)
	if err != nil {
		m.desc = nil
		return nil, err
	}
	m.desc, m.fetched = d, time.Now()
	return d, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// fit says why a daemon cannot take a request ("" when it can), with the reason it would refuse.
func fit(d *Description, floor, environment, payload string, session bool) (Reason, string) {
	if floor != "" && !TierMeets(d.Tier, floor) {
		return ReasonIsolation, "tier " + d.Tier + " is below the floor " + floor
	}
	if environment != "" && d.Environment != environment {
		return ReasonEnvironment, "another environment"
	}
	if payload != "" && !contains(d.Payloads, payload) {
		return ReasonUnsupported, "no " + payload + " payloads"
	}
	if session && !d.Sessions {
		return ReasonUnsupported, "no sessions"
	}
	return "", ""
}

// place runs call on the first daemon that fits and does not refuse it retryably.
func (p *Pool) place(ctx context.Context, floor, environment, payload string, session bool,
	call func(*Client) error) error {
	var skipped []string
	var reasons []Reason
	var last *Error
	for _, m := range p.members {
		d, err := m.describe(ctx, p.ttl)
		if err == nil {
			if reason, why := fit(d, floor, environment, payload, session); reason != "" {
				skipped = append(skipped, m.client.url+": "+why)
				reasons = append(reasons, reason)
				continue
			}
			err = call(m.client)
			if err == nil {
				return nil
			}
		}
		var pe *Error
		if !errors.As(err, &pe) || !pe.IsRetryable() {
			return err
		}
		last = pe
		skipped = append(skipped, m.client.url+": "+pe.Message)
		reasons = append(reasons, pe.NotDispatched)
		if ctx.Err() != nil {
			break
		}
	}
	if last != nil && len(reasons) == len(p.members) && allSame(reasons) {
		return last
	}
	reason := ReasonUnsupported
	if allSame(reasons) && len(reasons) > 0 {
		reason = reasons[0]
	}
	return &Error{Code: CodeFailedPrecondition, NotDispatched: reason,
		Message: "No daemon of the pool can take this request; nothing ran (" +
			strings.Join(skipped, "; ") + ")."}
}

func allSame(reasons []Reason) bool {
	for _, r := range reasons {
		if r != reasons[0] {
			return false
		}
	}
	return true
}

// Run places a request built by hand.
func (p *Pool) Run(ctx context.Context, request Request) (*Result, error) {
	var result *Result
	err := p.place(ctx, request.MinimumIsolation, request.Environment, request.payloadKind(), false,
		func(c *Client) error {
			r, err := c.Run(ctx, request)
			result = r
			return err
		})
	if err != nil {
		return nil, err
	}
	return result, nil
}

// RunJavascript places a JavaScript snippet.
func (p *Pool) RunJavascript(ctx context.Context, code string, opts ...RunOption) (*Result, error) {
	return p.Run(ctx, applyRunOptions(&Request{Javascript: &Code{Code: []byte(code)}}, opts))
}

// RunPython places a Python snippet.
func (p *Pool) RunPython(ctx context.Context, code string, opts ...RunOption) (*Result, error) {
	return p.Run(ctx, applyRunOptions(&Request{Python: &Code{Code: []byte(code)}}, opts))
}

// RunProject places a project.
func (p *Pool) RunProject(ctx context.Context, project Project, opts ...RunOption) (*Result, error) {
	return p.Run(ctx, applyRunOptions(&Request{Project: &project}, opts))
}

// OpenSession opens a session on the first daemon that fits; the session stays there.
func (p *Pool) OpenSession(ctx context.Context, options SessionOptions) (*Session, error) {
	var session *Session
	err := p.place(ctx, options.MinimumIsolation, options.Environment, "", true,
		func(c *Client) error {
			s, err := c.OpenSession(ctx, options)
			session = s
			return err
		})
	if err != nil {
		return nil, err
	}
	return session, nil
}
