package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/internal/testcorpus"
)

// jsonOutputs are the commands' JSON outputs, each with the schema in docs/json that describes
// it. TestJSONOutputsMatchSchemas runs every one on every recording; {dir} is the recording's
// partition directory, {db} a database imported from it (with a snapshot halfway), {mid} an
// offset halfway through it. lines marks JSON lines: every line is a document.
var jsonOutputs = []struct {
	schema string
	args   []string
	lines  bool
}{
	{"describe", []string{"describe", "{dir}", "--format", "json"}, false},
	{"describe", []string{"describe", "{dir}", "--format", "json", "--forensic", "--at-offset", "{mid}"}, false},
	{"describe", []string{"describe", "{db}", "--format", "json", "--from-snapshot"}, false},
	{"offsets", []string{"offsets", "{dir}", "--format", "json"}, false},
	{"offsets", []string{"offsets", "{db}", "--format", "json", "--at-offset", "{mid}"}, false},
	{"groups", []string{"groups", "{dir}", "--format", "json"}, false},
	{"groups", []string{"groups", "{dir}", "--format", "json", "--include-deleted", "--at-offset", "{mid}"}, false},
	{"diff", []string{"diff", "{dir}", "--format", "json"}, false},
	{"diff", []string{"diff", "{dir}", "--format", "json", "--from-offset", "{mid}", "--volatile"}, false},
	{"restart", []string{"restart", "--db", "{db}", "--format", "json", "--compare-full"}, false},
}

// compileSchemas compiles every docs/json/*.schema.json (they refer to one another by their
// $id), formats asserted.
func compileSchemas(t *testing.T) map[string]*jsonschema.Schema {
	t.Helper()
	files, err := filepath.Glob("../../docs/json/*.schema.json")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	ids := map[string]string{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		require.NoError(t, err, f)
		id, _ := doc.(map[string]any)["$id"].(string)
		require.NotEmpty(t, id, "%s has no $id", f)
		require.Equal(t, filepath.Base(f), filepath.Base(id), "%s: $id names another file", f)
		require.NoError(t, c.AddResource(id, doc), f)
		ids[strings.TrimSuffix(filepath.Base(f), ".schema.json")] = id
	}
	out := map[string]*jsonschema.Schema{}
	for name, id := range ids {
		sch, err := c.Compile(id)
		require.NoError(t, err, name)
		out[name] = sch
	}
	return out
}

// TestJSONOutputsMatchSchemas: every JSON output of every command in jsonOutputs, on every
// recording in fixtures/real, is valid against its schema (which allows no field it does not
// describe), and carries "schemaVersion": 1.
func TestJSONOutputsMatchSchemas(t *testing.T) {
	schemas := compileSchemas(t)
	for _, o := range jsonOutputs {
		require.Contains(t, schemas, o.schema, "docs/json/%s.schema.json", o.schema)
	}
	for _, sc := range scenarios(t, committedRecordings) {
		t.Run(sc, func(t *testing.T) {
			dir := filepath.Join(committedRecordings, sc, "__consumer_offsets-0")
			out, stderr, code := runCLI(t, "decode", dir, "--format", "jsonl")
			require.Equal(t, 0, code, stderr)
			records := strings.Split(strings.TrimSpace(out), "\n")
			var rec struct {
				Offset int64 `json:"offset"`
			}
			require.NoError(t, json.Unmarshal([]byte(records[len(records)/2]), &rec))
			mid := fmt.Sprint(rec.Offset)
			db := filepath.Join(t.TempDir(), "db")
			_, stderr, code = runCLI(t, "import", dir, "--db", db, "--progress", "none")
			require.Equal(t, 0, code, stderr)
			_, stderr, code = runCLI(t, "snapshot", "create", "--db", db, "--at-offset", mid)
			require.Equal(t, 0, code, stderr)
			for _, o := range jsonOutputs {
				args := make([]string, len(o.args))
				for i, a := range o.args {
					args[i] = strings.NewReplacer("{dir}", dir, "{db}", db, "{mid}", mid).Replace(a)
				}
				out, stderr, code := runCLI(t, args...)
				require.Equal(t, 0, code, "%v: %s", args, stderr)
				docs := []string{out}
				if o.lines {
					docs = strings.Split(strings.TrimSuffix(out, "\n"), "\n")
				}
				for _, d := range docs {
					v, err := jsonschema.UnmarshalJSON(strings.NewReader(d))
					require.NoError(t, err, "%v", args)
					require.NoError(t, schemas[o.schema].Validate(v), "%v: not as docs/json/%s.schema.json says", args, o.schema)
					require.EqualValues(t, json.Number("1"), v.(map[string]any)["schemaVersion"], "%v", args)
				}
			}
		})
	}
}

