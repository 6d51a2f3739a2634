package snapshot

// SetTestHook installs a hook that runs before each step of Write (crash tests).
func (s *Store) SetTestHook(f func(step string) error) { s.testHook = f }
