// Package tenants turns the shops bookonce serves into configuration: a
// tenants.yaml file (one entry per tenant with its API token hashes, Twilio
// numbers, time zone, language, resources, services, policies and message
// templates) is parsed with line-accurate errors, validated, compared with
// what PostgreSQL holds and applied in one transaction; the Registry reads
// it back for the running processes and reloads it on an interval, so a
// change reaches the APIs, the gateway and the worker without a restart.
//
// A tenant's Terms (its language, time zone, services' labels and
// deposits, policies and own texts) travel in the workflows' inputs, and
// the workflows render every customer message from them (Terms.Render):
// the one home of the wording, built-in texts and tenants' own alike.
//
// The file format, the commands and the reload behaviour are described in
// docs/tenants.md.
package tenants
