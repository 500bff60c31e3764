package cmdutil

import (
	"bytes"
	"io"
	"os"
)

// spoolMemory is how much rendered output a spool keeps in memory before
// it moves to a temporary file.
const spoolMemory = 8 << 20

// spool holds rendered output until the command's outcome is known (the
// contract: stdout is written only when the run ends well): in memory up
// to spoolMemory, then in a temporary file, so a report of a hundred
// megabytes (30,000 duplicated keys in JSON) is never held in memory whole.
type spool struct {
	mem  bytes.Buffer
	file *os.File
	err  error
}

func (s *spool) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	if s.file == nil && s.mem.Len()+len(p) > spoolMemory {
		f, err := os.CreateTemp("", "dupctl-output-*")
		if err != nil {
			// No room for a temporary file: keep it in memory.
			return s.mem.Write(p)
		}
		s.file = f
		if _, err := s.mem.WriteTo(f); err != nil {
			s.err = err
			return 0, err
		}
	}
	if s.file != nil {
		n, err := s.file.Write(p)
		if err != nil {
			s.err = err
		}
		return n, err
	}
	return s.mem.Write(p)
}

// WriteTo copies what the spool holds to w.
func (s *spool) WriteTo(w io.Writer) (int64, error) {
	if s.err != nil {
		return 0, s.err
	}
	if s.file == nil {
		return s.mem.WriteTo(w)
	}
	if _, err := s.file.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	return io.Copy(w, s.file)
}

// Close removes the temporary file, if any.
func (s *spool) Close() {
	if s.file != nil {
		s.file.Close()
		os.Remove(s.file.Name())
		s.file = nil
	}
}

// bytesSpool is a spool of b (an error document rendered small).
func bytesSpool(b []byte) *spool {
	s := &spool{}
	s.mem.Write(b)
	return s
}
