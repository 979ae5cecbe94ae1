package runtime

import (
	"bytes"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	goruntime "runtime"
	"slices"
)

// The signature of a compiled model travels inside its shared object: a
// NUL-terminated JSON document in the ELF section SignatureSection, which
// is also the exported read-only symbol <prefix>_tessera_signature (a C
// program may read it with dlsym). ReadSignature finds it by section name
// without loading the object, so a foreign file never runs its
// constructors. The format:
//
//	{"version": 1, "target": "cpu", "mcpu": "native", "vector_bits": 512,
//	 "threads": 2, "strict_fp": false, "prefix": "lenet5",
//	 "entries": [{"func": "main", "symbol": "lenet5_main",
//	   "inputs":  [{"name": "arg0", "dtype": "f32", "shape": [360, 1, 32, 32]}],
//	   "outputs": [{"name": "out0", "dtype": "f32", "shape": [360, 10]}]}]}
//
// Every field is required and no other is accepted: a flipped byte in a
// key is an error, not a silently missing shape. A change of the format
// bumps SignatureVersion; a reader refuses any other version.
const (
	// SignatureVersion is the format version this package writes and reads.
	SignatureVersion = 1
	// SignatureSection is the ELF section holding the signature.
	SignatureSection = ".tessera.signature"
	// SignatureSymbolSuffix follows the export prefix in the signature's
	// symbol name: lenet5_tessera_signature.
	SignatureSymbolSuffix = "_tessera_signature"
	// maxSignatureBytes bounds the section a reader accepts (a model's
	// signature is a few hundred bytes per entry point).
	maxSignatureBytes = 1 << 20
)

// ErrNoSignature is returned (wrapped) by ReadSignature for an ELF shared
// object without a Tessera signature: one not written by tessera compile.
var ErrNoSignature = errors.New("no Tessera signature (ELF section " + SignatureSection + "): not a model compiled by tessera compile")

// Signature describes a compiled model: the target and options it was
// compiled with and its entry points' tensors, in argument order.
type Signature struct {
	// Target is the --target name ("cpu").
	Target string
	// MCPU is the processor the code was generated for ("native": the
	// compiling machine's).
	MCPU string
	// VectorBits is the SIMD width in bits the kernels were scheduled for
	// (512: AVX-512); 0 when the target has none.
	VectorBits int
	// Threads is the thread count the schedules were chosen for; the code
	// runs on any count (TESSERA_NUM_THREADS at run time).
	Threads int
	// StrictFP is set when floating-point contraction was off.
	StrictFP bool
	// Prefix is the export prefix of the entry points' symbols.
	Prefix string
	// Entries are the exported entry points.
	Entries []EntrySignature
}

// EntrySignature is one exported entry point: int32_t Symbol(inputs...,
// outputs...) running the function Func.
type EntrySignature struct {
	Func    string
	Symbol  string
	Inputs  []TensorSpec
	Outputs []TensorSpec
}

// Entry returns the entry point running function fn, or false.
func (s *Signature) Entry(fn string) (EntrySignature, bool) {
	for _, e := range s.Entries {
		if e.Func == fn {
			return e, true
		}
	}
	return EntrySignature{}, false
}

// The JSON form. Pointers mark the fields that must be present even when
// empty (a scalar's shape is [], not absent).
type (
	signatureJSON struct {
		Version    *int         `json:"version"`
		Target     string       `json:"target"`
		MCPU       string       `json:"mcpu"`
		VectorBits int          `json:"vector_bits"`
		Threads    int          `json:"threads"`
		StrictFP   bool         `json:"strict_fp"`
		Prefix     string       `json:"prefix"`
		Entries    *[]entryJSON `json:"entries"`
	}
	entryJSON struct {
		Func    string      `json:"func"`
		Symbol  string      `json:"symbol"`
		Inputs  *[]specJSON `json:"inputs"`
		Outputs *[]specJSON `json:"outputs"`
	}
	specJSON struct {
		Name  string   `json:"name"`
		DType string   `json:"dtype"`
		Shape *[]int64 `json:"shape"`
	}
)

// EncodeSignature returns s as the signature document (JSON, without the
// terminating NUL the section adds), at SignatureVersion. Errors: what
// DecodeSignature would refuse (an empty target or symbol, an invalid
// spec, too many tensors, duplicate entry points).
func EncodeSignature(s Signature) ([]byte, error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	v := SignatureVersion
	entries := make([]entryJSON, len(s.Entries))
	for i, e := range s.Entries {
		ins, outs := specsJSON(e.Inputs), specsJSON(e.Outputs)
		entries[i] = entryJSON{Func: e.Func, Symbol: e.Symbol, Inputs: &ins, Outputs: &outs}
	}
	return json.Marshal(signatureJSON{Version: &v, Target: s.Target, MCPU: s.MCPU, VectorBits: s.VectorBits,
		Threads: s.Threads, StrictFP: s.StrictFP, Prefix: s.Prefix, Entries: &entries})
}

