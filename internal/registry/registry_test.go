package registry

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParsePipeline(t *testing.T) {
	cases := []struct {
		in   string
		want []Item
	}{
		{"", nil},
		{"a", []Item{{Name: "a", Options: map[string]string{}}}},
		{" a , b{k=v flag} ", []Item{
			{Name: "a", Options: map[string]string{}},
			{Name: "b", Options: map[string]string{"k": "v", "flag": "true"}},
		}},
		{"builtin.module(func.func(x-y{n=3}),z)", []Item{
			{Name: "x-y", Options: map[string]string{"n": "3"}},
			{Name: "z", Options: map[string]string{}},
		}},
		{"p{file=a=b}", []Item{{Name: "p", Options: map[string]string{"file": "a=b"}}}},
	}
	for _, c := range cases {
		got, err := ParsePipeline(c.in)
		if err != nil {
			t.Errorf("ParsePipeline(%q): %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParsePipeline(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestParsePipelineErrors(t *testing.T) {
	cases := map[string]string{
		"a,,b":               "empty pass name",
		"a)":                 "unbalanced ')'",
		"a{k=v":              "unbalanced brackets",
		"a{k=v}x":            "malformed pass options",
		"{k=v}":              "empty pass name",
		"a b":                "invalid pass name",
		"a{=v}":              "option without a name",
		"builtin.module(a)x": "malformed pipeline element",
		"any(,)":             "empty pass name",
	}
	for in, want := range cases {
		_, err := ParsePipeline(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParsePipeline(%q) error = %v, want it to mention %q", in, err, want)
		}
	}
}

func TestItemStringRoundTrips(t *testing.T) {
	in := "b{z=1 a=x},c"
	items, err := ParsePipeline(in)
	if err != nil {
		t.Fatal(err)
	}
	if got := items[0].String() + "," + items[1].String(); got != "b{a=x z=1},c" {
		t.Errorf("rendered %q", got)
	}
}

type fakePass struct{ opts map[string]string }

func TestInstantiate(t *testing.T) {
	info := &PassInfo[*fakePass]{
		Name:    "p",
		Options: map[string]string{"n": "a count"},
		New: func(opts map[string]string) (*fakePass, error) {
			if opts["n"] == "bad" {
				return nil, errors.New("n must be a number")
			}
			return &fakePass{opts}, nil
		},
	}
	if p, err := Instantiate(info, map[string]string{"n": "3"}); err != nil || p.opts["n"] != "3" {
		t.Errorf("Instantiate = %v, %v", p, err)
	}
	if _, err := Instantiate(info, map[string]string{"m": "3"}); err == nil || err.Error() != "pass 'p' has no option 'm'" {
		t.Errorf("unknown option: %v", err)
	}
	if _, err := Instantiate(info, map[string]string{"n": "bad"}); err == nil || err.Error() != "pass 'p': n must be a number" {
		t.Errorf("pass error: %v", err)
	}
}

func TestRegistry(t *testing.T) {
	r := NewPasses[*fakePass]("test")
	r.Register(&PassInfo[*fakePass]{Name: "b"})
	r.Register(&PassInfo[*fakePass]{Name: "a"})
	if got := r.Names(); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("Names = %v", got)
	}
	if all := r.All(); len(all) != 2 || all[0].Name != "a" {
		t.Errorf("All = %v", all)
	}
	if r.Info("c") != nil {
		t.Error("Info of an unregistered name is not nil")
	}
	defer func() {
		if msg, _ := recover().(string); msg != "test pass registered twice: a" {
			t.Errorf("duplicate registration: recovered %q", msg)
		}
	}()
	r.Register(&PassInfo[*fakePass]{Name: "a"})
}

func TestWriteTiming(t *testing.T) {
	var b bytes.Buffer
	WriteTiming(&b, []Timing{{"x", 3 * time.Millisecond}, {"y", time.Millisecond}})
	for _, want := range []string{"Total Execution Time: 0.0040 seconds", "( 75.0%)  x", "( 25.0%)  y", "(100.0%)  Total"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("timing report lacks %q:\n%s", want, b.String())
		}
	}
}
