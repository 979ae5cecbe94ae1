package tensorir_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/tensorir"
)

// readmeExamples returns the ```tir code blocks of README.md.
func readmeExamples(t testing.TB) []string {
	t.Helper()
	data, err := os.ReadFile("README.md")
	require.NoError(t, err)
	var out []string
	parts := strings.Split(string(data), "```tir\n")
	for _, p := range parts[1:] {
		end := strings.Index(p, "```")
		require.GreaterOrEqual(t, end, 0, "unterminated code block in README.md")
		out = append(out, p[:end])
	}
	return out
}

// Every example of README.md parses, verifies and is in canonical form
// (it prints back exactly as written; examples with locations are
// printed with them).
func TestReadmeExamples(t *testing.T) {
	examples := readmeExamples(t)
	require.NotEmpty(t, examples)
	for _, src := range examples {
		m := tensorLevel.MustParse(t, src)
		opts := tensorir.PrintOptions{DebugInfo: strings.Contains(src, " loc(")}
		assert.Equal(t, src, tensorir.PrintWith(m, opts))
	}
}
