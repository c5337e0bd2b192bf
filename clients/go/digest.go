package plimsoll

// The run-record digests of docs/run-records.md, computed over the wire JSON as sent and as
// received. Every name and content is length-prefixed (8 bytes, big-endian), so the input of a
// digest parses back into exactly one list of (name, content) pairs.

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
)

const (
	domainRequest = "plimsoll.run-request.v1"
	domainResult  = "plimsoll.run-result.v1"
	domainRecord  = "plimsoll.run-record.v1"
	domainPolicy  = "plimsoll.policy.v1"
)

// encoder accumulates a digest's input.
type encoder struct{ buf []byte }

func newEncoder(domain string) *encoder {
	e := &encoder{buf: make([]byte, 0, 512)}
	e.value(domain)
	return e
}

func (e *encoder) value(s string) {
	e.buf = binary.BigEndian.AppendUint64(e.buf, uint64(len(s)))
	e.buf = append(e.buf, s...)
}

func (e *encoder) valueBytes(b []byte) {
	e.buf = binary.BigEndian.AppendUint64(e.buf, uint64(len(b)))
	e.buf = append(e.buf, b...)
}

func (e *encoder) str(name, content string) { e.value(name); e.value(content) }

func (e *encoder) bytes(name string, content []byte) { e.value(name); e.valueBytes(content) }

func (e *encoder) integer(name string, n int64) {
	e.value(name)
	var tmp [24]byte
	e.valueBytes(strconv.AppendInt(tmp[:0], n, 10))
}

func (e *encoder) boolean(name string, b bool) {
	if b {
		e.str(name, "true")
	} else {
		e.str(name, "false")
	}
}

func (e *encoder) float(name string, f float64) {
	bits := math.Float64bits(f)
	if math.IsNaN(f) {
		bits = 0x7ff8000000000000
	}
	var tmp [8]byte
	binary.BigEndian.PutUint64(tmp[:], bits)
	e.value(name)
	e.valueBytes(tmp[:])
}

func (e *encoder) sum() string {
	digest := sha256.Sum256(e.buf)
	return hex.EncodeToString(digest[:])
}

// Field readers that add the field to the encoder; err keeps the first failure.

type fieldReader struct {
	e   *encoder
	err error
}

