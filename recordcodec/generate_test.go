package recordcodec

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGeneratedCodeIsCurrent runs the generator on the committed schema table and requires
// exactly the committed zz_generated.go, ../groupstate/zz_recordtypes.go (record ids and
// version rules), ../groupstate/zz_values.go (the mutators' inputs) and ../replay/zz_dispatch.go
// (the record-to-mutator switches and conversions) and zz_fastpath.go (the offset commit's fast
// decoder): a schema change without `go generate
// ./recordcodec`, or a hand edit of a generated file, fails here.
func TestGeneratedCodeIsCurrent(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go tool on PATH to run the generator: %v", err)
	}
	dir := t.TempDir()
	codec, gs := filepath.Join(dir, "zz_generated.go"), filepath.Join(dir, "zz_recordtypes.go")
	values, dispatch := filepath.Join(dir, "zz_values.go"), filepath.Join(dir, "zz_dispatch.go")
	fast := filepath.Join(dir, "zz_fastpath.go")
	cmd := exec.Command(goTool, "run", "./internal/gen", "-in", "internal/gen/schema.txt", "-out", codec, "-groupstate", gs,
		"-values", values, "-dispatch", dispatch, "-fast", fast)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "generator failed:\n%s", out)
	for _, f := range []struct{ got, committed string }{{codec, "zz_generated.go"}, {gs, "../groupstate/zz_recordtypes.go"},
		{values, "../groupstate/zz_values.go"}, {dispatch, "../replay/zz_dispatch.go"}, {fast, "zz_fastpath.go"}} {
		got, err := os.ReadFile(f.got)
		require.NoError(t, err)
		want, err := os.ReadFile(f.committed)
		require.NoError(t, err)
		require.True(t, string(got) == string(want), "%s is not what the generator writes from internal/gen/schema.txt: run go generate ./recordcodec", f.committed)
	}
}
