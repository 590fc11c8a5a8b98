package agent_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/lpictl/lpictl/agent"
	"github.com/lpictl/lpictl/controller"
)

// writeWebConfig writes a self-signed certificate for 127.0.0.1, its key
// and an exporter-toolkit web config with TLS and the basic-auth user
// user/pass into dir; it returns the config's path and the certificate.
func writeWebConfig(t *testing.T, dir string) (string, *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "lpictl test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	hash, err := bcrypt.GenerateFromPassword([]byte("pass"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"tls.crt": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		"tls.key": pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}),
		// Relative paths: to the web config's folder (exporter-toolkit).
		"web.yaml": []byte("tls_server_config:\n  cert_file: tls.crt\n  key_file: tls.key\nbasic_auth_users:\n  user: " + string(hash) + "\n"),
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "web.yaml"), cert
}

// TestMetricsTLSBasicAuth: with metrics.web_config_file, /metrics is
// served over TLS and needs the basic-auth user (issue 11).
func TestMetricsTLSBasicAuth(t *testing.T) {
	webFile, cert := writeWebConfig(t, t.TempDir())
	be := newFake("eth0")
	cfg := testConfig(t, agent.Observe, "eth0")
	cfg.Metrics.Listen = "127.0.0.1:0"
	cfg.Metrics.WebConfigFile = webFile
	r := start(t, cfg, be, nil)

	pool := x509.NewCertPool()
	pool.AddCert(cert)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	url := "https://" + r.a.Addr() + "/metrics"
	for _, c := range []struct {
		name       string
		user, pass string
		want       int
	}{
		{"no credentials", "", "", http.StatusUnauthorized},
		{"wrong password", "user", "nope", http.StatusUnauthorized},
		{"credentials", "user", "pass", http.StatusOK},
	} {
		req, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		if c.user != "" {
			req.SetBasicAuth(c.user, c.pass)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s: status %d, want %d", c.name, resp.StatusCode, c.want)
		}
		if c.want == http.StatusOK && !strings.Contains(string(body), "lpictl_config_last_reload_successful 1") {
			t.Errorf("%s: body lacks lpictl_config_last_reload_successful 1", c.name)
		}
	}
	// Plain HTTP is not served.
	resp, err := http.Get("http://" + r.a.Addr() + "/metrics")
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Errorf("plain HTTP: status %d, want a refusal", resp.StatusCode)
		}
	}
}

