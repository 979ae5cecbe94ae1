package isa

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEncodingTablesMatchISA checks every bit-field row of ISA.md's
// instruction tables against the encoder's field layout: same order, same
// first and last bit.
func TestEncodingTablesMatchISA(t *testing.T) {
	doc, err := os.ReadFile("../ISA.md")
	require.NoError(t, err)
	sections := map[string][]field{"### LOAD, STORE": dmaFields, "### GEMM": gemmFields, "### ALU": aluFields}
	row := regexp.MustCompile("^\\| (\\d+)(?:–(\\d+))? \\| `([a-z_]+)`")
	for title, fields := range sections {
		i := strings.Index(string(doc), title)
		require.GreaterOrEqual(t, i, 0, title)
		var got []string
		for _, line := range strings.Split(string(doc[i:]), "\n")[1:] {
			if strings.HasPrefix(line, "###") {
				break
			}
			m := row.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			lo, _ := strconv.Atoi(m[1])
			hi := lo
			if m[2] != "" {
				hi, _ = strconv.Atoi(m[2])
			}
			got = append(got, m[3]+" "+strconv.Itoa(lo)+"-"+strconv.Itoa(hi))
		}
		var want []string
		pos := 7
		for _, f := range fields {
			want = append(want, f.name+" "+strconv.Itoa(pos)+"-"+strconv.Itoa(pos+int(f.bits)-1))
			pos += int(f.bits)
		}
		require.Equal(t, want, got, title)
	}
}
