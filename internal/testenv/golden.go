package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// Golden compares got with the file at path, or (update: the package's
// -update flag) writes it there: a rendered page or table held against
// the reviewed copy in testdata.
func Golden(t testing.TB, path, got string, update bool) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (write it with -update)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from what is drawn now (review, then -update):\n%s", path, got)
	}
}