func (r *fieldReader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

func (r *fieldReader) intField(obj *jsonValue, key, name, path string, defaultZero bool) {
	v := obj.get(key)
	if defaultZero && !present(v) {
		r.e.integer(name, 0)
		return
	}
	n, err := asInt(v, path)
	if err != nil {
		r.fail(err)
	}
	r.e.integer(name, n)
}

func (r *fieldReader) boolField(obj *jsonValue, key, name, path string) {
	b, err := asBool(obj.get(key), path)
	if err != nil {
		r.fail(err)
	}
	r.e.boolean(name, b)
}

func (r *fieldReader) strField(obj *jsonValue, key, name, path string, defaultEmpty bool) {
	v := obj.get(key)
	if defaultEmpty && !present(v) {
		r.e.str(name, "")
		return
	}
	s, err := asString(v, path)
	if err != nil {
		r.fail(err)
	}
	r.e.str(name, s)
}

func (r *fieldReader) bytesField(obj *jsonValue, key, name, path string) {
	b, err := asBytes(obj.get(key), path)
	if err != nil {
		r.fail(err)
	}
	r.e.bytes(name, b)
}

func (r *fieldReader) list(obj *jsonValue, key, name, path string) []*jsonValue {
	items, err := asArray(obj.get(key), path)
	if err != nil {
		r.fail(err)
	}
	r.e.integer(name, int64(len(items)))
	return items
}

func (r *fieldReader) object(v *jsonValue, path string, keys ...string) *jsonValue {
	obj, err := asObject(v, path)
	if err != nil {
		r.fail(err)
		return &jsonValue{kind: jsonObject}
	}
	if keys != nil {
		if err := onlyKeys(obj, path, keys...); err != nil {
			r.fail(err)
		}
	}
	return obj
}

func indexed(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// requestDigest is the request digest (§3.1) of a wire request. Requests are read strictly: an
// unknown field at any level is refused, since it would drop out of the digest silently.
func requestDigest(req *jsonValue) (string, error) {
	r := &fieldReader{e: newEncoder(domainRequest)}
	req = r.object(req, "request", "protocol", "minimum_isolation", "timeout_ms", "trace_id",
		"grant_profile", "environment", "image", "javascript", "python", "project", "cell")
	if !present(req.get("protocol")) {
		r.fail(fmt.Errorf("request.protocol is required"))
	}
	r.intField(req, "protocol", "protocol", "protocol", false)
	r.strField(req, "minimum_isolation", "minimum_isolation", "minimum_isolation", true)
	r.intField(req, "timeout_ms", "timeout_ms", "timeout_ms", true)
	r.strField(req, "grant_profile", "grant_profile", "grant_profile", true)
	// image is the one field encoded only when present: absent, null or "" adds no pair at all.
	if v := req.get("image"); present(v) {
		s, err := asString(v, "image")
		if err != nil {
			r.fail(err)
		} else if s != "" {
			r.e.str("image", s)
		}
	}
	if v := req.get("trace_id"); present(v) {
		if _, err := asString(v, "trace_id"); err != nil {
			r.fail(err)
		}
	}
	if v := req.get("environment"); present(v) {
		if _, err := asString(v, "environment"); err != nil {
			r.fail(err)
		}
	}
	count := 0
	for _, k := range [...]string{"javascript", "python", "project", "cell"} {
		if present(req.get(k)) {
			count++
		}
	}
	r.e.integer("payloads", int64(count))
	for _, k := range [...]string{"javascript", "python"} {
		if v := req.get(k); present(v) {
			p := r.object(v, k, "code")
			r.e.str("kind", k)
			r.bytesField(p, "code", k+".code", k+".code")
		}
	}
	if v := req.get("project"); present(v) {
		p := r.object(v, "project", "files", "steps", "artifacts")
		r.e.str("kind", "project")
		for i, f := range r.list(p, "files", "project.files", "project.files") {
			path := indexed("project.files", i)
			f = r.object(f, path, "path", "content")
			r.strField(f, "path", "project.file.path", path+".path", false)
			r.bytesField(f, "content", "project.file.content", path+".content")
		}
		for i, s := range r.list(p, "steps", "project.steps", "project.steps") {
			path := indexed("project.steps", i)
			args, err := asArray(s, path)
			if err != nil || !present(s) {
				r.fail(fmt.Errorf("%s must be an array", path))
			}
			r.e.integer("project.step.argv", int64(len(args)))
			for j, a := range args {
				s, err := asString(a, indexed(path, j))
				if err != nil {
					r.fail(err)
				}
				r.e.str("project.step.arg", s)
			}
		}
		for i, a := range r.list(p, "artifacts", "project.artifacts", "project.artifacts") {
			s, err := asString(a, indexed("project.artifacts", i))
			if err != nil {
				r.fail(err)
			}
			r.e.str("project.artifact", s)
		}
	}
	if v := req.get("cell"); present(v) {
		p := r.object(v, "cell", "language", "code")
		r.e.str("kind", "cell")
		r.strField(p, "language", "cell.language", "cell.language", false)
		r.bytesField(p, "code", "cell.code", "cell.code")
	}
	if r.err != nil {
		return "", r.err
	}
	return r.e.sum(), nil
}

// resultDigest is the result digest (§3.2, rows 1-19) of a wire answer; `record` and fields this
// client does not know are not inputs (a field that enters the digest comes with a new domain, or,
// like displays, adds no pair when absent, so that every earlier answer keeps its digest).
func resultDigest(res *jsonValue) (string, error) {
	r := &fieldReader{e: newEncoder(domainResult)}
	res = r.object(res, "result")
	r.strField(res, "provider", "provider", "provider", false)
	r.strField(res, "isolation", "isolation", "isolation", false)
	r.strField(res, "environment", "environment", "environment", false)
	r.strField(res, "kind", "kind", "kind", false)
	r.intField(res, "exit_code", "exit_code", "exit_code", false)
	r.boolField(res, "timed_out", "timed_out", "timed_out")
	r.bytesField(res, "stdout", "stdout", "stdout")
	r.bytesField(res, "stderr", "stderr", "stderr")
	r.boolField(res, "stdout_truncated", "stdout_truncated", "stdout_truncated")
	r.boolField(res, "stderr_truncated", "stderr_truncated", "stderr_truncated")
	r.intField(res, "duration_ms", "duration_ms", "duration_ms", false)
	if v := res.get("outcome"); present(v) {
		r.strField(res, "outcome", "outcome", "outcome", false)
	}
	for i, s := range r.list(res, "steps", "steps", "steps") {
		path := indexed("steps", i)
		s = r.object(s, path)
		command, err := asArray(s.get("command"), path+".command")
		if err != nil || !present(s.get("command")) {
			r.fail(fmt.Errorf("%s.command must be an array", path))
		}
		r.e.integer("step.command", int64(len(command)))
		for j, a := range command {
			arg, err := asString(a, indexed(path+".command", j))
			if err != nil {
				r.fail(err)
			}
			r.e.str("step.command.arg", arg)
		}
		r.intField(s, "exit_code", "step.exit_code", path+".exit_code", false)
		r.boolField(s, "timed_out", "step.timed_out", path+".timed_out")
		r.bytesField(s, "stdout", "step.stdout", path+".stdout")
		r.bytesField(s, "stderr", "step.stderr", path+".stderr")
		r.boolField(s, "stdout_truncated", "step.stdout_truncated", path+".stdout_truncated")
		r.boolField(s, "stderr_truncated", "step.stderr_truncated", path+".stderr_truncated")
		r.intField(s, "duration_ms", "step.duration_ms", path+".duration_ms", false)
	}
	for i, a := range r.list(res, "artifacts", "artifacts", "artifacts") {
		path := indexed("artifacts", i)
		a = r.object(a, path)
		r.strField(a, "path", "artifact.path", path+".path", false)
		r.bytesField(a, "content", "artifact.content", path+".content")
		r.boolField(a, "truncated", "artifact.truncated", path+".truncated")
	}
	if present(res.get("value")) {
		r.bytesField(res, "value", "cell.value", "value")
	}
	cellFields := 0
	for _, k := range [...]string{"value_truncated", "interpreter_started", "state_kept"} {
		if present(res.get(k)) {
			cellFields++
		}
	}
	if cellFields == 3 {
		r.boolField(res, "value_truncated", "cell.value_truncated", "value_truncated")
		r.boolField(res, "interpreter_started", "cell.interpreter_started", "interpreter_started")
		r.boolField(res, "state_kept", "cell.state_kept", "state_kept")
	} else if cellFields != 0 || present(res.get("value")) {
		r.fail(fmt.Errorf("value_truncated, interpreter_started and state_kept come together"))
	}
	if v := res.get("broker"); present(v) {
		b := r.object(v, "broker")
		r.strField(b, "profile", "broker.profile", "broker.profile", false)
		r.intField(b, "calls", "broker.calls", "broker.calls", false)
		r.intField(b, "denied", "broker.denied", "broker.denied", false)
		// The call trace's rows, then how many were left out (absent: no rows, 0).
		for i, row := range r.list(b, "routes", "broker.routes", "broker.routes") {
			path := indexed("broker.routes", i)
			row = r.object(row, path)
			r.strField(row, "method", "broker.route.method", path+".method", false)
			r.strField(row, "route", "broker.route.route", path+".route", false)
			r.intField(row, "status", "broker.route.status", path+".status", false)
			r.boolField(row, "allowed", "broker.route.allowed", path+".allowed")
			r.strField(row, "reason", "broker.route.reason", path+".reason", false)
			r.intField(row, "count", "broker.route.count", path+".count", false)
		}
		r.intField(b, "routes_dropped", "broker.routes_dropped", "broker.routes_dropped", true)
	}
	for i, a := range r.list(res, "advice", "advice", "advice") {
		path := indexed("advice", i)
		a = r.object(a, path)
		r.strField(a, "pattern", "advice.pattern", path+".pattern", false)
		r.strField(a, "route", "advice.route", path+".route", false)
		r.strField(a, "message", "advice.message", path+".message", false)
		r.intField(a, "extra_calls", "advice.extra_calls", path+".extra_calls", false)
		f, err := asFloat(a.get("added_latency_ms"), path+".added_latency_ms")
		if err != nil {
			r.fail(err)
		}
		r.e.float("advice.added_latency_ms", f)
		r.intField(a, "bytes", "advice.bytes", path+".bytes", false)
	}
	// Rows 18 and 19: rich outputs (SPEC §7), last and only when there is something to say (absent,
	// null or [] displays and an absent, null or false displays_truncated add no pair), so a result
	// without them keeps the digest it always had. An entry has exactly these four keys.
	displays, err := asArray(res.get("displays"), "displays")
	if err != nil {
		r.fail(err)
	}
	if len(displays) > 0 {
		r.e.integer("displays", int64(len(displays)))
		for i, d := range displays {
			path := indexed("displays", i)
			d = r.object(d, path, "mime", "data", "width", "height")
			r.strField(d, "mime", "display.mime", path+".mime", false)
			r.bytesField(d, "data", "display.data", path+".data")
			r.intField(d, "width", "display.width", path+".width", true)
			r.intField(d, "height", "display.height", path+".height", true)
		}
	}
	if v := res.get("displays_truncated"); present(v) {
		truncated, err := asBool(v, "displays_truncated")
		if err != nil {
			r.fail(err)
		} else if truncated {
			r.e.boolean("displays_truncated", true)
		}
	}
	if r.err != nil {
		return "", r.err
	}
	return r.e.sum(), nil
}

// recordDigest is the record digest (§3.3) of a wire record (record_sha256 is not an input).
func recordDigest(rec *jsonValue) (string, error) {
	r := &fieldReader{e: newEncoder(domainRecord)}
	rec = r.object(rec, "record")
	r.intField(rec, "version", "version", "record.version", false)
	r.strField(rec, "request_sha256", "request_sha256", "record.request_sha256", false)
	r.strField(rec, "result_sha256", "result_sha256", "record.result_sha256", false)
	r.strField(rec, "provider", "provider", "record.provider", false)
	r.strField(rec, "isolation", "isolation", "record.isolation", false)
	r.strField(rec, "environment", "environment", "record.environment", false)
	r.strField(rec, "policy", "policy", "record.policy", false)
	r.intField(rec, "started_unix_ms", "started_unix_ms", "record.started_unix_ms", false)
	r.intField(rec, "ended_unix_ms", "ended_unix_ms", "record.ended_unix_ms", false)
	session := 0
	for _, k := range [...]string{"session", "sequence", "previous_sha256"} {
		if present(rec.get(k)) {
			session++
		}
	}
	if session == 3 {
		r.strField(rec, "session", "session", "record.session", false)
		r.intField(rec, "sequence", "sequence", "record.sequence", false)
		r.strField(rec, "previous_sha256", "previous_sha256", "record.previous_sha256", false)
	} else if session != 0 {
		r.fail(fmt.Errorf("record.session, sequence and previous_sha256 come together"))
	}
	if r.err != nil {
		return "", r.err
	}
	return r.e.sum(), nil
}

// policyFields is the order of the policy digest (§3.4).
var policyFields = [...]string{"memory_bytes", "cpus_millis", "pids", "tmp_bytes", "work_bytes",
	"output_cap_bytes", "snippet_timeout_default_ms", "snippet_timeout_max_ms",
	"project_timeout_default_ms", "project_timeout_max_ms", "run_ceiling_ms", "max_code_bytes",
	"max_project_files", "max_project_bytes", "max_artifacts", "max_artifact_bytes"}

// policyDigest is the policy digest (§3.4) of a wire limits object.
func policyDigest(limits *jsonValue) (string, error) {
	r := &fieldReader{e: newEncoder(domainPolicy)}
	limits = r.object(limits, "limits", policyFields[:]...)
	for _, k := range policyFields {
		r.intField(limits, k, k, "limits."+k, false)
	}
	if r.err != nil {
		return "", r.err
	}
	return r.e.sum(), nil
}

// sessionDigest is record.session: the plain SHA-256 of the session ID, lowercase hex.
func sessionDigest(id string) string {
	digest := sha256.Sum256([]byte(id))
	return hex.EncodeToString(digest[:])
}
