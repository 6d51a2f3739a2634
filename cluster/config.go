package cluster

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	saslplain "github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// Config is how coordlog connects to a cluster: where, and with which TLS and SASL settings.
// Every reader of a live cluster (eventlog/live's source, the Client) connects with the same
// options (ClientOptions).
type Config struct {
	// Bootstrap are the brokers to start from, HOST:PORT each (ParseBootstrap reads a
	// comma-separated list).
	Bootstrap []string
	// ClientID names the client in the brokers' logs and quotas (default: coordlog-replay).
	ClientID string
	// TLS, when set, connects with TLS.
	TLS *TLSConfig
	// SASL, when set, authenticates with SASL.
	SASL *SASLConfig
}

// TLSConfig are the TLS settings: the zero value trusts the system's CAs and presents no
// client certificate.
type TLSConfig struct {
	CAFile             string // PEM file of the CA certificates to trust (default: the system's)
	CertFile, KeyFile  string // PEM client certificate and its key, for mutual TLS (both or neither)
	InsecureSkipVerify bool   // do not verify the brokers' certificates (testing only)
}

// SASLConfig are the SASL settings: a user needs a mechanism, and a mechanism a user.
type SASLConfig struct {
	Mechanism      string // plain, scram-sha-256 or scram-sha-512 (any case)
	User, Password string
}

// ParseBootstrap splits a comma-separated list of brokers, leaving out empty entries.
func ParseBootstrap(list string) []string {
	var seeds []string
	for _, s := range strings.Split(list, ",") {
		if s = strings.TrimSpace(s); s != "" {
			seeds = append(seeds, s)
		}
	}
	return seeds
}

// Setting names a setting of Config in a ConfigError, so that a caller can say it the way its
// users give it (a command-line flag, a configuration key).
type Setting string

// The settings a ConfigError can name; Setting's own text is the field's path in Config.
const (
	SettingBootstrap     Setting = "Bootstrap"
	SettingTLSCA         Setting = "TLS.CAFile"
	SettingTLSCert       Setting = "TLS.CertFile"
	SettingTLSKey        Setting = "TLS.KeyFile"
	SettingSASLMechanism Setting = "SASL.Mechanism"
	SettingSASLUser      Setting = "SASL.User"
)

// ConfigError is a Config that cannot connect, found before any connection is attempted:
// what is wrong, naming the settings at fault.
type ConfigError struct {
	parts []any // text, Setting values and errors, in reading order
}

func configError(parts ...any) *ConfigError { return &ConfigError{parts: parts} }

// Error names the settings as Config's fields.
func (e *ConfigError) Error() string {
	return e.Render(func(s Setting) string { return string(s) })
}

// Render says what is wrong, naming each setting as name returns it.
func (e *ConfigError) Render(name func(Setting) string) string {
	var b strings.Builder
	for _, p := range e.parts {
		switch p := p.(type) {
		case Setting:
			b.WriteString(name(p))
		default:
			fmt.Fprint(&b, p)
		}
	}
	return b.String()
}

// Unwrap returns the error underneath (a file that cannot be read), if any.
func (e *ConfigError) Unwrap() error {
	for _, p := range e.parts {
		if err, ok := p.(error); ok {
			return err
		}
	}
	return nil
}

// ClientOptions checks the configuration and turns it into franz-go client options, reading
// the TLS files. Errors are *ConfigError.
func (c Config) ClientOptions() ([]kgo.Opt, error) {
	if len(c.Bootstrap) == 0 {
		return nil, configError(SettingBootstrap, " is empty")
	}
	id := c.ClientID
	if id == "" {
		id = "coordlog-replay"
	}
	opts := []kgo.Opt{kgo.SeedBrokers(c.Bootstrap...), kgo.ClientID(id), kgo.DialTimeout(10 * time.Second)}
	if c.TLS != nil {
		cfg, err := c.TLS.config()
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.DialTLSConfig(cfg))
	}
	if c.SASL != nil {
		mech, err := c.SASL.mechanism()
		if err != nil {
			return nil, err
		}
		opts = append(opts, mech)
	}
	return opts, nil
}

func (t *TLSConfig) config() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: t.InsecureSkipVerify} //nolint:gosec // an explicit setting
	if t.CAFile != "" {
		pem, err := os.ReadFile(t.CAFile)
		if err != nil {
			return nil, configError(SettingTLSCA, ": ", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, configError(SettingTLSCA, " ", t.CAFile, " holds no PEM certificate")
		}
		cfg.RootCAs = pool
	}
	if (t.CertFile == "") != (t.KeyFile == "") {
		return nil, configError(SettingTLSCert, " and ", SettingTLSKey, " go together")
	}
	if t.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
		if err != nil {
			return nil, configError(SettingTLSCert, "/", SettingTLSKey, ": ", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

func (s *SASLConfig) mechanism() (kgo.Opt, error) {
	if s.Mechanism == "" {
		return nil, configError(SettingSASLUser, " needs ", SettingSASLMechanism)
	}
	if s.User == "" {
		return nil, configError(SettingSASLMechanism, " needs ", SettingSASLUser)
	}
	switch strings.ToLower(s.Mechanism) {
	case "plain":
		return kgo.SASL(saslplain.Auth{User: s.User, Pass: s.Password}.AsMechanism()), nil
	case "scram-sha-256":
		return kgo.SASL(scram.Auth{User: s.User, Pass: s.Password}.AsSha256Mechanism()), nil
	case "scram-sha-512":
		return kgo.SASL(scram.Auth{User: s.User, Pass: s.Password}.AsSha512Mechanism()), nil
	}
	return nil, configError(SettingSASLMechanism, fmt.Sprintf(" %q: want plain, scram-sha-256 or scram-sha-512", s.Mechanism))
}

// String names the cluster by its bootstrap brokers, comma-separated.
func (c Config) String() string { return strings.Join(c.Bootstrap, ",") }

// Connect checks the configuration and connects coordlog's admin client.
func (c Config) Connect() (*Client, error) {
	opts, err := c.ClientOptions()
	if err != nil {
		return nil, err
	}
	cl, err := New(opts...)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", c, err)
	}
	return cl, nil
}