func specsJSON(specs []TensorSpec) []specJSON {
	out := make([]specJSON, len(specs))
	for i, s := range specs {
		shape := slices.Clone(s.Shape)
		if shape == nil {
			shape = []int64{}
		}
		out[i] = specJSON{Name: s.Name, DType: s.DType.String(), Shape: &shape}
	}
	return out
}

// DecodeSignature parses the signature section's bytes: one JSON document
// terminated by NUL (padding NULs may follow). Errors, never a panic: a
// section holding no or several documents, a missing NUL, a format
// version other than SignatureVersion (naming both), malformed JSON, an
// unknown or missing field, and what EncodeSignature refuses; all but the
// version mismatch say "corrupted signature".
func DecodeSignature(data []byte) (*Signature, error) {
	doc, more, err := firstDocument(data)
	if err != nil {
		return nil, err
	}
	var head struct {
		Version *int `json:"version"`
	}
	// Unmarshal refuses malformed JSON and data after the document; the
	// strict decoder below then sees one well-formed value.
	if err := json.Unmarshal(doc, &head); err != nil {
		return nil, fmt.Errorf("corrupted signature: %v", err)
	}
	if more {
		return nil, fmt.Errorf("corrupted signature: the section holds more than one document (several Tessera objects linked into one file?); a file holds one model")
	}
	if head.Version == nil {
		return nil, fmt.Errorf("corrupted signature: no \"version\" field")
	}
	if *head.Version != SignatureVersion {
		return nil, fmt.Errorf("signature format version %d, but this tessera reads version %d: recompile the model with this tessera", *head.Version, SignatureVersion)
	}
	var w signatureJSON
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return nil, fmt.Errorf("corrupted signature: %v", err)
	}
	s, err := w.signature()
	if err != nil {
		return nil, fmt.Errorf("corrupted signature: %v", err)
	}
	return s, nil
}

// firstDocument is the first NUL-terminated document of a section, and
// whether anything but NUL padding follows it.
func firstDocument(data []byte) (doc []byte, more bool, err error) {
	end := bytes.IndexByte(data, 0)
	if end < 0 {
		return nil, false, fmt.Errorf("corrupted signature: no terminating NUL byte in %d bytes", len(data))
	}
	if end == 0 {
		return nil, false, fmt.Errorf("corrupted signature: the section is empty")
	}
	return data[:end], len(bytes.Trim(data[end:], "\x00")) > 0, nil
}

