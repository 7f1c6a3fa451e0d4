package jsonwire

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestObjectMembers(t *testing.T) {
	in := []byte(` { "a" : 1, "b\"c":"x}y", "d":{"e":[1,{"f":"]"}]} , "g":true} `)
	o, ok := NewObject(in)
	if !ok {
		t.Fatal("not an object")
	}
	var keys, vals []string
	for {
		m, ok := o.Next()
		if !ok {
			break
		}
		keys = append(keys, string(m.Key))
		vals = append(vals, string(m.Value))
	}
	if o.Err() {
		t.Fatal("unexpected error")
	}
	wantKeys := []string{"a", `b\"c`, "d", "g"}
	wantVals := []string{"1", `"x}y"`, `{"e":[1,{"f":"]"}]}`, "true"}
	if !reflect.DeepEqual(keys, wantKeys) || !reflect.DeepEqual(vals, wantVals) {
		t.Fatalf("got %q %q", keys, vals)
	}
}

// TestNextSkipping: the caller's skip decides where each value ends; it
// sees the raw key and the value's offset.
func TestNextSkipping(t *testing.T) {
	in := []byte(`{"a":{"x":1},"b":[2], "c":3}`)
	o, _ := NewObject(in)
	var got []string
	skip := func(key, b []byte, i int) (int, bool) {
		if string(key) == "a" {
			return i + len(`{"x":1}`), true // known without scanning
		}
		if string(key) == "c" {
			return i, false // refused
		}
		return SkipValue(b, i)
	}
	for {
		m, ok := o.NextSkipping(skip)
		if !ok {
			break
		}
		got = append(got, string(m.Key)+"="+string(m.Value))
	}
	if want := []string{`a={"x":1}`, `b=[2]`}; !reflect.DeepEqual(got, want) || !o.Err() {
		t.Fatalf("got %q (error %v), want %q and an error at c", got, o.Err(), want)
	}
}

func TestMalformed(t *testing.T) {
	for _, in := range []string{`{"a"`, `{"a":}`, `{"a":1`, `{"a" 1}`, `{1:2}`, `{"a":"x`, `[1]`, ``, `{"a":[}`,
		`{"a":1 "b":2}`, `{"a":1,}`, `{,"a":1}`} {
		o, ok := NewObject([]byte(in))
		for ok {
			_, ok = o.Next()
		}
		if !o.Err() {
			t.Errorf("%q: no error", in)
		}
	}
}

func TestArraySeparators(t *testing.T) {
	for in, wantBad := range map[string]bool{`[1,2]`: false, `[]`: false, `[1 2]`: true, `[1,]`: true, `[,1]`: true} {
		a, ok := NewArray([]byte(in))
		n := 0
		for ok {
			if _, ok = a.Next(); ok {
				n++
			}
		}
		if a.Err() != wantBad {
			t.Errorf("%q: error %v after %d elements, want %v", in, a.Err(), n, wantBad)
		}
	}
}

func TestKeyIsDecodesEscapes(t *testing.T) {
	if !KeyIs([]byte(`\u006eame`), "name") || KeyIs([]byte("nam"), "name") {
		t.Fatal("KeyIs")
	}
	if v := Lookup([]byte(`{"x":1,"\u006eame":"s\u00e9"}`), "name"); string(v) != `"s\u00e9"` {
		t.Fatalf("Lookup = %s", v)
	}
	if s, ok := String([]byte(`"s\u00e9"`)); !ok || s != "sé" {
		t.Fatalf("String = %q %v", s, ok)
	}
}

func TestInt(t *testing.T) {
	for in, want := range map[string]int64{"7": 7, "-3": -3, "1.0": 1, "2e1": 20, "123456789012": 123456789012} {
		if n, ok := Int([]byte(in)); !ok || n != want {
			t.Errorf("Int(%s) = %d %v", in, n, ok)
		}
	}
	for _, in := range []string{"1.5", `"1"`, "x", ""} {
		if _, ok := Int([]byte(in)); ok {
			t.Errorf("Int(%s) accepted", in)
		}
	}
}

