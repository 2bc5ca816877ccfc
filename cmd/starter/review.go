package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/review"
)

// reviewCmd lists or resolves review cases through the gateway's API.
func reviewCmd(args []string, stdout, _ io.Writer) error {
	fs := newFlags("review", "list | resolve <case-id> <"+review.Join(review.Actions(), "|")+">")
	if err := parse(fs, args, stdout, func(rest []string) error {
		switch {
		case len(rest) == 1 && rest[0] == "list", len(rest) == 3 && rest[0] == "resolve":
			return nil
		}
		return errors.New(`want "list" or "resolve <case-id> <action>"`)
	}); err != nil {
		return err
	}
	g, err := dialGateway()
	if err != nil {
		return err
	}
	if fs.Arg(0) == "list" {
		return g.listCases(stdout)
	}
	data, err := g.do(http.MethodPost, "/v1/review-cases/"+fs.Arg(1)+"/resolve", map[string]string{"action": fs.Arg(2)})
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, string(data))
	return nil
}

// dialGateway is the gateway's staff API (its admin listener,
// ADMIN_LISTEN) as the default tenant, from the environment's
// configuration.
func dialGateway() (gateway, error) {
	cfg, err := config.FromEnv()
	if err != nil {
		return gateway{}, err
	}
	token, ok := cfg.TokenFor(config.DefaultTenant)
	if !ok {
		return gateway{}, fmt.Errorf("no API token for tenant %s in BOOKONCE_API_TOKENS", config.DefaultTenant)
	}
	// A cancellation may wait for a refund: longer than the gateway's own bound.
	return gateway{base: "http://" + cfg.AdminListen, token: token, hc: &http.Client{Timeout: 40 * time.Second}}, nil
}

// gateway is the bearer-token staff API of the webhook gateway.
type gateway struct {
	base, token string
	hc          *http.Client
}

func (g gateway) do(method, path string, body any) ([]byte, error) {
	return g.doWith(method, path, body, nil)
}

// doWith is do with extra request headers (an Idempotency-Key).
func (g gateway) doWith(method, path string, body any, header http.Header) ([]byte, error) {
	var rdr io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("encode request: %w", err)
		}
		rdr = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, g.base+path, rdr)
	if err != nil {
		return nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Authorization", "Bearer "+g.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := g.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w\n(is `make run` or the gateway running? staff commands call its admin listener, ADMIN_LISTEN=%s)", err, strings.TrimPrefix(g.base, "http://"))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("read the gateway's answer: %w", err)
	}
	if resp.StatusCode >= 300 {
		return nil, fmt.Errorf("gateway answered %d: %s", resp.StatusCode, data)
	}
	return data, nil
}

func (g gateway) listCases(stdout io.Writer) error {
	data, err := g.do(http.MethodGet, "/v1/review-cases", nil)
	if err != nil {
		return err
	}
	var l struct {
		Data []struct {
			ID         string    `json:"id"`
			WorkflowID string    `json:"workflow_id"`
			Reason     string    `json:"reason"`
			CreatedAt  time.Time `json:"created_at"`
		} `json:"data"`
	}
	if err := json.Unmarshal(data, &l); err != nil {
		return fmt.Errorf("decode review cases: %w", err)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CASE\tREASON\tWORKFLOW\tOPENED")
	for _, c := range l.Data {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.ID, c.Reason, c.WorkflowID, c.CreatedAt.Format(time.RFC3339))
	}
	return tw.Flush()
}
