package cluster

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// flagNames says the settings as replay's flags do, as a command renders a ConfigError.
func flagNames(s Setting) string {
	return map[Setting]string{SettingBootstrap: "--bootstrap-server", SettingTLSCA: "--tls-ca", SettingTLSCert: "--tls-cert",
		SettingTLSKey: "--tls-key", SettingSASLMechanism: "--sasl-mechanism", SettingSASLUser: "--sasl-user"}[s]
}

func TestConfigRefusedBeforeConnecting(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "ca.txt")
	require.NoError(t, os.WriteFile(notPEM, []byte("not a certificate"), 0o644))
	seeds := []string{"127.0.0.1:9092"}
	for _, c := range []struct {
		cfg            Config
		err, flagsSaid string
	}{
		{Config{}, "Bootstrap is empty", "--bootstrap-server is empty"},
		{Config{Bootstrap: seeds, TLS: &TLSConfig{CAFile: filepath.Join(dir, "missing.pem")}},
			"TLS.CAFile: open " + filepath.Join(dir, "missing.pem") + ": no such file or directory",
			"--tls-ca: open " + filepath.Join(dir, "missing.pem") + ": no such file or directory"},
		{Config{Bootstrap: seeds, TLS: &TLSConfig{CAFile: notPEM}}, "TLS.CAFile " + notPEM + " holds no PEM certificate", "--tls-ca " + notPEM + " holds no PEM certificate"},
		{Config{Bootstrap: seeds, TLS: &TLSConfig{CertFile: "c.pem"}}, "TLS.CertFile and TLS.KeyFile go together", "--tls-cert and --tls-key go together"},
		{Config{Bootstrap: seeds, SASL: &SASLConfig{Mechanism: "plain"}}, "SASL.Mechanism needs SASL.User", "--sasl-mechanism needs --sasl-user"},
		{Config{Bootstrap: seeds, SASL: &SASLConfig{User: "u"}}, "SASL.User needs SASL.Mechanism", "--sasl-user needs --sasl-mechanism"},
		{Config{Bootstrap: seeds, SASL: &SASLConfig{Mechanism: "gssapi", User: "u"}},
			`SASL.Mechanism "gssapi": want plain, scram-sha-256 or scram-sha-512`, `--sasl-mechanism "gssapi": want plain, scram-sha-256 or scram-sha-512`},
	} {
		_, err := c.cfg.ClientOptions()
		var ce *ConfigError
		require.ErrorAs(t, err, &ce, c.err)
		require.Equal(t, c.err, err.Error())
		require.Equal(t, c.flagsSaid, ce.Render(flagNames))
	}
	_, err := Config{Bootstrap: seeds, TLS: &TLSConfig{CAFile: filepath.Join(dir, "missing.pem")}}.ClientOptions()
	require.True(t, errors.Is(err, fs.ErrNotExist), "the file error is kept: %v", err)
}

func TestConfigOptions(t *testing.T) {
	require.Equal(t, []string{"a:1", "b:2"}, ParseBootstrap(" a:1, ,b:2,"))
	for _, cfg := range []Config{
		{Bootstrap: []string{"a:1"}},
		{Bootstrap: []string{"a:1"}, TLS: &TLSConfig{InsecureSkipVerify: true}, SASL: &SASLConfig{Mechanism: "SCRAM-SHA-512", User: "u", Password: "p"}},
	} {
		opts, err := cfg.ClientOptions()
		require.NoError(t, err)
		want := 3 // seeds, client id, dial timeout
		if cfg.TLS != nil {
			want += 2
		}
		require.Len(t, opts, want)
	}
	require.Equal(t, "a:1,b:2", Config{Bootstrap: []string{"a:1", "b:2"}}.String())
}
