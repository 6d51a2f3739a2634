package codecgen

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var rewrite = flag.Bool("rewrite", false, "rewrite groupstate/imagecodec_gen.go")

// TestGenerated fails when groupstate/imagecodec_gen.go is not what its imagecodec.go
// generates; -rewrite writes it.
func TestGenerated(t *testing.T) {
	dir := filepath.Join("..", "..")
	src, err := os.ReadFile(filepath.Join(dir, "imagecodec.go"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Generate(src)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "imagecodec_gen.go")
	if *rewrite {
		if err := os.WriteFile(out, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatal("groupstate/imagecodec_gen.go is not what imagecodec.go generates: go test ./groupstate/internal/codecgen -rewrite")
	}
}
