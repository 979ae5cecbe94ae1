package llvm

import (
	"io"
	"strings"

	"github.com/llir/llvm/ir"
	"github.com/llir/llvm/ir/enum"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// compactInstructions is the size in LLVM instructions from which code
// generation keeps each finished kernel as its LLVM assembly text instead
// of as llir objects: an instruction object takes about 200 bytes, its
// text about 40, and ResNet-18's 230k instructions held 46 MB of the
// compiler's heap while its weights took 45 (issue 18's peak memory).
// It is the size from which a module is compiled in parts (partCount),
// and a compacted module is always compiled as a split one: its kernels
// are hidden symbols rather than internal ones, as the parts need them.
const compactInstructions = 2 * splitInstructions

// funcText is a finished function kept as text: its definition as
// Func.LLString printed it, and its instruction count (funcSize).
type funcText struct {
	text string
	size int
}

// compactGroup is called when pf's functions are complete: its kernel
// function and the functions outlined from it (from index from of the
// module's functions on). Once the module's kernels hold compactAt
// instructions, each of them is printed to text and its blocks dropped;
// an internal one becomes external with hidden visibility first (the
// linkage a split module gives it, split.go). NVPTX modules are not
// compacted.
func (m *mgen) compactGroup(pf *tir.PrimFunc, from int) {
	if m.device {
		return
	}
	group := []*ir.Func{m.funcs[pf]}
	for _, f := range m.m.Funcs[from:] {
		if f != group[0] && kernelGroup(f.Name()) == pf.Name {
			group = append(group, f)
		}
	}
	sizes := make([]int, len(group))
	for i, f := range group {
		sizes[i] = funcSize(f)
		m.generated += sizes[i]
	}
	at := m.opts.compactAt
	if at == 0 {
		at = compactInstructions
	}
	if m.generated < at {
		return
	}
	for i, f := range group {
		if len(f.Blocks) == 0 {
			continue
		}
		if isLocal(f.Linkage) {
			f.Linkage, f.Visibility = enum.LinkageNone, enum.VisibilityHidden
		}
		m.texts[f] = funcText{text: f.LLString(), size: sizes[i]}
		f.Blocks = nil
	}
}

// defined reports whether f is defined in the module (has blocks or was
// compacted).
func (r *Result) defined(f *ir.Func) bool {
	_, compacted := r.texts[f]
	return compacted || len(f.Blocks) > 0
}

// size is f's instruction count, compacted or not.
func (r *Result) size(f *ir.Func) int {
	if t, ok := r.texts[f]; ok {
		return t.size
	}
	return funcSize(f)
}

// text is module m (r.Module or one of its parts) as LLVM assembly, with
// the compacted functions' text: printing it streams the module to a
// writer.
func (r *Result) text(m *ir.Module) moduleText { return moduleText{m, r.texts} }

// moduleText prints a module whose functions may be compacted.
type moduleText struct {
	m     *ir.Module
	texts map[*ir.Func]funcText
}

// WriteTo writes the module: llir prints everything but the functions,
// then each function follows, as its text when compacted (LLVM assembly
// allows top-level entities in any order). A module without compacted
// functions is printed by llir alone.
func (t moduleText) WriteTo(w io.Writer) (int64, error) {
	if len(t.texts) == 0 {
		return t.m.WriteTo(w)
	}
	head := headerOf(t.m)
	head.Globals, head.ModuleAsms = t.m.Globals, t.m.ModuleAsms
	n, err := head.WriteTo(w)
	for i, f := range t.m.Funcs {
		if err != nil {
			break
		}
		s := "\n"
		if i > 0 {
			s = "\n\n"
		}
		if c, ok := t.texts[f]; ok {
			s += c.text
		} else {
			s += f.LLString()
		}
		var k int
		k, err = io.WriteString(w, s)
		n += int64(k)
	}
	if err == nil && len(t.m.Funcs) > 0 {
		var k int
		k, err = io.WriteString(w, "\n")
		n += int64(k)
	}
	return n, err
}

// headerOf is a module with m's type definitions, target, attribute
// groups and metadata, and no globals or functions.
func headerOf(m *ir.Module) *ir.Module {
	return &ir.Module{
		TypeDefs: m.TypeDefs, SourceFilename: m.SourceFilename,
		DataLayout: m.DataLayout, TargetTriple: m.TargetTriple,
		AttrGroupDefs: m.AttrGroupDefs, MetadataDefs: m.MetadataDefs,
		NamedMetadataDefs: m.NamedMetadataDefs,
	}
}

// String is the module's text (LLVM).
func (t moduleText) String() string {
	var sb strings.Builder
	_, _ = t.WriteTo(&sb)
	return sb.String()
}