// signature converts and validates the JSON form.
func (w *signatureJSON) signature() (*Signature, error) {
	if w.Entries == nil {
		return nil, fmt.Errorf("no \"entries\" field")
	}
	s := &Signature{Target: w.Target, MCPU: w.MCPU, VectorBits: w.VectorBits, Threads: w.Threads, StrictFP: w.StrictFP, Prefix: w.Prefix}
	for i, e := range *w.Entries {
		if e.Inputs == nil || e.Outputs == nil {
			return nil, fmt.Errorf("entry %d: no \"inputs\" or \"outputs\" field", i)
		}
		ins, err := specsOf(*e.Inputs)
		if err != nil {
			return nil, fmt.Errorf("entry %d input %v", i, err)
		}
		outs, err := specsOf(*e.Outputs)
		if err != nil {
			return nil, fmt.Errorf("entry %d output %v", i, err)
		}
		s.Entries = append(s.Entries, EntrySignature{Func: e.Func, Symbol: e.Symbol, Inputs: ins, Outputs: outs})
	}
	if err := s.validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// specsOf converts JSON specs; an empty shape is a scalar (nil).
func specsOf(ws []specJSON) ([]TensorSpec, error) {
	specs := make([]TensorSpec, len(ws))
	for i, w := range ws {
		if w.Shape == nil {
			return nil, fmt.Errorf("%d: no \"shape\" field", i)
		}
		dt, err := ParseDType(w.DType)
		if err != nil || dt.String() != w.DType {
			return nil, fmt.Errorf("%d: unknown dtype %q", i, w.DType)
		}
		specs[i] = TensorSpec{Name: w.Name, DType: dt}
		if len(*w.Shape) > 0 {
			specs[i].Shape = *w.Shape
		}
	}
	return specs, nil
}

// validate checks what every signature must satisfy: a target,
// non-negative counts, valid entry points (EntrySignature.Validate) with
// distinct functions and symbols.
func (s *Signature) validate() error {
	if s.Target == "" {
		return fmt.Errorf("no target")
	}
	if s.VectorBits < 0 || s.Threads < 0 {
		return fmt.Errorf("negative vector_bits (%d) or threads (%d)", s.VectorBits, s.Threads)
	}
	funcs, syms := map[string]bool{}, map[string]bool{}
	for i, e := range s.Entries {
		if err := e.Validate(); err != nil {
			return fmt.Errorf("entry %d: %v", i, err)
		}
		if funcs[e.Func] || syms[e.Symbol] {
			return fmt.Errorf("entry %d: function %q or symbol %q repeated", i, e.Func, e.Symbol)
		}
		funcs[e.Func], syms[e.Symbol] = true, true
	}
	return nil
}

// Validate checks that the entry point can be described and called: a
// function name, a C-identifier symbol, at most MaxTensors tensors, each
// spec valid (TensorSpec.Validate).
func (e EntrySignature) Validate() error {
	if e.Func == "" || !isCIdentifier(e.Symbol) {
		return fmt.Errorf("empty function %q or symbol %q not a C identifier", e.Func, e.Symbol)
	}
	if n := len(e.Inputs) + len(e.Outputs); n > MaxTensors {
		return fmt.Errorf("%s takes %d tensors, at most %d are supported", e.Symbol, n, MaxTensors)
	}
	for j, sp := range slices.Concat(e.Inputs, e.Outputs) {
		if err := sp.Validate(); err != nil {
			return fmt.Errorf("%s tensor %d: %v", e.Symbol, j, err)
		}
	}
	return nil
}

// isCIdentifier reports whether s is a non-empty C identifier.
func isCIdentifier(s string) bool {
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

// ReadSignature reads the signature of the shared object at path without
// loading it. Errors name no path (the caller names the file), never a
// panic: the file cannot be read; it is not ELF; it is not a shared
// object (a relocatable .o says how to make one); it was built for
// another architecture than this process's; it has no signature
// (ErrNoSignature); the signature is corrupted or of another version
// (DecodeSignature).
func ReadSignature(path string) (sig *Signature, err error) {
	// debug/elf is not hardened against adversarial input (its package
	// documentation says so): a malformed header must not crash the caller.
	defer func() {
		if r := recover(); r != nil {
			sig, err = nil, fmt.Errorf("malformed ELF file (%v)", r)
		}
	}()
	f, err := elf.Open(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("cannot read it: %w", pe.Err)
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("not an ELF shared object, or a truncated one (the file ends early)")
		}
		return nil, fmt.Errorf("not an ELF shared object: %v", err)
	}
	defer f.Close()
	if err := checkELF(f); err != nil {
		return nil, err
	}
	data, err := signatureBytes(f)
	if err != nil {
		return nil, err
	}
	return DecodeSignature(data)
}

// checkELF refuses anything but a shared object for this machine.
func checkELF(f *elf.File) error {
	switch f.Type {
	case elf.ET_DYN:
	case elf.ET_REL:
		return fmt.Errorf("a relocatable object (ELF ET_REL), not a shared object: compile the model with -o MODEL.so (or --emit so)")
	default:
		return fmt.Errorf("an ELF %v file, not a shared object (ET_DYN)", f.Type)
	}
	want, known := hostMachine[goruntime.GOARCH]
	if known && f.Machine != want {
		return fmt.Errorf("built for another architecture (%v); this machine is %s (%v)", f.Machine, goruntime.GOARCH, want)
	}
	return nil
}

// hostMachine is the ELF machine of each GOARCH Tessera may run on.
var hostMachine = map[string]elf.Machine{
	"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64, "386": elf.EM_386, "arm": elf.EM_ARM,
	"riscv64": elf.EM_RISCV, "ppc64le": elf.EM_PPC64, "ppc64": elf.EM_PPC64, "s390x": elf.EM_S390, "loong64": elf.EM_LOONGARCH,
}

// signatureBytes is the content of the signature section.
func signatureBytes(f *elf.File) ([]byte, error) {
	sec := f.Section(SignatureSection)
	if sec == nil {
		return nil, ErrNoSignature
	}
	if sec.Type == elf.SHT_NOBITS || sec.Size == 0 {
		return nil, fmt.Errorf("corrupted signature: the section is empty")
	}
	if sec.Size > maxSignatureBytes {
		return nil, fmt.Errorf("corrupted signature: the section claims %d bytes, at most %d are accepted", sec.Size, maxSignatureBytes)
	}
	data, err := sec.Data()
	if err != nil {
		return nil, fmt.Errorf("corrupted signature: %v", err)
	}
	return data, nil
}
