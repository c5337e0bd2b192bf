package plimsoll_test

// Grants through a real daemon (SPEC §8): tests/clients/harness.py starts an embedded plimsolld
// with a broker whose profile "inventory" fronts a loopback upstream; the harness checks the
// upstream received the credential, and these tests that the guest and the client never did.

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"plimsoll.dev/client"
)

func grantsClient(t *testing.T) (*plimsoll.Client, string) {
	t.Helper()
	url := plimsoll.HarnessEnv(t, "PLIMSOLL_TEST_GRANTS_URL")
	token := plimsoll.HarnessEnv(t, "PLIMSOLL_TEST_GRANT_TOKEN")
	c, err := plimsoll.New(url, plimsoll.WithToken(""))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c, token
}

// TestGrantedRunCarriesItsTrace: the trace and advice ride on the result; the credential never.
func TestGrantedRunCarriesItsTrace(t *testing.T) {
	c, token := grantsClient(t)
	ctx := context.Background()
	described, err := c.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		GrantProfiles []string `json:"grant_profiles"`
	}
	if err := json.Unmarshal(described.Raw, &raw); err != nil || !described.Grants ||
		len(raw.GrantProfiles) != 1 || raw.GrantProfiles[0] != "inventory" {
		t.Fatalf("describe: grants %v, profiles %v (%v)", described.Grants, raw.GrantProfiles, err)
	}
	r, err := c.RunJavascript(ctx, "const one = host.get('/items/2'); let refused = 0;"+
		" try { host.get('/admin') } catch (e) { refused = e.code }"+
		" console.log(one.status, JSON.parse(one.body).id, refused)",
		plimsoll.GrantProfile("inventory"))
	if err != nil {
		t.Fatal(err)
	}
	if r.ExitCode != 0 || r.StdoutText() != "200 2 refused\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.ExitCode, r.StdoutText(), r.StderrText())
	}
	if r.Broker == nil || r.Broker.Profile != "inventory" || r.Broker.Calls != 2 || r.Broker.Denied != 1 {
		t.Fatalf("broker summary %+v", r.Broker)
	}
	if strings.Contains(r.StdoutText()+r.StderrText(), token) {
		t.Fatal("the guest saw the credential")
	}
	fanOut, err := c.RunJavascript(ctx, "for (const i of ['1', '2', '3', '4']) host.get('/items/' + i)",
		plimsoll.GrantProfile("inventory"))
	if err != nil {
		t.Fatal(err)
	}
	if len(fanOut.Advice) != 1 || fanOut.Advice[0].Pattern != "fan_out" {
		t.Fatalf("advice %+v", fanOut.Advice)
	}
}

// TestGrantedSessionCell: a session cell is served its grant for that cell only.
func TestGrantedSessionCell(t *testing.T) {
	c, _ := grantsClient(t)
	ctx := context.Background()
	s, err := c.OpenSession(ctx, plimsoll.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	served, err := s.RunCell(ctx, "javascript", "var kept = host; kept.get('/items/3').status",
		plimsoll.GrantProfile("inventory"))
	if err != nil {
		t.Fatal(err)
	}
	after, err := s.RunCell(ctx, "javascript", "try { kept.get('/items/3'); 'reached' } catch (e) { e.code }")
	if err != nil {
		t.Fatal(err)
	}
	if served.ValueText() != "200" || served.Broker == nil || served.Broker.Calls != 1 {
		t.Fatalf("served: value %q, broker %+v", served.ValueText(), served.Broker)
	}
	if after.ValueText() != "'no_grant'" || after.Broker != nil {
		t.Fatalf("after: value %q, broker %+v", after.ValueText(), after.Broker)
	}
}

// TestUnknownProfileIsRefused: nothing ran, and the mark says so.
func TestUnknownProfileIsRefused(t *testing.T) {
	c, _ := grantsClient(t)
	_, err := c.RunJavascript(context.Background(), "host.get('/items/1')",
		plimsoll.GrantProfile("no-such-profile"))
	var e *plimsoll.Error
	if !errors.As(err, &e) || e.NotDispatched != plimsoll.ReasonPermission || e.Ran() != plimsoll.RanNo {
		t.Fatalf("want a permission refusal, got %v", err)
	}
}
