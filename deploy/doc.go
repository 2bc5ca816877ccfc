// Package deploy holds the checks for bookonce's deployment files: the
// repository-root Dockerfile and docker-compose.yml, the Temporal server
// config they mount from deploy/temporal/, and the Kubernetes kustomize
// base and overlays in deploy/k8s/. The tests parse and build those files
// (no Docker engine or cluster needed) so a broken topology fails
// `go test`, not `docker compose up` or `kubectl apply -k`; the table in
// docs/configuration.md is the one list of variables they may set.
// It also embeds the demo tenants file (DemoTenants) and applies it
// (ApplyDemoTenants).
package deploy
