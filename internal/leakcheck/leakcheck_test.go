package leakcheck

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// parked blocks until release is closed.
func parked(release chan struct{}, started *sync.WaitGroup) {
	started.Done()
	<-release
}

func TestRunningFindsOnlyTheNamedCode(t *testing.T) {
	const self = "github.com/coordlog/coordlog/internal/leakcheck.parked"
	require.Empty(t, Running(self))
	release := make(chan struct{})
	var started sync.WaitGroup
	started.Add(2)
	go parked(release, &started)
	go parked(release, &started)
	started.Wait()
	require.Len(t, Running(self), 2)
	require.Empty(t, Running("github.com/coordlog/coordlog/internal/leakcheck.nothing"))

	// None fails while they run, and passes once they returned.
	ft := &fakeT{}
	None(ft, 0, self)
	require.True(t, ft.failed)
	close(release)
	None(t, 5*time.Second, self)
}

type fakeT struct {
	testing.TB
	failed bool
}

func (f *fakeT) Helper()                        {}
func (f *fakeT) Fatalf(format string, a ...any) { f.failed = true }