var tp = []Field{{"traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}, {"tracestate", `a="b"\`}}

func TestInjectMeta(t *testing.T) {
	const tpJSON = `"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01","tracestate":"a=\"b\"\\"`
	cases := []struct{ in, want string }{
		{``, `{"_meta":{` + tpJSON + `}}`},
		{`null`, `{"_meta":{` + tpJSON + `}}`},
		{`{}`, `{"_meta":{` + tpJSON + `}}`},
		{`{ }`, `{"_meta":{` + tpJSON + `} }`},
		{`{"name":"x","arguments":{"_meta":1}}`, `{"_meta":{` + tpJSON + `},"name":"x","arguments":{"_meta":1}}`},
		{`{"name":"x","_meta":{"k":1}}`, `{"name":"x","_meta":{` + tpJSON + `,"k":1}}`},
		{`{"name":"x","_meta":{}}`, `{"name":"x","_meta":{` + tpJSON + `}}`},
		{`{"_meta":{"traceparent":"mine"}}`, `{"_meta":{"tracestate":"a=\"b\"\\","traceparent":"mine"}}`},
	}
	for _, c := range cases {
		got, changed := InjectMeta([]byte(c.in), tp)
		if !changed || string(got) != c.want {
			t.Errorf("InjectMeta(%s) =\n %s (%v)\nwant\n %s", c.in, got, changed, c.want)
		}
		if !json.Valid(got) {
			t.Errorf("InjectMeta(%s) is not valid JSON", c.in)
		}
	}
	for _, in := range []string{`[1]`, `{"_meta":5}`, `{"a":`, `{"_meta":{"traceparent":"a","tracestate":"b"}}`} {
		if got, changed := InjectMeta([]byte(in), tp); changed || string(got) != in {
			t.Errorf("InjectMeta(%s) changed it to %s", in, got)
		}
	}
}

func TestSetMeta(t *testing.T) {
	const tpJSON = `"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01","tracestate":"a=\"b\"\\"`
	cases := []struct{ in, want string }{
		{`{"name":"x"}`, `{"_meta":{` + tpJSON + `},"name":"x"}`},
		// The continued context is replaced in place, the rest kept.
		{`{"_meta":{"k":1, "traceparent" : "theirs","z":2},"name":"x"}`,
			`{"_meta":{"tracestate":"a=\"b\"\\","k":1, "traceparent" : "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01","z":2},"name":"x"}`},
		{`{"_meta":{"tracestate":"old","traceparent":"theirs"}}`, `{"_meta":{"tracestate":"a=\"b\"\\","traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}`},
	}
	for _, c := range cases {
		got, changed := SetMeta([]byte(c.in), tp)
		if !changed || string(got) != c.want {
			t.Errorf("SetMeta(%s) =\n %s (%v)\nwant\n %s", c.in, got, changed, c.want)
		}
		if !json.Valid(got) {
			t.Errorf("SetMeta(%s) is not valid JSON", c.in)
		}
	}
	same := `{"_meta":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01","tracestate":"a=\"b\"\\"}}`
	if got, changed := SetMeta([]byte(same), tp); changed || string(got) != same {
		t.Errorf("SetMeta changed %s to %s", same, got)
	}
}

// FuzzInjectMeta checks that injection never panics, keeps valid input
// valid, and changes nothing but params._meta.
func FuzzInjectMeta(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1}`, `{"_meta":{"x":"y"},"b":[1,2]}`, `null`, `{"_meta":null}`, `{"a":"\"}"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, changed := InjectMeta(in, tp)
		if !changed {
			if string(out) != string(in) {
				t.Fatal("unchanged result differs from input")
			}
			return
		}
		if !json.Valid(in) && len(in) > 0 && string(in) != "null" {
			return // lenient walker: malformed input may still be spliced; nothing to compare
		}
		if !json.Valid(out) {
			t.Fatalf("invalid output %s from %s", out, in)
		}
		var before, after map[string]any
		if json.Unmarshal(in, &before) != nil || before == nil {
			before = map[string]any{}
		}
		if err := json.Unmarshal(out, &after); err != nil {
			t.Fatal(err)
		}
		meta, _ := after["_meta"].(map[string]any)
		if meta["traceparent"] == nil {
			t.Fatalf("no traceparent in %s", out)
		}
		delete(after, "_meta")
		delete(before, "_meta")
		if !reflect.DeepEqual(before, after) {
			t.Fatalf("members other than _meta changed: %s -> %s", in, out)
		}
	})
}

