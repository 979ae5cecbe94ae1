package tensorir

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRegisterScope: a registered scope is known, listed after the
// built-in ones and accepted by the verifier; names already known, empty
// or quoted are refused.
func TestRegisterScope(t *testing.T) {
	require.False(t, KnownScope("test.scratch"))
	src := "tir.func @f(%A: buffer<4xf32, \"test.scratch\">) {\n}"
	m, err := ParseString("s.tir", src)
	require.NoError(t, err)
	require.ErrorContains(t, VerifyFunc(m.Funcs[0]), `unknown scope "test.scratch" (want global, shared or local)`)
	RegisterScope("test.scratch", "a scratchpad for this test")
	t.Cleanup(func() { // other tests see the built-in scopes only
		scopeMu.Lock()
		delete(scopes, "test.scratch")
		scopeMu.Unlock()
	})
	require.True(t, KnownScope("test.scratch"))
	require.Equal(t, "a scratchpad for this test", ScopeDoc("test.scratch"))
	names := ScopeNames()
	require.Equal(t, []string{ScopeGlobal, ScopeShared, ScopeLocal}, names[:3])
	require.Contains(t, names[3:], "test.scratch")
	require.Contains(t, ScopeList(), "test.scratch")
	require.NoError(t, VerifyFunc(m.Funcs[0]))
	require.Equal(t, "test.scratch", m.Funcs[0].Params[0].Buffer.Scope)
	for _, bad := range []string{"test.scratch", ScopeLocal, "", `a"b`} {
		assert.Panics(t, func() { RegisterScope(bad, "") }, "%q", bad)
	}
}
