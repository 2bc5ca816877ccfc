package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bookonce/bookonce/internal/apitoken"
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/tenants"
)

const tenantsUsage = `usage: starter tenants apply -f FILE [--dry-run] [--if-empty]
       starter tenants list
       starter tenants token

  apply   make the database hold exactly the tenants of FILE (tenants.yaml,
          see docs/tenants.md); prints what changes. --dry-run prints only;
          --if-empty applies only to a database without tenants (seeding).
  list    print the configured tenants
  token   mint a new API token (bkapi_…) and print it with the line for
          the tenant's api_token_sha256; nothing is stored, and bookonce
          keeps only the digest

Exit status: 0 applied (or nothing to change), 1 file rejected or database
error, 2 usage error. The database is found as by every bookonce process
(DATABASE_URL, else discovered).
`

// tenantsCmd runs `starter tenants`; its own exit status tells a usage
// error from a rejected file (2 against 1), and it has already said why.
func tenantsCmd(args []string, stdout, stderr io.Writer) error {
	ctx, stop := stack.SignalContext()
	defer stop()
	if code := runTenants(ctx, args, os.LookupEnv, stdout, stderr); code != exitOK {
		return reported(code)
	}
	return nil
}

// runTenants is the command with its environment and output passed in, for
// tests.
func runTenants(ctx context.Context, args []string, env func(string) (string, bool), stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, tenantsUsage)
		return exitUsage
	}
	var file string
	var dryRun, ifEmpty bool
	fs := flag.NewFlagSet("starter tenants "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, tenantsUsage) }
	switch args[0] {
	case "apply":
		fs.StringVar(&file, "f", "", "the tenants file to apply")
		fs.BoolVar(&dryRun, "dry-run", false, "print the changes, write nothing")
		fs.BoolVar(&ifEmpty, "if-empty", false, "apply only when no tenant is configured yet")
	case "list", "token":
	case "-h", "--help", "help":
		fmt.Fprint(stdout, tenantsUsage)
		return exitOK
	default:
		fmt.Fprintf(stderr, "starter tenants: unknown command %q\n\n%s", args[0], tenantsUsage)
		return exitUsage
	}
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 || (args[0] == "apply" && file == "") {
		fmt.Fprintf(stderr, "starter tenants %s: %s\n\n%s", args[0], usageProblem(fs.Args()), tenantsUsage)
		return exitUsage
	}
	if args[0] == "token" {
		printToken(stdout)
		return exitOK
	}
	var f tenants.File
	if args[0] == "apply" {
		var err error
		// Read before connecting: a broken file needs no database.
		if f, err = tenants.ReadFile(file); err != nil {
			fmt.Fprintf(stderr, "starter tenants apply: %s rejected:\n%v\n", file, err)
			return exitFailed
		}
	}
	cfg, err := config.Load(env)
	if err != nil {
		fmt.Fprintln(stderr, "starter tenants:", err)
		return exitUsage
	}
	pool, closeDB, err := stack.Database(ctx, cfg, stack.Logger(cfg, stderr))
	if err != nil {
		fmt.Fprintln(stderr, "starter tenants: PostgreSQL:", err)
		return exitFailed
	}
	defer closeDB()
	if args[0] == "list" {
		return listTenants(ctx, pool, stdout, stderr)
	}
	return applyTenants(ctx, pool, f, file, tenants.ApplyOptions{DryRun: dryRun, OnlyIfEmpty: ifEmpty}, stdout, stderr)
}

// printToken mints a token; the APIs accept only such tokens, so a shop
// never has to choose one (apitoken).
func printToken(stdout io.Writer) {
	tok := apitoken.New()
	fmt.Fprintf(stdout, "# the token: give it to the shop's client (BOOKONCE_API_TOKENS=TENANT:TOKEN, its agent's bearer header); shown once\n%s\n", tok)
	fmt.Fprintf(stdout, "# tenants.yaml, under the tenant's api_token_sha256, then starter tenants apply\n- %s\n", apitoken.Digest(tok))
}

func usageProblem(extra []string) string {
	if len(extra) > 0 {
		return "unexpected arguments " + strings.Join(extra, " ")
	}
	return "-f FILE is required"
}

func applyTenants(ctx context.Context, pool *pgxpool.Pool, f tenants.File, file string, opts tenants.ApplyOptions, stdout, stderr io.Writer) int {
	diff, err := tenants.Apply(ctx, pool, f, opts)
	if err != nil {
		if errors.Is(err, tenants.ErrRejected) {
			fmt.Fprintf(stderr, "starter tenants apply: %s rejected, nothing changed:\n%v\n", file, err)
		} else {
			fmt.Fprintf(stderr, "starter tenants apply: nothing changed: %v\n", err)
		}
		return exitFailed
	}
	fmt.Fprint(stdout, diff.String())
	switch {
	case diff.Empty():
	case opts.DryRun:
		fmt.Fprintf(stdout, "dry run: %d changes, nothing written\n", len(diff.Changes))
	default:
		fmt.Fprintf(stdout, "applied %d changes; running processes pick them up within their reload interval (%s by default)\n",
			len(diff.Changes), tenants.DefaultReloadInterval)
	}
	return exitOK
}

func listTenants(ctx context.Context, pool *pgxpool.Pool, stdout, stderr io.Writer) int {
	reg, err := tenants.LoadRegistry(ctx, pool, nil)
	if err != nil {
		fmt.Fprintln(stderr, "starter tenants list:", err)
		return exitFailed
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TENANT\tNAME\tLANGUAGE\tTIMEZONE\tNUMBERS\tTOKENS\tRESOURCES\tSERVICES")
	for _, p := range reg.All() {
		var services []string
		for _, s := range p.Services {
			services = append(services, s.ID)
		}
		var resources []string
		for _, r := range p.Resources {
			resources = append(resources, r.ID)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", p.ID, p.Name, p.Language, p.Timezone,
			strings.Join(p.Numbers, ","), len(p.TokenHashes), strings.Join(resources, ","), strings.Join(services, ","))
	}
	if err := tw.Flush(); err != nil {
		fmt.Fprintln(stderr, "starter tenants list:", err)
		return exitFailed
	}
	if len(reg.All()) == 0 {
		fmt.Fprintln(stderr, "no tenants configured; apply a file with: starter tenants apply -f tenants.yaml")
	}
	return exitOK
}
