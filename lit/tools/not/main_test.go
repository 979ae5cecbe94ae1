package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestInvert(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want int
		msg  string
	}{
		{"success becomes failure", []string{"sh", "-c", "exit 0"}, 1, ""},
		{"failure becomes success", []string{"sh", "-c", "exit 1"}, 0, ""},
		{"any non-zero status", []string{"sh", "-c", "exit 3"}, 0, ""},
		{"crash is a failure", []string{"sh", "-c", "kill -SEGV $$"}, 1, "killed by signal"},
		{"--crash accepts a crash", []string{"--crash", "sh", "-c", "kill -ABRT $$"}, 0, ""},
		{"--crash rejects a plain failure", []string{"--crash", "sh", "-c", "exit 1"}, 1, "instead of crashing"},
		{"--crash rejects success", []string{"--crash", "sh", "-c", "exit 0"}, 1, ""},
		{"missing command", []string{"/nonexistent/tool"}, 1, "cannot run"},
		{"no command", nil, 2, "usage"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			got := invert(c.args, strings.NewReader(""), &out, &errb)
			assert.Equal(t, c.want, got, "stderr: %s", errb.String())
			assert.Contains(t, errb.String(), c.msg)
		})
	}
}

func TestInvertPassesStreams(t *testing.T) {
	var out, errb bytes.Buffer
	got := invert([]string{"sh", "-c", "cat; echo oops >&2; exit 4"}, strings.NewReader("hello\n"), &out, &errb)
	assert.Equal(t, 0, got)
	assert.Equal(t, "hello\n", out.String())
	assert.Equal(t, "oops\n", errb.String())
}