// TestScanDepth: Scan counts brackets outside strings only, and agrees
// with SkipValue's own bound.
func TestScanDepth(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for in, want := range map[string]bool{
		deep(MaxDepth):                   false,
		deep(MaxDepth + 1):               true,
		`["` + deep(MaxDepth+1) + `"]`:   false, // brackets in a string
		`{"a":` + deep(MaxDepth) + `}`:   true,
		`["\"` + deep(MaxDepth+1) + `"]`: false,
	} {
		_, err := Limits{MaxDepth: MaxDepth}.Scan([]byte(in))
		if got := err != nil; got != want {
			t.Errorf("Scan(%.40q…) = %v, want too deep %v", in, err, want)
		}
		if err != nil && !errors.Is(err, ErrTooDeep) {
			t.Errorf("Scan(%.40q…) = %v, want ErrTooDeep", in, err)
		}
		if _, ok := SkipValue([]byte(in), 0); ok == want {
			t.Errorf("SkipValue(%.40q…) ok = %v, but Scan says too deep %v", in, ok, want)
		}
	}
}

func TestLookupTop(t *testing.T) {
	deep := strings.Repeat("[", 100*MaxDepth) + strings.Repeat("]", 100*MaxDepth)
	for in, want := range map[string]string{
		`{"result":` + deep + `,"id":"p-1"}`:           `"p-1"`, // Lookup gives up at the deep value
		`{"id":7,"result":` + deep[:1000]:              `7`,     // cut short after the member
		`{"result":{"id":1},"error":"id","id" : 2}`:    `2`,     // a nested id and a value "id" are not members
		`{"a":"x\"id\":3","id":4}`:                     `4`,
		`{"i\u0064":5}`:                                `5`,
		`{"result":{"id":1}}`:                          ``,
		`["id",1]`:                                     ``,
		`{"id":` + deep + `}`:                          ``, // a container too deep to return
		`{"result":"` + strings.Repeat("x", 100) + `"`: ``,
		`{"result":[]}, {"id":1}`:                      ``, // after the object's end
	} {
		if got := string(LookupTop([]byte(in), "id")); got != want {
			t.Errorf("LookupTop(%.60q…) = %q, want %q", in, got, want)
		}
	}
}

// NextSkipping reads each element once, through skip, and End is past the
// closing bracket; escaped quotes, even after backslash pairs, do not end a
// string early.
func TestArrayNextSkipping(t *testing.T) {
	b := []byte(` [{"k":"a\\"}, "x\"]", 3 ] tail`)
	a, _ := NewArray(b)
	var seen []string
	for {
		e, ok := a.NextSkipping(func(b []byte, i int) (int, bool) {
			end, ok := SkipValue(b, i)
			seen = append(seen, string(b[i:end]))
			return end, ok
		})
		if !ok {
			break
		}
		if string(e) != seen[len(seen)-1] {
			t.Fatalf("element %q, skip saw %q", e, seen[len(seen)-1])
		}
	}
	if a.Err() || len(seen) != 3 || seen[1] != `"x\"]"` || string(b[a.End():]) != " tail" {
		t.Fatalf("elements %q, err %v, rest %q", seen, a.Err(), b[a.End():])
	}
}
