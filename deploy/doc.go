// Package deploy holds the checks for bookonce's deployment files: the
// repository-root Dockerfile and docker-compose.yml, plus the Temporal
// server config they mount from deploy/temporal/. The tests parse those files
// (no Docker engine needed) so a broken topology fails `go test`, not `docker compose up`.
// It also embeds the demo tenants file (DemoTenants).
package deploy
