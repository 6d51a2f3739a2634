package archtest

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/coordlog/coordlog"

// rule says what the non-test files of a top-level folder (and its sub-packages) may import
// besides the standard library and their own folder's sub-packages.
type rule struct {
	internal     []string // top-level folders of this module it may import
	testInternal []string // top-level folders its _test.go files may import on top of internal
	external     []string // import path prefixes outside the module
	// isolated folders' packages may not import one another (commands are main packages, each
	// standing on the libraries alone).
	isolated bool
}

var kafkaWire = []string{"github.com/twmb/franz-go/pkg/kmsg", "github.com/twmb/franz-go/pkg/kbin"}

// rules is ARCHITECTURE.md's layout table, by folder: a folder follows the rule of its
// nearest listed parent. A folder missing here may import nothing of the module.
var rules = map[string]rule{
	"recordcodec": {external: kafkaWire},
	"groupstate":  {},
	"eventlog": {
		internal: []string{"recordcodec"},
		external: append([]string{
			"github.com/cockroachdb/pebble/v2",
			"github.com/twmb/franz-go/pkg/kgo",
			"github.com/klauspost/compress",
			"github.com/pierrec/lz4/v4",
			"github.com/schollz/progressbar/v3",
		}, kafkaWire...),
	},
	// The writers' locks stand on the standard library alone, so that anything may take one.
	"eventlog/lock": {},
	"snapshot":      {external: []string{"github.com/vmihailenco/msgpack/v5"}},
	// The engine knows records, the model and the log; restarting from snapshots is a layer
	// above it.
	"replay":          {internal: []string{"recordcodec", "groupstate", "eventlog"}},
	"replay/recovery": {internal: []string{"recordcodec", "groupstate", "eventlog", "snapshot"}},
	// A session opens any input, a live cluster included (cluster's Config), restores from
	// snapshots (replay/recovery) and replays: the library under the commands. Queries reach
	// a cluster only through what they are given (query.LogEnds).
	"replay/session": {internal: []string{"recordcodec", "groupstate", "eventlog", "snapshot", "cluster"}},
	// The JSON documents render sessions, queries, audits and restore plans (cluster's).
	"replay/jsondoc": {internal: []string{"recordcodec", "groupstate", "eventlog", "cluster"}},
	// The group coordinators decide on a read-only groupstate.View and emit records as
	// eventlog batches; replay applies them. They never import replay: a caller (the CLI, a
	// test) wires a coordinator to an engine.
	"coordinator": {internal: []string{"recordcodec", "groupstate", "eventlog"},
		testInternal: []string{"replay"},                                       // tests apply the decisions through an engine
		external:     append([]string{"github.com/zeebo/xxh3"}, kafkaWire...)}, // Kafka's group metadata hash
	// What coordlog asks of and does to a live cluster beyond reading __consumer_offsets (group
	// descriptions, log end offsets, offset commits): on the model's values, through kadm.
	"cluster": {internal: []string{"groupstate"}, external: append([]string{
		"github.com/twmb/franz-go/pkg/kgo", "github.com/twmb/franz-go/pkg/kadm", "github.com/twmb/franz-go/pkg/kerr",
		"github.com/twmb/franz-go/pkg/sasl", // the connection's SASL mechanisms (Config)
	}, kafkaWire...)},
	// Commands may use every library (and internal/buildinfo for --version, internal/wallclock
	// for the wall clock); no package
	// imports a command, nor one command another.
	"cmd":      {internal: []string{"recordcodec", "groupstate", "eventlog", "snapshot", "replay", "coordinator", "cluster", "internal"}, external: []string{""}, isolated: true},
	"fixtures": {},
	"internal": {internal: []string{"internal"}},
}

// testOnly are imports every _test.go file may use on top of its folder's rule.
var testOnly = []string{"github.com/stretchr/testify", "github.com/cockroachdb/datadriven"}

// testSupport are module folders every _test.go file may import (internal/testcorpus finds
// the real dumps).
var testSupport = []string{"internal"}

func TestImportRules(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found from %s: %v", root, err)
	}
	fset := token.NewFileSet()
	var violations []string
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "target" || name == "work") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		dir := filepath.ToSlash(filepath.Dir(rel))
		if dir == "." { // files at the module root
			dir = ""
		}
		isTest := strings.HasSuffix(name, "_test.go")
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		for _, spec := range f.Imports {
			imp, _ := strconv.Unquote(spec.Path.Value)
			if why := disallowed(dir, imp, isTest); why != "" {
				violations = append(violations, rel+": imports "+imp+" ("+why+")")
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("no Go files found: the walk is broken")
	}
	sort.Strings(violations)
	for _, v := range violations {
		t.Error(v)
	}
}

// ruleFor returns the rule of the folder dir (relative to the module root): the one of the
// longest key that is dir or one of its parents.
func ruleFor(dir string) (r rule, key string, known bool) {
	for k, kr := range rules {
		if (dir == k || strings.HasPrefix(dir, k+"/")) && (!known || len(k) > len(key)) {
			r, key, known = kr, k, true
		}
	}
	return r, key, known
}

