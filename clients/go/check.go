package plimsoll

import (
	"fmt"
)

// chainState is a session's chain: the session digest, the last sequence and record digest, and
// the floor the session was opened with ("" for none). Every answer of the session must meet that
// floor whatever the call itself asks: an on-path rewriter can lower one call's tier and recompute
// every digest, and only the floor catches that.
type chainState struct {
	session  string
	sequence int64
	previous string
	floor    string
}

// checkAnswer is CheckExchange (docs/run-records.md §5) on a request as sent and an answer as
// received, then the answer decoded. A session call passes its chain, which advances only when
// every check passes. Any failure is reported as an error the caller turns into data_loss.
func checkAnswer(req, answer *jsonValue, chain *chainState) (*Result, error) {
	if answer == nil || answer.kind != jsonObject {
		return nil, fmt.Errorf("the answer is not a JSON object")
	}
	result, err := decodeResult(answer)
	if err != nil {
		return nil, err
	}
	rec := &result.Record
	if rec.Version != 1 {
		return nil, fmt.Errorf("the record's version is %d, not 1", rec.Version)
	}
	requestSHA, err := requestDigest(req)
	if err != nil {
		return nil, fmt.Errorf("the request sent has no digest: %v", err)
	}
	if rec.RequestSHA256 != requestSHA {
		return nil, fmt.Errorf("the record names another request (request_sha256 %s, sent %s)",
			rec.RequestSHA256, requestSHA)
	}
	resultSHA, err := resultDigest(answer)
	if err != nil {
		return nil, err
	}
	if rec.ResultSHA256 != resultSHA {
		return nil, fmt.Errorf("the result digest does not match the answer (record %s, recomputed %s)",
			rec.ResultSHA256, resultSHA)
	}
	if rec.Provider != result.Provider || rec.Isolation != result.Isolation ||
		rec.Environment != result.Environment {
		return nil, fmt.Errorf("the record's provider, isolation or environment differ from the answer's")
	}
	if floor, _ := asString(req.get("minimum_isolation"), ""); floor != "" && !TierMeets(result.Isolation, floor) {
		return nil, fmt.Errorf("the answer's tier %q does not meet the floor %q", result.Isolation, floor)
	}
	if chain != nil && chain.floor != "" && !TierMeets(result.Isolation, chain.floor) {
		return nil, fmt.Errorf("the answer's tier %q does not meet the floor %q the session was opened with",
			result.Isolation, chain.floor)
	}
	if env, _ := asString(req.get("environment"), ""); env != "" && result.Environment != env {
		return nil, fmt.Errorf("the answer's environment %q is not the one required (%q)",
			result.Environment, env)
	}
	if rec.StartedUnixMS > rec.EndedUnixMS {
		return nil, fmt.Errorf("the record ends before it starts")
	}
	recordSHA, err := recordDigest(answer.get("record"))
	if err != nil {
		return nil, err
	}
	if rec.RecordSHA256 != recordSHA {
		return nil, fmt.Errorf("the record digest does not match the record (record %s, recomputed %s)",
			rec.RecordSHA256, recordSHA)
	}
	hasSession := present(answer.get("record").get("session"))
	if chain == nil {
		if hasSession {
			return nil, fmt.Errorf("a run outside a session answered with a session record")
		}
		return result, nil
	}
	if !hasSession {
		return nil, fmt.Errorf("a session call answered without the session fields in its record")
	}
	if rec.Session != chain.session {
		return nil, fmt.Errorf("the record names another session")
	}
	if rec.Sequence != chain.sequence+1 {
		return nil, fmt.Errorf("the record's sequence is %d; the chain expects %d", rec.Sequence,
			chain.sequence+1)
	}
	if rec.PreviousSHA256 != chain.previous {
		return nil, fmt.Errorf("the record does not link to the previous record of the chain")
	}
	chain.sequence = rec.Sequence
	chain.previous = rec.RecordSHA256
	return result, nil
}

// reader decodes typed fields of an answer, keeping the first failure. Unknown fields are ignored.
type reader struct{ err error }

