package jsonwire

import "slices"

// Field is one key/value pair to write into params._meta.
type Field struct{ Key, Value string }

// InjectMeta returns params with fields added to its "_meta" object, and
// whether it changed anything. Everything else in params is kept byte for
// byte: the new members are spliced in right after the opening brace of
// "_meta" (or a new "_meta" member right after the opening brace of
// params), so no existing member moves or is re-encoded. Fields already
// present in "_meta" are left alone (the application's own value wins).
// Params that are absent or null become {"_meta":{...}}; params that are
// not an object, or whose "_meta" is not an object, are returned unchanged.
func InjectMeta(params []byte, fields []Field) ([]byte, bool) {
	return injectMeta(params, fields, false)
}

// SetMeta is InjectMeta, except that the value of a field already present in
// "_meta" is replaced (in place: its member keeps its position). A proxy
// uses it to hand on its own trace context in place of the one it continued.
func SetMeta(params []byte, fields []Field) ([]byte, bool) {
	return injectMeta(params, fields, true)
}

func injectMeta(params []byte, fields []Field, overwrite bool) ([]byte, bool) {
	if len(fields) == 0 {
		return params, false
	}
	start := SkipSpace(params, 0)
	if start >= len(params) || IsNull(params[start:]) {
		out := make([]byte, 0, 16+metaSize(fields))
		out = append(out, `{"_meta":{`...)
		out = appendFields(out, fields)
		return append(out, "}}"...), true
	}
	o, ok := NewObject(params)
	if !ok {
		return params, false
	}
	var meta []byte
	metaAt := -1
	for {
		m, ok := o.Next()
		if !ok {
			break
		}
		if KeyIs(m.Key, "_meta") {
			meta, metaAt = m.Value, m.End-len(m.Value)
			break
		}
	}
	if o.Err() {
		return params, false
	}
	if metaAt < 0 {
		// New member after params' opening brace.
		open := start + 1
		empty := SkipSpace(params, open) < len(params) && params[SkipSpace(params, open)] == '}'
		out := make([]byte, 0, len(params)+12+metaSize(fields))
		out = append(out, params[:open]...)
		out = append(out, `"_meta":{`...)
		out = appendFields(out, fields)
		out = append(out, '}')
		if !empty {
			out = append(out, ',')
		}
		return append(out, params[open:]...), true
	}
	if len(meta) == 0 || meta[0] != '{' {
		return params, false
	}
	missing := fields[:0:0]
	var replace []valueAt // values to overwrite, in order of position
	for _, f := range fields {
		if v, at := lookupAt(meta, f.Key); v == nil {
			missing = append(missing, f)
		} else if overwrite && !valueIs(v, f.Value) {
			replace = append(replace, valueAt{metaAt + at, metaAt + at + len(v), f.Value})
		}
	}
	if len(missing) == 0 && len(replace) == 0 {
		return params, false
	}
	slices.SortFunc(replace, func(a, b valueAt) int { return a.start - b.start })
	open := metaAt + 1
	j := SkipSpace(params, open)
	empty := j < len(params) && params[j] == '}'
	out := make([]byte, 0, len(params)+metaSize(missing)+metaSize(fields))
	out = append(out, params[:open]...)
	if len(missing) > 0 {
		out = appendFields(out, missing)
		if !empty {
			out = append(out, ',')
		}
	}
	prev := open
	for _, r := range replace {
		out = append(out, params[prev:r.start]...)
		out = AppendString(out, r.value)
		prev = r.end
	}
	return append(out, params[prev:]...), true
}

// valueAt is a member value of params to overwrite: params[start:end].
type valueAt struct {
	start, end int
	value      string
}

// lookupAt is Lookup that also returns the value's offset in b.
func lookupAt(b []byte, name string) ([]byte, int) {
	o, ok := NewObject(b)
	if !ok {
		return nil, 0
	}
	for {
		m, ok := o.Next()
		if !ok {
			return nil, 0
		}
		if KeyIs(m.Key, name) {
			return m.Value, m.End - len(m.Value)
		}
	}
}

func valueIs(raw []byte, s string) bool {
	v, ok := String(raw)
	return ok && v == s
}

func metaSize(fields []Field) int {
	n := 0
	for _, f := range fields {
		n += len(f.Key) + len(f.Value) + 8
	}
	return n
}

func appendFields(out []byte, fields []Field) []byte {
	for i, f := range fields {
		if i > 0 {
			out = append(out, ',')
		}
		out = AppendString(out, f.Key)
		out = append(out, ':')
		out = AppendString(out, f.Value)
	}
	return out
}
