package testsupport

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Cert is a PEM certificate and its PEM private key.
type Cert struct{ CertPEM, KeyPEM []byte }

// Write stores the pair as cert.pem and key.pem in a new directory under
// t.TempDir (never in the repository) and returns their paths.
func (c Cert) Write(t testing.TB, name string) (certPath, keyPath string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.MkdirAll(dir, 0o700))
	certPath, keyPath = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	require.NoError(t, os.WriteFile(certPath, c.CertPEM, 0o600))
	require.NoError(t, os.WriteFile(keyPath, c.KeyPEM, 0o600))
	return certPath, keyPath
}

// CA is a throw-away certificate authority generated in the test.
type CA struct {
	Cert
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

// NewCA generates a CA valid for an hour.
func NewCA(t testing.TB, name string) CA {
	t.Helper()
	key := newKey(t)
	tmpl := template(name)
	tmpl.IsCA, tmpl.BasicConstraintsValid, tmpl.KeyUsage = true, true, x509.KeyUsageCertSign|x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	return CA{Cert: Cert{CertPEM: pemOf("CERTIFICATE", der), KeyPEM: keyPEM(t, key)}, cert: cert, key: key}
}

// Server issues a server certificate for dnsName and 127.0.0.1.
func (ca CA) Server(t testing.TB, dnsName string) Cert {
	tmpl := template(dnsName)
	tmpl.DNSNames, tmpl.IPAddresses = []string{dnsName}, []net.IP{net.IPv4(127, 0, 0, 1)}
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	return ca.issue(t, tmpl)
}

// Client issues a client certificate (for mTLS) with common name cn.
func (ca CA) Client(t testing.TB, cn string) Cert {
	tmpl := template(cn)
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	return ca.issue(t, tmpl)
}

func (ca CA) issue(t testing.TB, tmpl *x509.Certificate) Cert {
	t.Helper()
	key := newKey(t)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	require.NoError(t, err)
	return Cert{CertPEM: pemOf("CERTIFICATE", der), KeyPEM: keyPEM(t, key)}
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	return key
}

func template(cn string) *x509.Certificate {
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62)) // crypto/rand never fails (Go 1.24+)
	now := time.Now()
	return &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: cn}, NotBefore: now.Add(-time.Minute), NotAfter: now.Add(time.Hour)}
}

func keyPEM(t testing.TB, key *ecdsa.PrivateKey) []byte {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	return pemOf("PRIVATE KEY", der)
}

func pemOf(kind string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der})
}
