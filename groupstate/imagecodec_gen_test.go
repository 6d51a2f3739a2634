package groupstate

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/groupstate/internal/codecgen"
)

// TestImageCodecGenerated fails when imagecodec_gen.go, the codec's copy for each direction,
// is not what imagecodec.go generates (go test ./groupstate/internal/codecgen -rewrite).
func TestImageCodecGenerated(t *testing.T) {
	src, err := os.ReadFile("imagecodec.go")
	require.NoError(t, err)
	got, err := codecgen.Generate(src)
	require.NoError(t, err)
	want, err := os.ReadFile("imagecodec_gen.go")
	require.NoError(t, err)
	require.Equal(t, string(want), string(got), "imagecodec_gen.go is stale: go test ./groupstate/internal/codecgen -rewrite")
}
