package llvm

import (
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"strings"

	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
)

// blobBytes is the size from which a constant buffer (a model's weights)
// is a blob: in an object or shared object, its bytes reach the object
// through the assembler's .incbin rather than as LLVM IR text, so that
// neither Go's printer nor opt-16 and llc-16 parse megabytes of
// c"\xx\xx..." literals (ResNet-18: 47 MB of weights were 188 MB of IR
// text and 5 of the 8 seconds of opt and llc). Smaller constants stay in
// the IR, where opt may fold loads from them. The IR text of --emit llvm
// and the assembly of --emit asm keep every constant inline, so that
// they are self-contained.
const blobBytes = 16 << 10

// objectText is the module's IR text for one object file: every blob is
// written to a file in dir and becomes an external dso_local declaration
// of the same global, defined by module assembly (blobAsm) with local
// binding, so that two models linked into one program do not clash. The
// module is restored before objectText returns. Errors: the files cannot
// be written.
func (r *Result) objectText(dir string) (string, error) {
	if len(r.blobs) == 0 {
		return r.LLVM(), nil
	}
	type saved struct {
		init    constant.Constant
		linkage enum.Linkage
		unnamed enum.UnnamedAddr
	}
	keep := make([]saved, len(r.blobs))
	asms := r.Module.ModuleAsms
	defer func() {
		for i, g := range r.blobs {
			g.Init, g.Linkage, g.UnnamedAddr, g.Preemption = keep[i].init, keep[i].linkage, keep[i].unnamed, enum.PreemptionNone
		}
		r.Module.ModuleAsms = asms
	}()
	lines, err := r.blobAsm(dir, false)
	if err != nil {
		return "", err
	}
	for i, g := range r.blobs {
		keep[i] = saved{g.Init, g.Linkage, g.UnnamedAddr}
		g.Init, g.Linkage, g.UnnamedAddr, g.Preemption = nil, enum.LinkageExternal, enum.UnnamedAddrNone, enum.PreemptionDSOLocal
	}
	r.Module.ModuleAsms = append(append([]string(nil), asms...), lines...)
	return r.LLVM(), nil
}

// blobAsm writes each blob's bytes to a file in dir and returns the
// module assembly that defines it:
//
//	.section .rodata.tessera,"a",@progbits
//	.p2align 6
//	.type NAME,@object
//	NAME:
//	.incbin "DIR/blob.N"
//	.size NAME, BYTES
//
// with .globl and .hidden NAME when global (a split module: the parts
// reference the blobs of part 0). Call it before the blobs' initializers
// are removed. Errors: the files cannot be written.
func (r *Result) blobAsm(dir string, global bool) ([]string, error) {
	var lines []string
	for i, g := range r.blobs {
		data := g.Init.(*constant.CharArray).X
		path := filepath.Join(dir, fmt.Sprintf("blob.%d", i))
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return nil, err
		}
		if strings.ContainsAny(path, "\"\\\n") {
			return nil, fmt.Errorf("temporary directory %q cannot be named in an .incbin directive", dir)
		}
		lines = append(lines,
			`.section .rodata.tessera,"a",@progbits`,
			fmt.Sprintf(".p2align %d", bits.TrailingZeros64(uint64(g.Align))),
			fmt.Sprintf(".type %s,@object", g.Name()))
		if global {
			lines = append(lines, ".globl "+g.Name(), ".hidden "+g.Name())
		}
		lines = append(lines,
			g.Name()+":",
			fmt.Sprintf(".incbin %q", path),
			fmt.Sprintf(".size %s, %d", g.Name(), len(data)),
			".text")
	}
	return lines, nil
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
