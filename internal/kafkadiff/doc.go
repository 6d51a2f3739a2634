// Package kafkadiff runs, for Go tests, the differential drivers of fixtures/kafka/diff: small
// Java programs that call Kafka 4.4's own classes (assignors, RE2/J, TimelineHashMap) on the
// cases a test writes to their standard input, one per line, and print one line per case.
// COORDLOG_KAFKA_LIB names the directory of Kafka's jars (fixtures/kafka/target/lib;
// fixtures/kafka/assignor-diff.sh fills it and runs the tests, as CI does); without it the
// tests are skipped. COORDLOG_ASSIGNOR_CASES sets the number of random cases.
package kafkadiff
