package runtime

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// A device model file is how a target without host object code (the CUDA
// target) saves a compiled model: the magic line SignedFileMagic, the
// signature document (EncodeSignature's JSON) terminated by NUL, then the
// target's payload (opaque here). ReadModelSignature reads the signature
// of either kind of compiled model: an ELF shared object's section or a
// device model file's header.
const SignedFileMagic = "tessera-model\n"

// maxSignedHeader bounds the signature part a reader scans for its NUL.
const maxSignedHeader = maxSignatureBytes

// WriteSignedFile writes sig and payload to path as a device model file
// (written to a temporary file in the same folder and renamed, so a
// failed write never leaves a partial model). Errors: what
// EncodeSignature refuses, the file system's.
func WriteSignedFile(path string, sig Signature, payload []byte) error {
	doc, err := EncodeSignature(sig)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	buf.WriteString(SignedFileMagic)
	buf.Write(doc)
	buf.WriteByte(0)
	buf.Write(payload)
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tessera-model-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// DecodeSignedFile splits a device model file's bytes into its signature
// and payload. Errors, never a panic: no magic line ("not a Tessera
// device model"), DecodeSignature's.
func DecodeSignedFile(data []byte) (*Signature, []byte, error) {
	rest, ok := bytes.CutPrefix(data, []byte(SignedFileMagic))
	if !ok {
		return nil, nil, fmt.Errorf("not a Tessera device model (no %q header)", SignedFileMagic[:len(SignedFileMagic)-1])
	}
	end := bytes.IndexByte(rest[:min(len(rest), maxSignedHeader)], 0)
	if end < 0 {
		return nil, nil, fmt.Errorf("corrupted signature: no terminating NUL byte in the header")
	}
	sig, err := DecodeSignature(rest[:end+1])
	if err != nil {
		return nil, nil, err
	}
	return sig, rest[end+1:], nil
}

// ReadSignedFile reads a device model file. Errors: the file system's
// ("cannot read it"), DecodeSignedFile's.
func ReadSignedFile(path string) (*Signature, []byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, cannotRead(err)
	}
	return DecodeSignedFile(data)
}

// IsCompiledModel reports whether the file at path starts like a compiled
// model: the ELF magic (a shared object, or a .o that ReadModelSignature
// then explains) or SignedFileMagic.
func IsCompiledModel(path string) bool {
	head, err := fileHead(path)
	return err == nil && (bytes.HasPrefix(head, []byte(elf.ELFMAG)) || bytes.Equal(head, []byte(SignedFileMagic)))
}

// ReadModelSignature reads the signature of a compiled model of either
// kind: a device model file's header (ReadSignedFile) or an ELF shared
// object's section (ReadSignature).
func ReadModelSignature(path string) (*Signature, error) {
	head, err := fileHead(path)
	if err != nil {
		return nil, cannotRead(err)
	}
	if bytes.Equal(head, []byte(SignedFileMagic)) {
		sig, _, err := ReadSignedFile(path)
		return sig, err
	}
	return ReadSignature(path)
}

// fileHead is the first len(SignedFileMagic) bytes of the file at path
// (fewer for a shorter file).
func fileHead(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	head := make([]byte, len(SignedFileMagic))
	n, _ := io.ReadFull(f, head)
	return head[:n], nil
}

// cannotRead is the error for a file that cannot be opened or read, without
// its path (the caller names the file).
func cannotRead(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("cannot read it: %w", err)
}
