package registry

import (
	"reflect"
	"strings"
	"testing"
)

// FuzzParsePipeline checks that the pipeline parser never panics and that
// every pipeline it accepts renders (Item.String) to text that parses
// back to the same items.
func FuzzParsePipeline(f *testing.F) {
	for _, s := range []string{
		"a", "a,b{k=v}", "builtin.module(func.func(p{x=1 y}))", "a{k=,}", "(", "a{=}", "any(b),c",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		items, err := ParsePipeline(s)
		if err != nil {
			return
		}
		var parts []string
		for _, it := range items {
			parts = append(parts, it.String())
		}
		text := strings.Join(parts, ",")
		again, err := ParsePipeline(text)
		if err != nil {
			t.Fatalf("%q parsed, but its rendering %q does not: %v", s, text, err)
		}
		if len(items) == 0 && len(again) == 0 {
			return
		}
		if !reflect.DeepEqual(items, again) {
			t.Fatalf("%q → %v, rendered %q → %v", s, items, text, again)
		}
	})
}
