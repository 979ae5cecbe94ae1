package llvm

import (
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"strings"

	"github.com/llir/llvm/ir/constant"
)

// blobBytes is the size from which a constant buffer (a model's weights)
// is a blob: in an object or shared object, its bytes reach the object
// through GNU as's .incbin (blobObject) rather than as LLVM IR text, so that
// neither Go's printer nor opt-16 and llc-16 parse megabytes of
// c"\xx\xx..." literals (ResNet-18: 47 MB of weights were 188 MB of IR
// text and 5 of the 8 seconds of opt and llc). Smaller constants stay in
// the IR, where opt may fold loads from them. The IR text of --emit llvm
// and the assembly of --emit asm keep every constant inline, so that
// they are self-contained.
const blobBytes = 16 << 10

// blob is one blob's symbol, alignment in bytes and data.
type blob struct {
	name  string
	align int
	data  []byte
}

// blobList lists the module's blobs; call it before the blobs become
// declarations (splitModules).
func (r *Result) blobList() []blob {
	out := make([]blob, len(r.blobs))
	for i, g := range r.blobs {
		out[i] = blob{g.Name(), int(g.Align), g.Init.(*constant.CharArray).X}
	}
	return out
}

// blobObject assembles blobs into a relocatable object of their own in
// dir and returns its path ("" when there are none): each blob's bytes
// are written to a file and the assembly
//
//	.section .rodata.tessera,"a",@progbits
//	.p2align 6
//	.globl NAME
//	.hidden NAME
//	.type NAME,@object
//	NAME:
//	.incbin "DIR/blob.N"
//	.size NAME, BYTES
//
// is assembled by GNU as (binutils), which streams the bytes: LLVM's
// assembler holds an .incbin three times over (ResNet-18's 47 MB of
// weights took llc-16 to 167 MB, GNU as to 50 MB). The code's modules
// declare the blobs (exposeInternals), and joining or linking the
// objects makes the hidden symbols local. Errors: the files cannot be
// written, GNU as is missing or fails.
func blobObject(dir string, blobs []blob) (string, error) {
	if len(blobs) == 0 {
		return "", nil
	}
	as, err := findTool("as", "binutils")
	if err != nil {
		return "", err
	}
	if strings.ContainsAny(dir, "\"\\\n") {
		return "", fmt.Errorf("temporary directory %q cannot be named in an .incbin directive", dir)
	}
	lines := []string{`.section .note.GNU-stack,"",@progbits`}
	for i, b := range blobs {
		path := filepath.Join(dir, fmt.Sprintf("blob.%d", i))
		if err := os.WriteFile(path, b.data, 0o644); err != nil {
			return "", err
		}
		lines = append(lines,
			`.section .rodata.tessera,"a",@progbits`,
			fmt.Sprintf(".p2align %d", bits.TrailingZeros64(uint64(b.align))),
			".globl "+b.name, ".hidden "+b.name,
			fmt.Sprintf(".type %s,@object", b.name),
			b.name+":",
			fmt.Sprintf(".incbin %q", path),
			fmt.Sprintf(".size %s, %d", b.name, len(b.data)))
	}
	src := filepath.Join(dir, "blobs.s")
	if err := os.WriteFile(src, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		return "", err
	}
	obj := filepath.Join(dir, "blobs.o")
	return obj, runTool(as, "--64", "-o", obj, src)
}

// symbolSafe replaces every byte of name outside [A-Za-z0-9_.] with '_',
// so that the name is a plain assembler symbol.
func symbolSafe(name string) string {
	return strings.Map(func(c rune) rune {
		if c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			return c
		}
		return '_'
	}, name)
}
