package pebblelog

// SetTestHookBeforeCommit lets crash tests act just before a pebble commit.
func (l *Log) SetTestHookBeforeCommit(f func()) { l.testHookBeforeCommit = f }
