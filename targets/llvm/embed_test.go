package llvm

import (
	"debug/elf"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEmbedData: embedded bytes (quotes, backslashes, UTF-8 included) land
// NUL-terminated in their own section of the shared object, under an
// exported symbol; a name the module already defines is refused.
func TestEmbedData(t *testing.T) {
	res, err := Compile(parseModule(t, hostText), Options{})
	require.NoError(t, err)
	data := []byte(`{"name":"a\"b\\c","π":[1,2]}`)
	require.NoError(t, res.EmbedData("m_tessera_signature", ".tessera.signature", data))
	assert.ErrorContains(t, res.EmbedData("m_tessera_signature", ".x", nil), "already defines it")
	assert.ErrorContains(t, res.EmbedData(res.Entries[0].Symbol, ".x", nil), "already defines it")
	verifyLLVM(t, res)
	so := filepath.Join(t.TempDir(), "k.so")
	require.NoError(t, res.WriteShared(so))

	f, err := elf.Open(so)
	require.NoError(t, err)
	defer f.Close()
	sec := f.Section(".tessera.signature")
	require.NotNil(t, sec)
	got, err := sec.Data()
	require.NoError(t, err)
	assert.Equal(t, append(data, 0), got)
	syms, err := f.DynamicSymbols()
	require.NoError(t, err)
	found := false
	for _, s := range syms {
		found = found || s.Name == "m_tessera_signature" && s.Size == uint64(len(data)+1)
	}
	assert.True(t, found, "m_tessera_signature is exported")
}