// TestSchemasRejectWhatTheyDoNotDescribe: the schemas are strict, so that the test above fails
// when a document gains a field the schema does not document or loses a required one.
func TestSchemasRejectWhatTheyDoNotDescribe(t *testing.T) {
	schemas := compileSchemas(t)
	out, stderr, code := runCLI(t, "describe", filepath.Join(committedRecordings, "consumer", "__consumer_offsets-0"), "--format", "json")
	require.Equal(t, 0, code, stderr)
	for name, mutate := range map[string]func(doc map[string]any){
		"an undocumented field":   func(doc map[string]any) { doc["bogus"] = true },
		"a member state number":   func(doc map[string]any) { member(doc)["state"] = json.Number("0") },
		"a missing schemaVersion": func(doc map[string]any) { delete(doc, "schemaVersion") },
		"an all-zero topic id":    func(doc map[string]any) { offset(doc)["topicId"] = "AAAAAAAAAAAAAAAAAAAAAA" },
		"a second state field":    func(doc map[string]any) { group(doc)["consumer"].(map[string]any)["state"] = "Stable" },
	} {
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(out))
		require.NoError(t, err)
		require.NoError(t, schemas["describe"].Validate(v))
		mutate(v.(map[string]any))
		require.Error(t, schemas["describe"].Validate(v), name)
	}
}

func group(doc map[string]any) map[string]any {
	return doc["partitions"].([]any)[0].(map[string]any)["groups"].([]any)[0].(map[string]any)
}

func member(doc map[string]any) map[string]any {
	return group(doc)["consumer"].(map[string]any)["members"].([]any)[0].(map[string]any)
}

func offset(doc map[string]any) map[string]any {
	return group(doc)["offsets"].([]any)[0].(map[string]any)
}

// TestJSONOutputsMatchSchemasOnPublicDumps: describe, offsets and groups of every log directory
// of the public dumps (Kafka 1.x to 4.2: offset commits without topic ids, classic groups of
// every protocol) are valid against their schemas too.
func TestJSONOutputsMatchSchemasOnPublicDumps(t *testing.T) {
	schemas := compileSchemas(t)
	logDirs := map[string]bool{}
	for _, p := range testcorpus.PartitionDirs(t, testcorpus.Found(t)) {
		logDirs[filepath.Dir(p)] = true
	}
	for dir := range logDirs {
		for _, o := range []struct {
			schema string
			args   []string
		}{
			{"describe", []string{"describe", dir, "--format", "json", "--forensic"}},
			{"offsets", []string{"offsets", dir, "--format", "json", "--forensic"}},
			{"groups", []string{"groups", dir, "--format", "json", "--forensic", "--include-deleted"}},
		} {
			out, stderr, code := runCLI(t, o.args...)
			require.Equal(t, 0, code, "%v: %s", o.args, stderr)
			v, err := jsonschema.UnmarshalJSON(strings.NewReader(out))
			require.NoError(t, err, "%v", o.args)
			require.NoError(t, schemas[o.schema].Validate(v), "%v: not as docs/json/%s.schema.json says", o.args, o.schema)
		}
	}
}