// TestLoadWebConfigFile: Load makes the file absolute and validates it;
// an invalid one is a configuration error naming the key.
func TestLoadWebConfigFile(t *testing.T) {
	dir := t.TempDir()
	webFile, _ := writeWebConfig(t, dir)
	conf := filepath.Join(dir, "agent.yaml")
	if err := os.WriteFile(conf, []byte("metrics:\n  web_config_file: web.yaml\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ld, err := agent.Load(agent.LoadOptions{File: conf})
	if err != nil {
		t.Fatal(err)
	}
	if ld.Config.Metrics.WebConfigFile != webFile {
		t.Errorf("web_config_file %q, want %q", ld.Config.Metrics.WebConfigFile, webFile)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("basic_auth_users:\n  user: not-a-bcrypt-hash\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, set := range []string{"metrics.web_config_file=" + bad, "metrics.web_config_file=" + filepath.Join(dir, "missing.yaml")} {
		_, err := agent.Load(agent.LoadOptions{File: conf, Sets: []string{set}})
		if err == nil || !strings.Contains(err.Error(), "metrics.web_config_file") {
			t.Errorf("%s: error %v, want one naming metrics.web_config_file", set, err)
		}
	}
}

// TestListenWarningWebConfig: off loopback, only TLS and basic auth
// together silence the warning; what is missing is named.
func TestListenWarningWebConfig(t *testing.T) {
	dir := t.TempDir()
	both, _ := writeWebConfig(t, dir)
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tlsOnly := write("tls.yaml", "tls_server_config:\n  cert_file: tls.crt\n  key_file: tls.key\n")
	authOnly := write("auth.yaml", "basic_auth_users:\n  user: $2y$10$abc\n")
	for _, c := range []struct {
		listen, file, warn string // warn "" = none
	}{
		{"0.0.0.0:9720", "", "no TLS or basic auth"},
		{"0.0.0.0:9720", both, ""},
		{"192.0.2.1:9720", tlsOnly, "no basic auth"},
		{"192.0.2.1:9720", authOnly, "no TLS"},
		{"127.0.0.1:9720", "", ""},
	} {
		cfg := agent.Default()
		cfg.Metrics.Listen, cfg.Metrics.WebConfigFile = c.listen, c.file
		w := cfg.ListenWarning()
		if (w == "") != (c.warn == "") || !strings.Contains(w, c.warn) || strings.Contains(w, "\n") {
			t.Errorf("%s %s: warning %q, want one line with %q", c.listen, filepath.Base(c.file), w, c.warn)
		}
	}
}

// TestReloadAndSettingsMetrics: lpictl_config_last_reload_* follow
// reloads; lpictl_port_settings_changed is 1 while the port's timer is
// not its original.
func TestReloadAndSettingsMetrics(t *testing.T) {
	be := newFake("eth0")
	cfg := testConfig(t, agent.Enforce, "eth0")
	next := cfg
	var reloadErr error
	r := start(t, cfg, be, func() (agent.Config, error) { return next, reloadErr })
	reg := r.a.Registry()
	if v := metric(t, reg, "lpictl_config_last_reload_successful", nil); v != 1 {
		t.Errorf("reload successful at start = %v, want 1", v)
	}
	startAt := metric(t, reg, "lpictl_config_last_reload_success_timestamp_seconds", nil)
	if now := float64(time.Now().Unix()); startAt < now-60 || startAt > now+1 {
		t.Errorf("reload timestamp at start = %v, want about %v", startAt, now)
	}
	waitFor(t, "settings changed", func() bool { return metric(t, reg, "lpictl_port_settings_changed", dev("eth0")) == 1 })

	reloadErr = errors.New("bad file")
	r.hup <- struct{}{}
	waitFor(t, "failed reload", func() bool { return metric(t, reg, "lpictl_config_last_reload_successful", nil) == 0 })
	if v := metric(t, reg, "lpictl_config_last_reload_success_timestamp_seconds", nil); v != startAt {
		t.Errorf("timestamp after a failed reload = %v, want %v", v, startAt)
	}

	reloadErr, next.Mode = nil, agent.Observe // restores the port
	time.Sleep(10 * time.Millisecond)
	r.hup <- struct{}{}
	waitFor(t, "successful reload", func() bool { return metric(t, reg, "lpictl_config_last_reload_successful", nil) == 1 })
	if v := metric(t, reg, "lpictl_config_last_reload_success_timestamp_seconds", nil); v <= startAt {
		t.Errorf("timestamp after a reload = %v, want > %v", v, startAt)
	}
	waitFor(t, "settings restored", func() bool { return metric(t, reg, "lpictl_port_settings_changed", dev("eth0")) == 0 })
}

// TestAlertMetricsExist: every lpictl_ metric the shipped alerting rules
// query is one the agent exports (promtool test rules checks the rules
// themselves: make promtool-check).
func TestAlertMetricsExist(t *testing.T) {
	data, err := os.ReadFile("../configs/prometheus/lpictl-alerts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	be := newFake("eth0")
	cfg := testConfig(t, agent.Enforce, "eth0")
	on := controller.LedgerOn // the budget metrics: a fixed t_PDT has a ledger only when asked
	cfg.Limits.Ledger = &on
	r := start(t, cfg, be, nil)
	have := metricNames(t, r.a.Registry())
	names := regexp.MustCompile(`lpictl_[a-z_]+`).FindAllString(string(data), -1)
	if len(names) == 0 {
		t.Fatal("the rules query no lpictl_ metric")
	}
	for _, name := range names {
		if !have[name] {
			t.Errorf("the alerting rules query %s, which the agent does not export", name)
		}
	}
}