// disallowed says why a file in folder dir may not import imp ("" when it may).
func disallowed(dir, imp string, isTest bool) string {
	top := strings.SplitN(dir, "/", 2)[0]
	r, key, known := ruleFor(dir)
	if strings.HasPrefix(imp, module+"/") || imp == module {
		rel := strings.TrimPrefix(imp, module+"/")
		target := strings.SplitN(rel, "/", 2)[0]
		if target == top {
			if r.isolated && unit(dir) != unit(rel) {
				return top + "/ packages may not import one another (" + rel + ")"
			}
			return ""
		}
		if top == "fixtures" && isTest {
			return "" // conformance tests drive the whole engine
		}
		allowed := r.internal
		if isTest {
			allowed = slices.Concat(allowed, r.testInternal, testSupport)
		}
		if slices.Contains(allowed, target) {
			return ""
		}
		return key + "/ may not import " + target + "/ (ARCHITECTURE.md layout)"
	}
	if isStdlib(imp) {
		return ""
	}
	if isTest {
		for _, p := range testOnly {
			if strings.HasPrefix(imp, p) {
				return ""
			}
		}
		if top == "fixtures" {
			return ""
		}
	}
	if !known {
		return "folder " + dir + "/ has no import rule"
	}
	for _, p := range r.external {
		if p == "" || imp == p || strings.HasPrefix(imp, p+"/") {
			return ""
		}
	}
	return key + "/ may not depend on " + imp
}

// unit is what an isolated folder's packages are isolated by: its first two path elements
// (cmd/replay), so that a command's own sub-packages (cmd/replay/internal/commands) are its.
func unit(path string) string {
	parts := strings.SplitN(path, "/", 3)
	return strings.Join(parts[:min(2, len(parts))], "/")
}

// isStdlib follows the go tool's rule: a standard-library path has no dot in its first element.
func isStdlib(imp string) bool {
	first := strings.SplitN(imp, "/", 2)[0]
	return !strings.Contains(first, ".")
}

func TestRuleCatchesViolations(t *testing.T) {
	cases := []struct {
		top, imp string
		test     bool
		bad      bool
	}{
		{"recordcodec", module + "/groupstate", false, true},
		{"groupstate", module + "/recordcodec", false, true},
		{"groupstate", "github.com/twmb/franz-go/pkg/kmsg", false, true},
		{"recordcodec", "github.com/twmb/franz-go/pkg/kmsg", false, false},
		{"replay", module + "/groupstate/assign", false, false},
		{"snapshot", module + "/replay", false, true},
		{"eventlog", "github.com/cockroachdb/pebble/v2/vfs", false, false},
		{"groupstate", "github.com/stretchr/testify/require", true, false},
		{"groupstate", "github.com/stretchr/testify/require", false, true},
		{"cmd", module + "/replay", false, false},
		{"cmd", module + "/coordinator/streams/streamstest", false, false},
		{"cmd", module + "/cmd/compact", false, true},
		{"replay", module + "/cmd/replay", false, true},
		{"replay", module + "/coordinator/streams", false, true},
		{"replay", "github.com/twmb/franz-go/pkg/kmsg", false, true},
		{"coordinator", module + "/groupstate", false, false},
		{"coordinator", module + "/recordcodec", false, false},
		{"coordinator", "github.com/twmb/franz-go/pkg/kmsg", false, false},
		{"coordinator", module + "/replay", false, true},
		{"coordinator", module + "/snapshot", false, true},
		{"coordinator", module + "/cmd/replay", false, true},
		{"coordinator", module + "/replay", true, false}, // tests apply decisions through an engine
		{"coordinator", module + "/snapshot", true, true},
		{"groupstate", module + "/coordinator", false, true},
		{"replay", module + "/snapshot", false, true},
		{"replay/recovery", module + "/snapshot", false, false},
		{"replay/recovery/sub", module + "/snapshot", false, false},
		{"replay/recovery", module + "/coordinator", false, true},
		{"replay", module + "/internal/testcorpus", true, false},
		{"replay", module + "/internal/testcorpus", false, true},
		{"nowhere", "github.com/x/y", false, true},
		// The library under the commands (issue 25) and the commands over it.
		{"replay/session", module + "/cluster", false, false},
		{"replay/session", module + "/snapshot", false, false},
		{"replay/session", module + "/coordinator", false, true},
		{"replay/session", module + "/cmd/replay/internal/commands", false, true},
		{"replay/session", "github.com/twmb/franz-go/pkg/kgo", false, true}, // a cluster is reached through cluster.Config
		{"replay/query", module + "/cluster", false, true},                  // a lag's log ends come as query.LogEnds
		{"replay/query", module + "/snapshot", false, true},
		{"replay/jsondoc", module + "/cluster", false, false},
		{"replay/jsondoc", module + "/snapshot", false, true},
		{"replay/jsondoc", module + "/coordinator", false, true},
		{"cluster", "github.com/twmb/franz-go/pkg/sasl/scram", false, false},
		{"cluster", module + "/replay/query", false, true},
		{"internal/termtext", "golang.org/x/term", false, true}, // the width is the caller's
		{"cmd/replay", module + "/cmd/replay/internal/commands", false, false},
		{"cmd/replay/internal/commands", module + "/cmd/compact", false, true},
		{"cmd/compact", module + "/cmd/replay/internal/commands", false, true},
	}
	for _, c := range cases {
		got := disallowed(c.top, c.imp, c.test) != ""
		if got != c.bad {
			t.Errorf("disallowed(%q, %q, test=%v) = %v, want %v", c.top, c.imp, c.test, got, c.bad)
		}
	}
}
