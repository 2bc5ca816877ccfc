package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"text/tabwriter"
	"time"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/review"
)

// reviewCmd lists or resolves review cases through the gateway's API.
func reviewCmd(args []string) error {
	cfg, err := config.FromEnv()
	if err != nil {
		return err
	}
	token, ok := cfg.TokenFor(config.DefaultTenant)
	if !ok {
		return fmt.Errorf("no API token for tenant %s in BOOKONCE_API_TOKENS", config.DefaultTenant)
	}
	base := "http://" + cfg.GatewayListen
	hc := &http.Client{Timeout: 10 * time.Second}
	do := func(method, path string, body any) ([]byte, error) {
		var rdr io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rdr = bytes.NewReader(b)
		}
		req, err := http.NewRequest(method, base+path, rdr)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			return nil, fmt.Errorf("%w\n(is `make run` running?)", err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		if resp.StatusCode >= 300 {
			return nil, fmt.Errorf("gateway answered %d: %s", resp.StatusCode, data)
		}
		return data, nil
	}
	switch {
	case len(args) == 1 && args[0] == "list":
		data, err := do(http.MethodGet, "/v1/review-cases", nil)
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
			return err
		}
		tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "CASE\tREASON\tWORKFLOW\tOPENED")
		for _, c := range l.Data {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.ID, c.Reason, c.WorkflowID, c.CreatedAt.Format(time.RFC3339))
		}
		return tw.Flush()
	case len(args) == 3 && args[0] == "resolve":
		data, err := do(http.MethodPost, "/v1/review-cases/"+args[1]+"/resolve", map[string]string{"action": args[2]})
		if err != nil {
			return err
		}
		fmt.Println(string(data))
		return nil
	}
	return fmt.Errorf("usage: starter review list | starter review resolve <case-id> <%s>", review.Join(review.Actions(), "|"))
}
