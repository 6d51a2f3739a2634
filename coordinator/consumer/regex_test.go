package consumer

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/internal/kafkadiff"
)

// regexCases are subscription regexes Kafka users write and syntax at the edges of RE2:
// anchors, classes, Unicode, flags, named groups in both forms, quoting, repetition limits,
// and what RE2 rejects (look-around, backreferences, possessive quantifiers, \C).
var regexCases = []string{
	`s2-rx-.*`, `orders\..*`, `.*-events`, `topic-[0-9]+`, `(orders|payments)-v[12]`, `^orders.*$`,
	`[a-z]+`, `[[:alpha:]]+-[[:digit:]]+`, `\pL+`, `\p{Greek}+`, `(?i)ORDERS.*`, `(?s).*`,
	`(?U)a+`, `(?P<name>a)b`, `(?<name>a)b`, `\Qa.b\E.*`, `a{2,3}`, `a{1000}`, `x{1001}`,
	`a**`, `x++`, `(?=a)`, `(?!a)`, `(?<=a)b`, `(a)\1`, `\8`, `\C`, `(`, `)`, `a[`, `[z-a]`,
	`*a`, `a|`, `|`, ``, `\z`, `\A.*`, `\b`, `a\`, `[^\x00-\x7F]+`, `\x{1F600}`, `é+`, `[é]`,
	`(?x) a`, `(?m)^a$`, `a{,3}`, `\d+`, `\D`, `\w+\W`, `\s`, `[\d-z]`, `[a-\d]`, `(?i:a)b`,
	`(?:ab)+`, `a{2}{3}`, `(a*)*`, `\.`, `topic_\d{1,3}`, `a)b`,
}

var regexTopics = []string{"s2-rx-a", "orders.eu", "orders-v1", "payments-v2", "user-events", "topic-42", "ORDERS",
	"", "a", "aa", "aaa", "ab", "a.b.c", "αβγ", "é", "😀", "topic_7", "x", "__consumer_offsets", "b"}

// TestRegexesEqualRE2J: for every case, coordlog's compileRegex and RE2/J (the library
// Kafka's coordinator compiles subscription regexes with; fixtures/kafka/diff/RegexDiff.java)
// agree on validity, on the error description (INVALID_REGULAR_EXPRESSION's message) and on
// which topic names match entirely. COORDLOG_KAFKA_LIB names the directory of Kafka's jars
// (see TestAssignorsEqualKafka).
func TestRegexesEqualRE2J(t *testing.T) {
	lib := kafkadiff.Lib(t, "RE2/J")
	esc := strings.NewReplacer(`\`, `\\`, "\t", `\t`, "\n", `\n`)
	var in bytes.Buffer
	for _, re := range regexCases {
		in.WriteString(esc.Replace(re))
		for _, topic := range regexTopics {
			in.WriteString("\t" + esc.Replace(topic))
		}
		in.WriteByte('\n')
	}
	lines := kafkadiff.Run(t, lib, "RegexDiff", in.Bytes())
	valid, invalid := 0, 0
	for i, want := range lines {
		re := regexCases[i]
		got := "valid\t"
		x, cerr := compileRegex(re)
		if cerr != nil {
			// The message is "SubscribedTopicRegex `re` is not a valid regular expression: DESC."
			desc := strings.TrimSuffix(cerr.Message[strings.LastIndex(cerr.Message, "expression: ")+len("expression: "):], ".")
			got = "invalid\t" + desc
			invalid++
		} else {
			for _, topic := range regexTopics {
				got += map[bool]string{true: "1", false: "0"}[x.MatchString(topic)]
			}
			valid++
		}
		if want != got {
			t.Errorf("regex %q: RE2/J %q, coordlog %q", re, want, got)
		}
	}
	require.Equal(t, len(regexCases), valid+invalid)
	t.Logf("%d regexes as RE2/J compiles and matches them (%d valid, %d invalid)", len(regexCases), valid, invalid)
}