func (r *reader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

func (r *reader) str(v *jsonValue, key, path string) string {
	s, err := asString(v.get(key), path)
	if err != nil {
		r.fail(err)
	}
	return s
}

func (r *reader) optStr(v *jsonValue, key, path string) string {
	if !present(v.get(key)) {
		return ""
	}
	return r.str(v, key, path)
}

func (r *reader) integer(v *jsonValue, key, path string) int64 {
	n, err := asInt(v.get(key), path)
	if err != nil {
		r.fail(err)
	}
	return n
}

func (r *reader) small(v *jsonValue, key, path string) int {
	n := r.integer(v, key, path)
	if n < -1<<31 || n > 1<<31-1 {
		r.fail(fmt.Errorf("%s is out of range", path))
	}
	return int(n)
}

func (r *reader) boolean(v *jsonValue, key, path string) bool {
	b, err := asBool(v.get(key), path)
	if err != nil {
		r.fail(err)
	}
	return b
}

func (r *reader) bytes(v *jsonValue, key, path string) []byte {
	b, err := asBytes(v.get(key), path)
	if err != nil {
		r.fail(err)
	}
	return b
}

func (r *reader) array(v *jsonValue, key, path string) []*jsonValue {
	items, err := asArray(v.get(key), path)
	if err != nil {
		r.fail(err)
	}
	return items
}

func (r *reader) strings(v *jsonValue, key, path string) []string {
	items := r.array(v, key, path)
	out := make([]string, 0, len(items))
	for i, item := range items {
		s, err := asString(item, indexed(path, i))
		if err != nil {
			r.fail(err)
		}
		out = append(out, s)
	}
	return out
}

func (r *reader) object(v *jsonValue, key, path string) *jsonValue {
	obj, err := asObject(v.get(key), path)
	if err != nil {
		r.fail(err)
		return &jsonValue{kind: jsonObject}
	}
	return obj
}

// displays reads a result's displays (SPEC §7; nil when absent or empty). An entry is an object
// of exactly mime (a non-empty string), data (bytes) and the optional width and height (integers
// from 1; absent is 0).
func (r *reader) displays(v *jsonValue) []Display {
	var out []Display
	for i, item := range r.array(v, "displays", "displays") {
		path := indexed("displays", i)
		obj, err := asObject(item, path)
		if err != nil {
			r.fail(err)
			continue
		}
		if err := onlyKeys(obj, path, "mime", "data", "width", "height"); err != nil {
			r.fail(err)
		}
		d := Display{Mime: r.str(obj, "mime", path+".mime"), Data: r.bytes(obj, "data", path+".data")}
		if r.err == nil && d.Mime == "" {
			r.fail(fmt.Errorf("%s.mime is empty", path))
		}
		for _, dim := range [...]struct {
			key string
			to  *int
		}{{"width", &d.Width}, {"height", &d.Height}} {
			if !present(obj.get(dim.key)) {
				continue
			}
			if n := r.small(obj, dim.key, path+"."+dim.key); n < 1 {
				r.fail(fmt.Errorf("%s.%s must be at least 1", path, dim.key))
			} else {
				*dim.to = n
			}
		}
		out = append(out, d)
	}
	return out
}

var knownKinds = map[string]bool{"javascript": true, "python": true, "project": true, "cell": true}

func decodeResult(v *jsonValue) (*Result, error) {
	r := &reader{}
	res := &Result{
		Provider:        r.str(v, "provider", "provider"),
		Isolation:       r.str(v, "isolation", "isolation"),
		Environment:     r.str(v, "environment", "environment"),
		Kind:            r.str(v, "kind", "kind"),
		ExitCode:        r.small(v, "exit_code", "exit_code"),
		TimedOut:        r.boolean(v, "timed_out", "timed_out"),
		Stdout:          r.bytes(v, "stdout", "stdout"),
		Stderr:          r.bytes(v, "stderr", "stderr"),
		StdoutTruncated: r.boolean(v, "stdout_truncated", "stdout_truncated"),
		StderrTruncated: r.boolean(v, "stderr_truncated", "stderr_truncated"),
		DurationMS:      r.integer(v, "duration_ms", "duration_ms"),
		Outcome:         r.optStr(v, "outcome", "outcome"),
	}
	if r.err == nil && !knownKinds[res.Kind] {
		r.fail(fmt.Errorf("kind %q is not one this client knows", res.Kind))
	}
	for i, s := range r.array(v, "steps", "steps") {
		path := indexed("steps", i)
		obj, err := asObject(s, path)
		if err != nil {
			r.fail(err)
			continue
		}
		res.Steps = append(res.Steps, StepResult{
			Command:         r.strings(obj, "command", path+".command"),
			ExitCode:        r.small(obj, "exit_code", path+".exit_code"),
			TimedOut:        r.boolean(obj, "timed_out", path+".timed_out"),
			Stdout:          r.bytes(obj, "stdout", path+".stdout"),
			Stderr:          r.bytes(obj, "stderr", path+".stderr"),
			StdoutTruncated: r.boolean(obj, "stdout_truncated", path+".stdout_truncated"),
			StderrTruncated: r.boolean(obj, "stderr_truncated", path+".stderr_truncated"),
			DurationMS:      r.integer(obj, "duration_ms", path+".duration_ms"),
		})
	}
	for i, a := range r.array(v, "artifacts", "artifacts") {
		path := indexed("artifacts", i)
		obj, err := asObject(a, path)
		if err != nil {
			r.fail(err)
			continue
		}
		res.Artifacts = append(res.Artifacts, Artifact{
			Path:      r.str(obj, "path", path+".path"),
			Content:   r.bytes(obj, "content", path+".content"),
			Truncated: r.boolean(obj, "truncated", path+".truncated"),
		})
	}
	if present(v.get("value")) {
		res.HasValue = true
		res.Value = r.bytes(v, "value", "value")
	}
	if present(v.get("state_kept")) || present(v.get("interpreter_started")) || present(v.get("value_truncated")) {
		res.ValueTruncated = r.boolean(v, "value_truncated", "value_truncated")
		res.InterpreterStarted = r.boolean(v, "interpreter_started", "interpreter_started")
		res.StateKept = r.boolean(v, "state_kept", "state_kept")
	}
	if present(v.get("broker")) {
		b := r.object(v, "broker", "broker")
		res.Broker = &Broker{Profile: r.str(b, "profile", "broker.profile"),
			Calls: r.integer(b, "calls", "broker.calls"), Denied: r.integer(b, "denied", "broker.denied")}
		routes := r.array(b, "routes", "broker.routes")
		if len(routes) > MaxBrokerRoutes {
			r.fail(fmt.Errorf("broker.routes has more than %d rows", MaxBrokerRoutes))
		}
		for i, row := range routes {
			path := indexed("broker.routes", i)
			obj, err := asObject(row, path)
			if err != nil {
				r.fail(err)
				continue
			}
			res.Broker.Routes = append(res.Broker.Routes, BrokerRoute{
				Method:  r.str(obj, "method", path+".method"),
				Route:   r.str(obj, "route", path+".route"),
				Status:  r.integer(obj, "status", path+".status"),
				Allowed: r.boolean(obj, "allowed", path+".allowed"),
				Reason:  r.str(obj, "reason", path+".reason"),
				Count:   r.integer(obj, "count", path+".count"),
			})
		}
		if present(b.get("routes_dropped")) {
			res.Broker.RoutesDropped = r.integer(b, "routes_dropped", "broker.routes_dropped")
		}
	}
	for i, a := range r.array(v, "advice", "advice") {
		path := indexed("advice", i)
		obj, err := asObject(a, path)
		if err != nil {
			r.fail(err)
			continue
		}
		latency, err := asFloat(obj.get("added_latency_ms"), path+".added_latency_ms")
		if err != nil {
			r.fail(err)
		}
		res.Advice = append(res.Advice, Advice{
			Pattern:        r.str(obj, "pattern", path+".pattern"),
			Route:          r.str(obj, "route", path+".route"),
			Message:        r.str(obj, "message", path+".message"),
			ExtraCalls:     r.integer(obj, "extra_calls", path+".extra_calls"),
			AddedLatencyMS: latency,
			Bytes:          r.integer(obj, "bytes", path+".bytes"),
		})
	}
	res.Displays = r.displays(v)
	if present(v.get("displays_truncated")) {
		res.DisplaysTruncated = r.boolean(v, "displays_truncated", "displays_truncated")
	}
	rec := r.object(v, "record", "record")
	res.Record = Record{
		Version:       r.integer(rec, "version", "record.version"),
		RequestSHA256: r.str(rec, "request_sha256", "record.request_sha256"),
		ResultSHA256:  r.str(rec, "result_sha256", "record.result_sha256"),
		Provider:      r.str(rec, "provider", "record.provider"),
		Isolation:     r.str(rec, "isolation", "record.isolation"),
		Environment:   r.str(rec, "environment", "record.environment"),
		Policy:        r.str(rec, "policy", "record.policy"),
		StartedUnixMS: r.integer(rec, "started_unix_ms", "record.started_unix_ms"),
		EndedUnixMS:   r.integer(rec, "ended_unix_ms", "record.ended_unix_ms"),
		RecordSHA256:  r.str(rec, "record_sha256", "record.record_sha256"),
	}
	if present(rec.get("session")) {
		res.Record.Session = r.str(rec, "session", "record.session")
		res.Record.Sequence = r.integer(rec, "sequence", "record.sequence")
		res.Record.PreviousSHA256 = r.str(rec, "previous_sha256", "record.previous_sha256")
	}
	if r.err != nil {
		return nil, fmt.Errorf("the answer cannot be read: %v", r.err)
	}
	return res, nil
}
