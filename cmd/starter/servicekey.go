package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"io"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/servicetoken"
)

// serviceKeyCmd makes a new key pair for the worker's service identity:
// the private key for the workers, the public key for the calendar and
// payment APIs (docs/configuration.md, "Production safety"). Nothing is
// stored; the output is the two lines to put into the environments.
func serviceKeyCmd(args []string, stdout, _ io.Writer) error {
	fs := newFlags("service-key", "")
	if err := parse(fs, args, stdout, nil); err != nil {
		return err
	}
	seed := make([]byte, ed25519.SeedSize)
	if _, err := rand.Read(seed); err != nil {
		return fmt.Errorf("read random bytes: %w", err)
	}
	m, err := servicetoken.NewMinter(seed)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "# the workers' private key: a secret, like a database password\n%s=%s\n", config.SecretServiceKey, servicetoken.EncodeKey(seed))
	fmt.Fprintf(stdout, "# the calendar and payment APIs (while rotating, list the old key too, comma-separated)\n%s=%s\n", config.SecretServicePublicKeys, servicetoken.EncodeKey(m.PublicKey()))
	return nil
}
