package llvm

import (
	"debug/elf"
	"fmt"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// blobModule is a host function with a 64x96 f32 weight (24 KiB, a
// blob) and a small bias (not one), calling a parallel dense kernel,
// whose 160 KB scratch buffer is a kept block (thread_local globals,
// which part 0 defines and the kernel's part declares), and a relu
// kernel.
func blobModule(seed int64) string {
	r := rand.New(rand.NewSource(seed))
	vals := func(n int) string {
		s := make([]string, n)
		for i := range s {
			s[i] = fmt.Sprint(float32(r.NormFloat64()))
		}
		return strings.Join(s, ", ")
	}
	return `tir.func @dense(%X: buffer<4x64xf32>, %W: buffer<64x96xf32>, %B: buffer<96xf32>, out %Y: buffer<4x96xf32>) {
  tir.for %i = 0 to 4 parallel {
    tir.for %j = 0 to 96 {
      tir.for %k = 0 to 64 {
        tir.block "Y"(%vi = spatial(0:4, %i), %vj = spatial(0:96, %j), %vk = reduce(0:64, %k)) reads(%X[%vi, %vk], %W[%vk, %vj], %B[%vj]) writes(%Y[%vi, %vj]) {
          tir.init {
            %Y[%vi, %vj] = %B[%vj]
          }
          %Y[%vi, %vj] = %Y[%vi, %vj] + %X[%vi, %vk] * %W[%vk, %vj]
        }
      }
    }
  }
  tir.allocate %T: buffer<40000xf32> {
    tir.for %i = 0 to 4 {
      tir.for %j = 0 to 96 {
        %T[%i * 96 + %j] = %Y[%i, %j]
      }
    }
    tir.for %i = 0 to 4 {
      tir.for %j = 0 to 96 {
        %Y[%i, %j] = %T[%i * 96 + %j]
      }
    }
  }
}
tir.func @relu(%A: buffer<4x96xf32>, out %C: buffer<4x96xf32>) {
  tir.for %i = 0 to 4 {
    tir.for %j = 0 to 96 {
      %C[%i, %j] = max(%A[%i, %j], 0.0)
    }
  }
}
tir.func @main(%x: buffer<4x64xf32>, out %y: buffer<4x96xf32>) attributes {global_symbol = "main", tessera.host} {
  tir.constant %w: buffer<64x96xf32> = dense<[` + vals(64*96) + `]> {
    tir.constant %b: buffer<96xf32> = dense<[` + vals(96) + `]> {
      tir.arena 1536 (%t: buffer<4x96xf32> at 0) {
        tir.call @dense(%x, %w, %b, %t)
        tir.call @relu(%t, %y)
      }
    }
  }
}
`
}

// TestBlobsAndParts: a weight of at least blobBytes reaches the object
// through its own object (GNU as, .incbin) and a hidden symbol made local,
// the IR text of --emit llvm keeps it inline, and a module compiled in one
// part or split in two (each function defined in one part, internal
// symbols hidden), with its kernels kept as LLVM objects or compacted to
// text, computes what the interpreter does and exports only its entry
// point, from the shared object and from the relocatable object.
func TestBlobsAndParts(t *testing.T) {
	plain := ""
	for _, compact := range []bool{false, true} {
		for _, parts := range []int{1, 2} {
			t.Run(fmt.Sprintf("parts=%d,compact=%v", parts, compact), func(t *testing.T) {
				m := parseModule(t, blobModule(7))
				opts := Options{StrictFP: true}
				if compact {
					opts.compactAt = 1
				}
				res, err := Compile(m, opts)
				require.NoError(t, err)
				res.parts = parts
				require.Len(t, res.blobs, 1, "the weight is a blob, the bias is not")
				text := res.LLVM()
				assert.Contains(t, text, "private unnamed_addr constant [24576 x i8] c\"")
				assert.Contains(t, text, "thread_local global i64 0")
				if compact {
					require.Equal(t, 6, len(res.texts), "@dense's kernel and its three outlined functions, @relu's and @main's kernels")
					assert.Equal(t, plain, strings.ReplaceAll(text, "define hidden ", "define internal "),
						"the compacted module prints as the other, its kernels hidden")
				} else {
					require.Empty(t, res.texts)
					plain = text
				}
				dir := t.TempDir()
				so := filepath.Join(dir, "k.so")
				require.NoError(t, res.WriteShared(so))
				checkHostShared(t, m, so, "main", 3, "TESSERA_NUM_THREADS=2")
				assert.Equal(t, []string{"main"}, definedGlobals(t, so, true))

				obj := filepath.Join(dir, "k.o")
				require.NoError(t, res.WriteObject(obj))
				assert.Equal(t, []string{"main"}, definedGlobals(t, obj, false))
				assert.Equal(t, text, res.LLVM(), "the module is restored after code generation")
			})
		}
	}
}

// definedGlobals are the names of the global symbols an ELF file
// defines: its dynamic symbols (a shared object) or its symbol table.
func definedGlobals(t *testing.T, path string, dynamic bool) []string {
	t.Helper()
	f, err := elf.Open(path)
	require.NoError(t, err)
	defer f.Close()
	syms, err := f.Symbols()
	if dynamic {
		syms, err = f.DynamicSymbols()
	}
	require.NoError(t, err)
	var out []string
	for _, s := range syms {
		if s.Section != elf.SHN_UNDEF && elf.ST_BIND(s.Info) != elf.STB_LOCAL && elf.ST_TYPE(s.Info) != elf.STT_SECTION {
			out = append(out, s.Name)
		}
	}
	return out
}
